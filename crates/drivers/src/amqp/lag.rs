//! How far the publishers of a stream may run ahead of its consumers
//! ([`AmqpOptions::max_lag`](super::AmqpOptions::max_lag)).
//!
//! A publisher that outruns the consumers only fills the queue, and a broker busy taking in
//! messages delivers fewer: the consume rate then measures a growing backlog instead of what
//! the broker sustains. With a bound, a publisher waits while the messages published and not
//! yet consumed would exceed it.
//!
//! The consumer group and the publisher sessions of a run meet here by queue name: the group
//! registers its [`Counters`] when it starts and removes them when it finishes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How often a waiting publisher looks again.
const POLL: Duration = Duration::from_micros(500);

/// Messages published (and counted as such) and received on one stream's queue.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub published: AtomicU64,
    pub received: AtomicU64,
}

/// The running groups' counters, by queue.
static GROUPS: Mutex<Vec<(String, Weak<Counters>)>> = Mutex::new(Vec::new());

/// Registers the counters of the group consuming `queue`.
pub(super) fn register(queue: &str, counters: &Arc<Counters>) {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    groups.retain(|(q, c)| q != queue && c.strong_count() > 0);
    groups.push((queue.to_string(), Arc::downgrade(counters)));
}

/// Removes the group consuming `queue`.
pub(super) fn unregister(queue: &str) {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    groups.retain(|(q, _)| q != queue);
}

/// A publisher's bound on its lead over the consumers of its queue.
#[derive(Debug)]
pub(super) struct Gate {
    counters: Arc<Counters>,
    max: u64,
}

impl Gate {
    /// The gate of `queue`'s running group, if there is one.
    pub fn of(queue: &str, max: u64) -> Option<Gate> {
        let groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        let counters = groups
            .iter()
            .find(|(q, _)| q == queue)
            .and_then(|(_, c)| c.upgrade())?;
        Some(Gate { counters, max })
    }

    /// Waits until `n` more messages keep the lead within the bound. A batch larger than the
    /// bound waits for an empty lead.
    pub async fn room(&self, n: u64) {
        loop {
            let published = self.counters.published.load(Ordering::Relaxed);
            let received = self.counters.received.load(Ordering::Relaxed);
            let lead = published.saturating_sub(received);
            if lead == 0 || lead + n <= self.max {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// `n` messages were published.
    pub fn published(&self, n: u64) {
        self.counters.published.fetch_add(n, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_finds_its_group_and_waits_for_the_consumers() {
        let counters = Arc::new(Counters::default());
        register("perfbase-lag-test", &counters);
        assert!(Gate::of("another-queue", 10).is_none());
        let gate = Gate::of("perfbase-lag-test", 10).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // An empty lead lets any batch through, even one over the bound.
            gate.room(32).await;
            gate.published(8);
            gate.room(2).await;
            // 8 ahead: 3 more would be 11 > 10, until the consumers take one.
            let waiting = tokio::time::timeout(Duration::from_millis(20), gate.room(3));
            assert!(waiting.await.is_err());
            counters.received.fetch_add(1, Ordering::Relaxed);
            tokio::time::timeout(Duration::from_secs(5), gate.room(3))
                .await
                .unwrap();
        });
        unregister("perfbase-lag-test");
        assert!(Gate::of("perfbase-lag-test", 10).is_none());
    }
}
