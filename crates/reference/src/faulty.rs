//! Deliberately misbehaving raw-TCP "HTTP" servers for fault tests.
//!
//! Each server reads request heads (up to the blank line; requests are expected to carry no
//! body) and then misbehaves in the way its [`Fault`] describes. Every server handles many
//! connections concurrently, and several requests per connection where the fault allows it.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::runner;

/// How a faulty server misbehaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// After reading a request head, writes `HELLO WORLD\r\n\r\n` and keeps the connection
    /// open (answering any further request head the same way).
    GarbageStatus,
    /// Answers `HTTP/1.1 200 OK` with `Content-Length: 100` but only 10 body bytes, then
    /// closes the socket.
    TruncatedBody,
    /// Reads the request head, then closes with `SO_LINGER` 0 so the client sees ECONNRESET.
    Reset,
    /// Sends headers with `Content-Length: 1000`, then the body 1 byte every 500 ms.
    SlowBody,
    /// Sends a status line, then 2 MiB of header lines with no terminating blank line, then
    /// keeps the connection open until the client goes away.
    OversizedHeader,
    /// Answers `n` requests on a connection well (200, `Content-Length: 3`, `ok\n`,
    /// keep-alive), then reads the next request head and closes without answering it.
    CloseAfter(u32),
    /// Never reads: 50 ms after accepting, resets the connection (`SO_LINGER` 0). A client
    /// sending a body larger than the socket buffers is then still writing: a write error.
    ResetUnread,
    /// Answers like `CloseAfter` (200 `ok\n`, keep-alive) at once, except during stalls: on
    /// the clock that starts at the first request it ever reads, a stall runs from
    /// `offset + k·period` for `stall` (k = 0, 1, …), and a request read during one is
    /// answered when it ends. A service with periodic pauses (a GC, a checkpoint), to test
    /// coordinated omission: the latency of a request that arrives in a stall is the rest of
    /// the stall.
    Stalls {
        period: Duration,
        stall: Duration,
        offset: Duration,
    },
    /// Answers every request with `500` and a JSON error body that quotes the request head
    /// it read, headers and all, as some proxies' and frameworks' error pages do: a server
    /// that echoes back whatever secret the client sent.
    EchoHead,
}

/// When the rest of a stall ends, for a request read `since_first` after the first one.
fn stall_left(
    since_first: Duration,
    period: Duration,
    stall: Duration,
    offset: Duration,
) -> Duration {
    let Some(t) = since_first.checked_sub(offset) else {
        return Duration::ZERO;
    };
    let period_ns = period.as_nanos().max(1);
    let into = Duration::from_nanos((t.as_nanos() % period_ns) as u64);
    stall.saturating_sub(into)
}

/// A faulty server running on its own thread with its own runtime, bound to 127.0.0.1.
/// Stopping it, explicitly or by dropping it, drops every open connection at once.
pub struct FaultyBackground {
    /// Where the server listens (always 127.0.0.1).
    pub addr: SocketAddr,
    /// Connections accepted so far.
    pub connections: Arc<AtomicU64>,
    thread: runner::ServerThread,
}

impl FaultyBackground {
    /// Stop accepting, drop every open connection and wait for the server thread to exit.
    pub fn stop(mut self) {
        self.thread.stop();
    }
}

/// Start a server on 127.0.0.1 (any free port) that misbehaves as `fault` says.
pub fn spawn_faulty(fault: Fault) -> io::Result<FaultyBackground> {
    let connections = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&connections);
    let (addr, thread) =
        runner::ServerThread::start("perfbase-faulty", 0, move |listener, rx| async move {
            let shutdown = async move {
                let _ = rx.await;
            };
            // The stalls' clock: set by the first request head any connection reads.
            let first = Arc::new(std::sync::OnceLock::<Instant>::new());
            runner::accept_loop(listener, shutdown, move |stream, _peer| {
                counter.fetch_add(1, Ordering::Relaxed);
                let first = first.clone();
                async move {
                    // Errors only mean the client went away.
                    let _ = handle(fault, stream, &first).await;
                }
            })
            .await;
        })?;
    Ok(FaultyBackground {
        addr,
        connections,
        thread,
    })
}

/// Upper bound on a request head; a client sending more is dropped.
const MAX_HEAD: usize = 64 * 1024;
const GARBAGE: &[u8] = b"HELLO WORLD\r\n\r\n";
const TRUNCATED: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789";
const SLOW_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
const SLOW_LEN: usize = 1000;
const SLOW_INTERVAL: Duration = Duration::from_millis(500);
const OVERSIZED_STATUS: &[u8] = b"HTTP/1.1 200 OK\r\n";
const OVERSIZED_TOTAL: usize = 2 * 1024 * 1024;
const GOOD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n";
/// How long a closing server waits for the client to finish before dropping the socket.
const LINGER_DRAIN: Duration = Duration::from_secs(2);

