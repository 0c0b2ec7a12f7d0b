//! Availability over time: the stretches in which no operation succeeded, what failed in them
//! and how quickly successes came back. Kept by every recorder, so it belongs to every
//! protocol (a leader election, a database restart, a broker failover).
//!
//! Each worker notes its successes and, between two of them, the failures it saw (by class,
//! in 10 ms buckets of the run's clock). Workers run side by side, so the run had no success
//! only where *every* worker had none: merging two recorders intersects their stretches
//! without success, and the failures kept are those whose time falls inside what remains.
//! That makes the merge exact (to the bucket) and associative, for workers at the same time
//! and for phases one after another alike (a phase has no success outside its own span).

use crate::outcome::Class;
use std::time::Duration;

/// Stretches shorter than this between two successes are not kept (a busy run has thousands
/// of gaps of a few ms; none of them is an outage).
pub const MIN_GAP: Duration = Duration::from_millis(50);
/// The most gaps a recorder keeps; past it the shortest go and the floor doubles, so a run
/// with many short stalls stays bounded and its long ones stay exact.
const MAX_GAPS: usize = 256;
/// Failures are counted in buckets of this many ms of the run's clock.
const BUCKET_MS: u64 = 10;
/// The most buckets one stretch keeps (40 s of every class failing in every bucket); further
/// failures are added to the last one.
const MAX_BUCKETS: usize = 4096;
/// How many successes after a stretch keep their latency.
pub const AFTER: usize = 16;

/// Failures in time: (bucket of the run's clock, class index, count), in the order seen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Failures {
    buckets: Vec<(u32, u8, u64)>,
}

fn bucket_of(at: Duration) -> u32 {
    (at.as_millis() as u64 / BUCKET_MS).min(u64::from(u32::MAX)) as u32
}

fn bucket_start(b: u32) -> Duration {
    Duration::from_millis(u64::from(b) * BUCKET_MS)
}

impl Failures {
    fn add(&mut self, at: Duration, class: Class, n: u64) {
        let b = bucket_of(at);
        let c = class.index() as u8;
        if let Some(last) = self
            .buckets
            .iter_mut()
            .rev()
            .take(Class::COUNT)
            .find(|x| x.0 == b && x.1 == c)
        {
            last.2 += n;
        } else if self.buckets.len() < MAX_BUCKETS {
            self.buckets.push((b, c, n));
        } else if let Some(last) = self.buckets.last_mut() {
            last.2 += n;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// The failures in [from, to), to the bucket.
    pub(crate) fn within(&self, from: Duration, to: Option<Duration>) -> Failures {
        let (a, b) = (bucket_of(from), to.map_or(u32::MAX, bucket_of));
        Failures {
            buckets: self
                .buckets
                .iter()
                .filter(|x| x.0 >= a && (x.0 < b || to.is_none()))
                .copied()
                .collect(),
        }
    }

    fn join(mut self, other: Failures) -> Failures {
        self.buckets.extend(other.buckets);
        self.buckets.sort_by_key(|x| (x.0, x.1));
        self.buckets.truncate(MAX_BUCKETS);
        self
    }

    /// When the first failure happened (the start of its bucket).
    pub fn first(&self) -> Option<Duration> {
        self.buckets.iter().map(|x| x.0).min().map(bucket_start)
    }

    /// Failures per class, in [`Class::ALL`] order.
    pub fn by_class(&self) -> [u64; Class::COUNT] {
        let mut out = [0; Class::COUNT];
        for &(_, c, n) in &self.buckets {
            out[usize::from(c)] += n;
        }
        out
    }
}

/// A stretch without success: from a success (or the start) to the next success (or the
/// end), with the failures seen in it and the first successes after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap {
    pub from: Duration,
    /// `None`: no success came after it.
    pub to: Option<Duration>,
    pub failures: Failures,
    /// The first successes after it: when each completed and its latency in µs.
    pub after: Vec<(Duration, u64)>,
}

/// One recorder's availability: its successes' first and last time and the gaps between.
#[derive(Debug, Clone, PartialEq)]
pub struct Availability {
    /// Stretches before the first success, between successes, after the last, in order.
    /// The first starts at zero, the last has no end: a recorder with no success at all is one
    /// stretch from zero without end.
    stretches: Vec<Gap>,
    floor: Duration,
    /// Successes still to note as "after" of the stretch before the current one.
    after_left: usize,
    /// The time the measured phases covered on the run's clock, in order, apart: a stretch
    /// is only an outage inside it (between two phases nothing was measured).
    covered: Vec<(Duration, Duration)>,
}

impl Default for Availability {
    fn default() -> Self {
        Self::new()
    }
}

impl Availability {
    pub fn new() -> Availability {
        Availability {
            stretches: vec![Gap {
                from: Duration::ZERO,
                to: None,
                failures: Failures::default(),
                after: Vec::new(),
            }],
            floor: MIN_GAP,
            after_left: 0,
            covered: Vec::new(),
        }
    }

