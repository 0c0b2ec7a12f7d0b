//! Redis over RESP2 on plain TCP, standalone or Redis Cluster.
//!
//! The client is hand-written on tokio's `TcpStream`, like perfbase's HTTP client, rather than
//! built on a client library, for two reasons. First, cost: `redis-benchmark` is client-bound
//! at pipeline 1 on this machine (about 12 µs of client CPU per request), so the client has to
//! be as cheap as the HTTP one: commands are serialised into one reused buffer per connection,
//! replies are parsed in place ([`resp::parse`] reads kinds and lengths, skips arrays) and
//! nothing is allocated per request on the success path. Second, visibility: in cluster mode
//! the driver must count the `MOVED` and `ASK` redirects it follows ([`RedisDriver::redirects`]),
//! which client libraries handle silently.
//!
//! Operations are those of `redis-benchmark` (`ping`, `set`, `get`, `get-miss`, `del`, `incr`,
//! `lpush`, `rpush`, `lpop`, `rpop`, `sadd`, `zadd`, `hset`). Op `n` uses key index
//! `mix64(n) % keyspace`, under a prefix per data type so that a mixed run never hits
//! `WRONGTYPE`: `key:` (strings: set, get, del), `counter:` (incr), `list:` (the list ops),
//! `set:` (sadd), `zset:` (zadd), `hash:` (hset), each followed by the index in at least 12
//! digits (`key:000000000042`). `get-miss` reads `miss:<digits>`, which no op ever writes.
//!
//! With `pipeline` N, one execute sends ops `N·op … N·op+N−1` in one write and reads their N
//! replies; the outcome stands for the batch ([`Outcome::batch_of`]). In cluster mode a batch
//! is split by node: each node gets its commands in one write, and the replies are read node
//! by node.
//!
//! Reply checks: `set` wants `+OK`-like simple strings, `get` a bulk string or a null (a miss,
//! which succeeds and is counted apart, [`RedisDriver::misses`]), `get-miss` a null,
//! `del`/`incr`/`lpush`/`rpush`/`sadd`/`zadd`/`hset` integers, `lpop`/`rpop` a bulk string or a
//! null (empty list), `ping` a simple string. Another kind of reply is class `protocol`. A Redis
//! error reply is class `driver` with the error line as detail (the session stays usable),
//! except `MOVED` and `ASK` in cluster mode, which are followed (at most 5 hops).

mod info;
pub mod resp;
pub mod slot;

use crate::workload::mix64;
pub use info::server_version;
use perfbase_core::{Class, Driver, Outcome, Session};
use resp::{Reply, Value};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use thiserror::Error;
use tokio::io::Interest;
use tokio::net::TcpStream;

/// One Redis operation, as `redis-benchmark` names its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedisOp {
    Ping,
    Set,
    GetHit,
    GetMiss,
    Del,
    Incr,
    Lpush,
    Rpush,
    Lpop,
    Rpop,
    Sadd,
    Zadd,
    Hset,
}

impl RedisOp {
    /// Every operation.
    pub const ALL: [RedisOp; 13] = [
        RedisOp::Ping,
        RedisOp::Set,
        RedisOp::GetHit,
        RedisOp::GetMiss,
        RedisOp::Del,
        RedisOp::Incr,
        RedisOp::Lpush,
        RedisOp::Rpush,
        RedisOp::Lpop,
        RedisOp::Rpop,
        RedisOp::Sadd,
        RedisOp::Zadd,
        RedisOp::Hset,
    ];

