//! A plan's study judged afterwards on a result's phases, above all a merged run of agents
//! (`perfbase merge --plan`): the sweep rows, knees, SLO operating points, repetition
//! statistics, thresholds, checks, rankings and A-vs-B blocks come from the merged figures,
//! never from one agent's share.

use super::analyse::{self, StepRuns};
use crate::plan::Plan;
use perfbase_analysis::study::{CheckVerdict, Study};
use perfbase_core::merge::merge_measurements;
use perfbase_core::result::{Measurement, RunResult};

/// The study `plan` gives the phases of `r`, matched by scenario name and step.
pub fn study_of(plan: &Plan, r: &RunResult) -> Study {
    let scenarios = plan
        .scenarios
        .iter()
        .map(|s| {
            let steps = (0..s.steps.len())
                .map(|k| {
                    let runs: Vec<(usize, String, Measurement)> = r
                        .phases
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| {
                            p.scenario.as_deref() == Some(s.name.as_str())
                                && p.step == Some(k as u32)
                        })
                        .map(|(i, p)| (i, p.name.clone(), p.measurement.clone()))
                        .collect();
                    if runs.is_empty() {
                        return None;
                    }
                    let refs: Vec<&Measurement> = runs.iter().map(|(_, _, m)| m).collect();
                    let merged = merge_measurements(&refs);
                    Some(StepRuns { merged, runs })
                })
                .collect();
            analyse::judge(plan, s, steps)
        })
        .collect();
    let checks = plan
        .checks
        .iter()
        .filter_map(|c| {
            let phase = format!("check {}", c.name);
            let p = r
                .phases
                .iter()
                .find(|p| p.scenario.as_deref() == Some(phase.as_str()))?;
            let expect = c.expect.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            Some(CheckVerdict::judge(
                &c.name,
                c.requests,
                expect,
                p.measurement.status.clone(),
            ))
        })
        .collect();
    analyse::assemble(plan, scenarios, checks, &r.phases)
}