    /// Notes that this recorder's phase covered [from, to) of the run's clock.
    pub fn cover(&mut self, from: Duration, to: Duration) {
        self.covered.push((from, to.max(from)));
        self.join_covered();
    }

    /// The time covered, in order (empty when no phase said).
    pub fn covered(&self) -> &[(Duration, Duration)] {
        &self.covered
    }

    fn join_covered(&mut self) {
        self.covered.sort_by_key(|c| c.0);
        let mut out: Vec<(Duration, Duration)> = Vec::with_capacity(self.covered.len());
        for &(a, b) in &self.covered {
            match out.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        self.covered = out;
    }

    /// Stretches shorter than this may be missing.
    pub fn floor(&self) -> Duration {
        self.floor
    }

    /// The stretches without success, in order (the first from zero, the last open).
    pub fn stretches(&self) -> &[Gap] {
        &self.stretches
    }

    /// Notes `ok` successes and `failed` failures of `class` completed at `at` (run clock).
    #[inline]
    pub fn record(&mut self, at: Duration, ok: u64, failed: u64, class: Class, latency_us: u64) {
        if failed > 0 {
            self.open().failures.add(at, class, failed);
        }
        if ok > 0 {
            self.succeeded(at, latency_us);
        }
    }

    fn open(&mut self) -> &mut Gap {
        // There is always an open stretch: the last one.
        let n = self.stretches.len();
        &mut self.stretches[n - 1]
    }

    fn succeeded(&mut self, at: Duration, latency_us: u64) {
        let n = self.stretches.len();
        if self.after_left > 0 && n >= 2 {
            self.stretches[n - 2].after.push((at, latency_us));
            self.after_left -= 1;
        }
        let open = &mut self.stretches[n - 1];
        let from = open.from;
        if at < from {
            return;
        }
        // The open stretch ends here. The first one (before any success) always closes: the
        // wait for a run's first success is judged when reported; later ones stay when long
        // enough to be an outage.
        let first = n == 1 && open.from == Duration::ZERO;
        if first || at - from >= self.floor {
            open.to = Some(at);
            open.after.push((at, latency_us));
            self.after_left = AFTER - 1;
            self.stretches.push(Gap {
                from: at,
                to: None,
                failures: Failures::default(),
                after: Vec::new(),
            });
            if self.stretches.len() > MAX_GAPS {
                self.thin();
            }
        } else {
            // Cleared, not replaced: a steady trickle of errors reuses one buffer.
            open.from = at;
            open.failures.buckets.clear();
        }
    }

    /// Drops the shortest closed stretches (never the first or the open one) by doubling the
    /// floor until the list fits.
    fn thin(&mut self) {
        while self.stretches.len() > MAX_GAPS {
            self.floor *= 2;
            self.drop_short();
        }
    }

    /// Drops the closed stretches shorter than the floor, but the first and the open one.
    fn drop_short(&mut self) {
        let (floor, last) = (self.floor, self.stretches.len().saturating_sub(1));
        let mut i = 0;
        self.stretches.retain(|g| {
            i += 1;
            i == 1 || i - 1 == last || g.to.is_some_and(|to| to - g.from >= floor)
        });
    }

    /// The stretches where neither `self` nor `other` had a success: their intersection,
    /// with the failures of both that fall inside and the earliest successes after.
    pub fn merge(&mut self, other: &Availability) {
        let (a, b) = (&self.stretches, &other.stretches);
        let mut out: Vec<Gap> = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let (x, y) = (&a[i], &b[j]);
            let from = x.from.max(y.from);
            let to = match (x.to, y.to) {
                (Some(p), Some(q)) => Some(p.min(q)),
                (p, q) => p.or(q),
            };
            if to.is_none_or(|t| t > from) || (from == Duration::ZERO && to == Some(from)) {
                let failures = x
                    .failures
                    .within(from, to)
                    .join(y.failures.within(from, to));
                let mut after: Vec<(Duration, u64)> =
                    x.after.iter().chain(&y.after).copied().collect();
                after.sort_by_key(|s| s.0);
                after.truncate(AFTER);
                out.push(Gap {
                    from,
                    to,
                    failures,
                    after,
                });
            }
            // The stretch that ends first is done.
            match (x.to, y.to) {
                (Some(p), Some(q)) if p <= q => i += 1,
                (Some(_), None) => i += 1,
                _ => j += 1,
            }
        }
        self.floor = self.floor.max(other.floor);
        self.covered.extend_from_slice(&other.covered);
        self.join_covered();
        self.stretches = out;
        self.after_left = 0;
        self.drop_short();
        self.thin();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn ok(a: &mut Availability, at: u64) {
        a.record(ms(at), 1, 0, Class::Ok, 1000);
    }

    fn fail(a: &mut Availability, at: u64, class: Class) {
        a.record(ms(at), 0, 1, class, 1000);
    }

    fn closed(a: &Availability) -> Vec<(u64, Option<u64>)> {
        a.stretches()
            .iter()
            .map(|g| {
                (
                    g.from.as_millis() as u64,
                    g.to.map(|t| t.as_millis() as u64),
                )
            })
            .collect()
    }

    #[test]
    fn a_gap_between_successes_keeps_its_failures_and_the_successes_after() {
        let mut a = Availability::new();
        for t in (0..1000).step_by(10) {
            ok(&mut a, t);
        }
        fail(&mut a, 1200, Class::Connect);
        fail(&mut a, 1500, Class::Http5xx);
        fail(&mut a, 1505, Class::Http5xx);
        for t in (3000..3200).step_by(10) {
            ok(&mut a, t);
        }
        // The first stretch (to the first success, no failures) and the outage 990..3000.
        assert_eq!(closed(&a), [(0, Some(0)), (990, Some(3000)), (3190, None)]);
        let g = &a.stretches()[1];
        let by = g.failures.by_class();
        assert_eq!(
            (by[Class::Connect.index()], by[Class::Http5xx.index()]),
            (1, 2)
        );
        assert_eq!(g.failures.first(), Some(ms(1200)));
        assert_eq!(g.after.len(), AFTER);
        assert_eq!(g.after[0].0, ms(3000));
    }

    #[test]
    fn workers_side_by_side_had_an_outage_only_where_both_had_no_success() {
        let mut a = Availability::new();
        let mut b = Availability::new();
        for t in (0..5000).step_by(20) {
            if !(1000..3000).contains(&t) {
                ok(&mut a, t);
            } else {
                fail(&mut a, t, Class::Connect);
            }
            // b is out from 2000 to 4000.
            if !(2000..4000).contains(&t) {
                ok(&mut b, t + 5);
            } else {
                fail(&mut b, t + 5, Class::Timeout);
            }
        }
        a.merge(&b);
        let c = closed(&a);
        // Both were out from 2005 (b's first miss; b's last success 1985) to 3000 (a's first
        // success back): a 1985..3000 stretch as the merge sees it.
        assert_eq!(c[1], (1985, Some(3000)), "{c:?}");
        let g = &a.stretches()[1];
        let by = g.failures.by_class();
        // a's connect failures at 1980..2980 that fall in [1985, 3000): bucket-exact.
        assert_eq!(by[Class::Connect.index()], 51, "{by:?}");
        assert_eq!(by[Class::Timeout.index()], 50);
        assert_eq!(g.after[0].0, ms(3000));
        assert!(g.after.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn merging_is_associative_and_phases_one_after_another_keep_their_gaps() {
        let mut p1 = Availability::new();
        for t in (0..1000).step_by(10) {
            if t != 500 && !(400..700).contains(&t) {
                ok(&mut p1, t);
            }
        }
        let mut p2 = Availability::new();
        for t in (1000..2000).step_by(10) {
            ok(&mut p2, t);
        }
        let mut m = p1.clone();
        m.merge(&p2);
        assert!(closed(&m).contains(&(390, Some(700))), "{:?}", closed(&m));
        let mut n = p2.clone();
        n.merge(&p1);
        assert_eq!(closed(&m), closed(&n));
    }

    #[test]
    fn many_short_stalls_stay_bounded_and_the_long_one_stays() {
        let mut a = Availability::new();
        let mut t = 0;
        for i in 0..5000u64 {
            ok(&mut a, t);
            t += if i == 2500 { 5000 } else { 60 + i % 50 };
        }
        assert!(a.stretches().len() <= MAX_GAPS);
        assert!(a.floor() > MIN_GAP);
        assert!(a
            .stretches()
            .iter()
            .any(|g| g.to.is_some_and(|to| to - g.from == ms(5000))));
    }

    #[test]
    fn no_success_at_all_is_one_open_stretch_with_every_failure() {
        let mut a = Availability::new();
        for t in 0..10 {
            fail(&mut a, t * 100, Class::Connect);
        }
        let mut b = Availability::new();
        fail(&mut b, 50, Class::Timeout);
        a.merge(&b);
        assert_eq!(closed(&a), [(0, None)]);
        assert_eq!(a.stretches()[0].failures.by_class().iter().sum::<u64>(), 11);
    }
}
