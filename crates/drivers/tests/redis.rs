//! The Redis driver against real servers from `scripts/services.sh`:
//! `eval "$(scripts/services.sh up redis redis_cluster)"` exports `PERFBASE_REDIS_URL` and
//! `PERFBASE_REDIS_CLUSTER_URL`. Without them the tests print a note and pass, unless
//! `PERFBASE_REQUIRE_SERVICES=1`, which makes them fail.
//!
//! The tests flush the servers' data, so they take one lock per server.
#![cfg(feature = "redis")]

use perfbase_core::{Class, Driver, Outcome, Session};
use perfbase_drivers::redis::resp::{parse_value, push_command, Value};
use perfbase_drivers::redis::{prefill, RedisDriver, RedisOp, RedisOptions, RedisSession};
use perfbase_drivers::workload::mix64;
use perfbase_drivers::Operation;
use std::collections::HashSet;
use std::future::Future;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Mutex, MutexGuard};

static STANDALONE: Mutex<()> = Mutex::new(());
static CLUSTER: Mutex<()> = Mutex::new(());

fn server(var: &str, lock: &'static Mutex<()>) -> Option<(String, MutexGuard<'static, ()>)> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some((url, lock.lock().unwrap_or_else(|e| e.into_inner()))),
        _ => {
            if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
                panic!(
                    "{var} is not set: run eval \"$(scripts/services.sh up redis redis_cluster)\""
                );
            }
            eprintln!("note: {var} is not set; skipping the Redis test");
            None
        }
    }
}

fn standalone() -> Option<(String, MutexGuard<'static, ()>)> {
    server("PERFBASE_REDIS_URL", &STANDALONE)
}

fn cluster() -> Option<(String, MutexGuard<'static, ()>)> {
    server("PERFBASE_REDIS_CLUSTER_URL", &CLUSTER)
}

/// Runs `f` on a current-thread runtime inside a LocalSet, as the engine's workers do.
fn local<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&rt, f)
}

/// A blocking connection for checks behind the driver's back.
struct Raw {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    /// `redis://[:password@]host:port` → a logged-in connection.
    fn standalone(url: &str) -> Raw {
        let rest = url.strip_prefix("redis://").unwrap();
        let (password, hostport) = match rest.rsplit_once('@') {
            Some((info, h)) => (Some(info.trim_start_matches(':').to_string()), h),
            None => (None, rest),
        };
        let mut raw = Raw::connect(hostport.trim_end_matches('/'));
        if let Some(p) = password {
            assert_eq!(raw.cmd(&["AUTH", &p]), Value::Simple(b"OK".to_vec()));
        }
        raw
    }

    fn connect(hostport: &str) -> Raw {
        Raw {
            stream: TcpStream::connect(hostport).unwrap(),
            buf: Vec::new(),
        }
    }

    fn cmd(&mut self, args: &[&str]) -> Value {
        let mut out = Vec::new();
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        push_command(&mut out, &args);
        self.stream.write_all(&out).unwrap();
        loop {
            if let Some((v, n)) = parse_value(&self.buf).unwrap() {
                self.buf.drain(..n);
                return v;
            }
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk).unwrap();
            assert!(n > 0, "server closed the raw connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn int(&mut self, args: &[&str]) -> i64 {
        match self.cmd(args) {
            Value::Integer(i) => i,
            other => panic!("{args:?}: {other:?}"),
        }
    }
}

fn options(keyspace: u64, pipeline: usize) -> RedisOptions {
    RedisOptions {
        keyspace,
        value_size: 3,
        pipeline,
    }
}

async fn open(driver: &RedisDriver) -> RedisSession {
    match driver.open(0).await {
        Ok(s) => s,
        Err(o) => panic!("open: {o:?}"),
    }
}

async fn session(url: &str, op: RedisOp, opts: RedisOptions) -> RedisSession {
    open(&RedisDriver::new(url, op, opts).unwrap()).await
}

fn assert_ok(o: &Outcome) {
    assert_eq!(o.class, Class::Ok, "{o:?}");
}

#[test]
fn every_op_once() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let mut raw = Raw::standalone(&url);
    raw.cmd(&["FLUSHALL"]);
    local(async {
        // SET first so that GET (op 0, the same key) hits, LPUSH before LPOP.
        for &op in RedisOp::ALL {
            let opts = RedisOptions {
                keyspace: 10,
                value_size: 100,
                pipeline: 1,
            };
            let mut s = session(&url, op, opts).await;
            let o = s.execute(0).await;
            assert_ok(&o);
            assert_eq!((o.batch, o.batch_ok), (1, 0), "{op:?}");
            assert!(o.bytes_out > 0, "{op:?}");
            if op == RedisOp::GetHit {
                // `$100\r\n` + 100 bytes + `\r\n`: the reply's size on the wire.
                assert_eq!(o.bytes_in, 100 + 6 + 2, "{o:?}");
            }
            if op == RedisOp::GetMiss {
                assert_eq!(o.bytes_in, 5, "{o:?}"); // $-1\r\n
            }
        }
    });
}

