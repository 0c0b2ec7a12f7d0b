//! A session's own framing of PostgreSQL's extended-query protocol: the measured hot path.
//!
//! **Why by hand.** With tokio-postgres on the hot path, `bench/pg_vs_pgbench.sh` (scale 10,
//! 10 clients, server and tool on their own CPU) measured 0.93× pgbench's TPS at 1.13× its
//! client CPU per TPC-B transaction, and 0.62× at 4.02× for two transactions per round trip:
//! every statement went through the client's request channel to a separate connection task,
//! carried its own Sync, and came back as allocated `Row`s nobody reads. Here the session owns
//! its socket: a batch's Bind/Execute/Sync messages go out in one write, the answers are read
//! in place from one buffer, and nothing is allocated per statement. The figures after the
//! change are in `bench/README.md` (PostgreSQL).
//!
//! **What stays with the libraries.** tokio-postgres does the connection set-up and the
//! authentication (startup, cleartext, MD5, SCRAM) on a socket that [`connect`] lends it and
//! takes back once the server is ready for queries; postgres-protocol encodes the frontend
//! messages. This module only reads the few backend messages a prepared statement's answer
//! has.
//!
//! **Groups.** Every Sync closes a group: the server answers each group with one
//! ReadyForQuery, and after an error skips the rest of the group. [`Wire::reply`] reads one
//! group's answer: the DataRow payload, the first error, and the first cell of the first row.

use bytes::{Buf, BufMut, BytesMut};
use postgres_protocol::message::frontend;
use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, Interest, ReadBuf};
use tokio::net::TcpStream;
use tokio_postgres::config::Host;
use tokio_postgres::{Config, NoTls};

/// One bound parameter: integers go in binary, as the server's inferred `int4`/`int8` expect;
/// text goes in text format, which the server parses as whatever type it inferred.
#[derive(Debug, Clone, Copy)]
pub(super) enum Param<'a> {
    I32(i32),
    I64(i64),
    Text(&'a str),
}

/// An `ErrorResponse` from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ServerError {
    /// The SQLSTATE, e.g. `23514`.
    pub code: String,
    pub message: String,
    /// `FATAL` or `PANIC`: the server ends the connection after it.
    pub fatal: bool,
}

impl ServerError {
    /// From an `ErrorResponse` body: fields of a type byte and a NUL-terminated value.
    fn parse(mut body: &[u8]) -> ServerError {
        let mut e = ServerError {
            code: String::new(),
            message: String::new(),
            fatal: false,
        };
        while let Some((&kind, rest)) = body.split_first() {
            if kind == 0 {
                break;
            }
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            let value = String::from_utf8_lossy(&rest[..end]);
            match kind {
                b'C' => e.code = value.into_owned(),
                b'M' => e.message = value.into_owned(),
                // The non-localized severity (servers since 9.6).
                b'V' => e.fatal = value == "FATAL" || value == "PANIC",
                _ => {}
            }
            body = rest.get(end + 1..).unwrap_or_default();
        }
        e
    }

    /// Whether the connection is gone after it: `FATAL`, `PANIC`, or SQLSTATE class 08.
    pub fn ends_connection(&self) -> bool {
        self.fatal || self.code.starts_with("08")
    }
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SQLSTATE {}: {}", self.code, self.message)
    }
}

/// Why a session cannot go on: the connection is unusable after any of these.
#[derive(Debug)]
pub(super) enum WireError {
    Io(io::Error),
    /// The server closed the connection.
    Closed,
    /// A `FATAL` error (a terminated backend, a shutdown): the server closes next.
    Fatal(ServerError),
    /// A message this client does not expect: the stream is out of step.
    Protocol(String),
}

/// One group's answer (everything up to its ReadyForQuery).
#[derive(Debug, Default)]
pub(super) struct Reply {
    /// The DataRow payload: per column a 4-byte length and the value (binary format).
    pub bytes_in: u64,
    /// The group's error; the server skipped the group's remaining statements.
    pub error: Option<ServerError>,
    /// The first cell of the group's first row, when it is an `int4` or `int8`.
    pub first_int: Option<i64>,
    /// Statements of the group that completed (before its error, if any).
    pub completed: usize,
    /// The transaction status after the group: `I` idle, `T` in a transaction block, `E` in
    /// a failed transaction block (which only a `ROLLBACK` or `END` leaves).
    pub status: u8,
}

/// A connection that the session reads and writes itself.
pub(super) struct Wire {
    stream: TcpStream,
    out: BytesMut,
    input: BytesMut,
    /// Groups written whose ReadyForQuery has not been read yet.
    pending: usize,
}

/// The socket, lent to tokio-postgres for the start-up and taken back after it.
struct Lent(Rc<RefCell<Option<TcpStream>>>);

impl Lent {
    fn with<R>(
        &self,
        f: impl FnOnce(Pin<&mut TcpStream>) -> Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match self.0.borrow_mut().as_mut() {
            Some(s) => f(Pin::new(s)),
            None => Poll::Ready(Err(io::ErrorKind::NotConnected.into())),
        }
    }
}

impl AsyncRead for Lent {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.with(|s| s.poll_read(cx, buf))
    }
}

