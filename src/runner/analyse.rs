//! A scenario's findings from its measured phases: the sweep rows (one per step, repetitions
//! merged), the knee and the SLO operating point of ladders, repetition statistics and
//! threshold verdicts.

use super::Slot;
use crate::plan::{Plan, Scenario};
use perfbase_analysis::knee::find_knee;
use perfbase_analysis::slo::operating_point_with;
use perfbase_analysis::study::{repetition_stats, PhaseVerdict, ScenarioStudy};
use perfbase_analysis::sweep::step_row;
use perfbase_core::result::Measurement;
use perfbase_core::study::{Knee, OperatingPoint, StepRow};
use perfbase_core::Recorder;
use perfbase_engine::{Load, PhaseOutcome};
use std::time::Duration;

/// Merges the outcomes of one step (its repetitions) into one measurement.
fn merged(outs: &[&PhaseOutcome]) -> Measurement {
    let open = outs
        .iter()
        .any(|o| matches!(o.spec.load, Load::Open { .. }));
    let mut rec = Recorder::new(open);
    let (mut elapsed, mut window) = (Duration::ZERO, Duration::ZERO);
    for o in outs {
        rec.merge(&o.recorder);
        elapsed += o.elapsed;
        window += o.window;
    }
    rec.finish();
    let info = outs.first().and_then(|o| match o.spec.load {
        Load::Open {
            pacer,
            max_inflight,
        } => Some((pacer.mean_rate(), window, max_inflight)),
        _ => None,
    });
    Measurement::from_recorder(&rec, elapsed, info)
}

/// The study of scenario `s` from the engine's `outcomes` (placed by `slots`).
pub(super) fn analyse(
    plan: &Plan,
    s: &Scenario,
    outcomes: &[PhaseOutcome],
    slots: &[Option<Slot>],
) -> ScenarioStudy {
    let measured: Vec<(Slot, &PhaseOutcome)> = outcomes
        .iter()
        .filter_map(|o| slots.get(o.index).copied().flatten().map(|slot| (slot, o)))
        .collect();
    let steps = (0..s.steps.len())
        .map(|k| {
            let outs: Vec<&PhaseOutcome> = measured
                .iter()
                .filter(|(sl, _)| sl.step == k)
                .map(|(_, o)| *o)
                .collect();
            // Interrupted before this step: nothing.
            (!outs.is_empty()).then(|| StepRuns {
                merged: merged(&outs),
                runs: outs
                    .iter()
                    .map(|o| (o.index, o.spec.name.clone(), o.measurement()))
                    .collect(),
            })
        })
        .collect();
    judge(plan, s, steps)
}

/// One step's measured phases: each repetition (its place in the run's order, its phase name
/// and figures) and all of them merged exactly.
pub(super) struct StepRuns {
    pub merged: Measurement,
    pub runs: Vec<(usize, String, Measurement)>,
}

/// A scenario's findings from its steps' runs (`None`: the step never ran): the sweep rows,
/// the knee and SLO operating point of a ladder, repetition statistics and thresholds. The
/// same for a run as it happens and for a merged run of agents judged afterwards.
pub(super) fn judge(plan: &Plan, s: &Scenario, steps: Vec<Option<StepRuns>>) -> ScenarioStudy {
    let mut rows = Vec::new();
    let mut merged_steps = Vec::new();
    let mut repetition = Vec::new();
    let mut phases: Vec<(usize, String, Measurement)> = Vec::new();
    // A precision target decides the count as the run goes: the most any step took.
    let mut runs_taken = 0;
    for (step, runs) in s.steps.iter().zip(steps) {
        let Some(mut runs) = runs else { continue };
        runs_taken = runs_taken.max(runs.runs.len() as u32);
        if runs.runs.len() > 1 {
            let refs: Vec<&Measurement> = runs.runs.iter().map(|(_, _, m)| m).collect();
            let stats = repetition_stats(&step.name, &refs);
            // A cold start left out of the statistics is left out of the step's row too.
            if let Some(cold) = stats.as_ref().map(|r| r.warmup_runs).filter(|&c| c > 0) {
                runs.merged = perfbase_core::merge::merge_measurements(&refs[cold..]);
            }
            repetition.extend(stats);
        }
        rows.push(step_row(
            &step.name,
            step.offered,
            &runs.merged,
            &plan.buckets_ms,
        ));
        merged_steps.push(runs.merged);
        phases.extend(runs.runs);
    }
    let (knee, operating_point) = knee_and_point(plan, s, &rows, &merged_steps);
    let thresholds = phase_verdicts(plan, s, phases);
    let w = &plan.workloads[&s.workload];
    ScenarioStudy {
        name: s.name.clone(),
        kind: s.kind.name().into(),
        workload: s.workload.clone(),
        target: w.label.clone(),
        repetitions: runs_taken.max(1),
        passed: thresholds.iter().all(|t| t.verdict.passed),
        steps: rows,
        knee,
        operating_point,
        repetition_stats: repetition,
        precision_target: s.precision,
        thresholds,
    }
}

