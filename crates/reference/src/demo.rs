//! The demo routes that give a load tester something to characterise: key lookups with hits
//! and misses, a capacity-capped `/work`, fanned-out health checks and a per-client rate limit.

use std::collections::HashMap;
use std::hint::black_box;
use std::io;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION, RETRY_AFTER};
use hyper::{Response, StatusCode};
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::task::JoinSet;

use crate::config::{Config, RateLimit};
use crate::journey::Journey;
use crate::respond::{json, ok_text, response, RefBody};
use crate::stats::{Route, Stats};

/// Everything the service's connections share: the configuration, the capacity cap, the rate
/// limiter, the journey routes' state and the counters.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) stats: Stats,
    /// The journey routes' state: token and session signers, the item store.
    pub(crate) journey: Journey,
    workers: Option<Semaphore>,
    limiter: Option<RateLimiter>,
    /// When the service started: `lookup_drift` grows from here.
    started: std::time::Instant,
}

impl Shared {
    pub(crate) fn new(config: Config, stats: Stats) -> io::Result<Shared> {
        config.validate()?;
        Ok(Shared {
            workers: config.workers.map(Semaphore::new),
            limiter: config.rate_limit.map(RateLimiter::new),
            config,
            stats,
            journey: Journey::new(),
            started: std::time::Instant::now(),
        })
    }

    /// Wait (FIFO) for a worker permit; `None` when capacity is unlimited.
    async fn permit(&self) -> Option<SemaphorePermit<'_>> {
        // The semaphore is never closed, so `acquire` cannot fail; `ok()` just avoids a panic
        // path.
        self.workers.as_ref()?.acquire().await.ok()
    }
}

/// The corpus index `key` names: `key-{i}` with `i` in canonical decimal (no sign, no leading
/// zeros) below `corpus_size`.
pub(crate) fn corpus_index(key: &str, corpus_size: u64) -> Option<u64> {
    let digits = key.strip_prefix("key-")?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !canonical {
        return None;
    }
    digits.parse::<u64>().ok().filter(|&i| i < corpus_size)
}

/// Keep this thread busy for `d` of wall-clock time (a monotonic clock), computing something
/// the optimiser cannot remove.
pub(crate) fn burn_cpu(d: Duration) {
    if d.is_zero() {
        return;
    }
    let start = Instant::now();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while start.elapsed() < d {
        for _ in 0..256 {
            x = black_box(x.rotate_left(5) ^ 0xA076_1D64_78BD_642F).wrapping_mul(0xE703_7ED1);
        }
    }
    black_box(x);
}

/// `/lookup/{key}`: costs the configured CPU and delay (while holding a worker permit), hit
/// or miss, then answers the key's value or 404.
pub(crate) async fn lookup(shared: &Shared, key: &str) -> Response<RefBody> {
    let config = &shared.config;
    let _permit = shared.permit().await;
    burn_cpu(config.lookup_cpu);
    let drift = config
        .lookup_drift
        .mul_f64(shared.started.elapsed().as_secs_f64());
    let delay = config.lookup_delay + drift;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    match corpus_index(key, config.corpus_size) {
        Some(i) => json(
            StatusCode::OK,
            format!("{{\"key\":\"key-{i}\",\"value\":\"value-{i}\"}}"),
        ),
        None => json(
            StatusCode::NOT_FOUND,
            "{\"error\":\"not found\"}".to_owned(),
        ),
    }
}

/// `/work`: hold a worker permit for `work_time`, then 200 `ok\n`.
pub(crate) async fn work(shared: &Shared) -> Response<RefBody> {
    let _permit = shared.permit().await;
    tokio::time::sleep(shared.config.work_time).await;
    ok_text()
}

