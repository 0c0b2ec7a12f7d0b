//! The tests between two neighbouring segments of run values: Welch's t on their means (a
//! change of level) and, with enough runs on both sides, Welch's t on their absolute
//! deviations from their medians (a change of spread: Brown & Forsythe 1974's robust form of
//! Levene's test, so an outlier does not pass for a noisier segment).

use super::Change;
use crate::stats::t_two_sided_p;

/// The fewest runs on each side for a spread test: fewer deviations say little about spread.
pub(super) const SPREAD_MIN_RUNS: usize = 5;

/// E|X − median|² / σ² for normal X is 1 − 2/π: the floor of a deviation's variance.
const DEVIATION_VARIANCE: f64 = 1.0 - 2.0 / std::f64::consts::PI;

/// A candidate's test before its exact p: the statistics, and how strong they are on one scale.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tested {
    pub change: Change,
    level: (f64, f64),
    spread: Option<(f64, f64)>,
    /// The larger |z| of the two tests, each t mapped to the normal scale: candidates are
    /// ranked by it, so only the weakest needs its exact p.
    pub strength: f64,
}

impl Tested {
    /// The exact two-sided p: the level test's, or with a spread test the smaller of the two,
    /// doubled (Bonferroni), and which test it came from.
    pub fn exact(&self) -> (f64, bool) {
        let level = t_p(self.level);
        match self.spread {
            None => (level, false),
            Some(s) => {
                let spread = t_p(s);
                ((2.0 * level.min(spread)).min(1.0), spread < level)
            }
        }
    }

    /// The spread test's exact p, doubled as in [`Tested::exact`]; `None` without one.
    pub fn spread_p(&self) -> Option<f64> {
        self.spread.map(|s| (2.0 * t_p(s)).min(1.0))
    }

    /// The change with its exact p filled in.
    pub fn resolved(mut self) -> Change {
        let (p, spread) = self.exact();
        self.change.p = p;
        self.change.spread = spread;
        self.change
    }
}

fn t_p((t, df): (f64, f64)) -> f64 {
    if t.is_infinite() {
        0.0
    } else if t == 0.0 || t.is_nan() {
        1.0
    } else {
        t_two_sided_p(t, df)
    }
}

/// Student's t on the normal scale, for ranking: z ≈ √((ν − ½)·ln(1 + t²/ν)) (the
/// Wallace-type approximation, which stays close even at ν = 1–2, where it errs low: by at
/// most about 1 for |t| up to 1000 at ν = 1).
fn z_of((t, df): (f64, f64)) -> f64 {
    if t.is_infinite() {
        return f64::INFINITY;
    }
    let df = df.max(0.51);
    ((df - 0.5) * (t * t / df).ln_1p()).sqrt()
}

/// How far [`z_of`] may fall below the true normal score: a candidate weaker than the
/// threshold by more than this is dropped without its exact p.
pub(super) const Z_SLACK: f64 = 1.0;

/// Welch's t and its Welch–Satterthwaite degrees of freedom from two sides' n, mean and
/// variance; ±∞ when neither side varies and the means differ, 0 when they agree.
fn welch(a: (f64, f64, f64), b: (f64, f64, f64)) -> (f64, f64) {
    let (e1, e2) = (a.2 / a.0, b.2 / b.0);
    if e1 + e2 <= 0.0 {
        let t = if a.1 == b.1 {
            0.0
        } else {
            f64::INFINITY.copysign(b.1 - a.1)
        };
        return (t, a.0 + b.0 - 2.0);
    }
    let t = (b.1 - a.1) / (e1 + e2).sqrt();
    let df = (e1 + e2).powi(2) / (e1 * e1 / (a.0 - 1.0) + e2 * e2 / (b.0 - 1.0));
    (t, df)
}

/// Buffers of the spread test, and the segments it has already measured.
#[derive(Default)]
pub(super) struct Work {
    buffer: Vec<f64>,
    known: std::collections::HashMap<(usize, usize), (f64, f64, f64)>,
}