/// A ladder's knee and, with an SLO, its operating point; neither for other scenarios.
fn knee_and_point(
    plan: &Plan,
    s: &Scenario,
    rows: &[StepRow],
    merged_steps: &[Measurement],
) -> (Option<Knee>, Option<OperatingPoint>) {
    if !s.kind.is_ladder() {
        return (None, None);
    }
    let knee = find_knee(rows, &plan.knee);
    if plan.slo.is_empty() {
        return (Some(knee), None);
    }
    // Steps past the knee are not candidates, even where they still meet the SLO (a
    // saturated closed ladder can keep p99 under a loose SLO while adding nothing). The knee
    // step itself is: when it is the only one within the SLO, that is the answer (with no
    // headroom), not "no step meets the SLO".
    let usable = knee.first_bad.map_or(rows.len(), |b| b + 1);
    let refs: Vec<&Measurement> = merged_steps[..usable].iter().collect();
    let op =
        operating_point_with(&rows[..usable], &refs, &plan.slo, &knee, &plan.knee).map(|mut op| {
            // Headroom is measured to the knee's step, which the truncated rows no longer hold.
            op.headroom = knee
                .first_bad
                .map(|b| rows[b].offered.amount() / op.offered.amount() - 1.0);
            op
        });
    (Some(knee), op)
}

/// Every measured phase judged on the scenario's thresholds (and the plan's, for scenarios
/// that are not ladders), in the order the phases ran.
fn phase_verdicts(
    plan: &Plan,
    s: &Scenario,
    mut phases: Vec<(usize, String, Measurement)>,
) -> Vec<PhaseVerdict> {
    let mut gates = s.thresholds.clone();
    if !s.kind.is_ladder() {
        gates.extend(plan.thresholds.iter().cloned());
    }
    // A suite's repetitions run its operations in turn.
    phases.sort_by_key(|(order, _, _)| *order);
    phases
        .iter()
        .flat_map(|(_, name, m)| {
            gates.iter().map(|t| PhaseVerdict {
                phase: name.clone(),
                verdict: t.check(m),
            })
        })
        .collect()
}

/// A ranking of the plan: each named scenario's steps (repetitions merged, exactly), labelled
/// by the scenario, and by its step when it has several.
pub(super) fn ranking(
    r: &crate::plan::RankingSpec,
    phases: &[perfbase_core::result::PhaseResult],
) -> perfbase_analysis::study::Ranking {
    let mut entries: Vec<(String, Measurement)> = Vec::new();
    for name in &r.scenarios {
        let mine: Vec<&perfbase_core::result::PhaseResult> = phases
            .iter()
            .filter(|p| p.scenario.as_deref() == Some(name.as_str()) && p.step.is_some())
            .collect();
        // Each step once, in step order: its repetitions are merged below.
        let mut steps: Vec<u32> = mine.iter().filter_map(|p| p.step).collect();
        steps.sort_unstable();
        steps.dedup();
        for step in &steps {
            let parts: Vec<&Measurement> = mine
                .iter()
                .filter(|p| p.step == Some(*step))
                .map(|p| &p.measurement)
                .collect();
            let label = match (steps.len(), mine.iter().find(|p| p.step == Some(*step))) {
                (1, _) | (_, None) => name.clone(),
                (_, Some(p)) => p
                    .name
                    .rsplit_once(" #")
                    .map_or(p.name.clone(), |(n, _)| n.into()),
            };
            entries.push((label, perfbase_core::merge::merge_measurements(&parts)));
        }
    }
    let refs: Vec<(String, &Measurement)> = entries.iter().map(|(l, m)| (l.clone(), m)).collect();
    perfbase_analysis::study::Ranking {
        name: r.name.clone(),
        by: r.by.name().to_string(),
        scenarios: r.scenarios.clone(),
        rows: perfbase_analysis::versus::runs::rank_by(&refs, r.by),
    }
}