    /// The name, as `redis-benchmark -t` takes it (`get-miss` is perfbase's own).
    pub fn name(self) -> &'static str {
        match self {
            RedisOp::Ping => "ping",
            RedisOp::Set => "set",
            RedisOp::GetHit => "get",
            RedisOp::GetMiss => "get-miss",
            RedisOp::Del => "del",
            RedisOp::Incr => "incr",
            RedisOp::Lpush => "lpush",
            RedisOp::Rpush => "rpush",
            RedisOp::Lpop => "lpop",
            RedisOp::Rpop => "rpop",
            RedisOp::Sadd => "sadd",
            RedisOp::Zadd => "zadd",
            RedisOp::Hset => "hset",
        }
    }

    /// Parses a name (case-insensitive).
    pub fn from_name(name: &str) -> Option<RedisOp> {
        RedisOp::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(name))
    }

    /// The key prefix of the data type this op works on (`None`: no key).
    fn prefix(self) -> Option<&'static [u8]> {
        match self {
            RedisOp::Ping => None,
            RedisOp::Set | RedisOp::GetHit | RedisOp::Del => Some(b"key:"),
            RedisOp::GetMiss => Some(b"miss:"),
            RedisOp::Incr => Some(b"counter:"),
            RedisOp::Lpush | RedisOp::Rpush | RedisOp::Lpop | RedisOp::Rpop => Some(b"list:"),
            RedisOp::Sadd => Some(b"set:"),
            RedisOp::Zadd => Some(b"zset:"),
            RedisOp::Hset => Some(b"hash:"),
        }
    }

    /// The kind of reply this op must get, for error details.
    fn expected(self) -> &'static str {
        match self {
            RedisOp::Ping | RedisOp::Set => "a simple string",
            RedisOp::GetHit => "a bulk string or a null",
            RedisOp::GetMiss => "a null bulk string (is something writing miss:* keys?)",
            RedisOp::Lpop | RedisOp::Rpop => "a bulk string or null",
            _ => "an integer",
        }
    }

    /// Whether `reply` is the kind this op must get.
    fn accepts(self, reply: &Reply) -> bool {
        match self {
            RedisOp::Ping | RedisOp::Set => matches!(reply, Reply::Simple),
            RedisOp::GetHit => matches!(reply, Reply::Bulk(_) | Reply::Null),
            RedisOp::GetMiss => matches!(reply, Reply::Null),
            RedisOp::Lpop | RedisOp::Rpop => matches!(reply, Reply::Bulk(_) | Reply::Null),
            RedisOp::Del
            | RedisOp::Incr
            | RedisOp::Lpush
            | RedisOp::Rpush
            | RedisOp::Sadd
            | RedisOp::Zadd
            | RedisOp::Hset => matches!(reply, Reply::Integer(_)),
        }
    }
}

/// What to load: the keyspace, the value size and the pipeline depth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisOptions {
    /// Keys `key:000000000000` … `key:<keyspace-1>` (and the same indices under the other
    /// prefixes). At least 1.
    pub keyspace: u64,
    /// Bytes per value written (SET, LPUSH, RPUSH, HSET), like `redis-benchmark -d`.
    pub value_size: usize,
    /// Commands sent together per execute (`redis-benchmark -P`). At least 1.
    pub pipeline: usize,
}

impl Default for RedisOptions {
    fn default() -> RedisOptions {
        RedisOptions {
            keyspace: 100_000,
            value_size: 3,
            pipeline: 1,
        }
    }
}

/// Why a Redis driver could not be built or a prefill failed. Messages never contain the
/// password.
#[derive(Debug, Error)]
pub enum RedisError {
    /// The URL does not parse.
    #[error("invalid Redis URL: {0}; use redis://[:password@]host:port[/db] or redis+cluster://host1:port1,host2:port2")]
    Url(String),
    /// A host name did not resolve.
    #[error("cannot resolve '{host}': {source}; check the host in the Redis URL")]
    Resolve {
        host: String,
        #[source]
        source: io::Error,
    },
    /// Options out of range.
    #[error("{0}")]
    Options(String),
    /// The server could not be reached or refused the login (the detail says which).
    #[error("{0}")]
    Connect(String),
    /// The prefill's writes failed.
    #[error("prefill failed: {0}; check the server's log and its maxmemory setting")]
    Prefill(String),
}

/// Where the sessions connect.
#[derive(Debug, Clone)]
enum Target {
    Standalone { addr: SocketAddr, db: Option<u64> },
    Cluster { seeds: Vec<SocketAddr> },
}

/// `AUTH` arguments: an optional user name (Redis 6 ACLs) and the password.
type Credentials = (Option<String>, String);

struct Shared {
    target: Target,
    /// `AUTH` arguments: an optional user name and the password.
    auth: Option<Credentials>,
    op: RedisOp,
    keyspace: u64,
    pipeline: usize,
    value: Box<[u8]>,
    moved: AtomicU64,
    ask: AtomicU64,
    /// GETs that found no key (a success, as a cache miss is).
    misses: AtomicU64,
    /// Cluster: replies each node gave, merged from every session when it is dropped (a lock
    /// once per session, never per request).
    per_node: std::sync::Mutex<Vec<(SocketAddr, u64)>>,
    /// Cluster, once [`RedisDriver::map_nodes`] has run: the nodes and the slot map at the
    /// start, by which the engine charges each op to the node serving its key.
    node_map: std::sync::OnceLock<NodeMap>,
    /// Test hook: sessions opened from now on map every slot to the first node.
    poisoned: AtomicBool,
}

