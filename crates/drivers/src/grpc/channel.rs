//! gRPC's connections: the h2 crate's client directly, without hyper's dispatch between the
//! call and the connection, and with its writes held for one turn of the worker's tasks.
//!
//! Measured with hyper's client (issue 52, `strace -c`, unary, route_guide): three writes per
//! call, a PING acknowledgement (gRPC-Go's server pings to estimate the bandwidth), the
//! HEADERS, then the DATA, which hyper sends from a task it spawns per call; each write is a
//! TCP segment the kernel carries and acknowledges on both sides. Here a call queues its
//! HEADERS and its DATA (END_STREAM) together, and the connection's first attempt to write
//! after a wake-up yields once ([`Corked`]), so the replies it just read reach their calls,
//! which queue their next requests, before one write carries them all with the PING's ACK.

use crate::http::h2::{chain, with_hint, Sender};
use bytes::Bytes;
use perfbase_core::{Class, Outcome};
use std::io::IoSlice;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// hyper's client's limits, kept: 2 MiB per stream and 5 MiB per connection of flow-control
/// window (no WINDOW_UPDATE per call), 16 KiB of headers at most (a hostile server cannot grow
/// a reply's headers without bound), 400 KiB of queued sends.
const STREAM_WINDOW: u32 = 2 * 1024 * 1024;
const CONN_WINDOW: u32 = 5 * 1024 * 1024;
const MAX_HEADER_LIST: u32 = 16 * 1024;
const MAX_SEND_BUFFER: usize = 400 * 1024;

/// A connection's h2 sender, and whether its connection task has ended.
#[derive(Clone)]
pub(crate) struct Channel {
    pub(crate) send: h2::client::SendRequest<Bytes>,
    closed: Arc<AtomicBool>,
}

impl Sender for Channel {
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    async fn start<T>(io: T, addr: SocketAddr) -> Result<Self, Outcome>
    where
        T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (send, connection) = h2::client::Builder::new()
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONN_WINDOW)
            .max_header_list_size(MAX_HEADER_LIST)
            .max_send_buffer_size(MAX_SEND_BUFFER)
            .enable_push(false)
            .handshake::<_, Bytes>(Corked { io, held: false })
            .await
            .map_err(|e| {
                Outcome::error(
                    Class::Connect,
                    format!("HTTP/2 handshake with {addr}: {}", chain(&e)),
                )
            })?;
        let closed = Arc::new(AtomicBool::new(false));
        let ended = closed.clone();
        // On the worker's LocalSet, as the sessions are: a task woken there runs after those
        // woken before it, which Corked relies on.
        tokio::task::spawn_local(async move {
            // Its errors reach the calls in flight, which report them.
            let _ = connection.await;
            ended.store(true, Ordering::Relaxed);
        });
        Ok(Channel { send, closed })
    }
}

/// The outcome of a failed call's HTTP/2 exchange: the connection lost is class `read`, a
/// reset or GOAWAY with an error, or a malformed frame, class `protocol`.
pub(crate) fn failure(e: &h2::Error) -> Outcome {
    let graceful =
        e.reason() == Some(h2::Reason::NO_ERROR) || e.reason() == Some(h2::Reason::CANCEL);
    let class = if e.is_io() || (e.is_go_away() && graceful) {
        Class::Read
    } else {
        Class::Malformed
    };
    Outcome::error(class, with_hint(chain(e)))
}

/// A connection's IO whose first write after each wake-up yields once (the task wakes itself
/// and returns Pending): the tasks woken before it (the calls whose replies it just read) run
/// first and queue their next requests, and the write that follows carries them all.
struct Corked<T> {
    io: T,
    /// This write attempt is the one after the yield: it goes through.
    held: bool,
}

impl<T> Corked<T> {
    /// Pending, once, for the first write of a turn; Ready for the one after.
    fn hold(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.held = !self.held;
        if !self.held {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Corked<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Corked<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        std::task::ready!(self.hold(cx));
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        std::task::ready!(self.hold(cx));
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
