//! A session: one connection, or one per cluster node, running the op's commands (a
//! pipeline's batch at once) and tallying the replies.

use super::*;

pub(super) enum Mode {
    Single(Conn),
    Cluster(Cluster),
}

/// One connection (standalone) or one connection per cluster node, opened when first needed.
pub struct RedisSession {
    pub(super) shared: Arc<Shared>,
    pub(super) mode: Mode,
    /// Key index = op % keyspace (the prefill) instead of mix64(op) % keyspace.
    pub(super) sequential: bool,
    /// A key being formatted.
    pub(super) scratch: Vec<u8>,
    /// Cluster: ops of the batch that got a redirect, with it.
    pub(super) redirected: Vec<(u64, bool, u16, SocketAddr)>,
}

impl Drop for RedisSession {
    fn drop(&mut self) {
        if let Mode::Cluster(cl) = &self.mode {
            let mut merged = match self.shared.per_node.lock() {
                Ok(g) => g,
                Err(e) => e.into_inner(),
            };
            for node in cl.nodes.iter().filter(|n| n.answered > 0) {
                match merged.iter_mut().find(|(a, _)| *a == node.addr) {
                    Some(e) => e.1 += node.answered,
                    None => merged.push((node.addr, node.answered)),
                }
            }
        }
    }
}

/// A reply's kind in words.
pub(super) fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Simple => "a simple string".into(),
        Reply::Error(e) => format!("the error {e}"),
        Reply::Integer(i) => format!("the integer {i}"),
        Reply::Bulk(n) => format!("a bulk string of {n} bytes"),
        Reply::Null => "a null".into(),
        Reply::Array(n) => format!("an array of {n}"),
    }
}

/// The running account of a batch.
pub(super) struct Tally<'a> {
    pub(super) ok: u32,
    pub(super) bytes_in: u64,
    pub(super) bytes_out: u64,
    /// The first failed reply (class `driver` or `protocol`) and its detail.
    pub(super) error: Option<(Class, String)>,
    /// GETs of the batch that found no key, added to the driver's count when the tally is
    /// dropped (once a batch, however it ended, rather than an atomic add per miss).
    pub(super) misses: u64,
    pub(super) all_misses: &'a AtomicU64,
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        if self.misses > 0 {
            self.all_misses.fetch_add(self.misses, Ordering::Relaxed);
        }
    }
}

impl<'a> Tally<'a> {
    pub(super) fn new(shared: &'a Shared) -> Tally<'a> {
        Tally {
            ok: 0,
            bytes_in: 0,
            bytes_out: 0,
            error: None,
            misses: 0,
            all_misses: &shared.misses,
        }
    }

    pub(super) fn check(&mut self, op: RedisOp, reply: &Reply, wire: u64) {
        self.bytes_in += wire;
        if op.accepts(reply) {
            self.ok += 1;
            if op == RedisOp::GetHit && matches!(reply, Reply::Null) {
                self.misses += 1;
            }
            return;
        }
        let (class, detail) = match reply {
            Reply::Error(e) => (Class::ServerError, e.clone()),
            other => (
                Class::Malformed,
                format!(
                    "{}: expected {}, got {}",
                    op.name(),
                    op.expected(),
                    describe(other)
                ),
            ),
        };
        match &self.error {
            // A protocol failure outranks a Redis error: the engine must reopen the session.
            Some((Class::ServerError, _)) if class == Class::Malformed => {
                self.error = Some((class, detail))
            }
            Some(_) => {}
            None => self.error = Some((class, detail)),
        }
    }

    pub(super) fn outcome(mut self, n: u32) -> Outcome {
        match self.error.take() {
            None => Outcome::ok(self.bytes_in, self.bytes_out).batch_of(n, n),
            Some((class, detail)) => Outcome::error(class, detail)
                .with_bytes(self.bytes_in, self.bytes_out)
                .batch_of(n, self.ok),
        }
    }

    /// A transport failure cuts the batch short.
    pub(super) fn fail(&self, o: Outcome, n: u32) -> Outcome {
        o.with_bytes(self.bytes_in, self.bytes_out)
            .batch_of(n, self.ok)
    }
}

/// Room for the longest key: a 8-byte prefix and up to 20 digits.
pub(super) const KEY_BYTES: usize = 32;

/// Op `n`'s key (empty for PING): the op's prefix and a 12-digit index, random over the
/// keyspace or, for `sequential`, in order. A pure function of `n`, so the driver can tell
/// which cluster node an op goes to without a session.
pub(super) fn key_of<'b>(
    shared: &Shared,
    n: u64,
    sequential: bool,
    buf: &'b mut [u8; KEY_BYTES],
) -> &'b [u8] {
    let Some(prefix) = shared.op.prefix() else {
        return &[];
    };
    let index = if shared.op == RedisOp::GetMiss {
        mix64(n) % 1_000_000_000_000
    } else if sequential {
        n % shared.keyspace
    } else {
        mix64(n) % shared.keyspace
    };
    let mut digits = [0u8; 20];
    let text = decimal(&mut digits, index);
    let pad = 12usize.saturating_sub(text.len());
    let len = prefix.len() + pad + text.len();
    buf[..prefix.len()].copy_from_slice(prefix);
    buf[prefix.len()..prefix.len() + pad].fill(b'0');
    buf[prefix.len() + pad..len].copy_from_slice(text);
    &buf[..len]
}

