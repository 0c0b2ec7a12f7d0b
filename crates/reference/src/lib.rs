//! The embedded reference HTTP service that perfbase loads in its demo, tests and benchmarks,
//! plus deliberately misbehaving raw-TCP servers ([`faulty`]) used by fault tests.
//!
//! The service is a small HTTP server (hyper, one task per connection) with predictable
//! routes. It speaks HTTP/1.1 with keep-alive and HTTP/2: h2c with prior knowledge in the
//! clear, and h2 chosen by ALPN over TLS.
//!
//! | route            | answer                                                          |
//! |------------------|-----------------------------------------------------------------|
//! | `/`              | 200, `ok\n`, `text/plain`                                       |
//! | `/health`        | 200, `{"status":"ok"}`, `application/json`                      |
//! | `/delay/{ms}`    | sleeps `ms` (≤ 600000) milliseconds, then 200 `ok\n`            |
//! | `/status/{code}` | that status (200..=599), body such as `503 Service Unavailable\n` |
//! | `/bytes/{n}`     | 200 with exactly `n` (≤ 64 MiB) bytes, `Content-Length` set     |
//! | `/chunked/{n}`   | 200 with `n` (≤ 64 MiB) bytes sent chunked, 1000 bytes a chunk  |
//! | `/lookup/{key}`  | 200 `{"key":"key-17","value":"value-17"}`, or 404 `{"error":"not found"}` |
//! | `/work`          | holds a worker permit for `work_time`, then 200 `ok\n`          |
//! | `/health/all`    | runs its checks, then 200 `{"status":"ok","checks":4,"mode":"sequential"}` |
//! | `/limited/{any}` | 200 `ok\n`, or 429 `rate limited\n` with `Retry-After` over the limit |
//! | `/stats`         | GET/HEAD only (else 405): 200 `{"connections":C,"requests":R,"routes":{..}}` |
//! | `/login`         | POST only: 200 `{"access_token":"tok-1-…","token_type":"Bearer","expires_in":3600}` |
//! | `/items`         | POST only, with a token: 201 `{"id":ID}`, `Location: /items/{ID}` |
//! | `/items/{id}`    | with a token: GET/HEAD 200 `{"id":ID,"size":S}`, DELETE 204; or 404 |
//! | `/session`       | GET/HEAD only: 200 `{"sid":"s-1-…","returning":B}`, a new `sid` cookie unless sent one |
//! | anything else    | 404 `not found\n`                                               |
//!
//! Any method is accepted unless said otherwise, and request bodies are read and discarded
//! (except by `/login` and `/items`); bad parameters give 400. JSON answers are
//! `application/json`, text ones `text/plain`.
//!
//! The routes from `/lookup` on are tuned by a [`Config`] (defaults in parentheses):
//!
//! - `/lookup/{key}` knows `key-0` .. `key-{corpus_size-1}` (10 000 keys, canonical decimal
//!   only). Every lookup, hit or miss, holds a worker permit while it burns `lookup_cpu` of
//!   CPU (0) and then sleeps `lookup_delay` (0).
//! - `workers` (unlimited) caps how many `/lookup` and `/work` requests are served at once;
//!   the rest wait for a permit in arrival order. With `workers` = W, `/work` serves exactly
//!   W / `work_time` (10 ms) requests per second, so a rate ladder finds its knee there.
//! - `/health/all` runs `health_checks` (4) checks of `health_check_time` (5 ms) each, one
//!   after another (the default) or concurrently (`"mode":"concurrent"`); a request's
//!   `?mode=sequential` or `?mode=concurrent` overrides the service's setting.
//! - `/limited/{any}` allows each client IP `rate_limit` requests per fixed window (120 per
//!   60 s, the window starting at the client's first request); beyond that it answers 429
//!   with `Retry-After` = whole seconds left in the window, rounded up. Requests carrying
//!   `Authorization: Bearer {api_token}` (none by default) are never limited. Only this route is
//!   rate limited, so every other route can be loaded freely.
//! - `/stats` reports [`Stats`]; its request count excludes the `/stats` request itself.
//!   `routes` holds one count per [`Route`], keyed by [`Route::name`]: `login`,
//!   `items_create`, `items_read`, `items_delete`, `session_new`, `session_returning`,
//!   `unauthorized`.
//!
//! The journey routes are a small stateful API for multi-step load tests (see `journey.rs`):
//!
//! - `POST /login` takes any body up to 64 KiB (413 beyond) and issues a bearer token. Tokens
//!   are signed, not stored, and never expire.
//! - `/items` and `/items/{id}` need `Authorization: Bearer <token>` with a token this service
//!   issued, checked before anything else: without one, 401 `{"error":"unauthorized"}` with
//!   `WWW-Authenticate: Bearer`. `POST /items` keeps the first 1 KiB of its body (at most
//!   64 KiB read, 413 beyond) under the next id (1, 2, ...); with 1 000 000 items alive it
//!   answers 507 `{"error":"full"}`. A non-numeric id is 400, a missing item 404
//!   `{"error":"not found"}`.
//! - `GET /session` answers `returning: true` for a `sid` cookie this service issued, else
//!   issues one with `Set-Cookie: sid=<SID>; Path=/; HttpOnly`.
//! - Other methods on these paths are 405 with `Allow`. Their error bodies are JSON
//!   (`{"error":"..."}`).
//!
//! Shutting the service down is abortive: every open connection is dropped at once, which is
//! how tests simulate a server killed mid-run. Every socket binds 127.0.0.1 only.
//!
//! This crate must not depend on other perfbase crates: it stands in for the service under
//! test, so it has to stay independent of the code that measures it.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

