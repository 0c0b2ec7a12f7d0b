//! Tests of the misbehaving servers over real sockets with a raw HTTP/1.1 client.

use std::io::ErrorKind;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::faulty::{spawn_faulty, Fault};
use crate::testutil::Client;

const GOOD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n";

/// Expect the peer to keep the connection open and silent for `wait`.
async fn assert_silent_and_open(c: &mut Client, wait: Duration) {
    match tokio::time::timeout(wait, c.fill()).await {
        Err(_) => {}
        Ok(Ok(0)) => panic!("connection was closed"),
        Ok(Ok(n)) => panic!("unexpected {n} bytes: {:?}", c.buf),
        Ok(Err(e)) => panic!("connection failed: {e}"),
    }
}

#[tokio::test]
async fn garbage_status_writes_garbage_and_keeps_connection_open() {
    let server = spawn_faulty(Fault::GarbageStatus).unwrap();
    assert!(server.addr.ip().is_loopback());
    let mut c = Client::connect(server.addr).await;
    c.send("GET", "/").await;
    assert_eq!(c.take(15).await.unwrap(), b"HELLO WORLD\r\n\r\n");
    assert_silent_and_open(&mut c, Duration::from_millis(300)).await;
    // It answers the next request head the same way.
    c.send("GET", "/again").await;
    assert_eq!(c.take(15).await.unwrap(), b"HELLO WORLD\r\n\r\n");
    assert_silent_and_open(&mut c, Duration::from_millis(100)).await;
    assert_eq!(server.connections.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn truncated_body_sends_ten_of_a_hundred_bytes_then_eof() {
    let server = spawn_faulty(Fault::TruncatedBody).unwrap();
    let mut c = Client::connect(server.addr).await;
    c.send("GET", "/").await;
    let all = c.until_closed().await.unwrap();
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
    assert_eq!(&all[..head.len()], head);
    assert_eq!(all.len() - head.len(), 10);
    assert_eq!(&all[head.len()..], b"0123456789");
}

#[tokio::test]
async fn reset_gives_connection_reset() {
    let server = spawn_faulty(Fault::Reset).unwrap();
    let mut c = Client::connect(server.addr).await;
    c.send("GET", "/").await;
    let err = c.until_closed().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset);
}

#[tokio::test]
async fn reset_handles_many_concurrent_connections() {
    let server = spawn_faulty(Fault::Reset).unwrap();
    let addr = server.addr;
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..20 {
        clients.spawn(async move {
            let mut c = Client::connect(addr).await;
            c.send("GET", "/").await;
            c.until_closed().await.unwrap_err().kind()
        });
    }
    while let Some(kind) = clients.join_next().await {
        assert_eq!(kind.unwrap(), ErrorKind::ConnectionReset);
    }
    assert_eq!(server.connections.load(Ordering::Relaxed), 20);
}

#[tokio::test]
async fn slow_body_trickles_one_byte_per_half_second() {
    let server = spawn_faulty(Fault::SlowBody).unwrap();
    let mut c = Client::connect(server.addr).await;
    c.send("GET", "/").await;
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
    assert_eq!(c.take(head.len()).await.unwrap(), head);
    assert_eq!(c.take(1).await.unwrap(), b"x");
    let after_first = Instant::now();
    assert_eq!(c.take(1).await.unwrap(), b"x");
    let gap = after_first.elapsed();
    assert!(
        gap >= Duration::from_millis(400),
        "second byte after {gap:?}"
    );
    assert!(
        gap < Duration::from_millis(1500),
        "second byte after {gap:?}"
    );
    // Still only a trickle: nothing more for the next 300 ms.
    assert_silent_and_open(&mut c, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn oversized_header_never_ends_the_header_block() {
    let server = spawn_faulty(Fault::OversizedHeader).unwrap();
    let mut c = Client::connect(server.addr).await;
    c.send("GET", "/").await;
    let status = b"HTTP/1.1 200 OK\r\n";
    let total = status.len() + 2 * 1024 * 1024;
    let all = c.take(total).await.unwrap();
    assert_eq!(&all[..status.len()], status);
    assert!(!all.windows(4).any(|w| w == b"\r\n\r\n"));
    assert!(all[status.len()..].starts_with(b"X-Pad: aaaa"));
    assert!(all.ends_with(b"a\r\n"));
    // The header block stops there but the connection stays open.
    assert_silent_and_open(&mut c, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn close_after_two_answers_two_then_eof() {
    let server = spawn_faulty(Fault::CloseAfter(2)).unwrap();
    let mut c = Client::connect(server.addr).await;
    for _ in 0..2 {
        c.send("GET", "/").await;
        assert_eq!(c.take(GOOD.len()).await.unwrap(), GOOD);
    }
    c.send("GET", "/").await;
    assert_eq!(c.until_closed().await.unwrap(), b"");
}

#[tokio::test]
async fn close_after_answers_parse_as_http_with_keep_alive() {
    let server = spawn_faulty(Fault::CloseAfter(3)).unwrap();
    let mut c = Client::connect(server.addr).await;
    // Pipelined: all three heads in one write.
    c.send_raw(
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\
          GET / HTTP/1.1\r\nHost: x\r\n\r\n\
          GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    for _ in 0..3 {
        let r = c.response().await.unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"ok\n");
    }
    c.send("GET", "/").await;
    assert_eq!(c.until_closed().await.unwrap(), b"");
}

#[tokio::test]
async fn close_after_zero_answers_nothing() {
    let server = spawn_faulty(Fault::CloseAfter(0)).unwrap();
    let mut c = Client::connect(server.addr).await;
    c.send("GET", "/").await;
    assert_eq!(c.until_closed().await.unwrap(), b"");
}

#[tokio::test]
async fn close_after_handles_many_concurrent_connections() {
    let server = spawn_faulty(Fault::CloseAfter(2)).unwrap();
    let addr = server.addr;
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..20 {
        clients.spawn(async move {
            let mut c = Client::connect(addr).await;
            for _ in 0..2 {
                c.send("GET", "/").await;
                assert_eq!(c.take(GOOD.len()).await.unwrap(), GOOD);
            }
            c.send("GET", "/").await;
            assert_eq!(c.until_closed().await.unwrap(), b"");
        });
    }
    while let Some(done) = clients.join_next().await {
        done.unwrap();
    }
    assert_eq!(server.connections.load(Ordering::Relaxed), 20);
}

#[tokio::test]
async fn stop_closes_faulty_connections() {
    let server = spawn_faulty(Fault::GarbageStatus).unwrap();
    let addr = server.addr;
    let mut c = Client::connect(addr).await;
    c.send("GET", "/").await;
    assert_eq!(c.take(15).await.unwrap(), b"HELLO WORLD\r\n\r\n");
    server.stop();
    let closed = tokio::time::timeout(Duration::from_secs(1), c.until_closed()).await;
    match closed {
        Ok(Ok(rest)) => assert!(rest.is_empty()),
        Ok(Err(_)) => {}
        Err(_) => panic!("connection still open 1 s after stop"),
    }
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}
