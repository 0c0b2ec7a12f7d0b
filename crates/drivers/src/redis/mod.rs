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

mod cluster;
mod conn;
mod info;
pub mod resp;
mod session;
pub mod slot;

use crate::Operation;
use cluster::*;
use conn::*;
pub use session::RedisSession;
use session::*;

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

crate::operations! {
    /// One Redis operation, as `redis-benchmark -t` names its tests (`get-miss` is
    /// perfbase's own).
    pub enum RedisOp {
        Ping = "ping",
        Set = "set",
        GetHit = "get",
        GetMiss = "get-miss",
        Del = "del",
        Incr = "incr",
        Lpush = "lpush",
        Rpush = "rpush",
        Lpop = "lpop",
        Rpop = "rpop",
        Sadd = "sadd",
        Zadd = "zadd",
        Hset = "hset",
    }
}

impl RedisOp {
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

#[cfg(test)]
mod tests;
