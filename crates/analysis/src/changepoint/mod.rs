//! Change points in a history: the runs where a metric's level moved and stayed moved.
//!
//! Two stages, as in the E-Divisive family used by MongoDB (Daly et al., ICPE 2020) and
//! Apache Otava (Fleming et al., ICPE 2023), written here from the papers:
//!
//! 1. **Candidates** by E-Divisive means (Matteson & James 2014, "A nonparametric approach for
//!    multiple change point analysis of multivariate data", α = 1): split a range where the
//!    energy distance between the two sides, scaled by their sizes, is largest, and recurse
//!    into both halves down to the smallest testable segments. The statistic uses every point
//!    (every repetition of every run), so a change in the spread moves it as well as a change
//!    in the level. Within-side sums of distances are kept with a Fenwick tree over ranks, so
//!    one range costs O(m log m) rather than the O(m²) of the pairwise definition.
//! 2. **Significance** by backward elimination: every candidate is tested between its
//!    neighbouring segments, and the weakest is dropped, until every remaining one has p below
//!    the limit. The tests ([`segments`]) are Welch's t on the means and, with five runs or
//!    more on each side, Welch's t on the absolute deviations from the medians (a change of
//!    spread), Bonferroni-combined. Candidates are ranked by their statistics mapped to the
//!    normal scale, so only the weakest needs its exact p (the incomplete beta function) at
//!    each step. The unit of the test is the **run** (the mean of its
//!    repetitions): repetitions of one run share that run's machine state, and testing them
//!    as if independent (pseudo-replication) calls a run's own offset a change. A segment's
//!    variance is floored at the series' run-to-run noise (from neighbouring differences), so
//!    two runs that agree by chance cannot make a difference look certain.
//!
//! Candidates are only placed at run boundaries, so a change point names the first run of
//! the new segment.

mod eliminate;
mod energy;
mod segments;

use crate::stats::t_two_sided_p;
use eliminate::eliminate;
use energy::{Known, Scratch};
use segments::{RunMeans, Work};

/// Up to this many runs the limit on p is `Settings::max_p` as given; beyond, it shrinks in
/// proportion to the length.
pub const LONG: usize = 500;

/// How change points are searched for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A change point is kept when Welch's test between its neighbouring segments gives a p
    /// below this (Otava's default is also 0.001).
    pub max_p: f64,
    /// The fewest runs a segment can have: 2, the fewest with a sample variance.
    pub min_runs: usize,
    /// A change of level smaller than this fraction of the level before is not kept, however
    /// certain: a steady metric (a sleep-bound throughput) moves by 0.5 % when a neighbour on
    /// the machine stops, and p < 0.001 says only that the move is real, not that it matters.
    /// Changes of spread are judged by their p alone.
    pub min_change: f64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            max_p: 0.001,
            min_runs: 2,
            min_change: 0.01,
        }
    }
}

/// One change point: the level moved from `before` to `after` at run `at`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Index of the first run of the new segment.
    pub at: usize,
    /// Mean of the run means of the segment before and of the segment after.
    pub before: f64,
    pub after: f64,
    /// The two-sided p of the test that kept it (see [`segments`]).
    pub p: f64,
    /// Kept for a change of spread rather than of level.
    pub spread: bool,
}

impl Change {
    /// The move as a fraction of the level before: +0.05 is 5 % higher.
    pub fn relative(&self) -> f64 {
        (self.after - self.before) / self.before.abs()
    }
}

/// The change points of a series of runs, each run given as its values (one per repetition;
/// a run with no value must be left out by the caller). Ordered by run.
pub fn change_points(runs: &[Vec<f64>], settings: &Settings) -> Vec<Change> {
    // The statistics do not depend on the scale, but squares of values near f64's end
    // (1e300) overflow and hid a 170× jump: such a series is found on its values over their
    // largest, and its levels given back in its own unit. Others are left as they are.
    let scale = runs.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale.is_finite() && !(1e-100..=1e100).contains(&scale) && scale > 0.0 {
        let scaled: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| r.iter().map(|v| v / scale).collect())
            .collect();
        return unscaled(&scaled, settings)
            .into_iter()
            .map(|c| Change {
                before: c.before * scale,
                after: c.after * scale,
                ..c
            })
            .collect();
    }
    unscaled(runs, settings)
}

