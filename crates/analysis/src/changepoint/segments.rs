//! The tests between two neighbouring segments of run values: a t test on their means (a
//! change of level) and, with enough runs on both sides, Welch's t on their absolute
//! deviations from their medians (a change of spread: Brown & Forsythe 1974's robust form of
//! Levene's test, so an outlier does not pass for a noisier segment).
//!
//! The level test is Welch's, except where one side is short, the newest runs, and no noisier
//! than the other: then the two variances are pooled (Student's t). The runs after a merge are the same
//! process with a new level, and Welch's test, which lets a 6-run side bring its own variance
//! with its own 5 degrees of freedom, missed a −10.5 % step there at p ≈ 0.008; pooled with
//! the 211 runs before it, p ≈ 2·10⁻⁶.
//!
//! Runs whose noise is correlated (lag-1 autocorrelation φ > 0, a machine that drifts) carry
//! less information than their count: each side's variance of the mean is widened by the
//! AR(1) factor of its length, and its degrees of freedom are those of its effective count.

use super::Change;
use crate::stats::t_two_sided_p;

/// The fewest runs on each side for a spread test: fewer deviations say little about spread.
pub(super) const SPREAD_MIN_RUNS: usize = 5;

/// E|X − median|² / σ² for normal X is 1 − 2/π: the floor of a deviation's variance.
const DEVIATION_VARIANCE: f64 = 1.0 - 2.0 / std::f64::consts::PI;

/// A newest segment shorter than this pools its variance with the other side's when it
/// is not clearly noisier (see the module's comment).
const POOL_BELOW: f64 = 10.0;

/// A short side is "clearly noisier" when the F test of its variance over the other's gives
/// a one-sided p below this; then Welch's test, which does not assume equal spreads, is used.
const NOISIER_P: f64 = 0.01;

/// One side of a test: its runs, its effective count (fewer when the noise is correlated),
/// the mean, and the variance of one run (floored).
#[derive(Debug, Clone, Copy)]
pub(super) struct Side {
    pub n: f64,
    pub eff: f64,
    pub mean: f64,
    pub var: f64,
}

impl Side {
    fn df(&self) -> f64 {
        (self.eff - 1.0).max(0.0)
    }
}

/// n · Var(mean of n runs) / Var(one run) for AR(1) noise with lag-1 correlation `phi`:
/// 1 + 2 Σ_{k<n} (1 − k/n) φᵏ, in closed form. 1 for independent runs; (1 + φ)/(1 − φ) for
/// a long segment.
pub(super) fn inflation(n: f64, phi: f64) -> f64 {
    if phi <= 0.0 || n < 2.0 {
        return 1.0;
    }
    let q = 1.0 - phi;
    let last = phi.powf(n - 1.0);
    // Σ_{k=1}^{n−1} φᵏ and Σ_{k=1}^{n−1} k·φᵏ.
    let s1 = phi * (1.0 - last) / q;
    let s2 = phi * (1.0 - n * last + (n - 1.0) * last * phi) / (q * q);
    1.0 + 2.0 * (s1 - s2 / n)
}

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

/// Welch's t and its Welch–Satterthwaite degrees of freedom between two sides.
fn welch(a: Side, b: Side) -> (f64, f64) {
    let (e1, e2) = (a.var / a.eff, b.var / b.eff);
    if e1 + e2 <= 0.0 {
        return certain(a, b);
    }
    let t = (b.mean - a.mean) / (e1 + e2).sqrt();
    let df = (e1 + e2).powi(2) / (e1 * e1 / a.df() + e2 * e2 / b.df());
    (t, df)
}

/// Student's t with the two sides' variances pooled.
fn pooled(a: Side, b: Side) -> (f64, f64) {
    let df = a.df() + b.df();
    let var = (a.df() * a.var + b.df() * b.var) / df;
    if var.is_nan() || var <= 0.0 {
        return certain(a, b);
    }
    let t = (b.mean - a.mean) / (var * (1.0 / a.eff + 1.0 / b.eff)).sqrt();
    (t, df)
}

/// Neither side varies: ±∞ when the means differ, 0 when they agree.
fn certain(a: Side, b: Side) -> (f64, f64) {
    let t = if a.mean == b.mean {
        0.0
    } else {
        f64::INFINITY.copysign(b.mean - a.mean)
    };
    (t, a.n + b.n - 2.0)
}

/// The level test: pooled when the short side is the newest runs of the series (`newest`:
/// `b` ends it) and not clearly noisier than the other, Welch's otherwise.
/// - A short segment inside the series keeps Welch's test: it could sit at any of hundreds of
///   places, and pooled, chance excursions of 4 to 9 runs passed (19 false change points on
///   60 series of noise, against 5).
/// - So does the oldest: pooled, it kept 2 chance changes at runs 2 and 5 on 780 series, and
///   the oldest runs are not the ones a team has to judge now.
fn level(a: Side, b: Side, newest: bool) -> (f64, f64) {
    if !newest || b.n >= POOL_BELOW || b.df() <= 0.0 || a.df() <= 0.0 || a.n <= b.n {
        return welch(a, b);
    }
    let (short, long) = (b, a);
    let ratio = short.var / long.var;
    let noisier = ratio > 1.0 && {
        use statrs::distribution::{ContinuousCDF, FisherSnedecor};
        FisherSnedecor::new(short.df(), long.df()).is_ok_and(|f| f.sf(ratio) < NOISIER_P)
    };
    if noisier {
        welch(a, b)
    } else {
        pooled(a, b)
    }
}

