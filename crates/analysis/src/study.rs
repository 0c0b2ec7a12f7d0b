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

/// Summarises the runs of one step, given in the order they ran; `None` without runs. A
/// cold start is left out first: the leading runs [`crate::warmup::mser_truncation`] finds
/// apart from the steady ones (by mean latency) are counted in `warmup_runs` and
/// `warmup_s`, and every figure is of the runs kept.
pub fn repetition_stats(step: &str, runs: &[&Measurement]) -> Option<RepetitionStats> {
    let means: Vec<f64> = runs.iter().map(|m| m.latency_ms.mean).collect();
    let cold = crate::warmup::mser_truncation(&means);
    let (dropped, runs) = runs.split_at(cold);
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
        warmup_runs: cold,
        warmup_s: dropped.iter().map(|m| m.duration_s).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::measurement;

    #[test]
    fn a_cold_first_run_is_left_out_of_the_statistics_and_counted() {
        // The first run at 2 ms, the six after it at 1 ms give or take 1 %.
        let runs: Vec<Measurement> = [2000, 1000, 1010, 990, 1000, 1005, 995]
            .iter()
            .map(|&us| measurement(&[(us, 100)], &[], 0.5))
            .collect();
        let refs: Vec<&Measurement> = runs.iter().collect();
        let r = repetition_stats("op", &refs).unwrap();
        assert_eq!((r.warmup_runs, r.runs), (1, 6));
        assert!((r.warmup_s - 0.5).abs() < 1e-9, "{}", r.warmup_s);
        assert!(r.mean_ms.max < 1.1, "{:?}", r.mean_ms);
        // Steady from the start: every run counts.
        let r = repetition_stats("op", &refs[1..]).unwrap();
        assert_eq!((r.warmup_runs, r.runs, r.warmup_s), (0, 6, 0.0));
    }
}