/// [`change_points`] of a series of a tame scale.
fn unscaled(runs: &[Vec<f64>], settings: &Settings) -> Vec<Change> {
    let min_runs = settings.min_runs.max(2);
    if runs.len() < 2 * min_runs {
        return Vec::new();
    }
    let mut points = Vec::new();
    let mut starts = Vec::with_capacity(runs.len() + 1);
    for run in runs {
        starts.push(points.len());
        points.extend_from_slice(run);
    }
    starts.push(points.len());
    let mut candidates = candidates(&points, &starts, min_runs);
    candidates.sort_unstable();
    let means = RunMeans::new(runs);
    // A longer history offers more places for a chance segment: beyond LONG runs the limit
    // tightens in proportion (10,000 runs of noise at a flat 0.001 kept 3 false change
    // points each; at 0.001 × 500 / 10,000, none).
    let max_p = settings.max_p * (LONG as f64 / runs.len() as f64).min(1.0);
    let kept = eliminate(&means, candidates, max_p, settings.min_change);
    let mut cuts = relocate(&means, kept, min_runs);
    let mut work = Work::default();
    let spread = spread_changes(&points, &starts, &means, &cuts, max_p, &mut work);
    if !spread.is_empty() {
        // Each added spread change splits a segment a level change was tested against:
        // test and place them all again.
        cuts.extend(spread);
        cuts.sort_unstable();
        cuts.dedup();
        let kept = eliminate(&means, cuts, max_p, settings.min_change);
        cuts = relocate(&means, kept, min_runs);
    }
    (0..cuts.len())
        .map(|i| {
            let (a, b) = around(&cuts, i, runs.len());
            means.test(a, cuts[i], b, &mut work).resolved()
        })
        .collect()
}

/// The split of runs `a..b` with the largest energy statistic.
fn best_split(
    scratch: &Scratch,
    starts: &[usize],
    a: usize,
    b: usize,
    min_runs: usize,
) -> Option<(usize, f64)> {
    let base = starts[a];
    (a + min_runs..=b - min_runs)
        .filter_map(|g| scratch.q(starts[g] - base).map(|q| (g, q)))
        .fold(None, |best, (g, q)| match best {
            Some((_, bq)) if bq >= q => best,
            _ => Some((g, q)),
        })
        // No split where no split sets the sides further apart than each side's points are
        // among themselves (an energy distance of 0 or less): no evidence of a change, and a
        // flat range would otherwise be peeled two runs at a time.
        .filter(|&(_, q)| q > 0.0)
}

/// Changes of spread inside the segments the level changes leave, by binary segmentation:
/// a segment is split where the energy statistic is largest when the spread test there gives
/// p below `max_p`, and each part is searched again. The elimination cannot keep these
/// itself: next to a spread change the first candidates are a run or two apart, too close for
/// a spread test, so it falls first, for its level test sees nothing.
fn spread_changes(
    points: &[f64],
    starts: &[usize],
    means: &RunMeans,
    cuts: &[usize],
    max_p: f64,
    work: &mut Work,
) -> Vec<usize> {
    let min = segments::SPREAD_MIN_RUNS;
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(means.runs());
    let mut ranges: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let mut out = Vec::new();
    let mut scratch = Scratch::default();
    while let Some((a, b)) = ranges.pop() {
        if b - a < 2 * min {
            continue;
        }
        let (base, end) = (starts[a], starts[b]);
        let segment = &points[base..end];
        let mut order: Vec<usize> = (0..segment.len()).collect();
        order.sort_unstable_by(|&i, &j| segment[i].total_cmp(&segment[j]));
        scratch.fill(segment, order.into_iter(), Known::Nothing);
        let best = (a + min..=b - min)
            .filter_map(|g| scratch.q(starts[g] - base).map(|q| (g, q)))
            .max_by(|x, y| x.1.total_cmp(&y.1));
        let Some((g, _)) = best else { continue };
        if means
            .test(a, g, b, work)
            .spread_p()
            .is_some_and(|p| p < max_p)
        {
            out.push(g);
            ranges.push((a, g));
            ranges.push((g, b));
        }
    }
    out
}