/// Which node served each slot when the run started.
struct NodeMap {
    nodes: Vec<SocketAddr>,
    slots: Box<[u16]>,
}

/// The Redis driver: the target and the operation, shared by all sessions.
pub struct RedisDriver {
    shared: Arc<Shared>,
}

/// Percent-decodes user info by the drivers' one rule; not UTF-8 is a URL error.
fn percent_decode(s: &str) -> Result<String, RedisError> {
    crate::userinfo::percent_decode(s)
        .ok_or_else(|| RedisError::Url("the password is not UTF-8".into()))
}

/// Splits `[user][:password]@` off the front of `rest`.
fn split_userinfo(rest: &str) -> Result<(Option<Credentials>, &str), RedisError> {
    let Some(at) = rest.rfind('@') else {
        return Ok((None, rest));
    };
    let (info, hosts) = (&rest[..at], &rest[at + 1..]);
    let auth = match info.split_once(':') {
        Some((user, pass)) => {
            let user = (!user.is_empty())
                .then(|| percent_decode(user))
                .transpose()?;
            Some((user, percent_decode(pass)?))
        }
        // `redis://password@host` is how some tools write a password alone.
        None if !info.is_empty() => Some((None, percent_decode(info)?)),
        None => None,
    };
    Ok((auth, hosts))
}

fn resolve(hostport: &str, default_port: u16) -> Result<SocketAddr, RedisError> {
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && (!h.contains(':') || h.ends_with(']')) => {
            let port = p
                .parse::<u16>()
                .map_err(|_| RedisError::Url(format!("bad port in '{hostport}'")))?;
            (h.trim_start_matches('[').trim_end_matches(']'), port)
        }
        _ => (
            hostport.trim_start_matches('[').trim_end_matches(']'),
            default_port,
        ),
    };
    if host.is_empty() {
        return Err(RedisError::Url("the URL has no host".into()));
    }
    lookup(host, port)
}

/// The first address `host:port` resolves to.
fn lookup(host: &str, port: u16) -> Result<SocketAddr, RedisError> {
    (host, port)
        .to_socket_addrs()
        .map_err(|source| RedisError::Resolve {
            host: host.to_string(),
            source,
        })?
        .next()
        .ok_or_else(|| RedisError::Resolve {
            host: host.to_string(),
            source: io::ErrorKind::NotFound.into(),
        })
}

