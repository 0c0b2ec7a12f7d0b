//! The `study` section of a result: the findings of a plan run — for each scenario its sweep
//! table, knee, operating point, repetition statistics and threshold verdicts; for each check
//! its verdict.
//!
//! Only the data lives here, so every crate that reads a result can type it; perfbase-analysis
//! computes it (`step_row`, `find_knee`, `operating_point`, `describe`, `Threshold::check`) and
//! re-exports these types under its own module paths. Figures that can be undefined (a
//! latency with nothing completed, a share of an empty step) are NaN in memory and `null` in
//! JSON, through [`crate::nan`].

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

// How the runs were made (interleaving) and how quiet the machine was: in their own file.
pub use crate::conditions::{Interleaving, Noise};
// A plan's A vs B: in its own file.
pub use crate::versus::{Versus, VersusStat, VersusStep};

/// Everything a plan run found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Study {
    pub plan: String,
    #[serde(with = "crate::nan::f64")]
    pub scale: f64,
    /// The SLO thresholds as written (they decide operating points).
    pub slo: Vec<String>,
    pub knee_rule: KneeRule,
    pub scenarios: Vec<ScenarioStudy>,
    pub checks: Vec<CheckVerdict>,
    /// Every threshold and check passed.
    pub passed: bool,
    /// The plan's `[[rankings]]`: scenarios (or their steps) side by side, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rankings: Vec<Ranking>,
    /// The plan's `[[versus]]`: two scenarios' repeated runs, A against B, per step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versus: Vec<Versus>,
    /// Scenarios whose repetitions ran interleaved (compared ones: a versus, a ranking), and
    /// in which order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interleaved: Vec<Interleaving>,
    /// How quiet the machine was: the noise floor and the CPU others took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
}

/// Scenarios of one plan ranked by one figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    pub name: String,
    /// `throughput` (highest first, ties by mean latency), or `p50`, `p99`, `mean` (lowest
    /// first).
    pub by: String,
    /// The scenarios ranked, as the plan names them.
    pub scenarios: Vec<String>,
    pub rows: Vec<RankRow>,
}

/// One row of a ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub rank: usize,
    pub label: String,
    #[serde(with = "crate::nan::f64")]
    pub rps: f64,
    #[serde(with = "crate::nan::f64")]
    pub mean_ms: f64,
    #[serde(default = "crate::nan::missing", with = "crate::nan::f64")]
    pub p50_ms: f64,
    #[serde(with = "crate::nan::f64")]
    pub p99_ms: f64,
    #[serde(with = "crate::nan::f64")]
    pub success_ratio: f64,
}

/// The findings of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStudy {
    pub name: String,
    /// `constant`, `stages`, `rate ladder`, `concurrency ladder` or `suite` (a step per operation).
    pub kind: String,
    pub workload: String,
    pub target: String,
    pub repetitions: u32,
    /// One row per step, over all repetitions of that step merged (HDR merge is exact).
    pub steps: Vec<StepRow>,
    /// Ladders only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<Knee>,
    /// Ladders with an SLO only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operating_point: Option<OperatingPoint>,
    /// With more than one repetition: statistics of each step's per-run figures.
    pub repetition_stats: Vec<RepetitionStats>,
    /// The plan's `precision` for this scenario (0.05 for 5 %): each step repeated until the
    /// 95 % intervals of its throughput, mean and p99 latency were within this share of the
    /// figure, or its `max_repetitions` or `max_time` ran out (then its figures are marked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_target: Option<f64>,
    pub thresholds: Vec<PhaseVerdict>,
    pub passed: bool,
}

/// The load a step offered.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Offered {
    /// Open model: arrival rate, operations per second.
    Rate(#[serde(with = "crate::nan::f64")] f64),
    /// Closed model: concurrent sessions.
    Concurrency(u64),
}