impl RedisSession {
    /// Formats op `n`'s key into `self.scratch` (empty for PING).
    pub(super) fn key(&mut self, n: u64) {
        self.scratch.clear();
        let mut buf = [0u8; KEY_BYTES];
        let key = key_of(&self.shared, n, self.sequential, &mut buf);
        self.scratch.extend_from_slice(key);
    }

    /// Appends op `n`'s command (its key already in `self.scratch`) to `out`.
    pub(super) fn command(shared: &Shared, n: u64, key: &[u8], out: &mut Vec<u8>) {
        let value = &shared.value[..];
        // Members and fields: `element:<index>` from an independent draw, as redis-benchmark's
        // __rand_int__.
        let mut member = [0u8; 28];
        member[..8].copy_from_slice(b"element:");
        let mut digits = [0u8; 20];
        let len = 8 + {
            let d = decimal(&mut digits, mix64(n ^ 0x5EED) % shared.keyspace);
            member[8..8 + d.len()].copy_from_slice(d);
            d.len()
        };
        let member = &member[..len];
        match shared.op {
            RedisOp::Ping => resp::push_command(out, &[b"PING"]),
            RedisOp::Set => resp::push_command(out, &[b"SET", key, value]),
            RedisOp::GetHit | RedisOp::GetMiss => resp::push_command(out, &[b"GET", key]),
            RedisOp::Del => resp::push_command(out, &[b"DEL", key]),
            RedisOp::Incr => resp::push_command(out, &[b"INCR", key]),
            RedisOp::Lpush => resp::push_command(out, &[b"LPUSH", key, value]),
            RedisOp::Rpush => resp::push_command(out, &[b"RPUSH", key, value]),
            RedisOp::Lpop => resp::push_command(out, &[b"LPOP", key]),
            RedisOp::Rpop => resp::push_command(out, &[b"RPOP", key]),
            RedisOp::Sadd => resp::push_command(out, &[b"SADD", key, member]),
            RedisOp::Zadd => {
                let mut digits = [0u8; 20];
                let score = decimal(&mut digits, n % 1_000_000);
                resp::push_command(out, &[b"ZADD", key, score, member]);
            }
            RedisOp::Hset => resp::push_command(out, &[b"HSET", key, member, value]),
        }
    }

    pub(super) async fn execute_single(&mut self, first: u64, count: usize) -> Outcome {
        let shared = self.shared.clone();
        let n_ops = count as u32;
        let mut out = match &mut self.mode {
            Mode::Single(c) => std::mem::take(&mut c.out),
            Mode::Cluster(_) => Vec::new(),
        };
        for j in 0..count as u64 {
            self.key(first + j);
            Self::command(&shared, first + j, &self.scratch, &mut out);
        }
        let Mode::Single(conn) = &mut self.mode else {
            return Outcome::error(Class::Malformed, "internal: not a standalone session");
        };
        conn.out = out;
        let mut t = Tally::new(&shared);
        match conn.flush().await {
            Ok(n) => t.bytes_out = n,
            Err(o) => return t.fail(o, n_ops),
        }
        for _ in 0..count {
            match conn.reply().await {
                Ok((reply, wire)) => t.check(shared.op, &reply, wire),
                Err(f) => return t.fail(f.outcome(conn.addr), n_ops),
            }
        }
        conn.idle();
        t.outcome(n_ops)
    }