#[test]
fn incr_counts_exactly() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let mut raw = Raw::standalone(&url);
    raw.cmd(&["FLUSHALL"]);
    local(async {
        let mut s = session(&url, RedisOp::Incr, options(1, 1)).await;
        for op in 0..57 {
            assert_ok(&s.execute(op).await);
        }
    });
    assert_eq!(
        raw.cmd(&["GET", "counter:000000000000"]),
        Value::Bulk(b"57".to_vec())
    );
}

#[test]
fn lpush_then_lpop() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let mut raw = Raw::standalone(&url);
    raw.cmd(&["FLUSHALL"]);
    local(async {
        let mut push = session(&url, RedisOp::Lpush, options(1, 1)).await;
        for op in 0..20 {
            assert_ok(&push.execute(op).await);
        }
        assert_eq!(raw.int(&["LLEN", "list:000000000000"]), 20);
        let mut pop = session(&url, RedisOp::Lpop, options(1, 1)).await;
        for op in 0..20 {
            let o = pop.execute(op).await;
            assert_ok(&o);
            assert_eq!(o.bytes_in, 9, "a 3-byte bulk string: {o:?}");
        }
        assert_eq!(raw.int(&["LLEN", "list:000000000000"]), 0);
        // The list is empty: LPOP answers null, which is fine.
        let o = pop.execute(20).await;
        assert_ok(&o);
        assert_eq!(o.bytes_in, 5);
    });
}

#[test]
fn pipeline_batches() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let mut raw = Raw::standalone(&url);
    raw.cmd(&["FLUSHALL"]);
    let keyspace = 1_000_000;
    local(async {
        let mut s = session(&url, RedisOp::Set, options(keyspace, 16)).await;
        for op in 0..10 {
            let o = s.execute(op).await;
            assert_ok(&o);
            assert_eq!(o.batch, 16);
        }
    });
    // Ops 0..160, each SET of key mix64(n) % keyspace.
    let distinct: HashSet<u64> = (0..160).map(|n| mix64(n) % keyspace).collect();
    assert_eq!(raw.int(&["DBSIZE"]), distinct.len() as i64);
    let key = format!("key:{:012}", mix64(159) % keyspace);
    assert_eq!(raw.cmd(&["GET", &key]), Value::Bulk(b"xxx".to_vec()));
}