impl Offered {
    /// The offered amount as a number (per second, or sessions), for ordering and ratios.
    pub fn amount(self) -> f64 {
        match self {
            Offered::Rate(r) => r,
            Offered::Concurrency(c) => c as f64,
        }
    }
}

impl fmt::Display for Offered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Offered::Rate(r) => write!(f, "{}/s", fmt_amount(*r)),
            Offered::Concurrency(c) => write!(f, "concurrency {c}"),
        }
    }
}

/// Formats a number without a trailing `.0`, keeping at most 3 decimals: 500, 12.5, 0.333.
pub fn fmt_amount(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// One step of a rate or concurrency ladder: what was offered, what came back, and the
/// latency shape. Built by perfbase-analysis's `sweep::step_row`; the input of its knee and
/// operating-point searches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRow {
    /// The phase name (e.g. `step-3` or `rate=500/s`).
    pub name: String,
    pub offered: Offered,
    /// Completed operations per second of the step's wall time (`Measurement::rps`), errors
    /// included; for a journey, iterations per second (the unit its load is offered in).
    #[serde(with = "crate::nan::f64")]
    pub achieved_rps: f64,
    /// Share of successful operations, 0..1.
    #[serde(with = "crate::nan::f64")]
    pub success_ratio: f64,
    /// Mean and minimum latency (the VU-ladder studies' avg and min columns); NaN in results
    /// saved before they were recorded.
    #[serde(default = "crate::nan::missing", with = "crate::nan::f64")]
    pub mean_ms: f64,
    #[serde(default = "crate::nan::missing", with = "crate::nan::f64")]
    pub min_ms: f64,
    #[serde(with = "crate::nan::f64")]
    pub p50_ms: f64,
    #[serde(with = "crate::nan::f64")]
    pub p90_ms: f64,
    #[serde(with = "crate::nan::f64")]
    pub p95_ms: f64,
    #[serde(with = "crate::nan::f64")]
    pub p99_ms: f64,
    #[serde(with = "crate::nan::f64")]
    pub max_ms: f64,
    /// (bucket ms, share of operations with response time < bucket), one per requested bucket,
    /// in the order given. Shares are NaN when the step has no operations or its histogram
    /// does not decode.
    #[serde(with = "crate::nan::pairs")]
    pub under_ms: Vec<(f64, f64)>,
    /// Why the step is not a valid measurement of its offered load, when it is not: an
    /// open-model step that started more than 1 % fewer operations than its rate asked for.
    /// Such a step counts as past the knee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
    /// The median of the per-second p99s in the first, middle and last third of the step
    /// (ms), with at least 3 seconds of timeline: a p99 that keeps climbing within a step
    /// means a queue that keeps growing, so the step is past capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_thirds_ms: Option<[f64; 3]>,
    /// The step's availability when something was out in it (an outage, or a second or more
    /// without success): see the measurement's `availability`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<crate::outage::AvailabilityOut>,
}

/// The limits that make a ladder step "bad"; how they are applied is documented on
/// perfbase-analysis's `knee::find_knee`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KneeRule {
    /// Rate steps: achieved < `min_throughput_ratio` × offered is bad (default 0.95).
    #[serde(with = "crate::nan::f64")]
    pub min_throughput_ratio: f64,
    /// Any step after the first: p99 > `p99_factor` × the first (lowest-load) step's p99 is bad
    /// (default 3.0).
    #[serde(with = "crate::nan::f64")]
    pub p99_factor: f64,
    /// Any step: an error ratio (1 − success_ratio) above this is bad (default 0.01).
    #[serde(with = "crate::nan::f64")]
    pub max_error_ratio: f64,
    /// Concurrency steps after the first: gaining less than this fraction of throughput over
    /// the previous step is bad (default 0.05, i.e. 5 %).
    #[serde(with = "crate::nan::f64")]
    pub min_gain: f64,
    /// Any step: a p99 that climbs from the step's first third through its middle to its
    /// last third, ending above `trend_factor` × the first third's (and at least 1 ms
    /// higher), is bad: the queue is still growing (default 1.5).
    #[serde(default = "default_trend_factor", with = "crate::nan::f64")]
    pub trend_factor: f64,
}

