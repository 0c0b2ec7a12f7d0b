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
//!    the limit. The tests ([`segments`]) are a t test on the means (Welch's; pooled for a
//!    short newest segment) and, with five runs or more on each side, Welch's t on the
//!    absolute deviations from the medians (a change of spread), Bonferroni-combined.
//!    Candidates are ranked by their statistics mapped to the normal scale, so only the
//!    weakest needs its exact p (the incomplete beta function) at each step. The unit of the
//!    test is the **run** (the mean of its repetitions): repetitions of one run share that
//!    run's machine state, and testing them as if independent (pseudo-replication) calls a
//!    run's own offset a change. A segment's variance is floored at the series' run-to-run
//!    noise (from neighbouring differences), so two runs that agree by chance cannot make a
//!    difference look certain.
//!
//! Candidates are only placed at run boundaries, so a change point names the first run of
//! the new segment.
//!
//! Around the passes ([`pass`]), [`search`] leaves bursts out (a few runs far off the level
//! that return to it: [`bursts`]) and, where the residuals of the segments found are
//! correlated from run to run, tests again counting each segment's runs at their effective
//! number ([`noise`]).

mod bursts;
mod eliminate;
mod energy;
mod noise;
mod pass;
mod segments;

use crate::stats::t_two_sided_p;
use pass::Pass;
use segments::RunMeans;

/// Up to this many runs the limit on p is `Settings::max_p` as given; beyond, it shrinks in
/// proportion to the length.
pub const LONG: usize = 500;

/// How change points are searched for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A change point is kept when the test between its neighbouring segments gives a p
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

/// What a search found in a series of runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Found {
    /// The change points, ordered by run (`at` counts every run, bursts included).
    pub changes: Vec<Change>,
    /// The runs left out as bursts, as ranges `from..to`, ordered.
    pub bursts: Vec<std::ops::Range<usize>>,
    /// The lag-1 autocorrelation of the run-to-run noise, as estimated from the residuals
    /// of the segments found (NaN when the series was too short to search).
    pub autocorrelation: f64,
    /// The autocorrelation the tests assumed: the estimate when it is clearly above 0, else 0.
    pub phi: f64,
}

impl Found {
    /// The number of independent runs the series' runs (bursts left out) are worth under
    /// the assumed noise: their count when the runs are independent.
    pub fn effective_runs(&self, runs: usize) -> f64 {
        let n = runs.saturating_sub(self.bursts.iter().map(|b| b.len()).sum()) as f64;
        n / segments::inflation(n, self.phi)
    }
}

/// The most passes of one search: each after the first either leaves out newly found bursts
/// or takes a new estimate of the autocorrelation.
const MAX_PASSES: usize = 4;

/// The change points of a series of runs, each run given as its values (one per repetition;
/// a run with no value must be left out by the caller). Ordered by run.
pub fn change_points<R: AsRef<[f64]>>(runs: &[R], settings: &Settings) -> Vec<Change> {
    search(runs, settings).changes
}

/// Change points, bursts and the noise's autocorrelation of a series of runs (see
/// [`change_points`]). Any run type that lends its values will do, so a caller's runs are
/// not copied.
pub fn search<R: AsRef<[f64]>>(runs: &[R], settings: &Settings) -> Found {
    // The statistics do not depend on the scale, but squares of values near f64's end
    // (1e300) overflow and hid a 170× jump: such a series is found on its values over their
    // largest, and its levels given back in its own unit. Others are left as they are.
    let scale = runs
        .iter()
        .flat_map(|r| r.as_ref())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    if scale.is_finite() && !(1e-100..=1e100).contains(&scale) && scale > 0.0 {
        let scaled: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| r.as_ref().iter().map(|v| v / scale).collect())
            .collect();
        let mut found = unscaled(&scaled, settings);
        for c in &mut found.changes {
            c.before *= scale;
            c.after *= scale;
        }
        return found;
    }
    unscaled(runs, settings)
}

/// [`search`] on a series of a tame scale.
fn unscaled<R: AsRef<[f64]>>(runs: &[R], settings: &Settings) -> Found {
    let values: Vec<f64> = runs
        .iter()
        .map(|r| r.as_ref().iter().sum::<f64>() / r.as_ref().len() as f64)
        .collect();
    let (mut left_out, residuals) = bursts::outlying(&values);
    // A first estimate of the autocorrelation, from the residuals about a running median, so
    // that correlated noise is tested as such from the first pass.
    let mut found = Found {
        autocorrelation: f64::NAN,
        phi: noise::used(noise::lag1(&residuals, &[]), values.len()),
        ..Found::default()
    };
    let mut passes = 0;
    'runs: while passes < MAX_PASSES {
        let kept: Vec<usize> = (0..runs.len())
            .filter(|i| left_out.binary_search(i).is_err())
            .collect();
        let Some(pass) = Pass::new(kept.iter().map(|&i| runs[i].as_ref()), settings) else {
            found.changes.clear();
            break;
        };
        // The candidates stand while the same runs are searched; only the tests' noise moves.
        while passes < MAX_PASSES {
            passes += 1;
            let means = RunMeans::new(pass.run_means(), found.phi);
            let changes = pass.changes(&means);
            let cuts: Vec<usize> = changes.iter().map(|c| c.at).collect();
            found.changes = changes
                .into_iter()
                .map(|c| Change {
                    at: kept[c.at],
                    ..c
                })
                .collect();
            let short = bursts::excursions(&means, &cuts, pass.max_p(), settings.min_change);
            if !short.is_empty() {
                left_out.extend(short.into_iter().map(|i| kept[i]));
                left_out.sort_unstable();
                continue 'runs;
            }
            found.autocorrelation = noise::autocorrelation(means.values(), &cuts, means.noise());
            let phi = noise::used(found.autocorrelation, kept.len());
            // Within 0.1 the tests hardly change (the factor for a long segment moves by a
            // fifth at most); the passes are bounded either way.
            if (phi - found.phi).abs() <= 0.1 || passes == MAX_PASSES {
                break 'runs;
            }
            found.phi = phi;
        }
    }
    found.bursts = ranges(&left_out);
    found
}

/// Ascending run indices as ranges of neighbours.
fn ranges(runs: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for &i in runs {
        match out.last_mut() {
            Some(r) if r.end == i => r.end += 1,
            _ => out.push(i..i + 1),
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
