//! Tests of the configurable demo routes (`/lookup`, `/work`, `/health/all`, `/limited`,
//! `/stats`) over real sockets with the raw HTTP/1.1 client, plus unit tests of the limiter.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;

use crate::demo::{corpus_index, RateLimiter, Verdict};
use crate::testutil::{Client, Resp};
use crate::{serve_with, spawn, spawn_with, Config, RateLimit, Stats};

fn config() -> Config {
    Config::default()
}

/// GET `path` with extra header lines (each `Name: value`).
async fn get_with(c: &mut Client, path: &str, headers: &[&str]) -> Resp {
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    c.send_raw(req.as_bytes()).await;
    c.response().await.unwrap()
}

#[test]
fn default_config_matches_the_documented_defaults() {
    let c = Config::default();
    assert_eq!(c.corpus_size, 10_000);
    assert_eq!(c.lookup_cpu, Duration::ZERO);
    assert_eq!(c.lookup_delay, Duration::ZERO);
    assert_eq!(c.workers, None);
    assert_eq!(c.work_time, Duration::from_millis(10));
    assert_eq!(c.health_checks, 4);
    assert_eq!(c.health_check_time, Duration::from_millis(5));
    assert!(!c.health_concurrent);
    assert_eq!(
        c.rate_limit,
        Some(RateLimit {
            limit: 120,
            window: Duration::from_secs(60)
        })
    );
    assert_eq!(
        c.api_token, "",
        "no token bypasses the limit unless one is set"
    );
}

#[tokio::test]
async fn lookup_hits_and_misses() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for i in [0u64, 17, 9999] {
        let r = c.get(&format!("/lookup/key-{i}")).await;
        assert_eq!(r.status, 200, "key-{i}");
        assert_eq!(
            r.body,
            format!("{{\"key\":\"key-{i}\",\"value\":\"value-{i}\"}}").as_bytes()
        );
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    for key in [
        "key-10000",
        "key-017",
        "key-00",
        "key--1",
        "key-+1",
        "key-",
        "key-1x",
        "KEY-1",
        "value-1",
        "",
        "key-1/2",
        "key-99999999999999999999999",
    ] {
        let r = c.get(&format!("/lookup/{key}")).await;
        assert_eq!(r.status, 404, "{key:?}");
        assert_eq!(r.body, br#"{"error":"not found"}"#, "{key:?}");
        assert_eq!(r.header("content-type"), Some("application/json"));
    }
    // Without the slash it is not the lookup route at all.
    let r = c.get("/lookup").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body, b"not found\n");
}

