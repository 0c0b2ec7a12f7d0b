//! Where a run's figures go while it runs, besides the result file: the progress line,
//! `--jsonl`, the live Prometheus exports, the judge of `abort_on_fail` and the live views
//! (`--tui`, `--dashboard`). Each is a [`Sink`]; the run holds them in one
//! list ([`Sinks`]) and tells each the same events as the engine hands them over, as
//! hyperfine's export manager tells its exporters.

use super::jsonl::Jsonl;
use super::RunOptions;
use crate::exit::{bad_input, AppError};
use crate::exporting::Exporter;
use crate::progress::ProgressLine;
use perfbase_core::result::{PhaseResult, RunResult};
use perfbase_core::Recorder;
use perfbase_engine::{Observer, PhaseOutcome, PhaseSpec, ProgressSnapshot};
use std::time::{Duration, SystemTime};

/// One destination of a run's live figures. Each event has a default that ignores it.
pub(super) trait Sink {
    /// About once a second while a phase runs, in scenario `scenario`.
    fn tick(&mut self, scenario: &str, phase: &PhaseSpec, elapsed: Duration, p: ProgressSnapshot) {
        let _ = (scenario, phase, elapsed, p);
    }

    /// A copy of a phase's recorder so far (only when a sink asked for live recorders),
    /// with the requests in flight at the last tick.
    fn live(&mut self, scenario: &str, phase: &PhaseSpec, so_far: &Recorder, at: (Duration, u64)) {
        let _ = (scenario, phase, so_far, at);
    }

    /// A phase ended; `saved` is its result when it was measured.
    fn phase_done(&mut self, scenario: &str, phase: &PhaseOutcome, saved: Option<&PhaseResult>) {
        let _ = (scenario, phase, saved);
    }

    /// The monitor runs: its newest samples can be read from now on.
    fn watch(&mut self, monitor: &perfbase_monitor::LatestSamples) {
        let _ = monitor;
    }

    /// The run's result is made; the reports follow.
    fn ended(&mut self, result: &RunResult) {
        let _ = result;
    }

    /// The run is over, its reports written.
    fn finish(self: Box<Self>) {}
}

/// Every sink of a run, told the same events in order.
pub(super) struct Sinks {
    list: Vec<Box<dyn Sink>>,
    /// Requests in flight at the last tick, for the live exports.
    in_flight: u64,
}

impl Sinks {
    /// The sinks `o` asks for, opened before any load (a file that cannot be written stops
    /// the run then), and the live exports' run id when there are any.
    pub fn open(
        plan: &crate::plan::Plan,
        o: &RunOptions,
        started: SystemTime,
    ) -> Result<(Sinks, Option<String>), AppError> {
        let tui = o
            .live
            .tui_on(!o.progress, crate::plan::planned_duration(plan));
        let mut list: Vec<Box<dyn Sink>> = vec![Box::new(ProgressLine::new(o.progress && !tui))];
        if let Some(l) = crate::live::Live::start(plan, tui, o.live.dashboard)? {
            list.push(Box::new(l));
        }
        match super::abort::Aborts::of(plan, o) {
            // The judge publishes this agent's figures each second; without it, they are
            // published for a dashboard that follows the run (`perfbase merge --dashboard`).
            Some(aborts) => list.push(Box::new(aborts)),
            None => {
                if let Some(agents) = super::abort::agents(o) {
                    list.push(Box::new(agents));
                }
            }
        }
        if let Some(path) = &o.jsonl {
            let jsonl = Jsonl::open(path)
                .map_err(|e| bad_input(format!("--jsonl {}: cannot write: {e}", path.display())))?;
            list.push(Box::new(jsonl));
        }
        let exporter = crate::exporting::start(&o.metrics, crate::exporting::new_run_id(started))?;
        let run_id = exporter.as_ref().map(|e| e.run_id().to_string());
        if let Some(e) = exporter {
            list.push(Box::new(e));
        }
        Ok((Sinks { list, in_flight: 0 }, run_id))
    }

    pub fn tick(
        &mut self,
        scenario: &str,
        phase: &PhaseSpec,
        elapsed: Duration,
        p: ProgressSnapshot,
    ) {
        self.in_flight = p.in_flight;
        for s in &mut self.list {
            s.tick(scenario, phase, elapsed, p);
        }
    }