/// An A-vs-B of the plan: per step the two scenarios share (matched by position), each run's
/// mean, p99, max and min latency, compared by [`perfbase_analysis::versus`].
pub(super) fn versus(
    v: &crate::plan::VersusSpec,
    phases: &[perfbase_core::result::PhaseResult],
) -> perfbase_analysis::versus::Versus {
    // Per step of the scenario, in order: its name and each repetition's figures.
    let runs = |scenario: &str| {
        let mut steps: Vec<(u32, String, Vec<[f64; 4]>)> = Vec::new();
        for p in phases
            .iter()
            .filter(|p| p.scenario.as_deref() == Some(scenario))
        {
            let Some(step) = p.step else { continue };
            let l = &p.measurement.latency_ms;
            let figures = [l.mean, l.p99, l.max, l.min];
            match steps.iter_mut().find(|(s, _, _)| *s == step) {
                Some((_, _, r)) => r.push(figures),
                None => {
                    // Phases are `SCENARIO STEP #REPETITION`: the block is named by the step.
                    let name = p.name.rsplit_once(" #").map_or(p.name.as_str(), |(n, _)| n);
                    let name = name
                        .strip_prefix(scenario)
                        .map(str::trim_start)
                        .filter(|n| !n.is_empty())
                        .unwrap_or(name);
                    steps.push((step, name.to_string(), vec![figures]));
                }
            }
        }
        steps
    };
    let (a, b) = (runs(&v.a), runs(&v.b));
    // Steps of the same name face each other (a cluster's five commands against the same
    // five of a single node's thirteen); scenarios with no step name in common, by position.
    let named = a.iter().any(|(_, n, _)| b.iter().any(|(_, m, _)| m == n));
    type Runs = Vec<[f64; 4]>;
    let pairs: Vec<(String, Runs, Runs)> = if named {
        a.into_iter()
            .filter_map(|(_, name, ra)| {
                let rb = b.iter().find(|(_, m, _)| *m == name)?.2.clone();
                Some((name, ra, rb))
            })
            .collect()
    } else {
        a.into_iter()
            .zip(b)
            .map(|((_, name, ra), (_, _, rb))| (name, ra, rb))
            .collect()
    };
    let steps = pairs
        .into_iter()
        .filter_map(|(name, ra, rb)| {
            perfbase_analysis::versus::versus_step(&name, &v.b_label, ra, rb)
        })
        .collect();
    perfbase_analysis::versus::Versus {
        name: v.name.clone(),
        a: v.a.clone(),
        b: v.b.clone(),
        a_label: v.a_label.clone(),
        b_label: v.b_label.clone(),
        steps,
    }
}

/// The plan's whole study from its scenarios' and checks' verdicts: pass or fail, and the
/// rankings and A-vs-B comparisons over the measured `phases`.
pub(super) fn assemble(
    plan: &Plan,
    scenarios: Vec<ScenarioStudy>,
    checks: Vec<perfbase_analysis::study::CheckVerdict>,
    phases: &[perfbase_core::result::PhaseResult],
) -> perfbase_analysis::study::Study {
    let passed = scenarios.iter().all(|s| s.passed) && checks.iter().all(|c| c.passed);
    perfbase_analysis::study::Study {
        plan: plan.name.clone(),
        scale: plan.scale,
        slo: plan.slo.iter().map(|t| t.text.clone()).collect(),
        knee_rule: plan.knee,
        scenarios,
        checks,
        passed,
        rankings: plan.rankings.iter().map(|r| ranking(r, phases)).collect(),
        versus: plan.versus.iter().map(|v| versus(v, phases)).collect(),
        interleaved: Vec::new(),
        noise: None,
    }
}
