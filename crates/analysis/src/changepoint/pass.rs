//! One pass of the search over a fixed set of runs: E-Divisive candidates, backward
//! elimination, then changes of spread inside the level segments, each placed where it best
//! separates its neighbours. [`super::search`] runs it again when it removes a burst or
//! learns that the noise is correlated; the candidates do not depend on either test's
//! noise model, so they are found once per set of runs.

use super::eliminate::eliminate;
use super::energy::{Known, Scratch};
use super::segments::{self, RunMeans, Work};
use super::{Change, Settings, LONG};

/// The runs of one pass, flattened, and their E-Divisive candidates.
pub(super) struct Pass {
    points: Vec<f64>,
    /// `points[starts[r]..starts[r + 1]]` are run r's values.
    starts: Vec<usize>,
    candidates: Vec<usize>,
    min_runs: usize,
    max_p: f64,
    min_change: f64,
}

impl Pass {
    /// Prepares the runs `runs` (each with at least one value); `None` when there are too few
    /// to split.
    pub(super) fn new<'r>(
        runs: impl Iterator<Item = &'r [f64]>,
        settings: &Settings,
    ) -> Option<Pass> {
        let min_runs = settings.min_runs.max(2);
        let mut points = Vec::new();
        let mut starts = Vec::new();
        for run in runs {
            starts.push(points.len());
            points.extend_from_slice(run);
        }
        starts.push(points.len());
        let n = starts.len() - 1;
        if n < 2 * min_runs {
            return None;
        }
        let mut candidates = candidates(&points, &starts, min_runs);
        candidates.sort_unstable();
        Some(Pass {
            points,
            starts,
            candidates,
            min_runs,
            // A longer history offers more places for a chance segment: beyond LONG runs the
            // limit tightens in proportion (10,000 runs of noise at a flat 0.001 kept 3 false
            // change points each; at 0.001 × 500 / 10,000, none).
            max_p: settings.max_p * (LONG as f64 / n as f64).min(1.0),
            min_change: settings.min_change,
        })
    }

    /// The mean of each run.
    pub(super) fn run_means(&self) -> Vec<f64> {
        self.starts
            .windows(2)
            .map(|w| self.points[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64)
            .collect()
    }

    /// The changes, tested with run noise of lag-1 autocorrelation `phi`.
    pub(super) fn changes(&self, means: &RunMeans) -> Vec<Change> {
        let kept = eliminate(means, self.candidates.clone(), self.max_p, self.min_change);
        let mut cuts = relocate(means, kept, self.min_runs);
        let mut work = Work::default();
        let spread = spread_changes(
            &self.points,
            &self.starts,
            means,
            &cuts,
            self.max_p,
            &mut work,
        );
        if !spread.is_empty() {
            // Each added spread change splits a segment a level change was tested against:
            // test and place them all again.
            cuts.extend(spread);
            cuts.sort_unstable();
            cuts.dedup();
            let kept = eliminate(means, cuts, self.max_p, self.min_change);
            cuts = relocate(means, kept, self.min_runs);
        }
        (0..cuts.len())
            .map(|i| {
                let (a, b) = around(&cuts, i, means.runs());
                means.test(a, cuts[i], b, &mut work).resolved()
            })
            .collect()
    }

    /// The limit on p this pass tests at.
    pub(super) fn max_p(&self) -> f64 {
        self.max_p
    }
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
