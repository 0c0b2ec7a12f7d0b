//! The journey routes: a small stateful API (log in, then create, read and delete items with
//! the token; a cookie session) so multi-step load tests have something real to talk to.
//!
//! Tokens (`tok-{n}-{sig}`) and session ids (`s-{n}-{sig}`) are signed, not stored: `n` counts
//! the logins (sessions) and `sig` is a keyed hash of `n` with a secret this service picks when
//! it starts. Checking one needs no lookup, so a long load test never grows memory with them.
//! The signature only shows that this service issued the value; this is a test target, not a
//! security boundary. Tokens never expire, whatever `expires_in` says.
//!
//! Items live in memory, at most [`MAX_ITEM_BYTES`] of each body and at most [`MAX_ITEMS`]
//! items at once, so even a runaway load test has a bounded footprint.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Body;
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, ALLOW, AUTHORIZATION, COOKIE, LOCATION, SET_COOKIE,
    WWW_AUTHENTICATE,
};
use hyper::http::request::Parts;
use hyper::{Method, Response, StatusCode};

use crate::respond::{json, response, RefBody};
use crate::stats::{Route, Stats};

/// Largest request body `/login` and `/items` accept (64 KiB); a longer one is answered 413.
pub(crate) const MAX_REQUEST_BODY: usize = 64 * 1024;
/// How much of an item's body is kept (1 KiB); the rest is dropped.
pub(crate) const MAX_ITEM_BYTES: usize = 1024;
/// Most items alive at once; creating one more is answered 507.
pub(crate) const MAX_ITEMS: usize = 1_000_000;
/// Shards of the item store, so concurrent requests rarely wait on the same lock.
const SHARDS: usize = 16;

/// A journey route's path, told apart from the other routes' cheaply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JourneyPath<'a> {
    Login,
    Items,
    /// `/items/{id}`, with whatever follows the slash.
    Item(&'a str),
    Session,
}

impl<'a> JourneyPath<'a> {
    /// The journey route `path` names, if any. The second byte rules out nearly every other
    /// route before any string compare, so `/` and `/bytes/{n}` are not slowed down.
    pub(crate) fn parse(path: &'a str) -> Option<Self> {
        match path.as_bytes().get(1)? {
            b'l' if path == "/login" => Some(JourneyPath::Login),
            b'i' if path == "/items" => Some(JourneyPath::Items),
            b'i' => path.strip_prefix("/items/").map(JourneyPath::Item),
            b's' if path == "/session" => Some(JourneyPath::Session),
            _ => None,
        }
    }

    /// Whether the route keeps the request body; the others read and discard it.
    pub(crate) fn reads_body(self) -> bool {
        matches!(self, JourneyPath::Login | JourneyPath::Items)
    }
}

/// A request body as read for a journey route.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ReadBody {
    Whole(Bytes),
    /// Longer than the limit; it was still read to the end, so the connection stays usable.
    TooLarge,
    /// The client broke off or sent a malformed body.
    Broken,
}

/// Read `body` to the end, keeping it if it is at most `limit` bytes.
pub(crate) async fn read_body<B>(mut body: B, limit: usize) -> ReadBody
where
    B: Body<Data = Bytes> + Unpin,
{
    let mut kept = BytesMut::new();
    let mut too_large = false;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return ReadBody::Broken;
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        if too_large || kept.len() + data.len() > limit {
            // Like the other routes, drain the rest rather than leave it on the connection.
            too_large = true;
            kept = BytesMut::new();
        } else {
            kept.extend_from_slice(&data);
        }
    }
    if too_large {
        ReadBody::TooLarge
    } else {
        ReadBody::Whole(kept.freeze())
    }
}

/// SplitMix64's finaliser: every input bit flips about half of the output bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A secret that differs between processes and between services in one process (tests start
/// many): the clock, the process id and a per-process count of services started.
fn start_secret() -> u64 {
    static STARTED: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let instance = STARTED.fetch_add(1, Ordering::Relaxed);
    mix(mix(nanos) ^ mix(u64::from(std::process::id())).rotate_left(32) ^ mix(!instance))
}

/// Issues and checks signed values `{prefix}{n}-{sig}`: `n` counts from 1 and `sig` is 16
/// lower-case hex digits of a keyed hash of `n`.
pub(crate) struct Signer {
    prefix: &'static str,
    keys: (u64, u64),
    issued: AtomicU64,
}

impl Signer {
    /// A signer whose keys come from `secret`, told apart from other signers by `prefix`.
    pub(crate) fn new(prefix: &'static str, secret: u64) -> Self {
        let domain = prefix.bytes().fold(0u64, |h, b| mix(h ^ u64::from(b)));
        let k1 = mix(secret ^ domain);
        Signer {
            prefix,
            keys: (k1, mix(k1 ^ 0x9E37_79B9_7F4A_7C15)),
            issued: AtomicU64::new(0),
        }
    }

