//! `perfbase grpc` against a hostile HTTP/2 server, written here on a raw socket: it floods
//! each connection with PINGs, then answers the first call with a header block that never
//! ends (CONTINUATION frames, 64 MiB of them). The calls go through the h2 crate directly
//! (grpc/channel.rs); its limits must hold: every call ends in its error class, the run ends,
//! and the server could not push the flood into perfbase.

use crate::common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FLOOD: u64 = 64 << 20;
const PINGS: usize = 50_000;

/// An HTTP/2 frame: its 9-byte header, then `payload`.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Reads the client's preface and frames until its first HEADERS: that stream's id.
fn first_call(conn: &mut TcpStream) -> Option<u32> {
    let mut preface = [0u8; 24];
    conn.read_exact(&mut preface).ok()?;
    loop {
        let mut head = [0u8; 9];
        conn.read_exact(&mut head).ok()?;
        let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
        let mut payload = vec![0u8; len];
        conn.read_exact(&mut payload).ok()?;
        if head[3] == 1 {
            return Some(u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff);
        }
    }
}

/// One connection: SETTINGS, PINGs, then the endless header block on the first call's
/// stream, until the client stops taking it. `written` keeps the most one connection took.
fn flood(mut conn: TcpStream, written: &AtomicU64) {
    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
    let Some(stream) = first_call(&mut conn) else {
        return;
    };
    // What the client sends from now on (the PINGs' ACKs) is read and dropped.
    if let Ok(mut reader) = conn.try_clone() {
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    }
    let mut out = frame(4, 0, 0, &[]);
    out.extend(frame(4, 1, 0, &[]));
    for n in 0..PINGS {
        out.extend(frame(6, 0, 0, &(n as u64).to_be_bytes()));
    }
    // ":status: 200" (indexed), then literal headers without end.
    out.extend(frame(1, 0, stream, &[0x88]));
    let garbage: Vec<u8> = (0..16_384u32)
        .map(|i| [0x40, 0x01, b'x', 0x01, b'y'][i as usize % 5])
        .collect();
    let continuation = frame(9, 0, stream, &garbage);
    let mut sent = 0u64;
    if conn.write_all(&out).is_err() {
        return;
    }
    sent += out.len() as u64;
    while sent < FLOOD && conn.write_all(&continuation).is_ok() {
        sent += continuation.len() as u64;
    }
    written.fetch_max(sent, Ordering::Relaxed);
}

#[test]
fn a_hostile_http2_server_cannot_grow_grpc_calls_or_hold_the_run() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let written = Arc::new(AtomicU64::new(0));
    let w = written.clone();
    // At most 16 connections are served; the run opens far fewer.
    std::thread::spawn(move || {
        for conn in listener.incoming().take(16).flatten() {
            let w = w.clone();
            std::thread::spawn(move || flood(conn, &w));
        }
    });
    let dir = tmp();
    let proto = dir.path().join("t.proto");
    std::fs::write(
        &proto,
        "syntax = \"proto3\";\npackage t;\nmessage M { string s = 1; }\n\
         service S { rpc Call (M) returns (M); }\n",
    )
    .unwrap();
    let start = Instant::now();
    let (code, text, v) = pb_env(
        &[
            "grpc",
            &format!("grpc://{addr}"),
            "--call",
            "t.S/Call",
            "--proto",
            proto.to_str().unwrap(),
            "--data",
            r#"{"s": "a"}"#,
            "-c",
            "2",
            "-n",
            "6",
            "--timeout",
            "5s",
        ],
        &[],
    );
    let took = start.elapsed();
    let w = written.load(Ordering::Relaxed);
    eprintln!("hostile h2: {took:?}, at most {w} bytes written to one connection");
    // Not one call succeeded: exit 3, with every call in an error class.
    assert_eq!(code, 3, "{text}");
    assert_eq!(v["requests"], 6, "{v}");
    let errors: u64 = v["errors"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|n| n.as_u64())
        .sum();
    assert_eq!(errors, 6, "{}", v["errors"]);
    eprintln!("hostile h2: errors {} {}", v["errors"], v["error_samples"]);
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    // The client refused the header block at its 16 KiB cap: the server could write only
    // the PINGs and what the sockets hold (loopback's buffers: under 10 MiB), not the 64 MiB
    // it tried on each connection (h2's own default cap, 16 MiB, would have taken more). What
    // perfbase never took, it cannot hold: its memory is bounded by the sockets' buffers.
    assert!(
        w < 12 << 20,
        "the server wrote {w} bytes into one connection"
    );
}
