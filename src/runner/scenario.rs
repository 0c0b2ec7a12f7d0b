//! One scenario through the engine: its phases (warm-up, steps × repetitions, cool-downs),
//! the engine runs they make (one per consecutive workload: a suite's operations), each
//! measured phase saved as soon as it ends and told to the run's sinks; and the checks, each
//! one engine run of exact status counts.

use super::analyse;
use super::result::Progressive;
use super::{RunOptions, Slot};
use crate::backend::Side;
use crate::exit::AppError;
use crate::monitoring::Labelled;
use crate::plan::{Check, Plan, Scenario};
use perfbase_analysis::study::{CheckVerdict, ScenarioStudy};
use perfbase_core::phase::PhaseKind;
use perfbase_engine::{EngineConfig, Load, Observer, PhaseOutcome, PhaseSpec, RunClock};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Hands each event of an engine run to the run's state: a measured phase is added to the
/// result and saved at once, then every sink is told.
struct Saver<'a, 'b> {
    state: &'b mut Progressive<'a>,
    scenario: (usize, String),
    slots: Vec<Option<Slot>>,
    /// The first failure to save, which stops the run once the engine returns.
    error: Option<anyhow::Error>,
    /// The scenario's faults, and those of the measured phase running now.
    faults: &'b [crate::plan::Fault],
    armed: Option<super::faults::Armed>,
}

impl<'a, 'b> Saver<'a, 'b> {
    fn new(
        state: &'b mut Progressive<'a>,
        scenario: (usize, String),
        slots: Vec<Option<Slot>>,
        faults: &'b [crate::plan::Fault],
    ) -> Self {
        Saver {
            state,
            scenario,
            slots,
            error: None,
            faults,
            armed: None,
        }
    }
}

impl Observer for Saver<'_, '_> {
    fn phase_started(&mut self, phase: &PhaseSpec) {
        if phase.record {
            self.armed = super::faults::arm(self.faults);
        }
    }

    fn tick(&mut self, phase: &PhaseSpec, elapsed: Duration, p: perfbase_engine::ProgressSnapshot) {
        self.state.sinks.tick(&self.scenario.1, phase, elapsed, p);
    }

    fn live(&mut self, phase: &PhaseSpec, elapsed: Duration, so_far: &perfbase_core::Recorder) {
        self.state
            .sinks
            .live(&self.scenario.1, phase, elapsed, so_far);
    }

    fn phase_done(&mut self, phase: &PhaseOutcome) {
        if !phase.spec.record {
            self.state.sinks.phase_done(&self.scenario.1, phase, None);
            return;
        }
        let slot = self.slots.get(phase.index).copied().flatten();
        self.state
            .add((self.scenario.0, &self.scenario.1), slot, phase);
        if let Some(armed) = self.armed.take() {
            let offset = phase
                .recorder
                .timeline
                .span()
                .map_or(Duration::ZERO, |s| s.0);
            if let Some(p) = self.state.phases.last_mut() {
                p.faults = armed.finish(offset);
            }
        }
        let state = &mut *self.state;
        state
            .sinks
            .phase_done(&self.scenario.1, phase, state.phases.last());
        if let Err(e) = self.state.save_progress() {
            self.error.get_or_insert(e);
        }
    }
}

/// One scenario as it runs: a repetition at a time (each step once, in order), so that a
/// precision target can decide when to stop and interleaved scenarios can take turns. The
/// workload's set-up runs once, on the first repetition; later ones run on what it made.
pub(super) struct ScenarioRun<'p> {
    k: usize,
    s: &'p Scenario,
    /// Every phase run so far, and where each measured one sits.
    slots: Vec<Option<Slot>>,
    outcomes: Vec<PhaseOutcome>,
    side: Side,
    set_up: std::collections::HashSet<String>,
    /// Repetitions run so far.
    pub(super) done: u32,
    /// Measured time so far, for `max_time`.
    measured: Duration,
    /// Per step, the duration its next runs take when a precision target lengthened them to
    /// the plan's minimum run; None: the step's own.
    lengths: Vec<Option<Duration>>,
}