#[test]
fn prefill_then_get_hits() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let mut raw = Raw::standalone(&url);
    raw.cmd(&["FLUSHALL"]);
    local(async {
        let opts = options(2500, 8);
        assert_eq!(prefill(&url, &opts).await.unwrap(), 2500);
        assert_eq!(raw.int(&["DBSIZE"]), 2500);
        let mut s = session(&url, RedisOp::GetHit, opts).await;
        for op in 0..50 {
            let o = s.execute(op).await;
            assert_ok(&o);
            assert_eq!(o.batch, 8);
            assert_eq!(o.bytes_in, 8 * 9);
        }
        // A GET of a key that is not there is a miss: a success, counted apart, in a batch
        // or alone. A reply of another kind is still a protocol error.
        raw.cmd(&["FLUSHALL"]);
        let driver = RedisDriver::new(&url, RedisOp::GetHit, options(10, 4)).unwrap();
        let mut s = driver.open(0).await.unwrap();
        let o = s.execute(0).await;
        assert_ok(&o);
        assert_eq!(o.batch, 4);
        assert_eq!(driver.misses(), 4);
        raw.cmd(&["SET", &format!("key:{:012}", mix64(8) % 10), "v"]);
        let o = s.execute(2).await;
        assert_ok(&o);
        let missed = (8..12).filter(|&j| mix64(j) % 10 != mix64(8) % 10).count() as u64;
        assert_eq!(driver.misses(), 4 + missed, "ops 8..11 hit only op 8's key");
        raw.cmd(&["FLUSHALL"]);
        raw.cmd(&["LPUSH", &format!("key:{:012}", mix64(0) % 10), "v"]);
        let mut one = RedisDriver::new(&url, RedisOp::GetHit, options(10, 1))
            .unwrap()
            .open(0)
            .await
            .unwrap();
        let o = one.execute(0).await;
        assert_eq!(
            o.class,
            Class::ServerError,
            "WRONGTYPE is Redis's own error: {o:?}"
        );
    });
}

#[test]
fn wrong_password_is_a_connect_error() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let Some((_, hostport)) = url.rsplit_once('@') else {
        eprintln!("note: {url} has no password; skipping");
        return;
    };
    local(async {
        let secret = "not-the-password-471";
        let wrong = format!("redis://:{secret}@{hostport}");
        let d = RedisDriver::new(&wrong, RedisOp::Ping, options(1, 1)).unwrap();
        let o = d.open(0).await.err().expect("open must fail");
        assert_eq!(o.class, Class::Connect, "{o:?}");
        let detail = o.detail.as_deref().unwrap_or("");
        assert!(detail.contains("WRONGPASS"), "{detail}");
        assert!(!detail.contains(secret), "{detail}");

        let none = format!("redis://{hostport}");
        let d = RedisDriver::new(&none, RedisOp::Ping, options(1, 1)).unwrap();
        let o = d.open(0).await.err().expect("open must fail");
        assert_eq!(o.class, Class::Connect, "{o:?}");
        assert!(
            o.detail.as_deref().unwrap_or("").contains("NOAUTH"),
            "{o:?}"
        );

        let e = prefill(&wrong, &options(10, 1))
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("WRONGPASS") && !e.contains(secret), "{e}");
    });
}

#[test]
fn wrongtype_is_a_driver_error_and_the_session_survives() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let mut raw = Raw::standalone(&url);
    raw.cmd(&["FLUSHALL"]);
    raw.int(&["LPUSH", "key:000000000000", "x"]);
    local(async {
        let mut s = session(&url, RedisOp::GetHit, options(1, 1)).await;
        let o = s.execute(0).await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        assert!(
            o.detail.as_deref().unwrap_or("").starts_with("WRONGTYPE"),
            "{o:?}"
        );
        raw.int(&["DEL", "key:000000000000"]);
        raw.cmd(&["SET", "key:000000000000", "abc"]);
        assert_ok(&s.execute(1).await);
        // In a pipeline: the batch is one driver error with 0 of 4 ok, then fine again.
        raw.int(&["DEL", "key:000000000000"]);
        raw.int(&["RPUSH", "key:000000000000", "x"]);
        let mut p = session(&url, RedisOp::GetHit, options(1, 4)).await;
        let o = p.execute(0).await;
        assert_eq!(
            (o.class, o.batch, o.batch_ok),
            (Class::ServerError, 4, 0),
            "{o:?}"
        );
        raw.int(&["DEL", "key:000000000000"]);
        raw.cmd(&["SET", "key:000000000000", "abc"]);
        let o = p.execute(1).await;
        assert_ok(&o);
        assert_eq!(o.batch, 4);
    });
}

#[test]
fn killed_connection_is_a_read_error() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    let mut raw = Raw::standalone(&url);
    local(async {
        let mut s = session(&url, RedisOp::Ping, options(1, 1)).await;
        assert_ok(&s.execute(0).await);
        // Every normal client but this one (SKIPME yes is the default).
        assert!(raw.int(&["CLIENT", "KILL", "TYPE", "normal"]) >= 1);
        let o = s.execute(1).await;
        assert_eq!(o.class, Class::Read, "{o:?}");
        assert!(o.class.breaks_session());
    });
}

