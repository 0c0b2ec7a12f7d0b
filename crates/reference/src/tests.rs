//! Tests of the reference service over real sockets with a raw HTTP/1.1 client.

use std::time::{Duration, Instant};

use tokio::net::TcpListener;

use crate::testutil::Client;
use crate::{serve, spawn, Stats};

#[tokio::test]
async fn root_answers_ok() {
    let server = spawn(0).unwrap();
    assert!(server.addr.ip().is_loopback());
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"ok\n");
    assert_eq!(r.header("content-type"), Some("text/plain"));
    assert_eq!(r.header("content-length"), Some("3"));
}

#[tokio::test]
async fn health_answers_json() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/health").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, br#"{"status":"ok"}"#);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("content-length"), Some("15"));
}

#[tokio::test]
async fn query_string_is_ignored_for_routing() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/health?verbose=1").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, br#"{"status":"ok"}"#);
}

#[tokio::test]
async fn delay_waits_at_least_the_requested_time() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let start = Instant::now();
    let r = c.get("/delay/50").await;
    let took = start.elapsed();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"ok\n");
    assert!(took >= Duration::from_millis(50), "took {took:?}");
    assert!(took < Duration::from_secs(5), "took {took:?}");

    let r = c.get("/delay/0").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"ok\n");
}

#[tokio::test]
async fn delay_rejects_bad_durations() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for path in [
        "/delay/",
        "/delay/abc",
        "/delay/-5",
        "/delay/+5",
        "/delay/1.5",
        "/delay/600001",
        "/delay/99999999999999999999999",
        "/delay/50/extra",
    ] {
        let start = Instant::now();
        let r = c.get(path).await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.body, b"bad request\n", "{path}");
        assert!(start.elapsed() < Duration::from_secs(5), "{path}");
    }
}

#[tokio::test]
async fn status_answers_with_requested_code() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let cases: [(&str, u16, &[u8]); 7] = [
        ("/status/200", 200, b"200 OK\n"),
        ("/status/201", 201, b"201 Created\n"),
        ("/status/404", 404, b"404 Not Found\n"),
        ("/status/418", 418, b"418 I'm a teapot\n"),
        ("/status/500", 500, b"500 Internal Server Error\n"),
        ("/status/503", 503, b"503 Service Unavailable\n"),
        ("/status/599", 599, b"599 \n"),
    ];
    for (path, status, body) in cases {
        let r = c.get(path).await;
        assert_eq!(r.status, status, "{path}");
        assert_eq!(r.body, body, "{path}");
        assert_eq!(r.header("content-type"), Some("text/plain"), "{path}");
    }
    // Bodiless statuses still keep the connection usable.
    let r = c.get("/status/204").await;
    assert_eq!(r.status, 204);
    assert!(r.body.is_empty());
    let r = c.get("/").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"ok\n");
}

#[tokio::test]
async fn status_rejects_codes_out_of_range() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for path in [
        "/status/",
        "/status/100",
        "/status/199",
        "/status/600",
        "/status/999",
        "/status/0",
        "/status/abc",
        "/status/65736",
    ] {
        let r = c.get(path).await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.body, b"bad request\n", "{path}");
    }
}

#[tokio::test]
async fn bytes_returns_exact_length_with_content_length() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for n in [0usize, 1, 12_345, 65_536, 200_001] {
        let r = c.get(&format!("/bytes/{n}")).await;
        assert_eq!(r.status, 200, "{n}");
        assert_eq!(r.header("content-length"), Some(n.to_string().as_str()));
        assert_eq!(r.header("transfer-encoding"), None);
        assert_eq!(r.header("content-type"), Some("application/octet-stream"));
        assert_eq!(r.body.len(), n);
        assert!(r.body.iter().all(|&b| b == b'x'));
    }
}

#[tokio::test]
async fn bytes_rejects_more_than_64_mib() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for path in ["/bytes/67108865", "/bytes/abc", "/bytes/"] {
        let r = c.get(path).await;
        assert_eq!(r.status, 400, "{path}");
    }
    // The maximum itself is allowed; only look at the head.
    c.send("HEAD", "/bytes/67108864").await;
    let r = c.response_for(true).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some("67108864"));
}

#[tokio::test]
async fn chunked_sends_chunks_that_decode_to_n_bytes() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    let r = c.get("/chunked/2500").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.header("content-length"), None);
    assert_eq!(r.body.len(), 2500);
    assert!(r.body.iter().all(|&b| b == b'x'));
    // 1000 + 1000 + 500.
    assert_eq!(r.chunks, Some(3));

    // The connection stays usable after a chunked body.
    let r = c.get("/chunked/1").await;
    assert_eq!(r.body.len(), 1);
    assert_eq!(r.chunks, Some(1));

    let r = c.get("/chunked/67108865").await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn unknown_paths_are_404() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for path in ["/nope", "/delay", "/healthz", "/health/", "/bytes", "//"] {
        let r = c.get(path).await;
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.body, b"not found\n", "{path}");
    }
}