impl<'p> ScenarioRun<'p> {
    pub(super) fn new(k: usize, s: &'p Scenario) -> Self {
        ScenarioRun {
            k,
            s,
            slots: Vec::new(),
            outcomes: Vec::new(),
            side: Side::default(),
            set_up: Default::default(),
            done: 0,
            measured: Duration::ZERO,
            lengths: vec![None; s.steps.len()],
        }
    }

    /// Runs the next repetition (the warm-up first, before the first one), saving each
    /// measured phase as it ends.
    pub(super) fn repetition(
        &mut self,
        o: &RunOptions,
        state: &mut Progressive<'_>,
        monitor: &perfbase_monitor::Monitor,
        interrupt: &Arc<AtomicBool>,
    ) -> Result<(), AppError> {
        let (plan, s) = (state.plan, self.s);
        let plain = !matches!(o.output, super::Output::Plan { .. });
        self.done += 1;
        let (specs, slots, workloads) = phases(s, plain, self.done, &self.lengths);
        let threads = threads_for(plan, o, s.steps.iter().map(|st| &st.load));
        let cfg = engine(plan, threads, &state.clock, o);
        let streams = plan.workloads[&s.workload].backend.streams();
        let offset = self.slots.len();
        self.slots.extend(slots.iter().copied());
        for run in runs_of(&workloads, &specs, streams) {
            if state.stopped(interrupt) {
                break;
            }
            let name = &workloads[run.start];
            let backend = &plan.workloads[name].backend;
            let backend = if self.set_up.insert(name.clone()) {
                backend.clone()
            } else {
                backend.clone().without_setup()
            };
            let mut observer = Labelled {
                monitor,
                inner: Saver::new(
                    state,
                    (self.k, s.name.clone()),
                    slots[run.clone()].to_vec(),
                    &s.faults,
                ),
            };
            let ran = backend.run(
                &context(plan, name),
                &cfg,
                &specs[run.clone()],
                interrupt.clone(),
                &mut observer,
            )?;
            if let Some(e) = observer.inner.error.take() {
                return Err(e.into());
            }
            // Each engine run counts its phases from 0; the scenario's slots count them all.
            for mut out in ran.outcomes {
                out.index += offset + run.start;
                if out.spec.record {
                    self.measured += out.elapsed;
                }
                self.outcomes.push(out);
            }
            for (k, v) in ran.extras {
                super::result::add_extra(
                    self.side.extras.entry(k).or_insert(serde_json::Value::Null),
                    v,
                );
            }
            // A stream's consumers, over every run of the scenario (merged exactly).
            self.side.consumed = match (self.side.consumed.take(), ran.consumed) {
                (Some(a), Some(b)) => Some(perfbase_core::merge::merge_measurements(&[&a, &b])),
                (a, b) => a.or(b),
            };
        }
        self.lengthen(plan.min_run);
        Ok(())
    }

    /// With a precision target, the next runs of a duration-bound step whose last run measured
    /// less than `min_run` (time, operations) are made long enough to reach it: as the
    /// operations it completed per second say, never shorter than the step's own duration and
    /// at most [`MAX_STRETCH`](crate::plan::MAX_STRETCH) times it. Steps bounded by a count
    /// keep it: a suite's deletes must remove exactly what its inserts added.
    fn lengthen(&mut self, (min_time, min_ops): (Duration, u64)) {
        if self.s.precision.is_none() {
            return;
        }
        for (k, step) in self.s.steps.iter().enumerate() {
            let (Some(own), None) = (step.duration, step.count) else {
                continue;
            };
            let Some(last) = self.measured_of(k).last() else {
                continue;
            };
            let ops = last.recorder.requests();
            let took = last.elapsed.as_secs_f64();
            // The time `min_ops` take at the last run's pace (no operation: as long as allowed).
            let for_ops = if ops > 0 {
                took * min_ops as f64 / ops as f64
            } else {
                f64::INFINITY
            };
            let want = min_time.as_secs_f64().max(for_ops);
            let most = own * crate::plan::MAX_STRETCH;
            let length =
                perfbase_core::units::saturating_secs(want.min(most.as_secs_f64())).max(own);
            self.lengths[k] = (length > own).then_some(length);
        }
    }

