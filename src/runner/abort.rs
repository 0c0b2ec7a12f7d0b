//! `abort_on_fail` (k6's `abortOnFail` with its `delayAbortEval`): thresholds judged about once
//! a second on the measured step so far, that stop the run when one fails. An agent judges
//! the figures of all the run's agents merged, exactly (each publishes its step so far in the
//! store, histograms included, and reads the others'), and a failure stops every agent
//! through the store's stop request, which each agent's watcher reads (src/agent.rs).

use crate::plan::Plan;
use crate::store::StoreOptions;
use perfbase_analysis::threshold::Threshold;
use perfbase_core::result::Measurement;
use perfbase_core::Recorder;
use perfbase_engine::PhaseSpec;
use std::collections::BTreeMap;
use std::time::Duration;

/// The agents of one run, seen through the shared store.
pub(super) struct Agents {
    store: perfbase_store::Store,
    run: String,
    segment: String,
}

impl Agents {
    /// Publishes this agent's `own` figures of `phase` for the others and for a `perfbase
    /// merge --dashboard` that follows the run.
    pub(super) fn publish(&mut self, phase: &str, own: &Measurement) -> Result<(), String> {
        let text = serde_json::to_string(own).map_err(|e| e.to_string())?;
        self.store
            .publish_live(&self.run, &self.segment, phase, &text)
            .map_err(|e| e.to_string())
    }

    /// Publishes this agent's `own` figures of `phase` and returns every agent's merged, with
    /// how many agents they are.
    fn merged(&mut self, phase: &str, own: &Measurement) -> Result<(Measurement, usize), String> {
        self.publish(phase, own)?;
        let all = self
            .store
            .live(&self.run, phase)
            .map_err(|e| e.to_string())?;
        let parts: Vec<Measurement> = all
            .iter()
            .filter_map(|(_, json)| serde_json::from_str(json).ok())
            .collect();
        let n = parts.len();
        Ok((
            perfbase_core::merge::merge_concurrent(&parts.iter().collect::<Vec<_>>()),
            n,
        ))
    }
}

/// The sink that judges a plan's `abort_on_fail` thresholds on the live figures.
pub(super) struct Aborts {
    /// By scenario: its thresholds and how far into a step they start to be judged.
    rules: BTreeMap<String, (Vec<Threshold>, Duration)>,
    agents: Option<Agents>,
    fired: bool,
}

impl Aborts {
    /// The sink, when `plan` has abort_on_fail thresholds; for an agent (a segment saved
    /// under a run id), with its own connection to the store.
    pub fn of(plan: &Plan, o: &super::RunOptions) -> Option<Aborts> {
        let rules: BTreeMap<String, (Vec<Threshold>, Duration)> = plan
            .scenarios
            .iter()
            .filter(|s| !s.abort_on_fail.is_empty())
            .map(|s| {
                (
                    s.name.clone(),
                    (s.abort_on_fail.clone(), s.delay_abort_eval),
                )
            })
            .collect();
        if rules.is_empty() {
            return None;
        }
        Some(Aborts {
            rules,
            agents: agents(o),
            fired: false,
        })
    }
}

/// Whether this run is an agent's: its figures are published each second.
pub(super) fn is_agent(o: &super::RunOptions) -> bool {
    o.store
        .labels
        .iter()
        .any(|(k, _)| k == crate::store::RUN_LABEL)
}

/// The run id an agent saves under, and its store, when this run is an agent's (one of N, or
/// the only one: `--segment 0/1` is followed live by `perfbase ui` all the same).
pub(super) fn agents(o: &super::RunOptions) -> Option<Agents> {
    let run = o
        .store
        .labels
        .iter()
        .find(|(k, _)| k == crate::store::RUN_LABEL)?
        .1
        .clone();
    let store = open(&o.store)?;
    Some(Agents {
        store,
        run,
        segment: o.segment.to_string(),
    })
}

fn open(o: &StoreOptions) -> Option<perfbase_store::Store> {
    match crate::store::open(o) {
        Ok(s) => Some(s),
        Err(e) => {
            errln!("perfbase: warning: abort_on_fail judges this agent's figures alone: {e}");
            None
        }
    }
}

impl Aborts {
    /// Judges the rules of `scenario` on the step so far, `at.0` into it (told as a sink's
    /// `live`, about once a second); stops the run (and the other agents) when one fails.
    pub fn judge(
        &mut self,
        scenario: &str,
        phase: &PhaseSpec,
        so_far: &Recorder,
        at: (Duration, u64),
    ) {
        if self.fired || !phase.record {
            return;
        }
        let Some((rules, delay)) = self.rules.get(scenario) else {
            return;
        };
        let elapsed = at.0;
        let own = Measurement::from_recorder(so_far, elapsed, None);
        let (m, whose) = match &mut self.agents {
            Some(a) => match a.merged(&phase.name, &own) {
                Ok((m, n)) => (m, format!("the merged figures of {n} agent(s)")),
                Err(e) => {
                    errln!("perfbase: warning: abort_on_fail: the store: {e}; judging this agent's figures alone");
                    (own, "this agent's figures".to_string())
                }
            },
            None => (own, "the figures so far".to_string()),
        };
        if elapsed < *delay || m.requests == 0 {
            return;
        }
        let Some(failed) = rules.iter().map(|t| t.check(&m)).find(|v| !v.passed) else {
            return;
        };
        self.fired = true;
        let reason = format!(
            "abort_on_fail: '{}' failed on {whose} of step '{}' after {:.1} s (actual {})",
            failed.threshold,
            phase.name,
            elapsed.as_secs_f64(),
            perfbase_report::study_text::threshold_value(&failed.threshold, failed.actual)
                .unwrap_or_else(|| "nothing measured".into())
        );
        errln!("perfbase: {reason}");
        if let Some(a) = &mut self.agents {
            if let Err(e) = a.store.request_stop(&a.run, &reason) {
                errln!("perfbase: warning: cannot ask the other agents to stop: {e}");
            }
        }
        crate::interrupt::stop(reason);
    }
}
