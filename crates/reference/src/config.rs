//! Tunables of the reference service's demo routes (`/lookup`, `/work`, `/health/all`,
//! `/limited`). The pre-existing routes ignore them.

use std::io;
use std::time::Duration;

use tokio::sync::Semaphore;

/// How the reference service behaves on its demo routes. [`Config::default`] is what
/// [`serve`](crate::serve) and [`spawn`](crate::spawn) use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Keys in the in-memory corpus: `key-0` .. `key-{corpus_size-1}` (default 10 000).
    pub corpus_size: u64,
    /// CPU burned per `/lookup` request (a busy loop measured against a monotonic clock, run on
    /// the runtime's worker thread like real CPU-bound work), default 0.
    pub lookup_cpu: Duration,
    /// Extra latency (async sleep) per `/lookup` request, default 0.
    pub lookup_delay: Duration,
    /// A slow drift: `/lookup` sleeps this much longer for every second the service has run
    /// (default 0). Made to test that interleaved comparisons are not fooled by drift.
    pub lookup_drift: Duration,
    /// Capacity cap: at most this many `/lookup` and `/work` requests are served at once; the
    /// rest wait in FIFO order for a permit. `None` = unlimited (default). `Some(0)` is
    /// rejected with [`io::ErrorKind::InvalidInput`].
    pub workers: Option<usize>,
    /// Service time of `/work` (async sleep while holding a permit), default 10 ms.
    pub work_time: Duration,
    /// Number of internal checks `/health/all` runs (default 4).
    pub health_checks: usize,
    /// Time each `/health/all` check takes (async sleep, default 5 ms).
    pub health_check_time: Duration,
    /// Whether the `/health/all` checks run concurrently instead of one after another
    /// (default: one after another).
    pub health_concurrent: bool,
    /// Per-client rate limit on `/limited/...`: at most `limit` requests per `window` per
    /// client IP (a fixed window starting at the client's first request), answered 429 with a
    /// `Retry-After` header (whole seconds left in the window, rounded up) beyond that.
    /// Requests with header `Authorization: Bearer <api_token>` are not limited.
    /// `None` = no limit. Default: 120 requests per 60 s.
    pub rate_limit: Option<RateLimit>,
    /// Token that bypasses the rate limit. Empty (the default) bypasses nothing: a fixed
    /// default would let anyone who read the docs past the limit.
    pub api_token: String,
    /// `/v1/chat/completions`: time to the first token (default 50 ms).
    pub first_token: Duration,
    /// `/v1/chat/completions`: time between tokens (default 10 ms).
    pub token_gap: Duration,
}

/// At most `limit` requests per `window` per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub limit: u32,
    pub window: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            corpus_size: 10_000,
            lookup_cpu: Duration::ZERO,
            lookup_delay: Duration::ZERO,
            lookup_drift: Duration::ZERO,
            workers: None,
            work_time: Duration::from_millis(10),
            health_checks: 4,
            health_check_time: Duration::from_millis(5),
            health_concurrent: false,
            rate_limit: Some(RateLimit {
                limit: 120,
                window: Duration::from_secs(60),
            }),
            api_token: String::new(),
            first_token: Duration::from_millis(50),
            token_gap: Duration::from_millis(10),
        }
    }
}

impl Config {
    /// Reject settings the service cannot honour.
    pub(crate) fn validate(&self) -> io::Result<()> {
        match self.workers {
            Some(0) => Err(invalid("workers must be at least 1")),
            Some(w) if w > Semaphore::MAX_PERMITS => Err(invalid("workers is too large")),
            _ => Ok(()),
        }
    }
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.to_owned())
}