/// Places each kept change where it best separates its neighbouring segments: a change of
/// level at the least-squares split (the most likely place of a shift in level; the energy
/// statistic that found it also weighs the spread, and strays a run or two), a change of
/// spread where two normal segments' likelihood is highest, n₁·ln s₁² + n₂·ln s₂² least.
fn relocate(means: &RunMeans, kept: Vec<Change>, min_runs: usize) -> Vec<usize> {
    let runs = means.runs();
    let mut cuts: Vec<usize> = kept.iter().map(|c| c.at).collect();
    for i in 0..cuts.len() {
        let (a, b) = around(&cuts, i, runs);
        let spread = kept[i].spread;
        let min = if spread {
            segments::SPREAD_MIN_RUNS
        } else {
            min_runs
        };
        let score = |g: usize| {
            let (n1, m1, v1) = means.raw(a, g);
            let (n2, m2, v2) = means.raw(g, b);
            if spread {
                // A side with no spread at all is as likely as can be; ln 0 would say more.
                -(n1 * v1.max(f64::MIN_POSITIVE).ln() + n2 * v2.max(f64::MIN_POSITIVE).ln())
            } else {
                n1 * n2 / (n1 + n2) * (m1 - m2).powi(2)
            }
        };
        if a + min <= b.saturating_sub(min) {
            if let Some(g) = (a + min..=b - min).max_by(|&x, &y| score(x).total_cmp(&score(y))) {
                cuts[i] = g;
            }
        }
    }
    cuts
}

/// The segment bounds on either side of cut `i`: the previous cut (or 0) and the next one (or
/// the end).
fn around(cuts: &[usize], i: usize, runs: usize) -> (usize, usize) {
    let a = if i == 0 { 0 } else { cuts[i - 1] };
    (a, cuts.get(i + 1).copied().unwrap_or(runs))
}

/// Split points (run indices) by recursive E-Divisive means, before any test.
///
/// The series is sorted once: `order[starts[a]..starts[b]]` holds range a..b's points in
/// value order, and a split partitions that slice stably in place (a sort per range was a
/// fifth of the time). Each part takes its parent's within-sums (see [`Scratch::split`]).
fn candidates(points: &[f64], starts: &[usize], min_runs: usize) -> Vec<usize> {
    let runs = starts.len() - 1;
    let mut out = Vec::new();
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_unstable_by(|&i, &j| points[i].total_cmp(&points[j]));
    let mut spare = Vec::with_capacity(points.len());
    let mut ranges = vec![(0usize, runs, Known::Nothing)];
    let mut scratch = Scratch::default();
    while let Some((a, b, known)) = ranges.pop() {
        if b - a < 2 * min_runs {
            continue;
        }
        let (base, end) = (starts[a], starts[b]);
        let segment = &points[base..end];
        scratch.fill(segment, order[base..end].iter().map(|&i| i - base), known);
        let best = if b - a > LONG {
            // A long range is halved first, its middle one more candidate for the elimination
            // to judge: in noise the search can peel a run or two per step, and over 10,000
            // runs that made it quadratic (a second per series).
            Some(((a + b) / 2, 0.0))
        } else {
            best_split(&scratch, starts, a, b, min_runs)
        };
        if let Some((g, _)) = best {
            out.push(g);
            let cut = starts[g];
            spare.clear();
            spare.extend(order[base..end].iter().copied().filter(|&i| i >= cut));
            let mut w = base;
            for r in base..end {
                if order[r] < cut {
                    order[w] = order[r];
                    w += 1;
                }
            }
            order[w..end].copy_from_slice(&spare);
            let (left, right) = scratch.split(cut - base);
            ranges.push((g, b, right));
            ranges.push((a, g, left));
        }
    }
    out
}

/// Whether one new run (its mean `newest`) departs from the runs of the current segment: the
/// two-sided p of it lying outside their t prediction interval, t = (x − x̄) / (s·√(1 + 1/n))
/// with n − 1 degrees of freedom. `None` with fewer than 3 runs to judge against.
pub fn newest_p(segment: &[f64], newest: f64) -> Option<f64> {
    let n = segment.len();
    if n < 3 {
        return None;
    }
    let mean = segment.iter().sum::<f64>() / n as f64;
    let var = segment.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    if var <= 0.0 {
        return Some(if newest == mean { 1.0 } else { 0.0 });
    }
    let t = (newest - mean) / (var * (1.0 + 1.0 / n as f64)).sqrt();
    Some(t_two_sided_p(t, n as f64 - 1.0))
}