impl AsyncWrite for Lent {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        self.with(|s| s.poll_write(cx, b))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.with(|s| s.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.with(|s| s.poll_shutdown(cx))
    }
}

/// Why [`connect`] failed, as one line.
pub(super) type ConnectError = String;

/// Connects to the first host of `config` over TCP and logs in with tokio-postgres; the
/// server is then ready for queries and the socket is the session's.
pub(super) async fn connect(config: &Config) -> Result<Wire, ConnectError> {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let tcp = match (config.get_hostaddrs().first(), config.get_hosts().first()) {
        (Some(addr), _) => TcpStream::connect((*addr, port)).await,
        (None, Some(Host::Tcp(host))) => TcpStream::connect((host.as_str(), port)).await,
        (None, None) => TcpStream::connect(("localhost", port)).await,
        #[cfg(unix)]
        (None, Some(Host::Unix(path))) => {
            return Err(format!(
                "Unix-domain socket {} is not supported; connect over TCP (host=127.0.0.1)",
                path.display()
            ))
        }
    };
    let connecting = async {
        let tcp = tcp.map_err(|e| format!("error connecting to server: {e}"))?;
        tcp.set_nodelay(true)
            .map_err(|e| format!("error connecting to server: {e}"))?;
        let cell = Rc::new(RefCell::new(Some(tcp)));
        let (client, connection) = config
            .connect_raw(Lent(cell.clone()), NoTls)
            .await
            .map_err(|e| super::config::describe(&e))?;
        // The start-up ended at ReadyForQuery, and the server sends nothing unasked: neither
        // object holds a byte of the stream, and the connection is never polled again.
        drop((client, connection));
        let stream = cell.borrow_mut().take();
        stream.ok_or_else(|| "the socket was not given back".to_string())
    };
    let stream = match config.get_connect_timeout() {
        Some(limit) => tokio::time::timeout(*limit, connecting)
            .await
            .map_err(|_| format!("timed out connecting after {limit:?}"))??,
        None => connecting.await?,
    };
    Ok(Wire {
        stream,
        out: BytesMut::with_capacity(4096),
        input: BytesMut::with_capacity(16 * 1024),
        pending: 0,
    })
}

impl Wire {
    /// Whether an earlier exchange was left half-done (its future was dropped): the stream
    /// is then out of step with the session.
    pub fn abandoned(&self) -> bool {
        self.pending > 0 || !self.out.is_empty()
    }

    /// Queues `Parse` of `sql` as statement `name`, the server inferring parameter types.
    pub fn parse(&mut self, name: &str, sql: &str) -> Result<(), WireError> {
        frontend::parse(name, sql, std::iter::empty(), &mut self.out)
            .map_err(|e| WireError::Protocol(format!("cannot encode the statement: {e}")))
    }

    /// Queues `Bind` of statement `name` with `params` (results in binary format) and
    /// `Execute`; returns the parameters' payload (a 4-byte length and the value each).
    pub fn bind_execute(&mut self, name: &str, params: &[Param]) -> u64 {
        let mut payload = 0;
        let bound = frontend::bind(
            "",
            name,
            params.iter().map(|p| match p {
                Param::Text(_) => 0,
                _ => 1,
            }),
            params,
            |p, buf| {
                let before = buf.len();
                match p {
                    Param::I32(v) => buf.put_i32(*v),
                    Param::I64(v) => buf.put_i64(*v),
                    Param::Text(s) => buf.extend_from_slice(s.as_bytes()),
                }
                payload += 4 + (buf.len() - before) as u64;
                Ok(postgres_protocol::IsNull::No)
            },
            Some(1),
            &mut self.out,
        );
        // Only more than 32767 parameters or a message over 2 GiB fail to encode; the
        // workloads bind at most a handful of short values.
        debug_assert!(bound.is_ok());
        let _ = frontend::execute("", 0, &mut self.out);
        payload
    }

    /// Queues a simple-protocol query (its own group).
    pub fn query(&mut self, sql: &str) {
        let _ = frontend::query(sql, &mut self.out);
        self.pending += 1;
    }

    /// Closes the group with `Sync`.
    pub fn sync(&mut self) {
        frontend::sync(&mut self.out);
        self.pending += 1;
    }

    /// Writes everything queued. If the future is dropped, what is left stays queued and
    /// [`Wire::abandoned`] says so.
    pub async fn flush(&mut self) -> Result<(), WireError> {
        // The last answer was read without meeting an empty socket, so the runtime still
        // takes the socket for readable, and the first read after this write would be a
        // wasted `EAGAIN` (one system call per round trip, 7 per TPC-B transaction). Mark it
        // unready now, before the request goes out: the answer arrives after this point, and
        // its arrival wakes the session. Anything the server sent unasked before it (a
        // notice) is read together with the answer.
        let _ = self.stream.try_io(Interest::READABLE, || {
            Err::<(), _>(io::ErrorKind::WouldBlock.into())
        });
        self.stream
            .write_all_buf(&mut self.out)
            .await
            .map_err(WireError::Io)
    }

