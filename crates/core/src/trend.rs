//! A trend: metrics of a plan over its stored runs, with the change points found in them and
//! the CI gate's verdicts. `perfbase trend --json` writes [`Trend`] (schema
//! [`TREND_SCHEMA`], documented in docs/result-schema.md).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The `schema` of a trend document.
pub const TREND_SCHEMA: &str = "perfbase.trend/v1";

/// Every series of a selection, and the gate's verdict when one was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    pub schema: String,
    /// The settings the change points were found with.
    pub max_p: f64,
    /// The smallest change of level, as a fraction of the level before, kept as a change
    /// point (absent in documents written before it existed: read as 0).
    #[serde(default)]
    pub min_change: f64,
    pub series: Vec<Series>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<TrendCheck>,
}

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

/// One metric of one step over the runs that measured it, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// `plan / scenario / step / metric`, or the name given with `--series`.
    pub name: String,
    pub plan: String,
    pub scenario: String,
    /// Empty for a scenario-wide metric (knee, operating point).
    pub step: String,
    /// `p50`, `p99`, `rps`, `error_rate`, `knee` or `operating_point`.
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub points: Vec<Point>,
    pub change_points: Vec<ChangePoint>,
    /// The runs since the last change point (all runs when there is none), bursts left out of
    /// its count, mean and spread.
    pub segment: Segment,
    /// Positions in `points` where the environment differs from the run before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment_changes: Vec<EnvironmentChange>,
    /// Outlier events: 1 to 3 neighbouring runs far off the level around them that return to
    /// it (a noisy neighbour, a GC storm). They are left out of the change-point search, the
    /// current segment and the gate's segment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bursts: Vec<Burst>,
    /// How correlated the run-to-run noise is, and what the tests counted the runs as (absent
    /// for a series too short to search, and in documents written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// Time spent finding this series' change points, in microseconds.
    pub compute_us: f64,
}

impl Series {
    /// Whether point `i` is in one of the series' bursts.
    pub fn in_burst(&self, i: usize) -> bool {
        self.bursts
            .iter()
            .any(|b| (b.index..b.index + b.runs).contains(&i))
    }
}

/// A burst: runs `index .. index + runs` of `points`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    /// Position in `points` of its first run, and that run's id.
    pub index: usize,
    pub run: i64,
    pub runs: usize,
    /// The mean of its runs' values, and how far that is from the level of its segment, as a
    /// fraction (4.0 = five times the level).
    pub value: f64,
    pub change: f64,
}

/// The run-to-run noise of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// The lag-1 autocorrelation of the runs about their segments' means (0 for independent
    /// runs; a machine that drifts slowly makes it positive).
    pub autocorrelation: f64,
    /// The autocorrelation the tests assumed: the estimate when it is clearly above 0 (by
    /// three standard errors), else 0.
    pub assumed: f64,
    /// How many independent runs the series' runs (bursts left out) are worth under it: the
    /// tests counted each segment's runs so (the run count itself when `assumed` is 0).
    pub effective_runs: f64,
}

/// One run of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The run's id in the store (its position for `--series` input).
    pub run: i64,
    /// When it started, RFC 3339 UTC (empty for `--series` input); shared by the run's series.
    pub at: Arc<str>,
    /// The mean of its repetitions, and every repetition (warm-up runs left out).
    pub value: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repetitions: Vec<f64>,
    /// The run's labels and its source (commit, CI build), for naming the point; shared by
    /// the run's series (a 10,000-run store has 200,000 points).
    #[serde(default, skip_serializing_if = "no_labels")]
    pub labels: Arc<BTreeMap<String, String>>,
}

fn no_labels(labels: &Arc<BTreeMap<String, String>>) -> bool {
    labels.is_empty()
}

/// Where a series' level moved and stayed moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// Position in `points` of the first run of the new segment, and that run's id.
    pub index: usize,
    pub run: i64,
    /// `level` (the mean moved) or `spread` (the run-to-run spread moved, the mean did not).
    pub kind: String,
    /// Mean of the run values before and after (up to the neighbouring change points).
    pub before: f64,
    pub after: f64,
    /// (after − before) / before for a change of level; for a change of spread, the ratio of
    /// the standard deviations after and before, minus 1.
    pub change: f64,
    /// The two-sided p of the test that kept it: Welch's t between the run values of the two
    /// segments, or between their absolute deviations from the medians for a spread.
    pub p: f64,
    /// `better` or `worse`: by the metric's direction for a level, wider is worse for a spread.
    pub direction: String,
    /// Set when the environment changed here too: the runs on either side are not like for
    /// like, and the gate does not fail on this change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

/// The current segment of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Position in `points` of its first run.
    pub from: usize,
    pub runs: usize,
    pub mean: f64,
    /// Sample standard deviation of its run values (NaN with one run).
    pub stdev: f64,
}

/// The environment (CPU, cores, kernel, perfbase version) differs from the previous run's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentChange {
    pub index: usize,
    pub from: String,
    pub to: String,
}

/// `--check`: does the newest run start a worse change beyond the tolerance?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendCheck {
    /// The smallest worsening that fails, as a fraction (0.05 = 5 %).
    pub tolerance: f64,
    pub passed: bool,
    pub verdicts: Vec<TrendVerdict>,
}

/// The newest run of one series against its current segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendVerdict {
    pub series: String,
    pub scenario: String,
    pub step: String,
    pub metric: String,
    /// The newest run's id and value, and the segment it is judged against.
    pub run: i64,
    pub value: f64,
    pub segment_mean: f64,
    pub segment_runs: usize,
    pub change: f64,
    /// Two-sided p of the newest value under the segment's prediction interval; absent when
    /// the segment has too few runs to judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    /// `worse`, `better`, `steady`, `too few runs` or `not like for like`.
    pub verdict: String,
    pub failed: bool,
}
