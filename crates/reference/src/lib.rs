//! The embedded reference HTTP service that perfbase loads in its demo, tests and benchmarks,
//! plus deliberately misbehaving raw-TCP servers ([`faulty`]) used by fault tests.
//!
//! The service is a small HTTP/1.1 server (hyper, keep-alive on, one task per connection)
//! with predictable routes:
//!
//! | route            | answer                                                         |
//! |------------------|----------------------------------------------------------------|
//! | `/`              | 200, `ok\n`, `text/plain`                                      |
//! | `/health`        | 200, `{"status":"ok"}`, `application/json`                     |
//! | `/delay/{ms}`    | sleeps `ms` (≤ 600000) milliseconds, then 200 `ok\n`           |
//! | `/status/{code}` | that status (200..=599) with a short body such as `503 Service Unavailable\n` |
//! | `/bytes/{n}`     | 200 with exactly `n` (≤ 64 MiB) bytes, `Content-Length` set    |
//! | `/chunked/{n}`   | 200 with `n` (≤ 64 MiB) bytes sent chunked, 1000 bytes a chunk |
//! | anything else    | 404                                                            |
//!
//! Any method is accepted and request bodies are read and discarded; bad parameters give 400.
//! Shutting the service down is abortive: every open connection is dropped at once, which is
//! how tests simulate a server killed mid-run. Every socket binds 127.0.0.1 only.
//!
//! This crate must not depend on other perfbase crates: it stands in for the service under
//! test, so it has to stay independent of the code that measures it.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub mod faulty;
mod runner;
mod service;
#[cfg(test)]
mod testutil;

#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    requests: AtomicU64,
}

/// Counters the tests read: connections accepted, requests answered.
///
/// Clones share the same counters.
#[derive(Clone, Default)]
pub struct Stats {
    inner: Arc<Counters>,
}

impl Stats {
    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.inner.connections.load(Ordering::Relaxed)
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.inner.requests.load(Ordering::Relaxed)
    }

    fn count_connection(&self) {
        self.inner.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_request(&self) {
        self.inner.requests.fetch_add(1, Ordering::Relaxed);
    }
}

/// Serve the reference service on `listener` until `shutdown` resolves. When it resolves, stop
/// accepting AND drop every open connection at once (abortive: the clients see their
/// connections closed mid-run; this is how tests simulate "server killed mid-run").
///
/// Accept errors are treated as transient, so this returns `Ok(())` once shut down.
pub async fn serve(
    listener: TcpListener,
    stats: Stats,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut builder = http1::Builder::new();
    builder.keep_alive(true).pipeline_flush(true);
    runner::accept_loop(listener, shutdown, move |stream| {
        stats.count_connection();
        // Latency matters more than packet count for a load-test target.
        let _ = stream.set_nodelay(true);
        let stats = stats.clone();
        let conn = builder.serve_connection(
            TokioIo::new(stream),
            service_fn(move |req| service::handle(req, stats.clone())),
        );
        async move {
            // A connection error only concerns that one client.
            let _ = conn.await;
        }
    })
    .await;
    Ok(())
}

/// The reference service running on its own thread with its own 2-worker tokio runtime.
/// Stopping it, explicitly or by dropping it, is abortive like [`serve`]'s shutdown.
pub struct Background {
    /// Where the service listens (always 127.0.0.1).
    pub addr: SocketAddr,
    /// The service's counters.
    pub stats: Stats,
    thread: runner::ServerThread,
}

impl Background {
    /// Stop accepting, drop every open connection and wait for the server thread to exit.
    pub fn stop(mut self) {
        self.thread.stop();
    }
}

/// Run [`serve`] on its own thread with its own multi-thread tokio runtime (2 worker threads),
/// bound to 127.0.0.1:`port` (0 = pick a free port).
pub fn spawn(port: u16) -> std::io::Result<Background> {
    let stats = Stats::default();
    let server_stats = stats.clone();
    let (addr, thread) =
        runner::ServerThread::start("perfbase-reference", port, move |listener, rx| async move {
            let _ = serve(listener, server_stats, async move {
                // A dropped sender means the same as an explicit stop.
                let _ = rx.await;
            })
            .await;
        })?;
    Ok(Background {
        addr,
        stats,
        thread,
    })
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_faulty;