    /// Reads the answer of the oldest group written.
    pub async fn reply(&mut self) -> Result<Reply, WireError> {
        let mut reply = Reply::default();
        loop {
            while let Some((tag, len)) = header(&self.input) {
                if len < 4 {
                    return Err(WireError::Protocol(format!(
                        "message '{}' with length {len}",
                        tag as char
                    )));
                }
                if self.input.len() < 1 + len {
                    self.input.reserve(1 + len - self.input.len());
                    break;
                }
                let body = &self.input[5..1 + len];
                let mut done = false;
                match tag {
                    b'D' => {
                        // A column count, then per column a 4-byte length and the value.
                        reply.bytes_in += body.len().saturating_sub(2) as u64;
                        if reply.first_int.is_none() {
                            reply.first_int = first_int(body);
                        }
                    }
                    b'E' => {
                        let e = ServerError::parse(body);
                        if e.fatal {
                            return Err(WireError::Fatal(e));
                        }
                        reply.error.get_or_insert(e);
                    }
                    b'Z' => {
                        reply.status = body.first().copied().unwrap_or(b'I');
                        done = true;
                    }
                    b'C' | b'I' => reply.completed += 1,
                    // ParseComplete, BindComplete, NoData, and what the server may send at
                    // any time: notices, parameter changes, notifications.
                    b'1' | b'2' | b'n' | b'N' | b'S' | b'A' => {}
                    other => {
                        return Err(WireError::Protocol(format!(
                            "unexpected message '{}'",
                            other as char
                        )))
                    }
                }
                self.input.advance(1 + len);
                if done {
                    self.pending = self.pending.saturating_sub(1);
                    return Ok(reply);
                }
            }
            if self.input.capacity() - self.input.len() < 1024 {
                self.input.reserve(16 * 1024);
            }
            if self
                .stream
                .read_buf(&mut self.input)
                .await
                .map_err(WireError::Io)?
                == 0
            {
                return Err(WireError::Closed);
            }
        }
    }

    /// After a failed write: the error the server sent before it closed, if it is already
    /// here (a terminated backend's FATAL), read without waiting.
    pub fn error_already_sent(&mut self) -> Option<ServerError> {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = self.stream.try_read(&mut chunk) {
            if n == 0 {
                break;
            }
            self.input.extend_from_slice(&chunk[..n]);
        }
        let mut rest = &self.input[..];
        while let Some((tag, len)) = header(rest) {
            if len < 4 || rest.len() < 1 + len {
                break;
            }
            if tag == b'E' {
                return Some(ServerError::parse(&rest[5..1 + len]));
            }
            rest = &rest[1 + len..];
        }
        None
    }
}

/// A backend message's tag and length (which counts itself but not the tag), once the first
/// 5 bytes of `buf` are there.
fn header(buf: &[u8]) -> Option<(u8, usize)> {
    let h: &[u8; 5] = buf.get(..5)?.try_into().ok()?;
    Some((h[0], u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize))
}

/// The first cell of a DataRow body as an integer, when it is a binary `int4` or `int8`.
fn first_int(body: &[u8]) -> Option<i64> {
    let len = i32::from_be_bytes(body.get(2..6)?.try_into().ok()?);
    let cell = body.get(6..6 + usize::try_from(len).ok()?)?;
    match cell.len() {
        4 => Some(i32::from_be_bytes(cell.try_into().ok()?) as i64),
        8 => Some(i64::from_be_bytes(cell.try_into().ok()?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_response_gives_its_code_message_and_severity() {
        let body = b"SERROR\0VERROR\0C23514\0Mnew row violates check constraint\0\0";
        let e = ServerError::parse(body);
        assert_eq!(e.code, "23514");
        assert_eq!(e.message, "new row violates check constraint");
        assert!(!e.fatal && !e.ends_connection());
        assert_eq!(
            e.to_string(),
            "SQLSTATE 23514: new row violates check constraint"
        );
        let fatal = ServerError::parse(b"SFATAL\0VFATAL\0C57P01\0Mterminating\0\0");
        assert!(fatal.fatal && fatal.ends_connection());
        // A truncated body still gives what it has.
        let cut = ServerError::parse(b"C08006\0Mconn");
        assert_eq!((cut.code.as_str(), cut.message.as_str()), ("08006", "conn"));
        assert!(cut.ends_connection());
    }

    #[test]
    fn the_first_cell_is_read_as_int4_or_int8() {
        let mut row = vec![0, 2, 0, 0, 0, 8];
        row.extend_from_slice(&42i64.to_be_bytes());
        row.extend_from_slice(&[0, 0, 0, 1, b'x']);
        assert_eq!(first_int(&row), Some(42));
        assert_eq!(first_int(&[0, 1, 0, 0, 0, 4, 255, 255, 255, 254]), Some(-2));
        // NULL, text, and a cut row are not integers.
        assert_eq!(first_int(&[0, 1, 255, 255, 255, 255]), None);
        assert_eq!(first_int(&[0, 1, 0, 0, 0, 2, b'4', b'2']), None);
        assert_eq!(first_int(&[0, 1, 0, 0, 0, 8, 1]), None);
    }
}
