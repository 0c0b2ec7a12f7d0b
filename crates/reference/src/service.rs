//! The reference service's routes: the plain ones here, the demo ones dispatched to `demo`,
//! the journey ones (`/login`, `/items`, `/session`) to `journey`.

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_LENGTH};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};

use crate::demo::{self, Shared};
use crate::journey::{self, JourneyPath, ReadBody};
use crate::respond::{ok_text, response, RefBody, BYTES_FRAME};
use crate::streaming;

/// Largest completion request body read: 1 MiB.
const MAX_COMPLETION_BODY: usize = 1 << 20;

/// Longest accepted `/delay/{ms}`: ten minutes.
pub(crate) const MAX_DELAY_MS: u64 = 600_000;
/// Largest accepted `/bytes/{n}` and `/chunked/{n}`: 64 MiB.
pub(crate) const MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;
/// Size of each frame (and so each HTTP chunk) of a `/chunked/{n}` body.
pub(crate) const CHUNK_FRAME: usize = 1000;
fn bad_request() -> Response<RefBody> {
    response(
        StatusCode::BAD_REQUEST,
        "text/plain",
        RefBody::text("bad request\n"),
    )
}

fn not_found() -> Response<RefBody> {
    response(
        StatusCode::NOT_FOUND,
        "text/plain",
        RefBody::text("not found\n"),
    )
}

/// Parse a route parameter: decimal digits only, at most `max`.
fn param(s: &str, max: u64) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u64>().ok().filter(|&v| v <= max)
}

fn status_response(code: &str) -> Response<RefBody> {
    let Some(status) = param(code, 599)
        .filter(|&c| c >= 200)
        .and_then(|c| StatusCode::from_u16(c as u16).ok())
    else {
        return bad_request();
    };
    // These statuses must not carry a body.
    let body = if matches!(status.as_u16(), 204 | 205 | 304) {
        RefBody::Once(None)
    } else {
        let text = format!(
            "{} {}\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        );
        RefBody::Once(Some(Bytes::from(text)))
    };
    response(status, "text/plain", body)
}

fn fill_response(n: &str, exact: bool) -> Response<RefBody> {
    let Some(n) = param(n, MAX_BODY_BYTES) else {
        return bad_request();
    };
    let frame = if exact { BYTES_FRAME } else { CHUNK_FRAME };
    let mut resp = response(
        StatusCode::OK,
        "application/octet-stream",
        RefBody::Fill {
            remaining: n,
            frame,
            exact,
        },
    );
    if exact {
        resp.headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(n));
    }
    resp
}

fn method_not_allowed() -> Response<RefBody> {
    let mut resp = response(
        StatusCode::METHOD_NOT_ALLOWED,
        "text/plain",
        RefBody::text("method not allowed\n"),
    );
    resp.headers_mut()
        .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
    resp
}

/// The demo routes, which depend on the service's configuration and on who is asking; `None`
/// for every other path.
async fn demo_route(parts: &Parts, shared: &Shared, peer: IpAddr) -> Option<Response<RefBody>> {
    let path = parts.uri.path();
    let resp = match path {
        "/work" => demo::work(shared).await,
        "/stream" => streaming::stream(parts.uri.query()),
        "/v1/models" => streaming::models(),
        "/health/all" => demo::health_all(&shared.config, parts.uri.query()).await,
        "/stats" => match parts.method {
            Method::GET | Method::HEAD => demo::stats(&shared.stats),
            _ => method_not_allowed(),
        },
        _ => {
            if let Some(key) = path.strip_prefix("/lookup/") {
                demo::lookup(shared, key).await
            } else if path.starts_with("/limited/") {
                demo::limited(shared, peer, &parts.headers)
            } else {
                return None;
            }
        }
    };
    Some(resp)
}

async fn route(path: &str) -> Response<RefBody> {
    match path {
        "/" => return ok_text(),
        "/health" => {
            return response(
                StatusCode::OK,
                "application/json",
                RefBody::text("{\"status\":\"ok\"}"),
            )
        }
        _ => {}
    }
    if let Some(ms) = path.strip_prefix("/delay/") {
        return match param(ms, MAX_DELAY_MS) {
            Some(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ok_text()
            }
            None => bad_request(),
        };
    }
    if let Some(code) = path.strip_prefix("/status/") {
        return status_response(code);
    }
    if let Some(n) = path.strip_prefix("/bytes/") {
        return fill_response(n, true);
    }
    if let Some(n) = path.strip_prefix("/chunked/") {
        return fill_response(n, false);
    }
    not_found()
}

/// Whether `path` is the chat (true) or the plain (false) completions route.
fn completion_path(path: &str) -> Option<bool> {
    match path {
        "/v1/chat/completions" => Some(true),
        "/v1/completions" => Some(false),
        _ => None,
    }
}

/// A completion request: POST with a JSON body of at most [`MAX_COMPLETION_BODY`] bytes.
async fn completion(
    parts: &Parts,
    body: Incoming,
    shared: &Shared,
    chat: bool,
) -> Response<RefBody> {
    let body = journey::read_body(body, MAX_COMPLETION_BODY).await;
    if parts.method != Method::POST {
        let mut resp = method_not_allowed();
        resp.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return resp;
    }
    match body {
        ReadBody::Whole(b) => streaming::completion(&shared.config, &b, chat).await,
        ReadBody::TooLarge => response(
            StatusCode::PAYLOAD_TOO_LARGE,
            "text/plain",
            RefBody::text("request body larger than 1 MiB\n"),
        ),
        ReadBody::Broken => bad_request(),
    }
}

/// The `Server` header of every answer.
const SERVER: &str = concat!("perfbase-reference/", env!("CARGO_PKG_VERSION"));

/// Read `body` to the end and drop it; whether it arrived whole.
async fn drain(mut body: Incoming) -> bool {
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            return false;
        }
    }
    true
}

/// A journey route: its body kept (`/login`, `/items`) or drained (the others), then answered.
async fn journey_route(
    path: JourneyPath<'_>,
    parts: &Parts,
    body: Incoming,
    shared: &Shared,
) -> Response<RefBody> {
    let body = if path.reads_body() {
        journey::read_body(body, journey::MAX_REQUEST_BODY).await
    } else if drain(body).await {
        ReadBody::Whole(Bytes::new())
    } else {
        ReadBody::Broken
    };
    journey::answer(&shared.journey, &shared.stats, path, parts, body)
}

/// Answer one request from `peer`: read its body (kept for the journey routes that use it,
/// discarded otherwise), route on the path (any method except where a route says otherwise),
/// count it.
pub(crate) async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    peer: IpAddr,
) -> Result<Response<RefBody>, Infallible> {
    let (parts, body) = req.into_parts();
    // The journey routes first: a one-byte test sends every other path straight on.
    let mut resp = if let Some(path) = JourneyPath::parse(parts.uri.path()) {
        journey_route(path, &parts, body, &shared).await
    } else if let Some(chat) = completion_path(parts.uri.path()) {
        completion(&parts, body, &shared, chat).await
    } else if !drain(body).await {
        bad_request()
    } else if let Some(resp) = demo_route(&parts, &shared, peer).await {
        resp
    } else {
        route(parts.uri.path()).await
    };
    // What it is, as servers say: a baselines page names the service it measured.
    resp.headers_mut().insert(
        hyper::header::SERVER,
        hyper::header::HeaderValue::from_static(SERVER),
    );
    shared.stats.count_request();
    Ok(resp)
}
