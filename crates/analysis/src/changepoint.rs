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
//! 2. **Significance** by backward elimination: every candidate is tested with Welch's t-test
//!    between its neighbouring segments, and the weakest is dropped, until every remaining one
//!    has p below the limit. The unit of the test is the **run** (the mean of its
//!    repetitions): repetitions of one run share that run's machine state, and testing them
//!    as if independent (pseudo-replication) calls a run's own offset a change. A segment's
//!    variance is floored at the series' run-to-run noise (from neighbouring differences), so
//!    two runs that agree by chance cannot make a difference look certain.
//!
//! Candidates are only placed at run boundaries, so a change point names the first run of
//! the new segment.

use crate::stats::t_two_sided_p;

/// How change points are searched for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// A change point is kept when Welch's test between its neighbouring segments gives a p
    /// below this (Otava's default is also 0.001).
    pub max_p: f64,
    /// The fewest runs a segment can have: 2, the fewest with a sample variance.
    pub min_runs: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            max_p: 0.001,
            min_runs: 2,
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
    /// Welch's two-sided p between the two segments' run means.
    pub p: f64,
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
    let kept = eliminate(&means, candidates, settings.max_p);
    relocate(&means, kept, min_runs)
}

/// Places each kept change point where it best separates the means of its neighbouring
/// segments (the least-squares split, which is the most likely place of a shift in level;
/// the energy statistic that found it also weighs the spread, and strays a run or two).
fn relocate(means: &RunMeans, kept: Vec<Change>, min_runs: usize) -> Vec<Change> {
    let runs = means.s1.len() - 1;
    let mut cuts: Vec<usize> = kept.iter().map(|c| c.at).collect();
    for i in 0..cuts.len() {
        let (a, b) = around(&cuts, i, runs);
        let gain = |g: usize| {
            let (n1, m1, _) = means.segment(a, g);
            let (n2, m2, _) = means.segment(g, b);
            n1 * n2 / (n1 + n2) * (m1 - m2).powi(2)
        };
        if let Some(g) = (a + min_runs..=b - min_runs).max_by(|&x, &y| gain(x).total_cmp(&gain(y)))
        {
            cuts[i] = g;
        }
    }
    (0..cuts.len())
        .map(|i| {
            let (a, b) = around(&cuts, i, runs);
            means.test(a, cuts[i], b)
        })
        .collect()
}

/// The segment bounds on either side of cut `i`: the previous cut (or 0) and the next one (or
/// the end).
fn around(cuts: &[usize], i: usize, runs: usize) -> (usize, usize) {
    let a = if i == 0 { 0 } else { cuts[i - 1] };
    (a, cuts.get(i + 1).copied().unwrap_or(runs))
}

/// Split points (run indices) by recursive E-Divisive means, before any test.
fn candidates(points: &[f64], starts: &[usize], min_runs: usize) -> Vec<usize> {
    let runs = starts.len() - 1;
    let mut out = Vec::new();
    let mut ranges = vec![(0usize, runs)];
    let mut scratch = Scratch::default();
    while let Some((a, b)) = ranges.pop() {
        if b - a < 2 * min_runs {
            continue;
        }
        let base = starts[a];
        let segment = &points[base..starts[b]];
        scratch.fill(segment);
        let mut best: Option<(usize, f64)> = None;
        for (g, start) in starts
            .iter()
            .enumerate()
            .take(b - min_runs + 1)
            .skip(a + min_runs)
        {
            if let Some(q) = scratch.q(start - base) {
                if best.is_none_or(|(_, bq)| q > bq) {
                    best = Some((g, q));
                }
            }
        }
        if let Some((g, _)) = best {
            out.push(g);
            ranges.push((a, g));
            ranges.push((g, b));
        }
    }
    out
}

/// Within-side sums of distances of one range, for every split of it.
#[derive(Default)]
struct Scratch {
    /// `left[t]`: Σ |xᵢ − xₖ| over pairs i < k < t; `right[t]`: over pairs t ≤ i < k.
    left: Vec<f64>,
    right: Vec<f64>,
    order: Vec<usize>,
    rank: Vec<usize>,
    count: Vec<f64>,
    sum: Vec<f64>,
}

impl Scratch {
    fn fill(&mut self, x: &[f64]) {
        let m = x.len();
        self.order.clear();
        self.order.extend(0..m);
        self.order.sort_unstable_by(|&i, &j| x[i].total_cmp(&x[j]));
        self.rank.resize(m, 0);
        for (r, &i) in self.order.iter().enumerate() {
            self.rank[i] = r;
        }
        self.left.clear();
        self.left.push(0.0);
        self.sweep(x, 0..m, true);
        self.right.clear();
        self.right.resize(m + 1, 0.0);
        self.sweep(x, (0..m).rev(), false);
    }

    /// Adds the points one by one in `indices` order, recording the running within-sum.
    fn sweep(&mut self, x: &[f64], indices: impl Iterator<Item = usize>, forward: bool) {
        let m = x.len();
        self.count.clear();
        self.count.resize(m + 1, 0.0);
        self.sum.clear();
        self.sum.resize(m + 1, 0.0);
        let (mut n, mut total, mut within) = (0.0, 0.0, 0.0);
        for i in indices {
            let v = x[i];
            let (below_n, below_sum) = prefix(&self.count, &self.sum, self.rank[i] + 1);
            // Distances from v to the points already in: those below plus those above.
            within += v * below_n - below_sum + (total - below_sum) - v * (n - below_n);
            add(&mut self.count, &mut self.sum, self.rank[i] + 1, v);
            n += 1.0;
            total += v;
            if forward {
                self.left.push(within);
            } else {
                self.right[i] = within;
            }
        }
    }