/// `/health/all`: run the configured checks one after another or all at once, as the
/// service is configured or as `?mode=sequential|concurrent` asks (so one run can set the two
/// side by side).
pub(crate) async fn health_all(config: &Config, query: Option<&str>) -> Response<RefBody> {
    let (n, each) = (config.health_checks, config.health_check_time);
    let asked = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("mode="));
    let concurrent = match asked {
        None => config.health_concurrent,
        Some("concurrent") => true,
        Some("sequential") => false,
        Some(other) => {
            return json(
                StatusCode::BAD_REQUEST,
                format!(
                    "{{\"error\":\"mode '{}' is neither sequential nor concurrent\"}}",
                    other.escape_default()
                ),
            )
        }
    };
    let mode = if concurrent {
        // Dropping the set (a client that went away) aborts the checks still running.
        let mut checks = JoinSet::new();
        for _ in 0..n {
            checks.spawn(tokio::time::sleep(each));
        }
        while checks.join_next().await.is_some() {}
        "concurrent"
    } else {
        for _ in 0..n {
            tokio::time::sleep(each).await;
        }
        "sequential"
    };
    json(
        StatusCode::OK,
        format!("{{\"status\":\"ok\",\"checks\":{n},\"mode\":\"{mode}\"}}"),
    )
}

/// `/stats`: the service's counters (the request asking is not counted yet), the journey
/// routes' in a nested object after the two that came first.
pub(crate) fn stats(stats: &Stats) -> Response<RefBody> {
    let routes: Vec<String> = Route::ALL
        .iter()
        .map(|&r| format!("\"{}\":{}", r.name(), stats.route(r)))
        .collect();
    json(
        StatusCode::OK,
        format!(
            "{{\"connections\":{},\"requests\":{},\"routes\":{{{}}}}}",
            stats.connections(),
            stats.requests(),
            routes.join(",")
        ),
    )
}

/// `/limited/{anything}`: 200 `ok\n` while `peer` is within its rate limit (or presents the
/// API token), else 429 with `Retry-After`.
pub(crate) fn limited(shared: &Shared, peer: IpAddr, headers: &HeaderMap) -> Response<RefBody> {
    let Some(limiter) = &shared.limiter else {
        return ok_text();
    };
    if has_token(headers, &shared.config.api_token) {
        return ok_text();
    }
    match limiter.check(peer, Instant::now()) {
        Verdict::Allowed => ok_text(),
        Verdict::Limited { retry_after_secs } => {
            let mut resp = response(
                StatusCode::TOO_MANY_REQUESTS,
                "text/plain",
                RefBody::Once(Some(Bytes::from_static(b"rate limited\n"))),
            );
            resp.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
            resp
        }
    }
}

/// Whether `headers` carry `Authorization: Bearer <token>` (scheme case-insensitive).
fn has_token(headers: &HeaderMap, token: &str) -> bool {
    if token.is_empty() {
        return false;
    }
    headers.get_all(AUTHORIZATION).iter().any(|value| {
        value
            .to_str()
            .ok()
            .and_then(|v| v.trim().split_once(' '))
            .is_some_and(|(scheme, t)| scheme.eq_ignore_ascii_case("bearer") && t.trim() == token)
    })
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Allowed,
    Limited { retry_after_secs: u64 },
}

/// Above this many tracked clients, expired windows are dropped before adding another.
const PRUNE_AT: usize = 1024;

/// Fixed-window per-client limiter. A plain mutex around a map is fine here: this is a test
/// target's rate-limited route, not the hot path, and the critical section is a few
/// instructions.
pub(crate) struct RateLimiter {
    rule: RateLimit,
    /// Per client: when its current window started and how many requests it has used in it.
    clients: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl RateLimiter {
    pub(crate) fn new(rule: RateLimit) -> Self {
        RateLimiter {
            rule,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Clients currently tracked.
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> usize {
        self.clients
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len()
    }

    /// Count a request from `client` at `now` if its window has room.
    pub(crate) fn check(&self, client: IpAddr, now: Instant) -> Verdict {
        let window = self.rule.window;
        // The map holds plain values that every update leaves consistent, so a poisoned lock
        // (a panic elsewhere while holding it) is still safe to use.
        let mut clients = self
            .clients
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if clients.len() >= PRUNE_AT && !clients.contains_key(&client) {
            clients.retain(|_, (start, _)| now.saturating_duration_since(*start) < window);
        }
        let (start, used) = clients.entry(client).or_insert((now, 0));
        if now.saturating_duration_since(*start) >= window {
            (*start, *used) = (now, 0);
        }
        if *used < self.rule.limit {
            *used += 1;
            return Verdict::Allowed;
        }
        let left = window.saturating_sub(now.saturating_duration_since(*start));
        let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
        Verdict::Limited {
            retry_after_secs: secs.max(1),
        }
    }
}