    pub fn live(
        &mut self,
        scenario: &str,
        phase: &PhaseSpec,
        elapsed: Duration,
        so_far: &Recorder,
    ) {
        for s in &mut self.list {
            s.live(scenario, phase, so_far, (elapsed, self.in_flight));
        }
    }

    pub fn phase_done(
        &mut self,
        scenario: &str,
        phase: &PhaseOutcome,
        saved: Option<&PhaseResult>,
    ) {
        for s in &mut self.list {
            s.phase_done(scenario, phase, saved);
        }
    }

    /// The monitor's newest samples, for the live views.
    pub fn watch(&mut self, monitor: perfbase_monitor::LatestSamples) {
        for s in &mut self.list {
            s.watch(&monitor);
        }
    }

    pub fn ended(&mut self, result: &RunResult) {
        for s in &mut self.list {
            s.ended(result);
        }
    }

    /// Tells every sink the run is over (the exports' last push and scrape).
    pub fn finish(&mut self) {
        for s in self.list.drain(..) {
            s.finish();
        }
    }
}

impl Sink for ProgressLine {
    fn tick(&mut self, _: &str, phase: &PhaseSpec, elapsed: Duration, p: ProgressSnapshot) {
        Observer::tick(self, phase, elapsed, p);
    }

    fn phase_done(&mut self, _: &str, phase: &PhaseOutcome, _: Option<&PhaseResult>) {
        Observer::phase_done(self, phase);
    }
}

impl Sink for super::abort::Aborts {
    fn live(&mut self, scenario: &str, phase: &PhaseSpec, so_far: &Recorder, at: (Duration, u64)) {
        self.judge(scenario, phase, so_far, at);
    }
}

/// An agent's step so far, published in the store each second.
impl Sink for super::abort::Agents {
    fn live(&mut self, _: &str, phase: &PhaseSpec, so_far: &Recorder, at: (Duration, u64)) {
        if phase.record {
            let own = perfbase_core::result::Measurement::from_recorder(so_far, at.0, None);
            static WARNED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if let Err(e) = self.publish(&phase.name, &own) {
                if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    errln!("perfbase: warning: cannot publish this agent's live figures: {e}");
                }
            }
        }
    }
}

impl Sink for Jsonl {
    fn tick(&mut self, scenario: &str, phase: &PhaseSpec, elapsed: Duration, p: ProgressSnapshot) {
        self.second(scenario, phase, elapsed, p);
    }

    fn phase_done(&mut self, _: &str, phase: &PhaseOutcome, saved: Option<&PhaseResult>) {
        self.phase(&phase.spec, saved);
    }
}

impl Sink for Exporter {
    /// Measured phases only: a warm-up's figures are not the service's.
    fn live(&mut self, scenario: &str, phase: &PhaseSpec, so_far: &Recorder, at: (Duration, u64)) {
        if phase.record {
            self.update(scenario, phase, so_far, at.0, at.1);
        }
    }

    fn phase_done(&mut self, scenario: &str, phase: &PhaseOutcome, saved: Option<&PhaseResult>) {
        if saved.is_some() {
            self.update(scenario, &phase.spec, &phase.recorder, phase.elapsed, 0);
        }
    }

    fn finish(self: Box<Self>) {
        Exporter::finish(*self);
    }
}

impl Sink for crate::live::Live {
    fn live(&mut self, scenario: &str, phase: &PhaseSpec, so_far: &Recorder, at: (Duration, u64)) {
        self.second(scenario, phase, so_far, at.0);
    }

    fn phase_done(&mut self, scenario: &str, phase: &PhaseOutcome, saved: Option<&PhaseResult>) {
        crate::live::Live::phase_done(self, scenario, phase, saved);
    }

    fn watch(&mut self, monitor: &perfbase_monitor::LatestSamples) {
        crate::live::Live::watch(self, monitor.clone());
    }

    fn ended(&mut self, result: &RunResult) {
        crate::live::Live::ended(self, result);
    }

    fn finish(self: Box<Self>) {
        crate::live::Live::finish(*self);
    }
}
