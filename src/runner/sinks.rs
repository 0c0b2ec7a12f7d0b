//! Where a run's figures go while it runs, besides the result file: the progress line,
//! `--jsonl`, the live Prometheus exports and the judge of `abort_on_fail`. Each is a [`Sink`]; the run holds them in one
//! list ([`Sinks`]) and tells each the same events as the engine hands them over, as
//! hyperfine's export manager tells its exporters.

use super::jsonl::Jsonl;
use super::StudyOptions;
use crate::exit::{bad_input, AppError};
use crate::exporting::Exporter;
use crate::progress::ProgressLine;
use perfbase_core::result::PhaseResult;
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

    /// The run is over.
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
        o: &StudyOptions,
        started: SystemTime,
    ) -> Result<(Sinks, Option<String>), AppError> {
        let mut list: Vec<Box<dyn Sink>> = vec![Box::new(ProgressLine::new(o.progress))];
        if let Some(aborts) = super::abort::Aborts::of(plan, o) {
            list.push(Box::new(aborts));
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