    /// Whether another repetition is wanted: fewer than the scenario's `repetitions` so far,
    /// or, with a precision target, a step whose intervals are still wider than it, while
    /// `max_repetitions` and `max_time` allow.
    pub(super) fn wants_more(&self, interrupted: bool) -> bool {
        let s = self.s;
        if interrupted || self.done >= s.max_repetitions {
            return false;
        }
        if self.done < s.repetitions {
            return true;
        }
        let Some(target) = s.precision else {
            return false;
        };
        if s.max_time.is_some_and(|t| self.measured >= t) {
            return false;
        }
        (0..s.steps.len()).any(|k| {
            let runs: Vec<perfbase_core::result::Measurement> =
                self.measured_of(k).map(|o| o.measurement()).collect();
            let refs: Vec<&perfbase_core::result::Measurement> = runs.iter().collect();
            !perfbase_analysis::study::repetition_stats(&s.steps[k].name, &refs)
                .is_some_and(|r| r.met(target))
        })
    }

    fn measured_of(&self, step: usize) -> impl Iterator<Item = &PhaseOutcome> {
        self.outcomes.iter().filter(move |o| {
            self.slots
                .get(o.index)
                .copied()
                .flatten()
                .is_some_and(|sl| sl.step == step)
        })
    }

    /// The scenario's findings; its side figures go to `state.sides`.
    pub(super) fn finish(self, state: &mut Progressive<'_>) -> ScenarioStudy {
        let study = analyse::analyse(state.plan, self.s, &self.outcomes, &self.slots);
        state.sides.insert(self.k, self.side);
        study
    }
}

/// Runs scenario `k` of the plan on its own: repetitions until [`ScenarioRun::wants_more`]
/// says enough.
pub(super) fn run_scenario(
    (k, s): (usize, &Scenario),
    o: &RunOptions,
    state: &mut Progressive<'_>,
    monitor: &perfbase_monitor::Monitor,
    interrupt: &Arc<AtomicBool>,
) -> Result<ScenarioStudy, AppError> {
    let mut run = ScenarioRun::new(k, s);
    while !state.stopped(interrupt) && run.wants_more(false) {
        run.repetition(o, state, monitor, interrupt)?;
    }
    Ok(run.finish(state))
}

/// The engine's phases of repetition `rep` of scenario `s`, where each measured one sits, and
/// the workload each runs. A command's phases keep the names its users know (`warmup`,
/// `measure`, the operation); a plan's name the scenario and step. A suite's steps run on
/// their own workloads, in order (so a repetition's deletes remove the rows its inserts
/// made, as one `perfbase pg -w suite` run does). The warm-up comes before the first
/// repetition; a cool-down before every other phase. A step runs for its `lengths` entry
/// when a precision target lengthened it.
fn phases(
    s: &Scenario,
    plain: bool,
    rep: u32,
    lengths: &[Option<Duration>],
) -> (Vec<PhaseSpec>, Vec<Option<Slot>>, Vec<String>) {
    let mut specs = Vec::new();
    let mut slots = Vec::new();
    let workload_of = |k: usize| s.steps[k].workload.clone().unwrap_or(s.workload.clone());
    let mut workloads = Vec::new();
    if let (Some(w), 1) = (s.warmup, rep) {
        specs.push(PhaseSpec {
            name: PhaseKind::Warmup.name((!plain).then_some(s.name.as_str())),
            load: s.steps[0].load.clone(),
            duration: Some(w),
            count: None,
            record: false,
        });
        slots.push(None);
        workloads.push(workload_of(0));
    }
    for (k, step) in s.steps.iter().enumerate() {
        if let (Some(c), false) = (s.cooldown, specs.is_empty() && rep == 1) {
            specs.push(PhaseSpec {
                name: PhaseKind::Cooldown.name(Some(&s.name)),
                load: Load::Idle,
                duration: Some(c),
                count: None,
                record: false,
            });
            slots.push(None);
            workloads.push(workload_of(k));
        }
        // With a precision target the count is open: name every run by its repetition.
        let name = if plain {
            step.name.clone()
        } else if s.max_repetitions > 1 {
            format!("{} {} #{rep}", s.name, step.name)
        } else if s.steps.len() > 1 {
            format!("{} {}", s.name, step.name)
        } else {
            s.name.clone()
        };
        specs.push(PhaseSpec {
            name,
            load: step.load.clone(),
            duration: lengths.get(k).copied().flatten().or(step.duration),
            count: step.count,
            record: true,
        });
        slots.push(Some(Slot {
            step: k,
            rep,
            offered: step.offered,
        }));
        workloads.push(workload_of(k));
    }
    (specs, slots, workloads)
}

