//! `--metrics-listen`: answers scrapes of `/metrics` (any path does) from a thread of its
//! own, so a scrape never competes with the load's workers for their event loops.

use crate::{expose, Board};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use tokio::sync::Notify;

/// A running metrics endpoint; dropping it (or [`Server::stop`]) closes it.
pub struct Server {
    stop: Arc<Notify>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Serves `board` on `listener` until stopped.
pub fn serve(listener: TcpListener, board: Board) -> std::io::Result<Server> {
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let (stop, thread) = crate::spawn_stoppable("perfbase-metrics", move |stopped| async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = stopped.notified() => return,
            };
            let Ok((stream, _)) = accepted else { continue };
            let board = board.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let board = board.clone();
                    async move { Ok::<_, std::convert::Infallible>(answer(&board, addr, &req)) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })?;
    Ok(Server {
        stop,
        thread: Some(thread),
    })
}

/// Protobuf for a scraper that asks for it (native histograms), OpenMetrics text otherwise.
/// A request through a name to a loopback listener (DNS rebinding) is refused.
fn answer(board: &Board, addr: SocketAddr, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let host = req
        .headers()
        .get(hyper::header::HOST)
        .map(|v| v.to_str().unwrap_or("?"));
    if !perfbase_core::host::answers(host, addr) {
        return Response::builder()
            .status(hyper::StatusCode::FORBIDDEN)
            .body(Full::new(Bytes::from_static(
                b"perfbase's metrics on a loopback address answer requests to localhost or an \
                  IP address only\n",
            )))
            .unwrap_or_default();
    }
    let accept = req
        .headers()
        .get(hyper::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let (kind, body) = if accept.contains("application/vnd.google.protobuf") {
        (expose::PROTOBUF, Bytes::from(expose::protobuf(board)))
    } else {
        (expose::TEXT, Bytes::from(expose::text(board)))
    };
    board.mark_scraped();
    Response::builder()
        .header(hyper::header::CONTENT_TYPE, kind)
        .body(Full::new(body))
        .unwrap_or_default()
}

impl Server {
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}