// ---------------------------------------------------------------------------------------------
// Cluster

/// The cluster's nodes as raw connections, from `redis+cluster://h1:p1,h2:p2,…`.
fn cluster_nodes(url: &str) -> Vec<Raw> {
    url.strip_prefix("redis+cluster://")
        .unwrap()
        .split(',')
        .map(Raw::connect)
        .collect()
}

fn flush_cluster(nodes: &mut [Raw]) {
    for n in nodes.iter_mut() {
        n.cmd(&["FLUSHALL"]);
    }
}

#[test]
fn cluster_sets_land_on_every_node() {
    let Some((url, _lock)) = cluster() else {
        return;
    };
    let mut nodes = cluster_nodes(&url);
    flush_cluster(&mut nodes);
    let keyspace = 100_000;
    let driver = RedisDriver::new(&url, RedisOp::Set, options(keyspace, 1)).unwrap();
    local(async {
        let mut s = open(&driver).await;
        for op in 0..1000 {
            assert_ok(&s.execute(op).await);
        }
    });
    assert_eq!(driver.redirects(), (0, 0));
    let distinct: HashSet<u64> = (0..1000).map(|n| mix64(n) % keyspace).collect();
    let sizes: Vec<i64> = nodes.iter_mut().map(|n| n.int(&["DBSIZE"])).collect();
    assert!(sizes.iter().all(|&s| s > 200), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<i64>(), distinct.len() as i64);

    // Pipelined: each batch split by node.
    flush_cluster(&mut nodes);
    let driver = RedisDriver::new(&url, RedisOp::Set, options(keyspace, 16)).unwrap();
    local(async {
        let mut s = open(&driver).await;
        for op in 0..100 {
            let o = s.execute(op).await;
            assert_ok(&o);
            assert_eq!(o.batch, 16);
        }
    });
    let distinct: HashSet<u64> = (0..1600).map(|n| mix64(n) % keyspace).collect();
    let total: i64 = nodes.iter_mut().map(|n| n.int(&["DBSIZE"])).sum();
    assert_eq!(total, distinct.len() as i64);
    // And prefill + GET hits through the cluster.
    local(async {
        let opts = options(3000, 32);
        assert_eq!(prefill(&url, &opts).await.unwrap(), 3000);
        let driver = RedisDriver::new(&url, RedisOp::GetHit, opts).unwrap();
        let mut s = open(&driver).await;
        for op in 0..50 {
            assert_ok(&s.execute(op).await);
        }
    });
}

#[test]
fn cluster_follows_moved() {
    let Some((url, _lock)) = cluster() else {
        return;
    };
    let mut nodes = cluster_nodes(&url);
    flush_cluster(&mut nodes);
    for pipeline in [1, 8] {
        let driver = RedisDriver::new(&url, RedisOp::Set, options(100_000, pipeline)).unwrap();
        driver.poison_slot_map_for_tests();
        local(async {
            let mut s = open(&driver).await;
            for op in 0..200 {
                let o = s.execute(op).await;
                assert_ok(&o);
                assert_eq!(o.batch as usize, pipeline);
            }
        });
        let (moved, ask) = driver.redirects();
        assert!(moved > 0, "pipeline {pipeline}: no MOVED followed");
        assert_eq!(ask, 0);
        // Each MOVED fixes one slot: at most one redirect per distinct slot of another node.
        assert!(moved <= 200 * pipeline as u64, "{moved}");
    }
}