/// Buffers of the spread test, and the segments it has already measured.
#[derive(Default)]
pub(super) struct Work {
    buffer: Vec<f64>,
    known: std::collections::HashMap<(usize, usize), Side>,
}

/// Run values with prefix sums (centred, so the squares do not cancel), for a segment's mean
/// and variance in O(1).
pub(super) struct RunMeans {
    values: Vec<f64>,
    centre: f64,
    /// The series' noise between neighbouring runs, robust to level shifts: the median
    /// |mᵢ₊₁ − mᵢ| / (√2 · 0.6745), which is σ for normal noise (and σ·√(1 − φ) for AR(1)
    /// noise, so it is divided by 1 − φ). A segment's variance is never taken below it, since
    /// two or three runs can agree by chance and make any difference look certain.
    floor: f64,
    /// The lag-1 autocorrelation of the noise the tests assume (0: independent runs).
    phi: f64,
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl RunMeans {
    /// The runs' means, tested as noise of lag-1 autocorrelation `phi` (0 for independent runs).
    pub fn new(values: Vec<f64>, phi: f64) -> RunMeans {
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
            floor: sigma * sigma / (1.0 - phi.max(0.0)),
            phi: phi.max(0.0),
            s1,
            s2,
        }
    }

    /// The run-to-run noise σ the tests assume at the least (see `floor`).
    pub fn noise(&self) -> f64 {
        self.floor.sqrt()
    }

    /// The run means.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// How many runs.
    pub fn runs(&self) -> usize {
        self.values.len()
    }

    /// Runs `a..b` as one side of a test. With correlated noise the sample variance falls
    /// short of a run's variance by (n − c)/(n − 1), c the [`inflation`], so it is scaled
    /// back up before the floor.
    pub fn segment(&self, a: usize, b: usize) -> Side {
        let (n, mean, var) = self.raw(a, b);
        let c = inflation(n, self.phi);
        let var = if c > 1.0 {
            var * (n - 1.0) / (n - c)
        } else {
            var
        };
        Side {
            n,
            eff: n / c,
            mean,
            var: var.max(self.floor),
        }
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

    /// The absolute deviations from the median of runs `a..b` as one side of a test. Kept in
    /// `work` by segment: a removal re-tests two candidates, each with one side unchanged.
    /// Deviations of AR(1) noise are correlated about as φ², so their count is discounted so.
    fn deviations(&self, a: usize, b: usize, work: &mut Work) -> Side {
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
        let found = Side {
            n,
            eff: n / inflation(n, self.phi * self.phi),
            mean,
            var: var.max(self.floor * DEVIATION_VARIANCE),
        };
        work.known.insert((a, b), found);
        found
    }

    /// The level test between runs `a.0..a.1` and `b.0..b.1`, which need not be neighbours:
    /// its two-sided p, and the change from the first to the second as a fraction.
    pub fn apart(&self, a: (usize, usize), b: (usize, usize)) -> (f64, f64) {
        let (before, after) = (self.segment(a.0, a.1), self.segment(b.0, b.1));
        let p = t_p(level(before, after, false));
        (p, (after.mean - before.mean) / before.mean.abs())
    }

    /// The tests between runs `a..g` and `g..b`.
    pub fn test(&self, a: usize, g: usize, b: usize, work: &mut Work) -> Tested {
        let left = self.segment(a, g);
        let right = self.segment(g, b);
        let level = level(left, right, b == self.runs());
        let spread = (g - a >= SPREAD_MIN_RUNS && b - g >= SPREAD_MIN_RUNS)
            .then(|| welch(self.deviations(a, g, work), self.deviations(g, b, work)));
        let strength = z_of(level).max(spread.map_or(0.0, z_of));
        Tested {
            change: Change {
                at: g,
                before: left.mean,
                after: right.mean,
                p: f64::NAN,
                spread: false,
            },
            level,
            spread,
            strength,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::inflation;

    #[test]
    fn the_closed_form_inflation_is_the_sum() {
        for phi in [0.0f64, 0.2, 0.5, 0.9] {
            for n in [1usize, 2, 3, 7, 40, 500] {
                let sum: f64 = 1.0
                    + 2.0
                        * (1..n)
                            .map(|k| (1.0 - k as f64 / n as f64) * phi.powi(k as i32))
                            .sum::<f64>();
                let closed = inflation(n as f64, phi);
                assert!(
                    (closed - sum).abs() < 1e-9 * sum,
                    "{phi} {n}: {closed} vs {sum}"
                );
            }
        }
        // A long segment tends to (1 + φ)/(1 − φ): 3 for φ = 0.5.
        assert!((inflation(1e6, 0.5) - 3.0).abs() < 1e-5);
    }
}
