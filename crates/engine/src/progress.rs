//! Live progress: each worker publishes its counters into its own cache line, the coordinator
//! sums them about once a second.

use perfbase_core::Recorder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Live counters, published by each worker once a second.
#[derive(Debug, Default)]
pub struct Progress {
    workers: Vec<WorkerProgress>,
}

#[derive(Debug, Default)]
#[repr(align(64))] // one cache line per worker: no false sharing between workers
pub(crate) struct WorkerProgress {
    pub(crate) completed: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) p99_us: AtomicU64,
    pub(crate) in_flight: AtomicU64,
    /// With [`crate::EngineConfig::live`]: a copy of the worker's recorder once a second,
    /// with when (since the phase's start) it was taken.
    pub(crate) live: Mutex<Option<(Duration, Recorder)>>,
}

/// A snapshot of [`Progress`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProgressSnapshot {
    pub completed: u64,
    pub errors: u64,
    /// The phase's p99 so far: the highest of the workers' p99s (each over all its
    /// operations of the phase until its last publication, about once a second).
    pub p99_ms: f64,
    /// Operations started and not yet completed, at the workers' last publications.
    pub in_flight: u64,
}

impl Progress {
    pub(crate) fn new(workers: usize) -> Progress {
        Progress {
            workers: (0..workers).map(|_| WorkerProgress::default()).collect(),
        }
    }

    pub(crate) fn worker(&self, id: usize) -> &WorkerProgress {
        &self.workers[id]
    }

    pub(crate) fn reset(&self) {
        for w in &self.workers {
            w.completed.store(0, Ordering::Relaxed);
            w.errors.store(0, Ordering::Relaxed);
            w.p99_us.store(0, Ordering::Relaxed);
            w.in_flight.store(0, Ordering::Relaxed);
            if let Ok(mut live) = w.live.lock() {
                *live = None;
            }
        }
    }

    /// The phase so far: the merge of the workers' last live copies, and the earliest time
    /// one was taken (None before any was published, or without
    /// [`crate::EngineConfig::live`]). Workers take them on the same whole seconds of the
    /// phase, so the merge is the phase as of that second, give or take a completion.
    pub fn live(&self) -> Option<(Duration, Recorder)> {
        let mut merged: Option<(Duration, Recorder)> = None;
        for w in &self.workers {
            let Ok(live) = w.live.lock() else { continue };
            if let Some((at, r)) = live.as_ref() {
                match &mut merged {
                    Some((t, m)) => {
                        *t = (*t).min(*at);
                        m.merge(r);
                    }
                    None => merged = Some((*at, r.live_copy())),
                }
            }
        }
        merged
    }

    pub fn snapshot(&self) -> ProgressSnapshot {
        let mut s = ProgressSnapshot::default();
        for w in &self.workers {
            s.completed += w.completed.load(Ordering::Relaxed);
            s.errors += w.errors.load(Ordering::Relaxed);
            s.in_flight += w.in_flight.load(Ordering::Relaxed);
            s.p99_ms = s
                .p99_ms
                .max(w.p99_us.load(Ordering::Relaxed) as f64 / 1000.0);
        }
        s
    }
}