#[tokio::test]
async fn other_methods_are_routed_and_bodies_discarded() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    c.send_raw(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world")
        .await;
    let r = c.response().await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"ok\n");

    c.send_raw(
        b"PUT /status/201 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
          5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    )
    .await;
    let r = c.response().await.unwrap();
    assert_eq!(r.status, 201);

    c.send("DELETE", "/health").await;
    let r = c.response().await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, br#"{"status":"ok"}"#);

    c.send("HEAD", "/").await;
    let r = c.response_for(true).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some("3"));

    // Nothing left over: the bodies were consumed, the HEAD answer had none.
    let r = c.get("/").await;
    assert_eq!(r.body, b"ok\n");
    assert!(c.buf.is_empty());
    assert_eq!(server.stats.requests(), 5);
    assert_eq!(server.stats.connections(), 1);
}

#[tokio::test]
async fn keep_alive_reuses_one_connection() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    for _ in 0..3 {
        let r = c.get("/").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"ok\n");
    }
    assert_eq!(server.stats.connections(), 1);
    assert_eq!(server.stats.requests(), 3);
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    c.send_raw(
        b"GET /status/201 HTTP/1.1\r\nHost: x\r\n\r\n\
          GET /delay/20 HTTP/1.1\r\nHost: x\r\n\r\n\
          GET /status/202 HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    let statuses = [
        c.response().await.unwrap().status,
        c.response().await.unwrap().status,
        c.response().await.unwrap().status,
    ];
    assert_eq!(statuses, [201, 200, 202]);
    assert_eq!(server.stats.connections(), 1);
    assert_eq!(server.stats.requests(), 3);
}

#[tokio::test]
async fn counts_many_concurrent_connections() {
    let server = spawn(0).unwrap();
    let addr = server.addr;
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..50 {
        clients.spawn(async move {
            let mut c = Client::connect(addr).await;
            assert_eq!(c.get("/delay/20").await.status, 200);
            assert_eq!(c.get("/").await.status, 200);
        });
    }
    while let Some(done) = clients.join_next().await {
        done.unwrap();
    }
    assert_eq!(server.stats.connections(), 50);
    assert_eq!(server.stats.requests(), 100);
}

#[tokio::test]
async fn stop_closes_open_idle_connections() {
    let server = spawn(0).unwrap();
    let mut c = Client::connect(server.addr).await;
    assert_eq!(c.get("/").await.status, 200);
    server.stop();
    let closed = tokio::time::timeout(Duration::from_secs(1), c.until_closed()).await;
    match closed {
        Ok(Ok(rest)) => assert!(rest.is_empty()),
        Ok(Err(_)) => {} // reset is fine too
        Err(_) => panic!("connection still open 1 s after stop"),
    }
}

#[tokio::test]
async fn stop_aborts_requests_in_flight() {
    let server = spawn(0).unwrap();
    let addr = server.addr;
    let mut c = Client::connect(addr).await;
    c.send("GET", "/delay/10000").await;
    // Let the server pick the request up.
    while server.stats.connections() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let start = Instant::now();
    server.stop();
    let closed = tokio::time::timeout(Duration::from_secs(1), c.until_closed()).await;
    match closed {
        Ok(Ok(rest)) => assert!(rest.is_empty(), "got an answer: {rest:?}"),
        Ok(Err(_)) => {}
        Err(_) => panic!("connection still open 1 s after stop"),
    }
    assert!(start.elapsed() < Duration::from_secs(2));
    // Nothing listens any more.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn dropping_background_stops_it() {
    let server = spawn(0).unwrap();
    let addr = server.addr;
    let mut c = Client::connect(addr).await;
    assert_eq!(c.get("/").await.status, 200);
    drop(server);
    let closed = tokio::time::timeout(Duration::from_secs(1), c.until_closed()).await;
    assert!(closed.is_ok(), "connection still open 1 s after drop");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn serve_returns_and_drops_connections_on_shutdown() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stats = Stats::default();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, stats.clone(), async move {
        let _ = rx.await;
    }));

    let mut idle = Client::connect(addr).await;
    assert_eq!(idle.get("/").await.status, 200);
    let mut busy = Client::connect(addr).await;
    busy.send("GET", "/delay/600000").await;
    while stats.connections() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    tx.send(()).unwrap();
    let result = tokio::time::timeout(Duration::from_secs(1), server)
        .await
        .expect("serve did not return within 1 s")
        .unwrap();
    assert!(result.is_ok());
    for c in [&mut idle, &mut busy] {
        let closed = tokio::time::timeout(Duration::from_secs(1), c.until_closed()).await;
        match closed {
            Ok(Ok(rest)) => assert!(rest.is_empty()),
            Ok(Err(_)) => {}
            Err(_) => panic!("connection still open 1 s after shutdown"),
        }
    }
    assert_eq!(stats.connections(), 2);
    assert_eq!(stats.requests(), 1);
}

#[tokio::test]
async fn spawn_on_a_busy_port_fails() {
    let server = spawn(0).unwrap();
    let err = spawn(server.addr.port())
        .err()
        .expect("second bind succeeded");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
}

#[test]
fn stats_clones_share_counters() {
    let a = Stats::default();
    let b = a.clone();
    a.count_request();
    a.count_request();
    b.count_connection();
    assert_eq!(b.requests(), 2);
    assert_eq!(a.connections(), 1);
}
