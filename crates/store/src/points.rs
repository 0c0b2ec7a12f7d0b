//! The figures a trend reads, taken out of a result when it is saved (schema v4): one row per
//! plan, scenario, step, metric and repetition in `run_points`, and the run's environment in
//! `run_env`, so a trend over thousands of runs never parses their full results.

use perfbase_core::result::{Measurement, RunResult};
use perfbase_core::study::{ScenarioStudy, Study};

/// The plan a result is a run of (empty without a study): stored with it, so runs are listed
/// by plan without reading their results.
pub(crate) fn plan_of(result: &RunResult) -> String {
    result
        .study
        .as_ref()
        .map(|s| s.plan.clone())
        .unwrap_or_default()
}

/// One figure of one repetition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewPoint {
    pub plan: String,
    pub scenario: String,
    /// Empty for a scenario-wide figure (knee, operating point).
    pub step: String,
    pub metric: &'static str,
    /// 1-based; 0 for a scenario-wide figure.
    pub repetition: i64,
    pub value: f64,
}

/// The figures of a result: p50, p99, rps and error_rate of every kept repetition of every
/// step (runs a warm-up check dropped are left out), and each scenario's knee and operating
/// point as throughputs. A result without a study (written by hand or by another tool) gives
/// its whole measurement as one repetition of a scenario named after its target; an agent's
/// segment (`--segment I/N`) gives none, since its merged run stands for the whole load.
pub(crate) fn points(result: &RunResult) -> Vec<NewPoint> {
    let mut out = Vec::new();
    // An agent's segment carries 1/N of the load: its merged run is the point of the trend.
    if result.segment.is_some() {
        return out;
    }
    let Some(study) = &result.study else {
        measurement(&mut out, ("", &result.target, ""), 1, &result.measurement);
        return out;
    };
    for phase in &result.phases {
        let (Some(name), Some(step), Some(rep)) = (&phase.scenario, phase.step, phase.repetition)
        else {
            continue;
        };
        let scenario = study.scenarios.iter().find(|s| &s.name == name);
        let step_name = scenario
            .and_then(|s| s.steps.get(step as usize))
            .map_or_else(|| step.to_string(), |s| s.name.clone());
        if scenario.is_some_and(|s| dropped_as_warmup(s, &step_name, rep)) {
            continue;
        }
        let key = (study.plan.as_str(), name.as_str(), step_name.as_str());
        measurement(&mut out, key, i64::from(rep), &phase.measurement);
    }
    for scenario in &study.scenarios {
        scenario_figures(&mut out, study, scenario);
    }
    out
}

fn dropped_as_warmup(scenario: &ScenarioStudy, step: &str, rep: u32) -> bool {
    scenario
        .repetition_stats
        .iter()
        .find(|r| r.step == step)
        .is_some_and(|r| (rep as usize) <= r.warmup_runs)
}

fn measurement(out: &mut Vec<NewPoint>, key: (&str, &str, &str), rep: i64, m: &Measurement) {
    let figures = [
        ("p50", m.latency_ms.p50),
        ("p99", m.latency_ms.p99),
        ("rps", m.rps),
        ("error_rate", 1.0 - m.success_ratio),
    ];
    for (metric, value) in figures {
        // An empty run has no latency: nothing to trend, rather than a NaN in the store.
        if value.is_finite() && m.requests > 0 {
            push(out, key, metric, rep, value);
        }
    }
}

fn scenario_figures(out: &mut Vec<NewPoint>, study: &Study, s: &ScenarioStudy) {
    let key = (study.plan.as_str(), s.name.as_str(), "");
    let knee = s
        .knee
        .as_ref()
        .and_then(|k| k.last_good)
        .and_then(|i| s.steps.get(i));
    if let Some(row) = knee {
        push(out, key, "knee", 0, row.achieved_rps);
    }
    if let Some(row) = s
        .operating_point
        .as_ref()
        .and_then(|o| s.steps.get(o.index))
    {
        push(out, key, "operating_point", 0, row.achieved_rps);
    }
}

fn push(
    out: &mut Vec<NewPoint>,
    key: (&str, &str, &str),
    metric: &'static str,
    rep: i64,
    value: f64,
) {
    if value.is_finite() {
        out.push(NewPoint {
            plan: key.0.to_string(),
            scenario: key.1.to_string(),
            step: key.2.to_string(),
            metric,
            repetition: rep,
            value,
        });
    }
}