/// Consecutive phases on the same workload, as index ranges: each is one engine run. With
/// `each_measured`, a run also ends after every measured phase: a stream's consumers start
/// and drain around each run, so each step and repetition gets its own.
fn runs_of(
    workloads: &[String],
    specs: &[PhaseSpec],
    each_measured: bool,
) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, w) in workloads.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if workloads[r.start] == *w && !(each_measured && specs[r.end - 1].record) => {
                r.end = i + 1
            }
            _ => runs.push(i..i + 1),
        }
    }
    runs
}

/// Worker threads for `loads`: as asked (`-t`, then the plan's `threads`, then the cores),
/// but no more than the most sessions any of them runs, since a worker needs one.
pub(super) fn threads_for<'l>(
    plan: &Plan,
    o: &RunOptions,
    loads: impl Iterator<Item = &'l Load>,
) -> usize {
    let asked = o
        .threads
        .or(plan.threads)
        .unwrap_or_else(crate::limits::cores);
    loads.map(|l| l.active_workers(asked)).max().unwrap_or(1)
}

fn engine(plan: &Plan, threads: usize, clock: &RunClock, o: &RunOptions) -> EngineConfig {
    EngineConfig {
        threads,
        timeout: plan.timeout,
        pacing: plan.pacing,
        clock: clock.clone(),
        // Live copies of the workers' recorders, once a second: for the live exports, for
        // abort_on_fail, judged on them, and for an agent's figures in the store.
        live: o.metrics.enabled()
            || o.live.enabled(o.progress, plan)
            || !o.segment.is_whole()
            || super::abort::is_agent(o)
            || plan.scenarios.iter().any(|s| !s.abort_on_fail.is_empty()),
        segment: o.segment,
    }
}

/// How errors about workload `name` start: the plan file and the workload, for plan files.
pub(super) fn context(plan: &Plan, name: &str) -> String {
    if plan.file.is_empty() {
        String::new()
    } else {
        format!("{}: workload '{name}': ", plan.file)
    }
}

/// A check: `requests` requests in order on its connections, judged by exact status counts.
pub(super) fn run_check(
    plan: &Plan,
    c: &Check,
    o: &RunOptions,
    state: &mut Progressive<'_>,
    monitor: &perfbase_monitor::Monitor,
    interrupt: Arc<AtomicBool>,
) -> Result<Option<CheckVerdict>, AppError> {
    let specs = vec![PhaseSpec {
        name: format!("check {}", c.name),
        load: Load::Closed {
            connections: c.connections,
        },
        duration: None,
        count: Some(c.requests),
        record: true,
    }];
    let cfg = engine(plan, 1, &state.clock, o);
    let scenario = (usize::MAX, format!("check {}", c.name));
    let mut observer = Labelled {
        monitor,
        inner: Saver::new(state, scenario, vec![None], &[]),
    };
    // One thread: requests in order, as a client hitting a rate limiter would send them.
    let ran = plan.workloads[&c.workload].backend.run(
        &context(plan, &c.workload),
        &cfg,
        &specs,
        interrupt,
        &mut observer,
    )?;
    if let Some(e) = observer.inner.error.take() {
        return Err(e.into());
    }
    Ok(ran
        .outcomes
        .first()
        .filter(|out| !out.interrupted)
        .map(|out| {
            let expect = c.expect.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            CheckVerdict::judge(&c.name, c.requests, expect, out.measurement().status)
        }))
}