    /// Per op on the hot path of a cluster: the batch is put into its nodes' buffers, written,
    /// its replies read, and its redirects followed, each step a helper called once per batch
    /// (the loops over the batch's commands are inside them, as they were in one piece).
    pub(super) async fn execute_cluster(&mut self, first: u64, count: usize) -> Outcome {
        let shared = self.shared.clone();
        let n_ops = count as u32;
        let mut t = Tally::new(&shared);
        if let Err(o) = self.queue_by_node(&shared, first, count, &t).await {
            return o;
        }
        let Mode::Cluster(cl) = &mut self.mode else {
            return Outcome::error(Class::Malformed, "internal: not a cluster session");
        };
        let mut failed = cl.flush_batch(&mut t).await;
        self.redirected.clear();
        if failed.is_none() {
            failed = cl
                .read_batch_replies(shared.op, &mut t, &mut self.redirected)
                .await;
        }
        cl.end_batch(failed.is_some());
        if let Some(o) = failed {
            return t.fail(o, n_ops);
        }
        let redirected = std::mem::take(&mut self.redirected);
        for &(n, moved, s, addr) in &redirected {
            if let Err(o) = self.follow(n, moved, s, addr, &mut t).await {
                self.redirected = redirected;
                return t.fail(o, n_ops);
            }
        }
        self.redirected = redirected;
        t.outcome(n_ops)
    }

    /// Groups the batch of ops `first…first+count−1` by node: each op's command goes into its
    /// node's connection buffer, the connection opened when first needed. Err is the batch's
    /// outcome: a failed connect (after which the half-built batch is forgotten, nothing having
    /// been sent).
    async fn queue_by_node(
        &mut self,
        shared: &Shared,
        first: u64,
        count: usize,
        t: &Tally<'_>,
    ) -> Result<(), Outcome> {
        for j in 0..count as u64 {
            let n = first + j;
            self.key(n);
            let Mode::Cluster(cl) = &mut self.mode else {
                return Err(Outcome::error(
                    Class::Malformed,
                    "internal: not a cluster session",
                ));
            };
            let s = if self.scratch.is_empty() {
                (mix64(n) % slot::SLOTS as u64) as usize
            } else {
                usize::from(slot::slot(&self.scratch))
            };
            let i = usize::from(cl.slots[s]);
            let node = &mut cl.nodes[i];
            if node.conn.is_none() {
                match Conn::open(node.addr, shared.auth.as_ref(), None).await {
                    Ok(c) => node.conn = Some(c),
                    Err(o) => {
                        cl.forget_batch();
                        return Err(t.fail(o, count as u32));
                    }
                }
            }
            node.ops.push(n);
            if let Some(c) = node.conn.as_mut() {
                Self::command(shared, n, &self.scratch, &mut c.out);
            }
        }
        Ok(())
    }