#[test]
fn cluster_follows_ask() {
    let Some((url, _lock)) = cluster() else {
        return;
    };
    let mut nodes = cluster_nodes(&url);
    flush_cluster(&mut nodes);
    // keyspace 1: every op writes key:000000000000. Find its node (A) and another (B).
    let key = "key:000000000000";
    let slot = nodes[0].int(&["CLUSTER", "KEYSLOT", key]);
    let slot_s = slot.to_string();
    let owner = match nodes[0].cmd(&["CLUSTER", "SLOTS"]) {
        Value::Array(entries) => entries
            .iter()
            .find_map(|e| match e {
                Value::Array(p) => match (&p[0], &p[1], &p[2]) {
                    (Value::Integer(a), Value::Integer(b), Value::Array(m))
                        if (*a..=*b).contains(&slot) =>
                    {
                        match &m[1] {
                            Value::Integer(port) => Some(*port),
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            })
            .unwrap(),
        other => panic!("{other:?}"),
    };
    let ports: Vec<i64> = url
        .strip_prefix("redis+cluster://")
        .unwrap()
        .split(',')
        .map(|h| h.rsplit_once(':').unwrap().1.parse().unwrap())
        .collect();
    let a = ports.iter().position(|&p| p == owner).unwrap();
    let b = (a + 1) % ports.len();
    let id = |raw: &mut Raw| match raw.cmd(&["CLUSTER", "MYID"]) {
        Value::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    let (id_a, id_b) = (id(&mut nodes[a]), id(&mut nodes[b]));
    let ok = Value::Simple(b"OK".to_vec());
    assert_eq!(
        nodes[b].cmd(&["CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &id_a]),
        ok
    );
    assert_eq!(
        nodes[a].cmd(&["CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &id_b]),
        ok
    );
    let driver = RedisDriver::new(&url, RedisOp::Set, options(1, 1)).unwrap();
    let outcome = local(async {
        let mut s = open(&driver).await;
        s.execute(0).await
    });
    // Put the slot back before asserting, so a failure leaves the cluster usable.
    nodes[b].cmd(&["ASKING"]);
    let on_b = nodes[b].int(&["DEL", key]);
    for n in [a, b] {
        nodes[n].cmd(&["CLUSTER", "SETSLOT", &slot_s, "STABLE"]);
    }
    assert_ok(&outcome);
    assert_eq!(driver.redirects(), (0, 1));
    assert_eq!(on_b, 1, "the SET went to the importing node");
}

/// Client cost at pipeline 1 (`cargo test --release --test redis -- --ignored --nocapture`):
/// CPU time of this process per request, the figure redis-benchmark is compared on.
#[test]
#[ignore]
fn client_cpu_per_request() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    fn cpu() -> f64 {
        // SAFETY: getrusage writes into the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    }
    local(async {
        for op in [RedisOp::Ping, RedisOp::Set, RedisOp::GetHit] {
            let mut s = session(&url, op, options(1000, 1)).await;
            let n = 100_000;
            let (c0, w0) = (cpu(), std::time::Instant::now());
            for i in 0..n {
                assert_ok(&s.execute(i).await);
            }
            let (c, w) = (cpu() - c0, w0.elapsed().as_secs_f64());
            println!(
                "{}: {:.2} µs CPU/request, {:.0} requests/s on one session",
                op.name(),
                c / n as f64 * 1e6,
                n as f64 / w
            );
        }
    });
}

#[test]
fn server_version_names_the_product_and_hides_a_wrong_password() {
    let Some((url, _lock)) = standalone() else {
        return;
    };
    local(async {
        let v = perfbase_drivers::redis::server_version(&url).await.unwrap();
        eprintln!("server version: {v}");
        assert!(v.starts_with("Redis "), "{v}");
        assert!(v.chars().any(|c| c.is_ascii_digit()), "{v}");
        assert!(!v.ends_with("(cluster)"), "{v}");
        // INFO touches no data: the cluster's lock is not needed.
        if let Some(c) = std::env::var("PERFBASE_REDIS_CLUSTER_URL")
            .ok()
            .filter(|c| !c.is_empty())
        {
            let v = perfbase_drivers::redis::server_version(&c).await.unwrap();
            assert!(v.starts_with("Redis ") && v.ends_with(" (cluster)"), "{v}");
        }
        let Some((_, hostport)) = url.rsplit_once('@') else {
            eprintln!("note: {url} has no password; wrong-password check skipped");
            return;
        };
        let secret = "not-the-password-471";
        let wrong = format!("redis://:{secret}@{hostport}");
        let e = perfbase_drivers::redis::server_version(&wrong)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("WRONGPASS"), "{e}");
        assert!(!e.contains(secret), "{e}");
    });
}