impl RedisDriver {
    /// A driver for `url`: `redis://[[user]:password@]host[:port][/db]` (port 6379 by default)
    /// or `redis+cluster://[[user]:password@]host1:port1,host2:port2,…` (the seeds; any one
    /// that answers `CLUSTER SLOTS` gives the slot map).
    pub fn new(url: &str, op: RedisOp, options: RedisOptions) -> Result<RedisDriver, RedisError> {
        if options.pipeline == 0 {
            return Err(RedisError::Options(
                "the Redis pipeline must be at least 1".into(),
            ));
        }
        if options.keyspace == 0 {
            return Err(RedisError::Options(
                "the Redis keyspace must hold at least 1 key".into(),
            ));
        }
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| RedisError::Url("no scheme".into()))?;
        let (auth, rest) = split_userinfo(rest)?;
        let target = match scheme.to_ascii_lowercase().as_str() {
            "redis" => {
                let (hostport, path) = match rest.split_once('/') {
                    Some((h, p)) => (h, p),
                    None => (rest, ""),
                };
                let path = path.split(['?', '#']).next().unwrap_or("");
                let db = if path.is_empty() {
                    None
                } else {
                    Some(path.parse::<u64>().map_err(|_| {
                        RedisError::Url(format!("the database '{path}' is not a number"))
                    })?)
                };
                Target::Standalone {
                    addr: resolve(hostport, 6379)?,
                    db,
                }
            }
            "redis+cluster" => {
                let hosts = rest.trim_end_matches('/');
                let seeds = hosts
                    .split(',')
                    .filter(|h| !h.is_empty())
                    .map(|h| resolve(h, 6379))
                    .collect::<Result<Vec<_>, _>>()?;
                if seeds.is_empty() {
                    return Err(RedisError::Url("the cluster URL names no node".into()));
                }
                Target::Cluster { seeds }
            }
            "rediss" => {
                return Err(RedisError::Url(
                    "rediss:// (TLS) is not supported; use redis://".into(),
                ))
            }
            other => return Err(RedisError::Url(format!("unsupported scheme '{other}'"))),
        };
        Ok(RedisDriver {
            shared: Arc::new(Shared {
                target,
                auth,
                op,
                keyspace: options.keyspace,
                pipeline: options.pipeline,
                value: vec![b'x'; options.value_size].into_boxed_slice(),
                moved: AtomicU64::new(0),
                ask: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                per_node: std::sync::Mutex::new(Vec::new()),
                node_map: std::sync::OnceLock::new(),
                poisoned: AtomicBool::new(false),
            }),
        })
    }

    /// GETs so far, over all sessions, that found no key: they succeed (a cache miss is an
    /// answer, not a failure) and are counted here, so a run without prefill says so.
    pub fn misses(&self) -> u64 {
        self.shared.misses.load(Ordering::Relaxed)
    }

    /// `MOVED` and `ASK` redirects followed so far by all sessions.
    pub fn redirects(&self) -> (u64, u64) {
        (
            self.shared.moved.load(Ordering::Relaxed),
            self.shared.ask.load(Ordering::Relaxed),
        )
    }

    /// Cluster: how many replies each node gave, over the sessions that have ended (after a
    /// run, all of them), busiest first.
    pub fn per_node(&self) -> Vec<(SocketAddr, u64)> {
        let mut v = self
            .shared
            .per_node
            .lock()
            .map(|g| g.clone())
            .unwrap_or_else(|e| e.into_inner().clone());
        v.sort_by_key(|e| std::cmp::Reverse(e.1));
        v
    }

    /// Test hook: sessions opened after this call start with every slot mapped to the first
    /// node, so keys of the other nodes are answered with `MOVED`.
    pub fn poison_slot_map_for_tests(&self) {
        self.shared.poisoned.store(true, Ordering::Relaxed);
    }

    /// Cluster: reads the slot map once before the run, so that every op is also counted on
    /// the node that serves its key — per-node requests, errors and latency percentiles,
    /// beside the cluster-wide ones. Ops are charged by the map at the start (a slot that
    /// migrates during the run stays with its first node). Pipelined batches span nodes, so
    /// with a pipeline above 1 only the per-node reply counts remain. A standalone server
    /// has nothing to map.
    pub async fn map_nodes(&self) -> Result<(), Outcome> {
        let Target::Cluster { seeds } = &self.shared.target else {
            return Ok(());
        };
        let c = Cluster::open(&self.shared, seeds).await?;
        let _ = self.shared.node_map.set(NodeMap {
            nodes: c.nodes.iter().map(|n| n.addr).collect(),
            slots: c.slots,
        });
        Ok(())
    }

    /// Whether this driver targets a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.shared.target, Target::Cluster { .. })
    }

    async fn open_session(&self, sequential: bool) -> Result<RedisSession, Outcome> {
        let shared = self.shared.clone();
        let mode = match &shared.target {
            Target::Standalone { addr, db } => {
                Mode::Single(Conn::open(*addr, shared.auth.as_ref(), *db).await?)
            }
            Target::Cluster { seeds } => Mode::Cluster(Cluster::open(&shared, seeds).await?),
        };
        Ok(RedisSession {
            shared,
            mode,
            sequential,
            scratch: Vec::new(),
            redirected: Vec::new(),
        })
    }
}

impl Driver for RedisDriver {
    type Session = RedisSession;

    async fn open(&self, _worker: usize) -> Result<RedisSession, Outcome> {
        self.open_session(false).await
    }

    /// Cluster nodes, once mapped, when each op has one key ([`RedisDriver::map_nodes`]).
    fn labels(&self) -> Vec<String> {
        match self.shared.node_map.get() {
            Some(m)
                if self.shared.pipeline == 1
                    && self.shared.op.prefix().is_some()
                    && m.nodes.len() <= perfbase_core::recorder::MAX_LABELS =>
            {
                m.nodes.iter().map(|a| format!("node {a}")).collect()
            }
            _ => Vec::new(),
        }
    }

