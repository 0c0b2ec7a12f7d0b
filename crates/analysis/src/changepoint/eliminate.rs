//! Backward elimination of candidate change points: the weakest is dropped, its two
//! neighbours are tested again over the segments they now border, until every candidate left
//! has p below the limit and, for a change of level, moves it by at least the smallest change
//! that matters.
//!
//! Candidates sit in a linked list (dropping one is O(1)) and a heap ordered by strength with
//! stale entries skipped, so n candidates cost O(n log n). Finding the weakest by scanning
//! and dropping it from a vector was O(n²): 10,000 runs took a second per series.

use super::segments::{RunMeans, Tested, Work, Z_SLACK};
use super::Change;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A heap entry: a candidate's strength when it was tested, and which test that was.
#[derive(PartialEq)]
struct Entry {
    strength: f64,
    candidate: usize,
    version: u32,
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.strength
            .total_cmp(&other.strength)
            .then(self.candidate.cmp(&other.candidate))
    }
}

const NONE: usize = usize::MAX;

/// The candidates still in, with their neighbours and current tests.
struct Field<'m> {
    means: &'m RunMeans,
    cuts: Vec<usize>,
    prev: Vec<usize>,
    next: Vec<usize>,
    alive: Vec<bool>,
    tests: Vec<Tested>,
    version: Vec<u32>,
    heap: BinaryHeap<Reverse<Entry>>,
    work: Work,
}

impl Field<'_> {
    /// Tests candidate `i` between its neighbours and queues it.
    fn retest(&mut self, i: usize) {
        let a = match self.prev[i] {
            NONE => 0,
            p => self.cuts[p],
        };
        let b = match self.next[i] {
            NONE => self.means.runs(),
            n => self.cuts[n],
        };
        self.tests[i] = self.means.test(a, self.cuts[i], b, &mut self.work);
        self.version[i] += 1;
        self.heap.push(Reverse(Entry {
            strength: self.tests[i].strength,
            candidate: i,
            version: self.version[i],
        }));
    }

    fn drop_candidate(&mut self, i: usize) {
        self.alive[i] = false;
        let (p, n) = (self.prev[i], self.next[i]);
        if p != NONE {
            self.next[p] = n;
        }
        if n != NONE {
            self.prev[n] = p;
        }
        for j in [p, n] {
            if j != NONE {
                self.retest(j);
            }
        }
    }

    fn alive(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.cuts.len()).filter(|&i| self.alive[i])
    }
}

/// The kept candidates (sorted `cuts`) with their tests, in run order.
pub(super) fn eliminate(
    means: &RunMeans,
    cuts: Vec<usize>,
    max_p: f64,
    min_change: f64,
) -> Vec<Change> {
    let k = cuts.len();
    // Below this normal score a candidate is insignificant whatever its exact p: the exact p
    // (an incomplete beta function) is only computed near the limit.
    let clear = normal_score(max_p) - Z_SLACK;
    let mut f = Field {
        means,
        prev: (0..k).map(|i| i.checked_sub(1).unwrap_or(NONE)).collect(),
        next: (0..k)
            .map(|i| if i + 1 < k { i + 1 } else { NONE })
            .collect(),
        alive: vec![true; k],
        tests: Vec::with_capacity(k),
        version: vec![0; k],
        heap: BinaryHeap::with_capacity(2 * k),
        work: Work::default(),
        cuts,
    };
    for i in 0..k {
        let t = {
            let a = if i == 0 { 0 } else { f.cuts[i - 1] };
            let b = f.cuts.get(i + 1).copied().unwrap_or(means.runs());
            means.test(a, f.cuts[i], b, &mut f.work)
        };
        f.heap.push(Reverse(Entry {
            strength: t.strength,
            candidate: i,
            version: 0,
        }));
        f.tests.push(t);
    }
    while let Some(Reverse(e)) = f.heap.pop() {
        let i = e.candidate;
        if !f.alive[i] || e.version != f.version[i] {
            continue;
        }
        if e.strength < clear || weak(&f.tests[i], max_p, min_change) {
            f.drop_candidate(i);
            continue;
        }
        // Even the weakest by the ranking is significant: check every exact p, in case the
        // ranking and the exact p disagree near the limit.
        let first_weak = f.alive().find(|&j| weak(&f.tests[j], max_p, min_change));
        match first_weak {
            Some(j) => {
                f.heap.push(Reverse(e));
                f.drop_candidate(j);
            }
            None => break,
        }
    }
    f.alive()
        .map(|i| f.tests[i])
        .map(Tested::resolved)
        .collect()
}

/// The two-sided normal score of `p`: |z| with P(|Z| ≥ |z|) = p.
fn normal_score(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(1.0 - p / 2.0)
}

/// Not significant, or a change of level too small to matter.
fn weak(t: &Tested, max_p: f64, min_change: f64) -> bool {
    let (p, spread) = t.exact();
    p.is_nan() || p >= max_p || (!spread && t.change.relative().abs() < min_change)
}
