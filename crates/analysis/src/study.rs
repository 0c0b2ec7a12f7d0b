//! The findings of a plan run (a "study"): for each scenario its sweep table, knee, operating
//! point, repetition statistics and threshold verdicts; for each check its verdict. Stored in
//! the result JSON under `study` and rendered by the reports.

use crate::knee::{Knee, KneeRule};
use crate::slo::OperatingPoint;
use crate::stats::{describe, Summary};
use crate::sweep::StepRow;
use crate::threshold::Verdict;
use perfbase_core::result::Measurement;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything a plan run found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Study {
    pub plan: String,
    pub scale: f64,
    /// The SLO thresholds as written (they decide operating points).
    pub slo: Vec<String>,
    pub knee_rule: KneeRule,
    pub scenarios: Vec<ScenarioStudy>,
    pub checks: Vec<CheckVerdict>,
    /// Every threshold and check passed.
    pub passed: bool,
}

/// The findings of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStudy {
    pub name: String,
    /// `constant`, `stages`, `rate ladder` or `concurrency ladder`.
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
    pub thresholds: Vec<PhaseVerdict>,
    pub passed: bool,
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
}

/// Summarises the runs of one step; `None` without runs.
pub fn repetition_stats(step: &str, runs: &[&Measurement]) -> Option<RepetitionStats> {
    let of =
        |f: &dyn Fn(&Measurement) -> f64| describe(&runs.iter().map(|m| f(m)).collect::<Vec<_>>());
    Some(RepetitionStats {
        step: step.to_string(),
        runs: runs.len(),
        rps: of(&|m| m.rps)?,
        success_ratio: of(&|m| m.success_ratio)?,
        min_ms: of(&|m| m.latency_ms.min)?,
        mean_ms: of(&|m| m.latency_ms.mean)?,
        p50_ms: of(&|m| m.latency_ms.p50)?,
        p90_ms: of(&|m| m.latency_ms.p90)?,
        p99_ms: of(&|m| m.latency_ms.p99)?,
        max_ms: of(&|m| m.latency_ms.max)?,
    })
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