    /// Follows a redirect of op `n` (at most 5 hops), accounting its reply in `t`.
    pub(super) async fn follow(
        &mut self,
        n: u64,
        mut moved: bool,
        mut s: u16,
        mut addr: SocketAddr,
        t: &mut Tally<'_>,
    ) -> Result<(), Outcome> {
        let shared = self.shared.clone();
        self.key(n);
        for _ in 0..5 {
            let Mode::Cluster(cl) = &mut self.mode else {
                return Err(Outcome::error(
                    Class::Malformed,
                    "internal: not a cluster session",
                ));
            };
            let i = cl.node_index(addr);
            if moved {
                shared.moved.fetch_add(1, Ordering::Relaxed);
                cl.slots[usize::from(s)] = i as u16;
            } else {
                shared.ask.fetch_add(1, Ordering::Relaxed);
            }
            let node = &mut cl.nodes[i];
            if node.conn.is_none() {
                node.conn = Some(Conn::open(addr, shared.auth.as_ref(), None).await?);
            }
            let Some(c) = node.conn.as_mut() else {
                return Err(Outcome::error(Class::Malformed, "internal: no connection"));
            };
            if !moved {
                resp::push_command(&mut c.out, &[b"ASKING"]);
            }
            Self::command(&shared, n, &self.scratch, &mut c.out);
            t.bytes_out += c.flush().await?;
            if !moved {
                // ASKING's own reply (`+OK`); were it refused, the command's reply that
                // follows says why and is what gets counted.
                let (_, wire) = c.reply().await.map_err(|f| f.outcome(c.addr))?;
                t.bytes_in += wire;
            }
            let reply = c.reply().await.map_err(|f| f.outcome(c.addr))?;
            c.idle();
            match reply {
                (Reply::Error(e), wire) => match parse_redirect(&e) {
                    Some((m, s2, a2)) => {
                        t.bytes_in += wire;
                        (moved, s, addr) = (m, s2, a2);
                    }
                    None => {
                        t.check(shared.op, &Reply::Error(e), wire);
                        return Ok(());
                    }
                },
                (reply, wire) => {
                    t.check(shared.op, &reply, wire);
                    return Ok(());
                }
            }
        }
        t.check(
            shared.op,
            &Reply::Error(format!(
                "too many redirects for slot {s} (last to {addr}); is the cluster resharding?"
            )),
            0,
        );
        Ok(())
    }
}

/// A batch's steps on the cluster's nodes, for [`RedisSession::execute_cluster`].
impl Cluster {
    /// Drops a half-built batch: the ops noted and the commands not sent.
    fn forget_batch(&mut self) {
        for node in self.nodes.iter_mut() {
            node.ops.clear();
            if let Some(c) = node.conn.as_mut() {
                c.out.clear();
            }
        }
    }

    /// Writes each node's share of the batch; the first failure, if any.
    async fn flush_batch(&mut self, t: &mut Tally<'_>) -> Option<Outcome> {
        for node in self.nodes.iter_mut() {
            if let (false, Some(c)) = (node.ops.is_empty(), node.conn.as_mut()) {
                match c.flush().await {
                    Ok(n) => t.bytes_out += n,
                    Err(o) => return Some(o),
                }
            }
        }
        None
    }

    /// Reads each node's replies, in the order its ops were sent, into `t`; a MOVED or ASK
    /// redirect is noted in `redirected` to be followed. The first transport failure, if any.
    async fn read_batch_replies(
        &mut self,
        op: RedisOp,
        t: &mut Tally<'_>,
        redirected: &mut Vec<(u64, bool, u16, SocketAddr)>,
    ) -> Option<Outcome> {
        for node in self.nodes.iter_mut() {
            if node.ops.is_empty() {
                continue;
            }
            let Some(c) = node.conn.as_mut() else {
                continue;
            };
            for &n in &node.ops {
                node.answered += 1;
                match c.reply().await {
                    Ok((Reply::Error(e), wire)) => match parse_redirect(&e) {
                        Some((moved, s, addr)) => {
                            t.bytes_in += wire;
                            redirected.push((n, moved, s, addr));
                        }
                        None => t.check(op, &Reply::Error(e), wire),
                    },
                    Ok((reply, wire)) => t.check(op, &reply, wire),
                    Err(f) => return Some(f.outcome(c.addr)),
                }
            }
            c.idle();
        }
        None
    }

    /// Ends a batch: forgets its ops, and after a failure drops every connection, whose
    /// replies still in flight would be out of step.
    fn end_batch(&mut self, failed: bool) {
        for node in self.nodes.iter_mut() {
            node.ops.clear();
            if failed {
                node.conn = None;
            }
        }
    }
}

impl Session for RedisSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        let count = self.shared.pipeline;
        let first = op.wrapping_mul(count as u64);
        match self.mode {
            Mode::Single(_) => self.execute_single(first, count).await,
            Mode::Cluster(_) => self.execute_cluster(first, count).await,
        }
    }
}