fn default_trend_factor() -> f64 {
    KneeRule::default().trend_factor
}

impl Default for KneeRule {
    fn default() -> Self {
        KneeRule {
            min_throughput_ratio: 0.95,
            p99_factor: 3.0,
            max_error_ratio: 0.01,
            min_gain: 0.05,
            trend_factor: 1.5,
        }
    }
}

/// The knee of a ladder, as indices into its rows (perfbase-analysis's `knee::find_knee`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Knee {
    /// The step before the knee: the highest load the service handled well. None when the
    /// first step is already bad, or when there is no knee.
    pub last_good: Option<usize>,
    /// The knee: the first bad step. None when every step is good (no saturation found).
    pub first_bad: Option<usize>,
    /// Why `first_bad` is bad, e.g. "achieved 412.0/s < 95 % of offered 500/s"; several broken
    /// rules are joined with "; ". None when there is no knee.
    pub reason: Option<String>,
}

/// The recommended operating point of a ladder (perfbase-analysis's `slo::operating_point`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OperatingPoint {
    /// Index of the step into the rows given.
    pub index: usize,
    /// The load that step offered.
    pub offered: Offered,
    /// How far the knee lies above this step: the knee's (first bad step's) offered load
    /// divided by this step's, minus 1 — 0.25 means the service saturates at 25 % more load.
    /// None without a knee (or when this step offered 0). Zero or negative when the SLO
    /// admits steps at or past the knee.
    pub headroom: Option<f64>,
}

/// Statistics over the repetitions of one step: each field summarises that figure's value in
/// every run (mean, sample variance, standard deviation, 95 % CI, min, max).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepetitionStats {
    pub step: String,
    pub runs: usize,
    pub rps: Summary,
    pub success_ratio: Summary,
    pub min_ms: Summary,
    pub mean_ms: Summary,
    pub p50_ms: Summary,
    pub p90_ms: Summary,
    pub p99_ms: Summary,
    pub max_ms: Summary,
    /// The step's first runs left out as warm-up (MSER over the runs in order, each drop
    /// confirmed outside the kept runs' 99 % prediction interval): how many, and their
    /// measured seconds. `runs` and every figure here are of the runs kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_runs: usize,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub warmup_s: f64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

impl RepetitionStats {
    /// The worst precision of the key figures (throughput, mean and p99 latency), as
    /// [`Summary::precision`]; None when any of them has no interval.
    pub fn precision(&self) -> Option<f64> {
        let shares = [&self.rps, &self.mean_ms, &self.p99_ms].map(Summary::precision);
        shares
            .iter()
            .try_fold(0.0f64, |worst, s| s.map(|s| worst.max(s)))
    }

    /// Whether the key figures met `target` (a share: 0.05 for 5 %).
    pub fn met(&self, target: f64) -> bool {
        self.precision().is_some_and(|p| p <= target)
    }
}