    fn label(&self, op: u64) -> u16 {
        let Some(m) = self.shared.node_map.get() else {
            return 0;
        };
        let mut buf = [0u8; KEY_BYTES];
        let key = key_of(&self.shared, op, false, &mut buf);
        m.slots[slot::slot(key) as usize] + 1
    }
}

/// Writes every key of the keyspace (`SET key:<i> value`, pipelined 1000 deep) so that
/// [`RedisOp::GetHit`] finds its keys. Returns the number of keys written.
pub async fn prefill(url: &str, options: &RedisOptions) -> Result<u64, RedisError> {
    let depth = options.keyspace.clamp(1, 1000);
    let driver = RedisDriver::new(
        url,
        RedisOp::Set,
        RedisOptions {
            pipeline: depth as usize,
            ..options.clone()
        },
    )?;
    let mut session = driver
        .open_session(true)
        .await
        .map_err(|o| RedisError::Connect(o.detail.as_deref().unwrap_or("").to_string()))?;
    let batches = options.keyspace.div_ceil(depth);
    for b in 0..batches {
        let o = session.execute(b).await;
        if o.class != Class::Ok {
            return Err(RedisError::Prefill(format!(
                "{}: {}",
                o.class.name(),
                o.detail.as_deref().unwrap_or("")
            )));
        }
    }
    Ok(options.keyspace)
}

// ---------------------------------------------------------------------------------------------
// Connections

/// The read buffer's initial size and the largest it may grow to.
const INITIAL_BUFFER: usize = 16 * 1024;
const MAX_BUFFER: usize = 1 << 30;

/// Why reading a reply failed.
enum ReadFail {
    Io(io::Error),
    Closed,
    Malformed(&'static str),
    TooLarge,
}

impl ReadFail {
    fn outcome(self, addr: SocketAddr) -> Outcome {
        match self {
            ReadFail::Io(e) => Outcome::error(Class::Read, format!("read from {addr}: {e}")),
            ReadFail::Closed => Outcome::error(
                Class::Read,
                format!("{addr} closed the connection (server restarted, CLIENT KILL or timeout)"),
            ),
            ReadFail::Malformed(m) => {
                Outcome::error(Class::Protocol, format!("malformed reply from {addr}: {m}"))
            }
            ReadFail::TooLarge => Outcome::error(
                Class::Protocol,
                format!("a reply from {addr} is larger than {MAX_BUFFER} bytes"),
            ),
        }
    }
}

/// One connection: the socket, the command buffer and the reply buffer (`buf[start..end]` is
/// received and not yet parsed).
struct Conn {
    addr: SocketAddr,
    stream: TcpStream,
    out: Vec<u8>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

async fn write_all(stream: &TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match stream.try_write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Conn {
    /// Connects, logs in (`AUTH`), selects the database and checks the connection with
    /// `PING`, all in one round trip. Any failure is class `connect`.
    async fn open(
        addr: SocketAddr,
        auth: Option<&Credentials>,
        db: Option<u64>,
    ) -> Result<Conn, Outcome> {
        let stream = TcpStream::connect(addr).await.map_err(|e| {
            Outcome::error(
                Class::Connect,
                format!(
                    "connect {addr}: {e}; is redis-server running (scripts/services.sh up redis)?"
                ),
            )
        })?;
        // Commands are written in one go; Nagle would only delay them.
        let _ = stream.set_nodelay(true);
        let mut c = Conn {
            addr,
            stream,
            out: Vec::with_capacity(256),
            buf: vec![0; INITIAL_BUFFER],
            start: 0,
            end: 0,
        };
        let mut expected = 1;
        if let Some((user, pass)) = auth {
            match user {
                Some(u) => {
                    resp::push_command(&mut c.out, &[b"AUTH", u.as_bytes(), pass.as_bytes()])
                }
                None => resp::push_command(&mut c.out, &[b"AUTH", pass.as_bytes()]),
            }
            expected += 1;
        }
        if let Some(db) = db {
            let mut n = Vec::new();
            resp::push_decimal(&mut n, db);
            resp::push_command(&mut c.out, &[b"SELECT", &n]);
            expected += 1;
        }
        resp::push_command(&mut c.out, &[b"PING"]);
        let login = |e: String| {
            let hint =
                if e.starts_with("NOAUTH") || e.starts_with("WRONGPASS") || e.contains("AUTH") {
                    "; check the password in the Redis URL (redis://:PASSWORD@host:port)"
                } else {
                    ""
                };
            Outcome::error(Class::Connect, format!("login to {addr}: {e}{hint}"))
        };
        let bytes = std::mem::take(&mut c.out);
        let sent = write_all(&c.stream, &bytes).await;
        c.out = bytes;
        c.out.clear();
        sent.map_err(|e| Outcome::error(Class::Connect, format!("write to {addr}: {e}")))?;
        let mut first_error = None;
        for _ in 0..expected {
            match c.reply().await {
                Ok((Reply::Error(e), _)) => {
                    first_error.get_or_insert(e);
                }
                Ok(_) => {}
                Err(f) => {
                    let mut o = f.outcome(addr);
                    o.class = Class::Connect;
                    return Err(o);
                }
            }
        }
        match first_error {
            Some(e) => Err(login(e)),
            None => Ok(c),
        }
    }

    /// Sends the command buffer.
    async fn flush(&mut self) -> Result<u64, Outcome> {
        let n = self.out.len() as u64;
        let r = write_all(&self.stream, &self.out).await;
        self.out.clear();
        match r {
            Ok(()) => Ok(n),
            Err(e) => Err(Outcome::error(
                Class::Write,
                format!("write to {}: {e}", self.addr),
            )),
        }
    }

    /// Reads more bytes into the buffer (compacting or growing it when full).
    async fn fill(&mut self) -> Result<(), ReadFail> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() >= MAX_BUFFER {
                return Err(ReadFail::TooLarge);
            } else {
                let len = (self.buf.len() * 2).min(MAX_BUFFER);
                self.buf.resize(len, 0);
            }
        }
        loop {
            match self.stream.try_read(&mut self.buf[self.end..]) {
                Ok(0) => return Err(ReadFail::Closed),
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stream.readable().await.map_err(ReadFail::Io)?
                }
                Err(e) => return Err(ReadFail::Io(e)),
            }
        }
    }

