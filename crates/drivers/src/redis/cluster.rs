//! A session's view of a Redis Cluster: one connection per node, the slot map, and the
//! MOVED/ASK redirections followed.

use super::*;

pub(super) struct Node {
    pub(super) addr: SocketAddr,
    pub(super) conn: Option<Conn>,
    /// Replies this node gave this session.
    pub(super) answered: u64,
    /// The ops of the current batch sent to this node, in order.
    pub(super) ops: Vec<u64>,
}

/// One session's view of the cluster: the nodes and which node serves each slot.
pub(super) struct Cluster {
    pub(super) nodes: Vec<Node>,
    pub(super) slots: Box<[u16]>,
}

impl Cluster {
    pub(super) async fn open(shared: &Shared, seeds: &[SocketAddr]) -> Result<Cluster, Outcome> {
        let mut last = None;
        for &seed in seeds {
            let mut conn = match Conn::open(seed, shared.auth.as_ref(), None).await {
                Ok(c) => c,
                Err(o) => {
                    last = Some(o);
                    continue;
                }
            };
            resp::push_command(&mut conn.out, &[b"CLUSTER", b"SLOTS"]);
            if let Err(o) = conn.flush().await {
                last = Some(o);
                continue;
            }
            let value = match conn.value().await {
                Ok(v) => v,
                Err(f) => {
                    last = Some(f.outcome(seed));
                    continue;
                }
            };
            match Cluster::from_slots(seed, &value) {
                Ok(mut c) => {
                    if shared.poisoned.load(Ordering::Relaxed) {
                        c.slots.fill(0);
                    }
                    let i = c.node_index(seed);
                    c.nodes[i].conn = Some(conn);
                    return Ok(c);
                }
                Err(e) => {
                    return Err(Outcome::error(
                        Class::Connect,
                        format!("CLUSTER SLOTS from {seed}: {e}"),
                    ))
                }
            }
        }
        Err(last.unwrap_or_else(|| Outcome::error(Class::Connect, "no cluster seed")))
    }

    /// The slot map from a `CLUSTER SLOTS` reply (each entry: first slot, last slot, master
    /// `[host, port, …]`, replicas…).
    pub(super) fn from_slots(seed: SocketAddr, value: &Value) -> Result<Cluster, String> {
        let entries = match value {
            Value::Array(e) => e,
            Value::Error(e) => {
                return Err(format!(
                    "{e}; is this a Redis Cluster node (cluster-enabled yes)? use redis:// for a standalone server"
                ))
            }
            _ => return Err("unexpected reply".into()),
        };
        let mut c = Cluster {
            nodes: Vec::new(),
            slots: vec![u16::MAX; slot::SLOTS].into_boxed_slice(),
        };
        for e in entries {
            let Value::Array(parts) = e else {
                return Err("an entry is not an array".into());
            };
            let (Some(Value::Integer(first)), Some(Value::Integer(last)), Some(Value::Array(m))) =
                (parts.first(), parts.get(1), parts.get(2))
            else {
                return Err("an entry lacks its slot range or master".into());
            };
            let host = match m.first() {
                Some(Value::Bulk(h)) if !h.is_empty() && h != b"?" => {
                    String::from_utf8_lossy(h).into_owned()
                }
                // An empty host: the node we asked.
                _ => seed.ip().to_string(),
            };
            let Some(Value::Integer(port)) = m.get(1) else {
                return Err("a master lacks its port".into());
            };
            let addr = resolve_node(&host, *port).map_err(|e| e.to_string())?;
            let i = c.node_index(addr);
            let (first, last) = (*first, *last);
            if !(0..slot::SLOTS as i64).contains(&first)
                || !(first..slot::SLOTS as i64).contains(&last)
            {
                return Err(format!("bad slot range {first}-{last}"));
            }
            for s in first..=last {
                c.slots[s as usize] = i as u16;
            }
        }
        if c.nodes.is_empty() {
            return Err(
                "no slots are assigned (is the cluster created? redis-cli --cluster create)".into(),
            );
        }
        // Unassigned slots go to the first node, which will redirect or refuse them.
        for s in c.slots.iter_mut() {
            if *s == u16::MAX {
                *s = 0;
            }
        }
        Ok(c)
    }

    /// The index of the node at `addr`, added if new.
    pub(super) fn node_index(&mut self, addr: SocketAddr) -> usize {
        match self.nodes.iter().position(|n| n.addr == addr) {
            Some(i) => i,
            None => {
                self.nodes.push(Node {
                    addr,
                    conn: None,
                    answered: 0,
                    ops: Vec::new(),
                });
                self.nodes.len() - 1
            }
        }
    }
}

pub(super) fn resolve_node(host: &str, port: i64) -> Result<SocketAddr, RedisError> {
    let port = u16::try_from(port).map_err(|_| RedisError::Url(format!("bad node port {port}")))?;
    lookup(host, port)
}

/// The decimal digits of `n`, written into `buf`.
pub(super) fn decimal(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// A `MOVED` or `ASK` redirect: `MOVED 3999 127.0.0.1:6381`.
pub(super) fn parse_redirect(error: &str) -> Option<(bool, u16, SocketAddr)> {
    let (moved, rest) = if let Some(r) = error.strip_prefix("MOVED ") {
        (true, r)
    } else {
        (false, error.strip_prefix("ASK ")?)
    };
    let (slot, addr) = rest.split_once(' ')?;
    let slot: u16 = slot
        .parse()
        .ok()
        .filter(|s| usize::from(*s) < slot::SLOTS)?;
    let (host, port) = addr.trim().rsplit_once(':')?;
    let addr = resolve_node(host.trim_matches(['[', ']']), port.parse().ok()?).ok()?;
    Some((moved, slot, addr))
}
