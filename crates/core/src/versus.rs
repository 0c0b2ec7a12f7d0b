//! A plan's `[[versus]]` in its result: two scenarios' repeated runs compared, statistic by
//! statistic, as published "A vs B" studies set them side by side.

use crate::study::Summary;
use serde::{Deserialize, Serialize};

/// Two scenarios (two targets, platforms or builds) compared over their repetitions, as the
/// published "A vs B" studies do: per statistic, each side's mean and variance over the runs,
/// and B's difference from A in percent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versus {
    pub name: String,
    /// The scenarios, as the plan names them.
    pub a: String,
    pub b: String,
    /// What the sentences call each side ("AKS", "Vault 1.13").
    pub a_label: String,
    pub b_label: String,
    /// One block per step the two scenarios share (a suite's operations), in order.
    pub steps: Vec<VersusStep>,
}

/// One step of a [`Versus`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersusStep {
    /// The step's name (an operation of a suite), or the scenario's for a single step.
    pub step: String,
    /// Mean, p99, max and min latency (ms), in that order.
    pub stats: Vec<VersusStat>,
    /// Each run's figures, for box plots: per side, per run, (mean, p99, max, min) in ms.
    pub runs_a: Vec<[f64; 4]>,
    pub runs_b: Vec<[f64; 4]>,
}

/// One statistic of a [`VersusStep`] on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersusStat {
    /// `mean`, `p99`, `max` or `min` (latency, ms).
    pub stat: String,
    /// Over A's runs and over B's: mean, variance…
    pub a: Summary,
    pub b: Summary,
    /// (mean B − mean A) / mean A, in percent; none when A's is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_pct: Option<f64>,
    /// Welch's two-sided p-value, with two runs or more on each side: on the logarithm of
    /// the per-run figures when all are positive (a test of their ratio), else on the figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// "OpenBao 2.7 is 12.3 % faster (p < 0.001)", "… slower (p = 0.012)", or
    /// "not resolved with 5 runs (−42.9 %, p = 0.11)" (B's label is the column's or line's).
    pub sentence: String,
    /// The runs resolved the difference (the sentence says "faster" or "slower"), so readers
    /// need not parse the sentence. False in results saved before it existed.
    #[serde(default)]
    pub resolved: bool,
}