/// Summary of a sample of values (e.g. one metric over repeated runs), as perfbase-analysis's
/// `stats::describe` computes it. A NaN among the values makes mean, variance and CI NaN.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    #[serde(with = "crate::nan::f64")]
    pub mean: f64,
    /// Sample variance (divisor n − 1); 0 when n < 2.
    #[serde(with = "crate::nan::f64")]
    pub variance: f64,
    /// Sample standard deviation, √variance.
    #[serde(with = "crate::nan::f64")]
    pub stdev: f64,
    #[serde(with = "crate::nan::f64")]
    pub min: f64,
    #[serde(with = "crate::nan::f64")]
    pub max: f64,
    /// A 95 % interval for the median run's figure (the typical run), distribution-free: order
    /// statistics with Hettmansperger–Sheather interpolation, so it never leaves the range of
    /// the values and never holds an impossible one. (NaN, NaN) with fewer than
    /// [`MIN_RUNS_FOR_INTERVAL`] values, too few for any such interval. (Results saved before
    /// this held a t-interval of the mean, and no `median`.)
    #[serde(with = "crate::nan::pair")]
    pub ci95: (f64, f64),
    /// The median of the values.
    #[serde(default = "crate::nan::missing", with = "crate::nan::f64")]
    pub median: f64,
    /// What share of samples such an interval covers the truth in: 0.95, or 0.9375 with 5 values
    /// (their range: no narrower interval reaches 95 %). NaN without an interval.
    #[serde(default = "crate::nan::missing", with = "crate::nan::f64")]
    pub coverage: f64,
}

/// The fewest values a 95 % interval of the median is given for: with 5, the range of the
/// values covers the median in 1 − 2/2⁵ = 93.75 % of samples; with 4, at most 87.5 %.
pub const MIN_RUNS_FOR_INTERVAL: usize = 5;

impl Summary {
    /// The interval's wider side as a share of the median (0.05 = ±5 %): how precisely the
    /// runs pin the typical run's figure down. None without an interval or with a median of 0.
    pub fn precision(&self) -> Option<f64> {
        let (lo, hi) = self.ci95;
        let m = self.median;
        let share = (hi - m).max(m - lo) / m.abs();
        (lo.is_finite() && hi.is_finite() && m != 0.0 && share.is_finite()).then_some(share)
    }
}

/// The outcome of checking one threshold against one measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The threshold's text as written.
    pub threshold: String,
    /// The measured value, in the threshold's unit (ms, ratio 0..1, or per second); NaN when
    /// nothing was measured (latency of a phase with no completed operations).
    #[serde(with = "crate::nan::f64")]
    pub actual: f64,
    pub passed: bool,
}

/// A threshold verdict on one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseVerdict {
    pub phase: String,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// An exact check: expected and actual status counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckVerdict {
    pub name: String,
    pub requests: u64,
    pub expect: BTreeMap<String, u64>,
    pub actual: BTreeMap<String, u64>,
    pub passed: bool,
}

