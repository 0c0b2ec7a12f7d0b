//! What a recorder keeps per kind of thing besides its totals: per endpoint (label), and a
//! journey's iterations, groups of steps and named checks. Apart from the recorder so each
//! file keeps one job; the recorder fills and merges them.

use crate::histogram::{new_histogram, SIGFIG};
use crate::outcome::Class;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// The figures of one kind of operation (one endpoint of a mix).
#[derive(Debug, Clone)]
pub struct LabelStats {
    pub name: String,
    /// Response time, as in [`Recorder::response`](crate::Recorder::response).
    pub response: Histogram<u64>,
    pub(crate) classes: [u64; Class::COUNT],
    /// Status code → count (few distinct codes per endpoint: a map, not a flat array).
    pub(crate) status: BTreeMap<u16, u64>,
}

impl LabelStats {
    pub(crate) fn new(name: String) -> LabelStats {
        LabelStats {
            name,
            response: new_histogram(SIGFIG),
            classes: [0; Class::COUNT],
            status: BTreeMap::new(),
        }
    }

    pub(crate) fn merge(&mut self, other: &LabelStats) {
        let _ = self.response.add(&other.response);
        for (a, b) in self.classes.iter_mut().zip(other.classes.iter()) {
            *a += b;
        }
        for (code, n) in &other.status {
            *self.status.entry(*code).or_default() += n;
        }
    }

    /// Completed operations (every class).
    pub fn requests(&self) -> u64 {
        self.classes.iter().sum()
    }

    /// Operations of one class.
    pub fn count(&self, class: Class) -> u64 {
        self.classes[class.index()]
    }

    /// Non-zero class counts, in [`Class::ALL`] order.
    pub fn class_counts(&self) -> Vec<(Class, u64)> {
        Class::ALL
            .into_iter()
            .map(|c| (c, self.count(c)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Status counts as (code, count), ascending; code 0 means "no status".
    pub fn status_counts(&self) -> Vec<(u16, u64)> {
        self.status.iter().map(|(c, n)| (*c, *n)).collect()
    }
}

/// The iterations of multi-step operations (journeys): how long each took from its intended
/// start to its last response, think times included (k6's `iteration_duration`).
#[derive(Debug, Clone)]
pub struct IterationStats {
    pub duration: Histogram<u64>,
    /// Iterations whose every request succeeded.
    pub ok: u64,
    /// Iterations that a failed request (an error, a failed check or capture) ended or
    /// marked.
    pub failed: u64,
}

impl IterationStats {
    pub(crate) fn new() -> IterationStats {
        IterationStats {
            duration: new_histogram(SIGFIG),
            ok: 0,
            failed: 0,
        }
    }

    pub(crate) fn merge(&mut self, other: &IterationStats) {
        let _ = self.duration.add(&other.duration);
        self.ok += other.ok;
        self.failed += other.failed;
    }

    /// Every iteration that ended.
    pub fn count(&self) -> u64 {
        self.ok + self.failed
    }
}

/// One group of journey steps: how long each pass through it took, from its first step's
/// intended start to its last step's end.
#[derive(Debug, Clone)]
pub struct GroupStats {
    pub name: String,
    pub duration: Histogram<u64>,
}

/// One named check: how many responses passed and failed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckCount {
    pub name: String,
    pub passed: u64,
    pub failed: u64,
}