    fn sig(&self, n: u64) -> u64 {
        // Two keys, so one issued value does not give the key away by undoing one `mix`.
        mix(mix(n ^ self.keys.0).wrapping_add(self.keys.1))
    }

    /// A new value, never issued before by this signer.
    pub(crate) fn issue(&self) -> String {
        let n = self.issued.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}{n}-{:016x}", self.prefix, self.sig(n))
    }

    /// Whether `value` is exactly one this signer issues (canonical form only).
    pub(crate) fn verify(&self, value: &str) -> bool {
        let Some((n, sig)) = value
            .strip_prefix(self.prefix)
            .and_then(|rest| rest.split_once('-'))
        else {
            return false;
        };
        // No leading zeros (which also rules out n = 0), so each value has one spelling.
        let canonical_n =
            !n.is_empty() && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit());
        let canonical_sig =
            sig.len() == 16 && sig.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !canonical_n || !canonical_sig {
            return false;
        }
        match (n.parse::<u64>(), u64::from_str_radix(sig, 16)) {
            (Ok(n), Ok(sig)) => sig == self.sig(n),
            _ => false,
        }
    }
}

/// The items `POST /items` stored, sharded by id, with a cap on how many are alive.
pub(crate) struct Items {
    shards: [Mutex<HashMap<u64, Bytes>>; SHARDS],
    next_id: AtomicU64,
    live: AtomicUsize,
    cap: usize,
}

impl Items {
    pub(crate) fn new(cap: usize) -> Self {
        Items {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
            next_id: AtomicU64::new(1),
            live: AtomicUsize::new(0),
            cap,
        }
    }

    fn shard(&self, id: u64) -> std::sync::MutexGuard<'_, HashMap<u64, Bytes>> {
        // A map is left consistent by every update, so a poisoned lock is still safe to use.
        self.shards[(id % SHARDS as u64) as usize]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Store the first [`MAX_ITEM_BYTES`] of `body` under a new id; `None` when full.
    pub(crate) fn create(&self, body: &[u8]) -> Option<u64> {
        // Reserve room first, so a full store hands out no id and never overshoots the cap.
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.cap).then_some(n + 1)
            })
            .ok()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // A copy, so the item does not pin the whole (up to 64 KiB) request buffer.
        let kept = Bytes::copy_from_slice(&body[..body.len().min(MAX_ITEM_BYTES)]);
        self.shard(id).insert(id, kept);
        Some(id)
    }

    /// The stored length of item `id`, if it exists.
    pub(crate) fn size(&self, id: u64) -> Option<usize> {
        self.shard(id).get(&id).map(Bytes::len)
    }

    /// Remove item `id`; whether it existed.
    pub(crate) fn delete(&self, id: u64) -> bool {
        let existed = self.shard(id).remove(&id).is_some();
        if existed {
            self.live.fetch_sub(1, Ordering::AcqRel);
        }
        existed
    }

    /// Items alive now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }
}

/// The journey routes' state.
pub(crate) struct Journey {
    pub(crate) tokens: Signer,
    pub(crate) sessions: Signer,
    pub(crate) items: Items,
}

impl Journey {
    pub(crate) fn new() -> Self {
        Journey::with_cap(MAX_ITEMS)
    }

    /// A journey state whose store holds at most `cap` items.
    pub(crate) fn with_cap(cap: usize) -> Self {
        let secret = start_secret();
        Journey {
            tokens: Signer::new("tok-", secret),
            sessions: Signer::new("s-", secret),
            items: Items::new(cap),
        }
    }

    /// Whether `headers` carry `Authorization: Bearer <token>` (scheme case-insensitive) with
    /// a token this service issued.
    fn authorized(&self, headers: &HeaderMap) -> bool {
        headers.get_all(AUTHORIZATION).iter().any(|value| {
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().split_once(' '))
                .is_some_and(|(scheme, t)| {
                    scheme.eq_ignore_ascii_case("bearer") && self.tokens.verify(t.trim())
                })
        })
    }

    /// The first `sid` cookie this service issued, if the request carries one.
    fn returning_sid<'h>(&self, headers: &'h HeaderMap) -> Option<&'h str> {
        // HTTP/2 may split cookies over several `cookie` headers.
        headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().strip_prefix("sid="))
            .find(|sid| self.sessions.verify(sid))
    }
}

/// A JSON answer with a fixed body.
fn fixed(status: StatusCode, body: &'static str) -> Response<RefBody> {
    response(status, "application/json", RefBody::text(body))
}

/// `resp` with header `name: value`. The values here are built from digits and signed values
/// of a fixed alphabet, so they are always valid; an invalid one would just be left out.
fn with_header(mut resp: Response<RefBody>, name: HeaderName, value: String) -> Response<RefBody> {
    if let Ok(value) = HeaderValue::try_from(value) {
        resp.headers_mut().insert(name, value);
    }
    resp
}

fn method_not_allowed(allow: &'static str) -> Response<RefBody> {
    let mut resp = fixed(
        StatusCode::METHOD_NOT_ALLOWED,
        "{\"error\":\"method not allowed\"}",
    );
    resp.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    resp
}