    /// The next reply and its size on the wire.
    async fn reply(&mut self) -> Result<(Reply, u64), ReadFail> {
        loop {
            match resp::parse(&self.buf[self.start..self.end]) {
                Ok(Some((reply, n))) => {
                    self.start += n;
                    if self.start == self.end {
                        self.start = 0;
                        self.end = 0;
                    }
                    return Ok((reply, n as u64));
                }
                Ok(None) => self.fill().await?,
                Err(m) => return Err(ReadFail::Malformed(m.0)),
            }
        }
    }

    /// The next reply as a value (outside the hot path).
    async fn value(&mut self) -> Result<Value, ReadFail> {
        loop {
            match resp::parse_value(&self.buf[self.start..self.end]) {
                Ok(Some((v, n))) => {
                    self.start += n;
                    if self.start == self.end {
                        self.start = 0;
                        self.end = 0;
                    }
                    return Ok(v);
                }
                Ok(None) => self.fill().await?,
                Err(m) => return Err(ReadFail::Malformed(m.0)),
            }
        }
    }

    /// After the last expected reply: forget the read readiness without a syscall, so the
    /// next read waits for epoll instead of first trying a read that would block.
    fn idle(&self) {
        if self.start == self.end {
            let _ = self.stream.try_io(Interest::READABLE, || {
                Err::<(), _>(io::ErrorKind::WouldBlock.into())
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cluster state

struct Node {
    addr: SocketAddr,
    conn: Option<Conn>,
    /// Replies this node gave this session.
    answered: u64,
    /// The ops of the current batch sent to this node, in order.
    ops: Vec<u64>,
}

/// One session's view of the cluster: the nodes and which node serves each slot.
struct Cluster {
    nodes: Vec<Node>,
    slots: Box<[u16]>,
}

impl Cluster {
    async fn open(shared: &Shared, seeds: &[SocketAddr]) -> Result<Cluster, Outcome> {
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
    fn from_slots(seed: SocketAddr, value: &Value) -> Result<Cluster, String> {
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
    fn node_index(&mut self, addr: SocketAddr) -> usize {
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

fn resolve_node(host: &str, port: i64) -> Result<SocketAddr, RedisError> {
    let port = u16::try_from(port).map_err(|_| RedisError::Url(format!("bad node port {port}")))?;
    lookup(host, port)
}

/// The decimal digits of `n`, written into `buf`.
fn decimal(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
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
fn parse_redirect(error: &str) -> Option<(bool, u16, SocketAddr)> {
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

// ---------------------------------------------------------------------------------------------
// Sessions

enum Mode {
    Single(Conn),
    Cluster(Cluster),
}

/// One connection (standalone) or one connection per cluster node, opened when first needed.
pub struct RedisSession {
    shared: Arc<Shared>,
    mode: Mode,
    /// Key index = op % keyspace (the prefill) instead of mix64(op) % keyspace.
    sequential: bool,
    /// A key being formatted.
    scratch: Vec<u8>,
    /// Cluster: ops of the batch that got a redirect, with it.
    redirected: Vec<(u64, bool, u16, SocketAddr)>,
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
fn describe(reply: &Reply) -> String {
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
struct Tally<'a> {
    ok: u32,
    bytes_in: u64,
    bytes_out: u64,
    /// The first failed reply (class `driver` or `protocol`) and its detail.
    error: Option<(Class, String)>,
    /// GETs of the batch that found no key, added to the driver's count when the tally is
    /// dropped (once a batch, however it ended, rather than an atomic add per miss).
    misses: u64,
    all_misses: &'a AtomicU64,
}

impl Drop for Tally<'_> {
    fn drop(&mut self) {
        if self.misses > 0 {
            self.all_misses.fetch_add(self.misses, Ordering::Relaxed);
        }
    }
}

impl<'a> Tally<'a> {
    fn new(shared: &'a Shared) -> Tally<'a> {
        Tally {
            ok: 0,
            bytes_in: 0,
            bytes_out: 0,
            error: None,
            misses: 0,
            all_misses: &shared.misses,
        }
    }

    fn check(&mut self, op: RedisOp, reply: &Reply, wire: u64) {
        self.bytes_in += wire;
        if op.accepts(reply) {
            self.ok += 1;
            if op == RedisOp::GetHit && matches!(reply, Reply::Null) {
                self.misses += 1;
            }
            return;
        }
        let (class, detail) = match reply {
            Reply::Error(e) => (Class::Driver, e.clone()),
            other => (
                Class::Protocol,
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
            Some((Class::Driver, _)) if class == Class::Protocol => {
                self.error = Some((class, detail))
            }
            Some(_) => {}
            None => self.error = Some((class, detail)),
        }
    }

    fn outcome(mut self, n: u32) -> Outcome {
        match self.error.take() {
            None => Outcome::ok(self.bytes_in, self.bytes_out).batch_of(n, n),
            Some((class, detail)) => Outcome::error(class, detail)
                .with_bytes(self.bytes_in, self.bytes_out)
                .batch_of(n, self.ok),
        }
    }

    /// A transport failure cuts the batch short.
    fn fail(&self, o: Outcome, n: u32) -> Outcome {
        o.with_bytes(self.bytes_in, self.bytes_out)
            .batch_of(n, self.ok)
    }
}

/// Room for the longest key: a 8-byte prefix and up to 20 digits.
const KEY_BYTES: usize = 32;

/// Op `n`'s key (empty for PING): the op's prefix and a 12-digit index, random over the
/// keyspace or, for `sequential`, in order. A pure function of `n`, so the driver can tell
/// which cluster node an op goes to without a session.
fn key_of<'b>(shared: &Shared, n: u64, sequential: bool, buf: &'b mut [u8; KEY_BYTES]) -> &'b [u8] {
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
    fn key(&mut self, n: u64) {
        self.scratch.clear();
        let mut buf = [0u8; KEY_BYTES];
        let key = key_of(&self.shared, n, self.sequential, &mut buf);
        self.scratch.extend_from_slice(key);
    }

    /// Appends op `n`'s command (its key already in `self.scratch`) to `out`.
    fn command(shared: &Shared, n: u64, key: &[u8], out: &mut Vec<u8>) {
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

    async fn execute_single(&mut self, first: u64, count: usize) -> Outcome {
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
            return Outcome::error(Class::Protocol, "internal: not a standalone session");
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

    async fn execute_cluster(&mut self, first: u64, count: usize) -> Outcome {
        let shared = self.shared.clone();
        let n_ops = count as u32;
        let mut t = Tally::new(&shared);
        // Group the batch by node: each node's commands go into its connection's buffer.
        for j in 0..count as u64 {
            let n = first + j;
            self.key(n);
            let Mode::Cluster(cl) = &mut self.mode else {
                return Outcome::error(Class::Protocol, "internal: not a cluster session");
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
                        // Nothing was sent: forget the half-built batch.
                        for node in cl.nodes.iter_mut() {
                            node.ops.clear();
                            if let Some(c) = node.conn.as_mut() {
                                c.out.clear();
                            }
                        }
                        return t.fail(o, n_ops);
                    }
                }
            }
            node.ops.push(n);
            if let Some(c) = node.conn.as_mut() {
                Self::command(&shared, n, &self.scratch, &mut c.out);
            }
        }
        let Mode::Cluster(cl) = &mut self.mode else {
            return Outcome::error(Class::Protocol, "internal: not a cluster session");
        };
        let mut failed = None;
        for node in cl.nodes.iter_mut() {
            if let (false, Some(c)) = (node.ops.is_empty(), node.conn.as_mut()) {
                match c.flush().await {
                    Ok(n) => t.bytes_out += n,
                    Err(o) => {
                        failed = Some(o);
                        break;
                    }
                }
            }
        }
        self.redirected.clear();
        if failed.is_none() {
            'nodes: for node in cl.nodes.iter_mut() {
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
                                self.redirected.push((n, moved, s, addr));
                            }
                            None => t.check(shared.op, &Reply::Error(e), wire),
                        },
                        Ok((reply, wire)) => t.check(shared.op, &reply, wire),
                        Err(f) => {
                            failed = Some(f.outcome(c.addr));
                            break 'nodes;
                        }
                    }
                }
                c.idle();
            }
        }
        for node in cl.nodes.iter_mut() {
            node.ops.clear();
            if failed.is_some() {
                // The replies still in flight would be out of step: drop every connection.
                node.conn = None;
            }
        }
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

    /// Follows a redirect of op `n` (at most 5 hops), accounting its reply in `t`.
    async fn follow(
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
                    Class::Protocol,
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
                return Err(Outcome::error(Class::Protocol, "internal: no connection"));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_round_trip() {
        for op in RedisOp::ALL {
            assert_eq!(RedisOp::from_name(op.name()), Some(op));
        }
        assert_eq!(RedisOp::from_name("GET"), Some(RedisOp::GetHit));
        assert_eq!(RedisOp::from_name("mset"), None);
    }

    #[test]
    fn urls() {
        let d = RedisDriver::new(
            "redis://:secret@127.0.0.1:7000/2",
            RedisOp::Ping,
            RedisOptions::default(),
        )
        .unwrap();
        assert!(matches!(
            d.shared.target,
            Target::Standalone { db: Some(2), .. }
        ));
        assert_eq!(d.shared.auth, Some((None, "secret".to_string())));
        let d = RedisDriver::new(
            "redis+cluster://127.0.0.1:1,127.0.0.1:2",
            RedisOp::Ping,
            RedisOptions::default(),
        )
        .unwrap();
        assert!(d.is_cluster());
        for bad in [
            "http://x:1",
            "redis://:pw@127.0.0.1:port",
            "redis://127.0.0.1:1/x",
            "rediss://h:1",
        ] {
            let e = RedisDriver::new(bad, RedisOp::Ping, RedisOptions::default())
                .err()
                .unwrap()
                .to_string();
            assert!(!e.contains("pw@"), "{e}");
        }
        let zero = RedisOptions {
            pipeline: 0,
            ..RedisOptions::default()
        };
        assert!(RedisDriver::new("redis://127.0.0.1:1", RedisOp::Ping, zero).is_err());
    }

    #[test]
    fn redirects_parse() {
        let (moved, s, a) = parse_redirect("MOVED 3999 127.0.0.1:6381").unwrap();
        assert!(moved);
        assert_eq!(s, 3999);
        assert_eq!(a, "127.0.0.1:6381".parse().unwrap());
        let (moved, _, _) = parse_redirect("ASK 1 127.0.0.1:1").unwrap();
        assert!(!moved);
        assert!(parse_redirect("ERR MOVED").is_none());
        assert!(parse_redirect("MOVED 99999 127.0.0.1:1").is_none());
    }
}
