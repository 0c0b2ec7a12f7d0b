//! The findings of a plan run (a "study"): for each scenario its sweep table, knee, operating
//! point, repetition statistics and threshold verdicts; for each check its verdict. Stored in
//! the result JSON under `study` and rendered by the reports.

use crate::stats::describe;
use perfbase_core::result::Measurement;

// The study's data types live in the interface crate, where every reader of a result can type
// them; re-exported here, where they were first defined.
pub use perfbase_core::study::{
    CheckVerdict, PhaseVerdict, Ranking, RepetitionStats, ScenarioStudy, Study,
};

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
        warmup_dropped_s: Vec::new(),
    })
}