/// Run values with prefix sums (centred, so the squares do not cancel), for a segment's mean
/// and variance in O(1).
pub(super) struct RunMeans {
    values: Vec<f64>,
    centre: f64,
    /// The series' noise between neighbouring runs, robust to level shifts: the median
    /// |mᵢ₊₁ − mᵢ| / (√2 · 0.6745), which is σ for normal noise. A segment's variance is
    /// never taken below it, since two or three runs can agree by chance and make any
    /// difference look certain.
    floor: f64,
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl RunMeans {
    pub fn new(runs: &[Vec<f64>]) -> RunMeans {
        let values: Vec<f64> = runs
            .iter()
            .map(|r| r.iter().sum::<f64>() / r.len() as f64)
            .collect();
        let centre = values.iter().sum::<f64>() / values.len() as f64;
        let (mut s1, mut s2) = (vec![0.0], vec![0.0]);
        for m in &values {
            let d = m - centre;
            s1.push(s1.last().unwrap_or(&0.0) + d);
            s2.push(s2.last().unwrap_or(&0.0) + d * d);
        }
        let mut steps: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
        steps.sort_unstable_by(f64::total_cmp);
        let sigma = steps
            .get(steps.len() / 2)
            .map_or(0.0, |m| m / (2f64.sqrt() * 0.6745));
        RunMeans {
            values,
            centre,
            floor: sigma * sigma,
            s1,
            s2,
        }
    }

    /// How many runs.
    pub fn runs(&self) -> usize {
        self.values.len()
    }

    /// Runs, mean and sample variance (floored) of runs `a..b`.
    pub fn segment(&self, a: usize, b: usize) -> (f64, f64, f64) {
        let (n, mean, var) = self.raw(a, b);
        (n, mean, var.max(self.floor))
    }

    /// Runs, mean and sample variance of runs `a..b`, not floored (a likelihood needs each
    /// side's own).
    pub fn raw(&self, a: usize, b: usize) -> (f64, f64, f64) {
        let n = (b - a) as f64;
        let sum = self.s1[b] - self.s1[a];
        let mean = sum / n;
        let var = ((self.s2[b] - self.s2[a] - sum * mean) / (n - 1.0)).max(0.0);
        (n, mean + self.centre, var)
    }

    /// Runs, mean and variance (floored) of the absolute deviations from the median of runs
    /// `a..b`. Kept in `work` by segment: a removal re-tests two candidates, each with one
    /// side unchanged.
    fn deviations(&self, a: usize, b: usize, work: &mut Work) -> (f64, f64, f64) {
        if let Some(&known) = work.known.get(&(a, b)) {
            return known;
        }
        let scratch = &mut work.buffer;
        scratch.clear();
        scratch.extend_from_slice(&self.values[a..b]);
        let mid = scratch.len() / 2;
        let (_, median, _) = scratch.select_nth_unstable_by(mid, f64::total_cmp);
        let median = *median;
        for v in scratch.iter_mut() {
            *v = (*v - median).abs();
        }
        let n = scratch.len() as f64;
        let mean = scratch.iter().sum::<f64>() / n;
        let var = scratch.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let found = (n, mean, var.max(self.floor * DEVIATION_VARIANCE));
        work.known.insert((a, b), found);
        found
    }

    /// The tests between runs `a..g` and `g..b`.
    pub fn test(&self, a: usize, g: usize, b: usize, work: &mut Work) -> Tested {
        let left = self.segment(a, g);
        let right = self.segment(g, b);
        let level = welch(left, right);
        let spread = (g - a >= SPREAD_MIN_RUNS && b - g >= SPREAD_MIN_RUNS)
            .then(|| welch(self.deviations(a, g, work), self.deviations(g, b, work)));
        let strength = z_of(level).max(spread.map_or(0.0, z_of));
        Tested {
            change: Change {
                at: g,
                before: left.1,
                after: right.1,
                p: f64::NAN,
                spread: false,
            },
            level,
            spread,
            strength,
        }
    }
}
