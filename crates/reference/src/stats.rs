//! The service's counters: connections accepted and requests answered.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

    pub(crate) fn count_connection(&self) {
        self.inner.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_request(&self) {
        self.inner.requests.fetch_add(1, Ordering::Relaxed);
    }
}