    /// Matteson & James' statistic for the split before point `t`: the size-weighted energy
    /// distance p·q/(p+q) · (2/(pq)·Σ|x−y| − Σ|x−x'|/C(p,2) − Σ|y−y'|/C(q,2)).
    fn q(&self, t: usize) -> Option<f64> {
        let m = self.left.len() - 1;
        let (p, q) = (t as f64, (m - t) as f64);
        if t < 2 || m - t < 2 {
            return None;
        }
        let (wl, wr) = (self.left[t], self.right[t]);
        let between = self.left[m] - wl - wr;
        let e = 2.0 * between / (p * q) - 2.0 * wl / (p * (p - 1.0)) - 2.0 * wr / (q * (q - 1.0));
        Some(p * q / (p + q) * e)
    }
}

/// Count and sum of the points with rank below `r` (1-based Fenwick index).
fn prefix(count: &[f64], sum: &[f64], mut r: usize) -> (f64, f64) {
    let (mut n, mut s) = (0.0, 0.0);
    while r > 0 {
        n += count[r];
        s += sum[r];
        r &= r - 1;
    }
    (n, s)
}

fn add(count: &mut [f64], sum: &mut [f64], mut r: usize, v: f64) {
    while r < count.len() {
        count[r] += 1.0;
        sum[r] += v;
        r += r & r.wrapping_neg();
    }
}

/// Prefix sums of run means (centred, so the squares do not cancel), for a segment's mean and
/// variance in O(1).
struct RunMeans {
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
    fn new(runs: &[Vec<f64>]) -> RunMeans {
        let means: Vec<f64> = runs
            .iter()
            .map(|r| r.iter().sum::<f64>() / r.len() as f64)
            .collect();
        let centre = means.iter().sum::<f64>() / means.len() as f64;
        let (mut s1, mut s2) = (vec![0.0], vec![0.0]);
        for m in &means {
            let d = m - centre;
            s1.push(s1.last().unwrap_or(&0.0) + d);
            s2.push(s2.last().unwrap_or(&0.0) + d * d);
        }
        let mut steps: Vec<f64> = means.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
        steps.sort_unstable_by(f64::total_cmp);
        let sigma = steps
            .get(steps.len() / 2)
            .map_or(0.0, |m| m / (2f64.sqrt() * 0.6745));
        RunMeans {
            centre,
            floor: sigma * sigma,
            s1,
            s2,
        }
    }

    /// Runs, mean and sample variance of runs `a..b`.
    fn segment(&self, a: usize, b: usize) -> (f64, f64, f64) {
        let n = (b - a) as f64;
        let sum = self.s1[b] - self.s1[a];
        let mean = sum / n;
        let var = ((self.s2[b] - self.s2[a] - sum * mean) / (n - 1.0)).max(self.floor);
        (n, mean + self.centre, var)
    }

    /// Welch's p between runs `a..g` and `g..b`, with the two means.
    fn test(&self, a: usize, g: usize, b: usize) -> Change {
        let (n1, m1, v1) = self.segment(a, g);
        let (n2, m2, v2) = self.segment(g, b);
        let (e1, e2) = (v1 / n1, v2 / n2);
        let p = if e1 + e2 <= 0.0 {
            // No noise on either side: a difference is certain, sameness is no change.
            if m1 == m2 {
                1.0
            } else {
                0.0
            }
        } else {
            // Welch 1947 with the Welch–Satterthwaite degrees of freedom.
            let t = (m2 - m1) / (e1 + e2).sqrt();
            let df = (e1 + e2).powi(2) / (e1 * e1 / (n1 - 1.0) + e2 * e2 / (n2 - 1.0));
            t_two_sided_p(t, df)
        };
        Change {
            at: g,
            before: m1,
            after: m2,
            p,
        }
    }
}

/// Drops the weakest candidate until all are below `max_p`; each test is between the
/// neighbouring segments the remaining candidates leave.
fn eliminate(means: &RunMeans, mut cuts: Vec<usize>, max_p: f64) -> Vec<Change> {
    let runs = means.s1.len() - 1;
    let bounds = |cuts: &[usize], i: usize| around(cuts, i, runs);
    let mut tests: Vec<Change> = (0..cuts.len())
        .map(|i| {
            let (a, b) = bounds(&cuts, i);
            means.test(a, cuts[i], b)
        })
        .collect();
    loop {
        let weakest = tests
            .iter()
            .enumerate()
            .max_by(|(_, x), (_, y)| x.p.total_cmp(&y.p))
            .map(|(i, c)| (i, c.p));
        match weakest {
            Some((i, p)) if p.is_nan() || p >= max_p => {
                cuts.remove(i);
                tests.remove(i);
                // Only the two neighbours' segments changed.
                for j in [i.wrapping_sub(1), i] {
                    if j < cuts.len() {
                        let (a, b) = bounds(&cuts, j);
                        tests[j] = means.test(a, cuts[j], b);
                    }
                }
            }
            _ => return tests,
        }
    }
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