/// A connection plus the bytes read past the last request head (pipelined requests).
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Read one request head, through its blank line. `Ok(false)` on end of stream.
    async fn read_head(&mut self) -> io::Result<bool> {
        Ok(self.take_head().await?.is_some())
    }

    /// Read one request head, through its blank line, and return it. `None` at the end of
    /// the stream.
    async fn take_head(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut searched = 0;
        loop {
            if let Some(pos) = find_blank_line(&self.buf[searched..]) {
                return Ok(Some(self.buf.drain(..searched + pos + 4).collect()));
            }
            if self.buf.len() > MAX_HEAD {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "request head too large",
                ));
            }
            // The blank line may straddle the old end of the buffer.
            searched = self.buf.len().saturating_sub(3);
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(None);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Close gracefully: send FIN, then wait (bounded) for the client to close its side, so
    /// that no unread input turns the close into a reset that could discard what was sent.
    async fn close(mut self) -> io::Result<()> {
        self.stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        let drain = async {
            while self.stream.read(&mut sink).await? > 0 {}
            Ok::<(), io::Error>(())
        };
        // Timing out only means the client is slow to close; drop the socket anyway.
        let _ = tokio::time::timeout(LINGER_DRAIN, drain).await;
        Ok(())
    }
}

/// `text` as the inside of a JSON string.
fn json_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn find_blank_line(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Block of header lines, each `X-Pad: aaa…\r\n` of 64 bytes.
fn oversized_block() -> Vec<u8> {
    const LINE: usize = 64;
    const PREFIX: &[u8] = b"X-Pad: ";
    let mut line = Vec::with_capacity(LINE);
    line.extend_from_slice(PREFIX);
    line.resize(LINE - 2, b'a');
    line.extend_from_slice(b"\r\n");
    line.repeat(1024)
}

/// Answers each request with a good head and then its body one byte at a time.
async fn slow_body(conn: &mut Conn) -> io::Result<()> {
    while conn.read_head().await? {
        conn.stream.write_all(SLOW_HEAD).await?;
        for sent in 0..SLOW_LEN {
            if sent > 0 {
                tokio::time::sleep(SLOW_INTERVAL).await;
            }
            conn.stream.write_all(b"x").await?;
        }
    }
    Ok(())
}

/// Answers the first request with a header block that never ends.
async fn oversized_header(conn: &mut Conn) -> io::Result<()> {
    if conn.read_head().await? {
        conn.stream.write_all(OVERSIZED_STATUS).await?;
        let block = oversized_block();
        let mut sent = 0;
        while sent < OVERSIZED_TOTAL {
            conn.stream.write_all(&block).await?;
            sent += block.len();
        }
        // No blank line ever follows; wait for the client to give up.
        let mut sink = [0u8; 4096];
        while conn.stream.read(&mut sink).await? > 0 {}
    }
    Ok(())
}

/// Answers well, except during each stall of the schedule, counted from the first request
/// any connection saw.
async fn stalls(
    conn: &mut Conn,
    first: &OnceLock<Instant>,
    (period, stall, offset): (Duration, Duration, Duration),
) -> io::Result<()> {
    while conn.read_head().await? {
        let now = Instant::now();
        let since = now.saturating_duration_since(*first.get_or_init(|| now));
        let wait = stall_left(since, period, stall, offset);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        conn.stream.write_all(GOOD).await?;
    }
    Ok(())
}

async fn handle(fault: Fault, stream: TcpStream, first: &OnceLock<Instant>) -> io::Result<()> {
    // Small writes (SlowBody) must go out at once.
    stream.set_nodelay(true)?;
    let mut conn = Conn {
        stream,
        buf: Vec::new(),
    };
    match fault {
        Fault::GarbageStatus => {
            while conn.read_head().await? {
                conn.stream.write_all(GARBAGE).await?;
            }
        }
        Fault::TruncatedBody => {
            if conn.read_head().await? {
                conn.stream.write_all(TRUNCATED).await?;
            }
            conn.close().await?;
        }
        Fault::Reset => {
            if conn.read_head().await? {
                conn.stream.set_zero_linger()?;
                // Dropping a socket with a zero linger sends RST instead of FIN.
                drop(conn);
            }
        }
        Fault::SlowBody => slow_body(&mut conn).await?,
        Fault::OversizedHeader => oversized_header(&mut conn).await?,
        Fault::ResetUnread => {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            conn.stream.set_zero_linger()?;
            drop(conn);
        }
        Fault::Stalls {
            period,
            stall,
            offset,
        } => stalls(&mut conn, first, (period, stall, offset)).await?,
        Fault::EchoHead => {
            while let Some(head) = conn.take_head().await? {
                let body = format!(
                    "{{\"errors\":[\"cannot handle the request: {}\"]}}",
                    json_escaped(&String::from_utf8_lossy(&head))
                );
                let answer = format!(
                    "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                conn.stream.write_all(answer.as_bytes()).await?;
            }
        }
        Fault::CloseAfter(n) => {
            let mut answered = 0;
            while conn.read_head().await? {
                if answered == n {
                    break;
                }
                conn.stream.write_all(GOOD).await?;
                answered += 1;
            }
            conn.close().await?;
        }
    }
    Ok(())
}