#[tokio::test]
async fn lookup_respects_corpus_size() {
    let server = spawn_with(
        0,
        Config {
            corpus_size: 3,
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/lookup/key-2").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, br#"{"key":"key-2","value":"value-2"}"#);
    assert_eq!(c.get("/lookup/key-3").await.status, 404);

    let server = spawn_with(
        0,
        Config {
            corpus_size: 0,
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    assert_eq!(c.get("/lookup/key-0").await.status, 404);
}

#[test]
fn corpus_index_accepts_only_canonical_keys() {
    assert_eq!(corpus_index("key-0", 1), Some(0));
    assert_eq!(corpus_index("key-0", 0), None);
    assert_eq!(corpus_index("key-42", 43), Some(42));
    assert_eq!(corpus_index("key-43", 43), None);
    assert_eq!(corpus_index("key-042", 100), None);
    assert_eq!(corpus_index("key- 1", 100), None);
    assert_eq!(
        corpus_index("key-18446744073709551614", u64::MAX),
        Some(u64::MAX - 1)
    );
    assert_eq!(corpus_index("key-18446744073709551616", u64::MAX), None);
}

#[tokio::test]
async fn lookup_delay_adds_latency() {
    let server = spawn_with(
        0,
        Config {
            lookup_delay: Duration::from_millis(30),
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    for path in ["/lookup/key-1", "/lookup/missing"] {
        let start = Instant::now();
        let r = c.get(path).await;
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(30), "{path} took {took:?}");
        assert!(took < Duration::from_secs(5), "{path} took {took:?}");
        assert!(r.status == 200 || r.status == 404);
    }
    // Other routes are not slowed down.
    let start = Instant::now();
    assert_eq!(c.get("/").await.status, 200);
    assert!(start.elapsed() < Duration::from_millis(30));
}

/// CPU time (user + system) used so far by this process's threads named `name`, from
/// `/proc/self/task/*/stat` (assuming the usual 100 clock ticks per second); `None` where
/// that is not available.
fn threads_cpu(name: &str) -> Option<Duration> {
    let mut ticks = 0u64;
    let mut found = false;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let dir = task.ok()?.path();
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else {
            continue; // the thread exited meanwhile
        };
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        ticks += fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        found = true;
    }
    found.then(|| Duration::from_millis(ticks * 10))
}

#[test]
fn lookup_cpu_burns_cpu_on_the_server_threads() {
    const THREAD: &str = "refcpu-probe";
    // The server gets its own uniquely named runtime so its threads' CPU can be told apart.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(THREAD)
        .enable_all()
        .build()
        .unwrap();
    let listener = server_rt
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let config = Config {
        lookup_cpu: Duration::from_millis(20),
        ..config()
    };
    server_rt.spawn(serve_with(
        listener,
        config,
        Stats::default(),
        std::future::pending(),
    ));
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let before = threads_cpu(THREAD);
    client_rt.block_on(async {
        let mut c = Client::connect(addr).await;
        for i in 0..10 {
            let start = Instant::now();
            let r = c.get(&format!("/lookup/key-{i}")).await;
            let took = start.elapsed();
            assert_eq!(r.status, 200);
            assert!(took >= Duration::from_millis(20), "took {took:?}");
        }
    });
    let after = threads_cpu(THREAD);
    if let (Some(before), Some(after)) = (before, after) {
        // 200 ms of wall-clock spinning; allow for the spinner being preempted on a busy box.
        let used = after.saturating_sub(before);
        assert!(
            used >= Duration::from_millis(50),
            "server threads used {used:?}"
        );
    }
    server_rt.shutdown_background();
}

#[tokio::test]
async fn lookup_cpu_makes_each_request_take_at_least_that_long() {
    let server = spawn_with(
        0,
        Config {
            lookup_cpu: Duration::from_millis(5),
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    for _ in 0..3 {
        let start = Instant::now();
        assert_eq!(c.get("/lookup/key-5").await.status, 200);
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(5), "took {took:?}");
    }
}

/// Connect `n` clients first, then send `path` on all of them at once; each request's
/// completion time since the common start, sorted.
async fn concurrent_gets(
    server: &crate::Background,
    path: &'static str,
    n: usize,
) -> Vec<Duration> {
    let mut clients = Vec::new();
    for _ in 0..n {
        clients.push(Client::connect(server.addr).await);
    }
    while server.stats.connections() < n as u64 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for mut c in clients {
        tasks.spawn(async move {
            let r = c.get(path).await;
            assert_eq!(r.status / 100, 2, "{path}: {r:?}");
            start.elapsed()
        });
    }
    let mut done = Vec::new();
    while let Some(took) = tasks.join_next().await {
        done.push(took.unwrap());
    }
    done.sort();
    done
}

#[tokio::test]
async fn workers_cap_work_throughput_in_waves() {
    let server = spawn_with(
        0,
        Config {
            workers: Some(2),
            work_time: Duration::from_millis(50),
            ..config()
        },
    )
    .unwrap();
    let done = concurrent_gets(&server, "/work", 8).await;
    let total = done[7];
    assert!(total >= Duration::from_millis(190), "{done:?}");
    assert!(total < Duration::from_millis(400), "{done:?}");
    // Two at a time: the k-th completion (0-based) comes no earlier than wave k/2 + 1.
    for (k, took) in done.iter().enumerate() {
        let wave = (k / 2 + 1) as u32;
        assert!(*took >= Duration::from_millis(50) * wave, "{done:?}");
    }
    assert_eq!(server.stats.requests(), 8);
}

#[tokio::test]
async fn work_without_a_cap_runs_all_at_once() {
    let server = spawn_with(
        0,
        Config {
            work_time: Duration::from_millis(50),
            ..config()
        },
    )
    .unwrap();
    let done = concurrent_gets(&server, "/work", 8).await;
    assert!(done[0] >= Duration::from_millis(50), "{done:?}");
    assert!(done[7] < Duration::from_millis(150), "{done:?}");
}

#[tokio::test]
async fn workers_cap_lookups_too() {
    let server = spawn_with(
        0,
        Config {
            workers: Some(1),
            lookup_delay: Duration::from_millis(30),
            ..config()
        },
    )
    .unwrap();
    let done = concurrent_gets(&server, "/lookup/key-3", 3).await;
    assert!(done[2] >= Duration::from_millis(90), "{done:?}");
    assert!(done[2] < Duration::from_millis(300), "{done:?}");
}

#[tokio::test]
async fn health_all_sequential_adds_up_the_checks() {
    let server = spawn_with(
        0,
        Config {
            health_checks: 4,
            health_check_time: Duration::from_millis(20),
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    let start = Instant::now();
    let r = c.get("/health/all").await;
    let took = start.elapsed();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, br#"{"status":"ok","checks":4,"mode":"sequential"}"#);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(took >= Duration::from_millis(80), "took {took:?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // A request may ask for the other mode, whatever the service's flag.
    let start = Instant::now();
    let r = c.get("/health/all?mode=concurrent").await;
    let took = start.elapsed();
    assert_eq!(r.body, br#"{"status":"ok","checks":4,"mode":"concurrent"}"#);
    assert!(took < Duration::from_millis(60), "took {took:?}");
    let r = c.get("/health/all?mode=sideways").await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn health_all_concurrent_takes_one_check_time() {
    let server = spawn_with(
        0,
        Config {
            health_checks: 4,
            health_check_time: Duration::from_millis(20),
            health_concurrent: true,
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    let start = Instant::now();
    let r = c.get("/health/all").await;
    let took = start.elapsed();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, br#"{"status":"ok","checks":4,"mode":"concurrent"}"#);
    assert!(took >= Duration::from_millis(20), "took {took:?}");
    assert!(took < Duration::from_millis(60), "took {took:?}");
}

#[tokio::test]
async fn health_all_with_defaults_and_no_checks() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/health/all").await;
    assert_eq!(r.body, br#"{"status":"ok","checks":4,"mode":"sequential"}"#);

    let server = spawn_with(
        0,
        Config {
            health_checks: 0,
            health_concurrent: true,
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/health/all").await;
    assert_eq!(r.body, br#"{"status":"ok","checks":0,"mode":"concurrent"}"#);
}

#[tokio::test]
async fn rate_limit_allows_exactly_the_limit_per_window() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let mut statuses = Vec::new();
    for i in 0..130 {
        let r = c.get(&format!("/limited/item-{i}")).await;
        if r.status == 200 {
            assert_eq!(r.body, b"ok\n");
            assert_eq!(r.header("retry-after"), None);
        } else {
            assert_eq!(r.status, 429);
            assert_eq!(r.body, b"rate limited\n");
            let secs: u64 = r.header("retry-after").unwrap().parse().unwrap();
            assert!((1..=60).contains(&secs), "Retry-After {secs}");
        }
        statuses.push(r.status);
    }
    assert_eq!(statuses.iter().filter(|&&s| s == 200).count(), 120);
    assert_eq!(statuses.iter().filter(|&&s| s == 429).count(), 10);
    assert!(statuses[..120].iter().all(|&s| s == 200));
    assert_eq!(server.stats.connections(), 1);

    // Only /limited is limited: the rest of the service still answers this client.
    assert_eq!(c.get("/").await.status, 200);
    assert_eq!(c.get("/lookup/key-1").await.status, 200);
    assert_eq!(c.get("/health").await.status, 200);
    // A new connection from the same IP shares the same window.
    let mut c2 = Client::connect(server.addr).await;
    assert_eq!(c2.get("/limited/").await.status, 429);
}

#[tokio::test]
async fn api_token_bypasses_the_rate_limit() {
    let server = spawn_with(
        0,
        Config {
            api_token: "t0ken".to_owned(),
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    for _ in 0..130 {
        let r = get_with(&mut c, "/limited/x", &["Authorization: Bearer t0ken"]).await;
        assert_eq!(r.status, 200);
    }
    // Token requests did not use up the window.
    assert_eq!(c.get("/limited/x").await.status, 200);

    // Without a configured token, the once-documented default gets no pass.
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let old = ["Authorization: Bearer demo-token", "Authorization: Bearer "];
    let statuses: Vec<u16> = {
        let mut v = Vec::new();
        for _ in 0..121 {
            v.push(get_with(&mut c, "/limited/x", &old).await.status);
        }
        v
    };
    assert_eq!(statuses.iter().filter(|&&s| s == 200).count(), 120);
    assert_eq!(statuses[120], 429);

    let server = spawn_with(
        0,
        Config {
            rate_limit: Some(RateLimit {
                limit: 2,
                window: Duration::from_secs(60),
            }),
            api_token: "s3cret".to_owned(),
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    let wrong = ["Authorization: Bearer demo-token"];
    assert_eq!(get_with(&mut c, "/limited/a", &wrong).await.status, 200);
    assert_eq!(get_with(&mut c, "/limited/a", &wrong).await.status, 200);
    assert_eq!(get_with(&mut c, "/limited/a", &wrong).await.status, 429);
    let no_scheme = ["Authorization: s3cret"];
    assert_eq!(get_with(&mut c, "/limited/a", &no_scheme).await.status, 429);
    let right = ["authorization: bearer s3cret"];
    assert_eq!(get_with(&mut c, "/limited/a", &right).await.status, 200);
}

#[tokio::test]
async fn rate_limit_window_expires() {
    let server = spawn_with(
        0,
        Config {
            rate_limit: Some(RateLimit {
                limit: 5,
                window: Duration::from_millis(200),
            }),
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    let first = Instant::now();
    for round in 0..2 {
        for _ in 0..5 {
            assert_eq!(c.get("/limited/w").await.status, 200, "round {round}");
        }
        let r = c.get("/limited/w").await;
        assert_eq!(r.status, 429, "round {round}");
        // Less than a second left: rounded up to one.
        assert_eq!(r.header("retry-after"), Some("1"));
        // Past the end of this window (which started at or after `first` + 250 ms · round).
        let next = first + Duration::from_millis(250) * (round + 1);
        tokio::time::sleep_until(next.into()).await;
    }
    assert_eq!(c.get("/limited/w").await.status, 200);
}

#[tokio::test]
async fn rate_limit_can_be_switched_off() {
    let server = spawn_with(
        0,
        Config {
            rate_limit: None,
            ..config()
        },
    )
    .unwrap();
    let mut c = Client::connect(server.addr).await;
    for _ in 0..150 {
        assert_eq!(c.get("/limited/free").await.status, 200);
    }
}

#[test]
fn limiter_counts_fixed_windows_per_client() {
    let limiter = RateLimiter::new(RateLimit {
        limit: 2,
        window: Duration::from_secs(60),
    });
    let a = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
    let b = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    assert_eq!(limiter.check(a, at(0)), Verdict::Allowed);
    assert_eq!(limiter.check(a, at(500)), Verdict::Allowed);
    assert_eq!(
        limiter.check(a, at(500)),
        Verdict::Limited {
            retry_after_secs: 60
        }
    );
    // Another client has its own window.
    assert_eq!(limiter.check(b, at(1_000)), Verdict::Allowed);
    // Whole seconds left, rounded up.
    assert_eq!(
        limiter.check(a, at(58_999)),
        Verdict::Limited {
            retry_after_secs: 2
        }
    );
    assert_eq!(
        limiter.check(a, at(59_000)),
        Verdict::Limited {
            retry_after_secs: 1
        }
    );
    assert_eq!(
        limiter.check(a, at(59_999)),
        Verdict::Limited {
            retry_after_secs: 1
        }
    );
    // The window is fixed from the first request: it ends at 60 s, not 60 s after the last.
    assert_eq!(limiter.check(a, at(60_000)), Verdict::Allowed);
    assert_eq!(limiter.check(a, at(60_001)), Verdict::Allowed);
    assert!(matches!(
        limiter.check(a, at(60_002)),
        Verdict::Limited { .. }
    ));
    // b's window started at 1 s and still has room for one more.
    assert_eq!(limiter.check(b, at(60_500)), Verdict::Allowed);
    assert!(matches!(
        limiter.check(b, at(60_600)),
        Verdict::Limited { .. }
    ));
}

#[test]
fn limiter_prunes_expired_clients() {
    let limiter = RateLimiter::new(RateLimit {
        limit: 1,
        window: Duration::from_secs(1),
    });
    let t0 = Instant::now();
    for i in 0..2_000u32 {
        let ip = IpAddr::V4(Ipv4Addr::from(0x7f00_0000 + i));
        assert_eq!(limiter.check(ip, t0), Verdict::Allowed);
    }
    let later = t0 + Duration::from_secs(2);
    let fresh = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    assert_eq!(limiter.check(fresh, later), Verdict::Allowed);
    assert_eq!(limiter.tracked(), 1);
}

#[tokio::test]
async fn stats_route_reports_counters() {
    // The journey routes' counts, none of them used here.
    const ROUTES: &str = concat!(
        r#","routes":{"login":0,"items_create":0,"items_read":0,"items_delete":0,"#,
        r#""session_new":0,"session_returning":0,"unauthorized":0}}"#
    );
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    assert_eq!(c.get("/").await.status, 200);
    assert_eq!(c.get("/lookup/key-1").await.status, 200);
    let r = c.get("/stats").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.body,
        format!(r#"{{"connections":1,"requests":2{ROUTES}"#).as_bytes()
    );

    c.send("POST", "/stats").await;
    let r = c.response().await.unwrap();
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));

    c.send("HEAD", "/stats").await;
    let r = c.response_for(true).await.unwrap();
    assert_eq!(r.status, 200);
    let r = c.get("/stats").await;
    assert_eq!(
        r.body,
        format!(r#"{{"connections":1,"requests":5{ROUTES}"#).as_bytes()
    );
}

#[tokio::test]
async fn invalid_configs_are_rejected() {
    let zero = Config {
        workers: Some(0),
        ..config()
    };
    let err = spawn_with(0, zero.clone())
        .err()
        .expect("workers 0 accepted");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = serve_with(listener, zero, Stats::default(), std::future::pending())
        .await
        .expect_err("workers 0 accepted");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);

    let huge = Config {
        workers: Some(usize::MAX),
        ..config()
    };
    let err = spawn_with(0, huge).err().expect("huge workers accepted");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}
