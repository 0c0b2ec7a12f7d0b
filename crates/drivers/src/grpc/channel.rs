//! gRPC's connections: the h2 crate's client directly, without hyper's dispatch between the
//! call and the connection, and with its writes held for one turn of the worker's tasks.
//!
//! Measured with hyper's client (issue 52, `strace -c`, unary, route_guide): three writes per
//! call, a PING acknowledgement (gRPC-Go's server pings to estimate the bandwidth), the
//! HEADERS, then the DATA, which hyper sends from a task it spawns per call; each write is a
//! TCP segment the kernel carries and acknowledges on both sides. Here a call queues its
//! HEADERS and its DATA (END_STREAM) together, and the connection's first attempt to write
//! after a wake-up yields once (`Sender::CORKED`, in http/h2.rs's `Counted`), so the replies
//! it just read reach their calls, which queue their next requests, before one write carries
//! them all with the PING's ACK.

use crate::http::h2::{chain, handshake_failed, with_hint, Sender};
use bytes::Bytes;
use perfbase_core::{Class, Outcome};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

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
    const CORKED: bool = true;

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
            .handshake::<_, Bytes>(io)
            .await
            .map_err(|e| handshake_failed(addr, &e))?;
        let closed = Arc::new(AtomicBool::new(false));
        let ended = closed.clone();
        // On the worker's LocalSet, as the sessions are: a task woken there runs after those
        // woken before it, which the held writes rely on.
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