fn unauthorized() -> Response<RefBody> {
    let mut resp = fixed(StatusCode::UNAUTHORIZED, "{\"error\":\"unauthorized\"}");
    resp.headers_mut()
        .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

fn not_found() -> Response<RefBody> {
    fixed(StatusCode::NOT_FOUND, "{\"error\":\"not found\"}")
}

fn bad_request() -> Response<RefBody> {
    fixed(StatusCode::BAD_REQUEST, "{\"error\":\"bad request\"}")
}

/// Answer a journey request whose body has been read ([`JourneyPath::reads_body`]) or
/// drained (the others, as `Whole` and empty). `/items` checks the token before anything else.
pub(crate) fn answer(
    journey: &Journey,
    stats: &Stats,
    path: JourneyPath<'_>,
    parts: &Parts,
    body: ReadBody,
) -> Response<RefBody> {
    let items = matches!(path, JourneyPath::Items | JourneyPath::Item(_));
    if items && !journey.authorized(&parts.headers) {
        stats.count_route(Route::Unauthorized);
        return unauthorized();
    }
    let body = match body {
        ReadBody::Whole(body) => body,
        ReadBody::TooLarge => {
            return fixed(StatusCode::PAYLOAD_TOO_LARGE, "{\"error\":\"too large\"}")
        }
        ReadBody::Broken => return bad_request(),
    };
    let method = &parts.method;
    match path {
        JourneyPath::Login if method == Method::POST => login(journey, stats),
        JourneyPath::Login => method_not_allowed("POST"),
        JourneyPath::Items if method == Method::POST => create(journey, stats, &body),
        JourneyPath::Items => method_not_allowed("POST"),
        JourneyPath::Item(id) => item(journey, stats, method, id),
        JourneyPath::Session if matches!(*method, Method::GET | Method::HEAD) => {
            session(journey, stats, &parts.headers)
        }
        JourneyPath::Session => method_not_allowed("GET, HEAD"),
    }
}

/// `POST /login`: a new bearer token, whatever the credentials.
fn login(journey: &Journey, stats: &Stats) -> Response<RefBody> {
    let token = journey.tokens.issue();
    stats.count_route(Route::Login);
    json(
        StatusCode::OK,
        format!("{{\"access_token\":\"{token}\",\"token_type\":\"Bearer\",\"expires_in\":3600}}"),
    )
}

/// `POST /items`: store the body, 201 with its `Location`, or 507 when the store is full.
fn create(journey: &Journey, stats: &Stats, body: &[u8]) -> Response<RefBody> {
    stats.count_route(Route::ItemsCreate);
    match journey.items.create(body) {
        Some(id) => with_header(
            json(StatusCode::CREATED, format!("{{\"id\":{id}}}")),
            LOCATION,
            format!("/items/{id}"),
        ),
        None => fixed(StatusCode::INSUFFICIENT_STORAGE, "{\"error\":\"full\"}"),
    }
}

/// `GET`/`HEAD`/`DELETE /items/{id}` (`id` in decimal).
fn item(journey: &Journey, stats: &Stats, method: &Method, id: &str) -> Response<RefBody> {
    let read = matches!(*method, Method::GET | Method::HEAD);
    if !read && method != Method::DELETE {
        return method_not_allowed("GET, HEAD, DELETE");
    }
    // Digits only: `parse` alone would take a leading `+`.
    let id = Some(id)
        .filter(|id| id.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|id| id.parse::<u64>().ok());
    let Some(id) = id else {
        return bad_request();
    };
    if read {
        stats.count_route(Route::ItemsRead);
        return match journey.items.size(id) {
            Some(size) => json(StatusCode::OK, format!("{{\"id\":{id},\"size\":{size}}}")),
            None => not_found(),
        };
    }
    stats.count_route(Route::ItemsDelete);
    if journey.items.delete(id) {
        let mut resp = Response::new(RefBody::Once(None));
        *resp.status_mut() = StatusCode::NO_CONTENT;
        resp
    } else {
        not_found()
    }
}

/// `GET /session`: recognise a `sid` cookie this service issued, or issue one.
fn session(journey: &Journey, stats: &Stats, headers: &HeaderMap) -> Response<RefBody> {
    if let Some(sid) = journey.returning_sid(headers) {
        stats.count_route(Route::SessionReturning);
        // `sid` passed the signer's check, so it is plain ASCII that needs no JSON escaping.
        return json(
            StatusCode::OK,
            format!("{{\"sid\":\"{sid}\",\"returning\":true}}"),
        );
    }
    let sid = journey.sessions.issue();
    stats.count_route(Route::SessionNew);
    with_header(
        json(
            StatusCode::OK,
            format!("{{\"sid\":\"{sid}\",\"returning\":false}}"),
        ),
        SET_COOKIE,
        format!("sid={sid}; Path=/; HttpOnly"),
    )
}