impl CheckVerdict {
    /// Compares `actual` status counts with `expect` exactly: the same codes, the same counts.
    pub fn judge(
        name: &str,
        requests: u64,
        expect: BTreeMap<String, u64>,
        actual: BTreeMap<String, u64>,
    ) -> CheckVerdict {
        // A code expected 0 times is the same as a code that must not appear.
        let wanted: BTreeMap<&String, &u64> = expect.iter().filter(|(_, n)| **n > 0).collect();
        let got: BTreeMap<&String, &u64> = actual.iter().filter(|(_, n)| **n > 0).collect();
        let passed = wanted == got;
        CheckVerdict {
            name: name.to_string(),
            requests,
            expect,
            actual,
            passed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(mean: f64) -> Summary {
        Summary {
            n: 3,
            mean,
            variance: 0.25,
            stdev: 0.5,
            min: mean - 1.0,
            max: mean + 1.0,
            ci95: (mean - 0.75, mean + 0.75),
            median: mean,
            coverage: 0.95,
        }
    }

    fn row(name: &str, offered: Offered) -> StepRow {
        StepRow {
            name: name.into(),
            offered,
            achieved_rps: 99.5,
            success_ratio: 1.0,
            mean_ms: 1.5,
            min_ms: 0.5,
            p50_ms: 1.25,
            p90_ms: 2.0,
            p95_ms: 3.0,
            p99_ms: 4.5,
            max_ms: 10.0,
            under_ms: vec![(1.0, 0.5), (10.0, 1.0)],
            invalid: None,
            p99_thirds_ms: None,
            availability: None,
        }
    }

    fn scenario(name: &str, kind: &str) -> ScenarioStudy {
        ScenarioStudy {
            name: name.into(),
            kind: kind.into(),
            workload: "w".into(),
            target: "t".into(),
            repetitions: 1,
            steps: vec![],
            knee: None,
            operating_point: None,
            repetition_stats: vec![],
            precision_target: None,
            thresholds: vec![],
            passed: false,
        }
    }

    fn study() -> Study {
        let ladder = ScenarioStudy {
            target: "http://x".into(),
            repetitions: 3,
            steps: vec![
                row("rate=100/s", Offered::Rate(100.0)),
                row("c=4", Offered::Concurrency(4)),
            ],
            knee: Some(Knee {
                last_good: Some(0),
                first_bad: Some(1),
                reason: Some("why".into()),
            }),
            operating_point: Some(OperatingPoint {
                index: 0,
                offered: Offered::Rate(100.0),
                headroom: Some(0.25),
            }),
            repetition_stats: vec![RepetitionStats {
                step: "rate=100/s".into(),
                runs: 3,
                rps: summary(100.0),
                success_ratio: summary(1.0),
                min_ms: summary(0.5),
                mean_ms: summary(1.5),
                p50_ms: summary(1.25),
                p90_ms: summary(2.0),
                p99_ms: summary(4.5),
                max_ms: summary(10.0),
                warmup_runs: 0,
                warmup_s: 0.0,
            }],
            thresholds: vec![PhaseVerdict {
                phase: "rate=100/s".into(),
                verdict: Verdict {
                    threshold: "p99 < 20ms".into(),
                    actual: 4.5,
                    passed: true,
                },
            }],
            passed: true,
            ..scenario("s", "rate ladder")
        };
        Study {
            plan: "plan.toml".into(),
            scale: 1.0,
            slo: vec!["p99 < 20ms".into()],
            knee_rule: KneeRule::default(),
            scenarios: vec![ladder, scenario("c", "constant")],
            checks: vec![CheckVerdict::judge(
                "chk",
                10,
                BTreeMap::from([("200".to_string(), 10)]),
                BTreeMap::from([("200".to_string(), 9), ("500".to_string(), 1)]),
            )],
            passed: false,
            rankings: Vec::new(),
            versus: Vec::new(),
            interleaved: Vec::new(),
            noise: None,
        }
    }

    /// The JSON of finite figures, as written before these types moved here (and before the
    /// NaN adapter): same fields, same order, same numbers.
    const FINITE_JSON: &str = r#"{"plan":"plan.toml","scale":1.0,"slo":["p99 < 20ms"],"knee_rule":{"min_throughput_ratio":0.95,"p99_factor":3.0,"max_error_ratio":0.01,"min_gain":0.05,"trend_factor":1.5},"scenarios":[{"name":"s","kind":"rate ladder","workload":"w","target":"http://x","repetitions":3,"steps":[{"name":"rate=100/s","offered":{"rate":100.0},"achieved_rps":99.5,"success_ratio":1.0,"p50_ms":1.25,"p90_ms":2.0,"p95_ms":3.0,"p99_ms":4.5,"max_ms":10.0,"under_ms":[[1.0,0.5],[10.0,1.0]]},{"name":"c=4","offered":{"concurrency":4},"achieved_rps":99.5,"success_ratio":1.0,"p50_ms":1.25,"p90_ms":2.0,"p95_ms":3.0,"p99_ms":4.5,"max_ms":10.0,"under_ms":[[1.0,0.5],[10.0,1.0]]}],"knee":{"last_good":0,"first_bad":1,"reason":"why"},"operating_point":{"index":0,"offered":{"rate":100.0},"headroom":0.25},"repetition_stats":[{"step":"rate=100/s","runs":3,"rps":{"n":3,"mean":100.0,"variance":0.25,"stdev":0.5,"min":99.0,"max":101.0,"ci95":[99.25,100.75]},"success_ratio":{"n":3,"mean":1.0,"variance":0.25,"stdev":0.5,"min":0.0,"max":2.0,"ci95":[0.25,1.75]},"min_ms":{"n":3,"mean":0.5,"variance":0.25,"stdev":0.5,"min":-0.5,"max":1.5,"ci95":[-0.25,1.25]},"mean_ms":{"n":3,"mean":1.5,"variance":0.25,"stdev":0.5,"min":0.5,"max":2.5,"ci95":[0.75,2.25]},"p50_ms":{"n":3,"mean":1.25,"variance":0.25,"stdev":0.5,"min":0.25,"max":2.25,"ci95":[0.5,2.0]},"p90_ms":{"n":3,"mean":2.0,"variance":0.25,"stdev":0.5,"min":1.0,"max":3.0,"ci95":[1.25,2.75]},"p99_ms":{"n":3,"mean":4.5,"variance":0.25,"stdev":0.5,"min":3.5,"max":5.5,"ci95":[3.75,5.25]},"max_ms":{"n":3,"mean":10.0,"variance":0.25,"stdev":0.5,"min":9.0,"max":11.0,"ci95":[9.25,10.75]}}],"thresholds":[{"phase":"rate=100/s","threshold":"p99 < 20ms","actual":4.5,"passed":true}],"passed":true},{"name":"c","kind":"constant","workload":"w","target":"t","repetitions":1,"steps":[],"repetition_stats":[],"thresholds":[],"passed":false}],"checks":[{"name":"chk","requests":10,"expect":{"200":10},"actual":{"200":9,"500":1},"passed":false}],"passed":false}"#;

    #[test]
    fn finite_study_json_is_unchanged() {
        let s = study();
        // Since then, steps also carry mean and min, between success and p50.
        let mut now = FINITE_JSON.replace(
            r#""success_ratio":1.0,"p50_ms""#,
            r#""success_ratio":1.0,"mean_ms":1.5,"min_ms":0.5,"p50_ms""#,
        );
        // And summaries their median and the interval's coverage, after the interval.
        let mut from = 0;
        while let Some(at) = now[from..].find(r#""ci95":["#) {
            let start = from + at + r#""ci95":["#.len();
            let end = start + now[start..].find(']').expect("closed");
            let (lo, hi) = now[start..end].split_once(',').expect("pair");
            let mid = (lo.parse::<f64>().unwrap() + hi.parse::<f64>().unwrap()) / 2.0;
            let extra = format!(r#","median":{mid:?},"coverage":0.95"#);
            now.insert_str(end + 1, &extra);
            from = end + 1 + extra.len();
        }
        assert_eq!(serde_json::to_string(&s).expect("serialises"), now);
        let back: Study = serde_json::from_str(&now).expect("reads");
        assert_eq!(back, s);
        // A study saved before them reads back with those unknown, the rest the same.
        let mut old: Study = serde_json::from_str(FINITE_JSON).expect("reads");
        for row in &mut old.scenarios[0].steps {
            assert!(row.mean_ms.is_nan() && row.min_ms.is_nan());
            (row.mean_ms, row.min_ms) = (1.5, 0.5);
        }
        for r in &mut old.scenarios[0].repetition_stats {
            for sm in [
                &mut r.rps,
                &mut r.success_ratio,
                &mut r.min_ms,
                &mut r.mean_ms,
                &mut r.p50_ms,
                &mut r.p90_ms,
                &mut r.p99_ms,
                &mut r.max_ms,
            ] {
                assert!(sm.median.is_nan() && sm.coverage.is_nan());
                (sm.median, sm.coverage) = ((sm.ci95.0 + sm.ci95.1) / 2.0, 0.95);
            }
        }
        assert_eq!(old, s);
    }

    #[test]
    fn a_study_with_nan_figures_reads_back() {
        let mut s = study();
        s.scale = f64::NAN;
        s.knee_rule.min_gain = f64::NAN;
        let ladder = &mut s.scenarios[0];
        ladder.steps[0].offered = Offered::Rate(f64::NAN);
        ladder.steps[0].p99_ms = f64::NAN;
        ladder.steps[0].under_ms = vec![(10.0, f64::NAN)];
        ladder.repetition_stats[0].p99_ms = Summary {
            n: 2,
            mean: f64::NAN,
            variance: f64::NAN,
            stdev: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
            ci95: (f64::NAN, f64::NAN),
            median: f64::NAN,
            coverage: f64::NAN,
        };
        ladder.thresholds[0].verdict.actual = f64::NAN;
        ladder.thresholds[0].verdict.passed = false;

        // Through a Value, as the reports re-read the result's `study` section.
        let value = serde_json::to_value(&s).expect("serialises");
        assert_eq!(
            value["scenarios"][0]["thresholds"][0]["actual"],
            serde_json::Value::Null
        );
        assert_eq!(
            value["scenarios"][0]["steps"][0]["under_ms"][0][1],
            serde_json::Value::Null
        );
        let back: Study = serde_json::from_value(value).expect("a NaN no longer loses the study");
        let b = &back.scenarios[0];
        assert!(back.scale.is_nan() && back.knee_rule.min_gain.is_nan());
        assert!(b.steps[0].offered.amount().is_nan());
        assert!(b.steps[0].p99_ms.is_nan() && b.steps[0].under_ms[0].1.is_nan());
        assert_eq!(b.steps[0].under_ms[0].0, 10.0);
        let p99 = b.repetition_stats[0].p99_ms;
        assert_eq!(p99.n, 2);
        assert!(
            p99.mean.is_nan() && p99.stdev.is_nan() && p99.ci95.0.is_nan() && p99.ci95.1.is_nan()
        );
        assert!(b.thresholds[0].verdict.actual.is_nan());
        assert_eq!(b.thresholds[0].verdict.threshold, "p99 < 20ms");
        // Everything finite is untouched.
        assert_eq!(b.steps[1], s.scenarios[0].steps[1]);
        assert_eq!(
            b.repetition_stats[0].rps,
            s.scenarios[0].repetition_stats[0].rps
        );

        // And through text.
        let text = serde_json::to_string(&s).expect("serialises");
        let back: Study = serde_json::from_str(&text).expect("reads");
        assert!(back.scenarios[0].thresholds[0].verdict.actual.is_nan());
    }

    #[test]
    fn offered_display_and_amount() {
        assert_eq!(Offered::Rate(500.0).to_string(), "500/s");
        assert_eq!(Offered::Rate(12.5).to_string(), "12.5/s");
        assert_eq!(Offered::Concurrency(16).to_string(), "concurrency 16");
        assert_eq!(Offered::Concurrency(16).amount(), 16.0);
        assert_eq!(fmt_amount(0.95 * 100.0), "95");
        assert_eq!(fmt_amount(1.0 / 3.0), "0.333");
        assert_eq!(fmt_amount(-0.0001), "0");
    }

    #[test]
    fn checks_compare_counts_exactly() {
        let codes = |list: &[(&str, u64)]| {
            list.iter()
                .map(|&(c, n)| (c.to_string(), n))
                .collect::<BTreeMap<_, _>>()
        };
        let v = CheckVerdict::judge("a", 5, codes(&[("200", 5)]), codes(&[("200", 5)]));
        assert!(v.passed);
        // A code expected 0 times may be absent.
        let v = CheckVerdict::judge(
            "b",
            5,
            codes(&[("200", 5), ("500", 0)]),
            codes(&[("200", 5)]),
        );
        assert!(v.passed && v.expect.len() == 2);
        let v = CheckVerdict::judge(
            "c",
            5,
            codes(&[("200", 5)]),
            codes(&[("200", 4), ("500", 1)]),
        );
        assert!(!v.passed);
    }
}