mod config;
mod demo;
pub mod faulty;
mod journey;
mod respond;
mod runner;
mod service;
mod stats;
mod streaming;
#[cfg(test)]
mod testutil;
mod timed;
pub mod tls;

pub use config::{Config, RateLimit};
use demo::Shared;
pub use stats::{Route, Stats};

/// Serve the reference service with the default [`Config`] on `listener` until `shutdown`
/// resolves. When it resolves, stop accepting AND drop every open connection at once
/// (abortive: the clients see their connections closed mid-run; this is how tests simulate
/// "server killed mid-run").
///
/// Accept errors are treated as transient, so this returns `Ok(())` once shut down.
pub async fn serve(
    listener: TcpListener,
    stats: Stats,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    serve_with(listener, Config::default(), stats, shutdown).await
}

/// [`serve`] with the given configuration. An invalid configuration (`workers: Some(0)`) is
/// an [`io::ErrorKind::InvalidInput`] error before anything is accepted.
pub async fn serve_with(
    listener: TcpListener,
    config: Config,
    stats: Stats,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let shared = Arc::new(Shared::new(config, stats)?);
    serve_shared(listener, shared, None, shutdown).await;
    Ok(())
}

/// [`serve_with`] over TLS (`https://`) with the server configuration `tls`.
pub async fn serve_tls_with(
    listener: TcpListener,
    config: Config,
    stats: Stats,
    tls: Arc<rustls::ServerConfig>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let shared = Arc::new(Shared::new(config, stats)?);
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    serve_shared(listener, shared, Some(acceptor), shutdown).await;
    Ok(())
}

/// Serves each connection over TLS with `tls` when it is set, in the clear otherwise. A
/// failed handshake concerns that one client.
async fn serve_shared(
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) {
    // HTTP/1.1 or HTTP/2, told apart by the h2 connection preface.
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // No `pipeline_flush`: with it hyper buffers a whole response body before writing
    // (`/bytes/67108864` cost 64 MiB per connection, 1.6 GB at 24 connections); without it
    // the write buffer stays bounded (~400 KB): peak RSS 17 MB at 24 connections, and 4x faster.
    builder.http1().keep_alive(true);
    runner::accept_loop(listener, shutdown, move |stream, peer| {
        shared.stats.count_connection();
        // Latency matters more than packet count for a load-test target.
        let _ = stream.set_nodelay(true);
        let shared = Arc::clone(&shared);
        let ip = peer.ip();
        let service = service_fn(move |req| service::handle(req, Arc::clone(&shared), ip));
        let (builder, tls) = (builder.clone(), tls.clone());
        async move {
            // A connection error only concerns that one client.
            match tls {
                None => {
                    let _ = builder
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        let _ = builder
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                }
            }
        }
    })
    .await;
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
pub fn spawn(port: u16) -> io::Result<Background> {
    spawn_with(port, Config::default())
}

/// [`spawn`] with the given configuration ([`serve_with`] on the background thread). An
/// invalid configuration is an [`io::ErrorKind::InvalidInput`] error before binding.
pub fn spawn_with(port: u16, config: Config) -> io::Result<Background> {
    spawn_inner(port, config, None)
}

/// [`spawn_with`] over TLS (`https://`) with the server configuration `tls`, e.g. from
/// [`tls::self_signed`].
pub fn spawn_tls(
    port: u16,
    config: Config,
    tls: Arc<rustls::ServerConfig>,
) -> io::Result<Background> {
    spawn_inner(port, config, Some(tokio_rustls::TlsAcceptor::from(tls)))
}

fn spawn_inner(
    port: u16,
    config: Config,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> io::Result<Background> {
    let stats = Stats::default();
    let shared = Arc::new(Shared::new(config, stats.clone())?);
    let (addr, thread) =
        runner::ServerThread::start("perfbase-reference", port, move |listener, rx| async move {
            serve_shared(listener, shared, tls, async move {
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
mod tests_demo;
#[cfg(test)]
mod tests_faulty;
#[cfg(test)]
mod tests_journey;
#[cfg(test)]
mod tests_streaming;
