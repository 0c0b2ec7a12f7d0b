//! Live progress: each worker publishes its counters into its own cache line, the coordinator
//! sums them about once a second.

use std::sync::atomic::{AtomicU64, Ordering};

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
}

/// A snapshot of [`Progress`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProgressSnapshot {
    pub completed: u64,
    pub errors: u64,
    /// The phase's p99 so far: the highest of the workers' p99s (each over all its
    /// operations of the phase until its last publication, about once a second).
    pub p99_ms: f64,
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
        }
    }

    pub fn snapshot(&self) -> ProgressSnapshot {
        let mut s = ProgressSnapshot::default();
        for w in &self.workers {
            s.completed += w.completed.load(Ordering::Relaxed);
            s.errors += w.errors.load(Ordering::Relaxed);
            s.p99_ms = s
                .p99_ms
                .max(w.p99_us.load(Ordering::Relaxed) as f64 / 1000.0);
        }
        s
    }
}
