//! The target monitor beside the load: started before any load (a selector that matches
//! nothing is bad input, exit 2), an idle baseline first, then one label per phase. perfbase's
//! own CPU and memory are always sampled, so every result says whether the generator itself
//! was the limit.

use crate::exit::{bad_input, AppError};
use perfbase_core::phase::PhaseKind;
use perfbase_engine::{Observer, PhaseOutcome, PhaseSpec, ProgressSnapshot};
use perfbase_monitor::{Monitor, MonitorConfig, MonitorReport, Selector};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The idle baseline taken before the load when targets are named and nothing says how long.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(3);

/// What to watch and how.
#[derive(Debug, Clone, Default)]
pub struct MonitorOptions {
    /// Selectors as written: `postgres`, `pid:1234`, `name:nginx`, `cmd:PATTERN`, `cgroup:PATH`.
    pub selectors: Vec<String>,
    /// Idle baseline before the load (only with selectors).
    pub idle: Duration,
    pub interval: Duration,
}

/// Starts the monitor and records the idle baseline; `interrupt` cuts the baseline short.
pub fn start(o: &MonitorOptions, interrupt: &AtomicBool) -> Result<Monitor, AppError> {
    let selectors = o
        .selectors
        .iter()
        .map(|s| s.parse::<Selector>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad_input(format!("--monitor: {e}")))?;
    let has_targets = !selectors.is_empty();
    let cfg = MonitorConfig {
        selectors,
        interval: o.interval,
    };
    let monitor = Monitor::start(cfg).map_err(|e| bad_input(format!("--monitor: {e}")))?;
    if has_targets && !o.idle.is_zero() {
        monitor.phase(&PhaseKind::Idle.name(None));
        let until = Instant::now() + o.idle;
        while Instant::now() < until && !interrupt.load(Ordering::Relaxed) {
            std::thread::sleep(
                Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())),
            );
        }
    }
    Ok(monitor)
}

/// Stops the monitor; its report, for the result.
pub fn finish(monitor: Monitor) -> MonitorReport {
    monitor.stop()
}

/// Wraps another observer and labels the monitor's samples with each phase.
pub struct Labelled<'m, O> {
    pub monitor: &'m Monitor,
    pub inner: O,
}

impl<O: Observer> Observer for Labelled<'_, O> {
    fn phase_started(&mut self, phase: &PhaseSpec) {
        self.monitor.phase(&phase.name);
        self.inner.phase_started(phase);
    }
    fn tick(&mut self, phase: &PhaseSpec, elapsed: Duration, p: ProgressSnapshot) {
        self.inner.tick(phase, elapsed, p);
    }
    fn live(&mut self, phase: &PhaseSpec, elapsed: Duration, so_far: &perfbase_core::Recorder) {
        self.inner.live(phase, elapsed, so_far);
    }
    fn phase_done(&mut self, phase: &PhaseOutcome) {
        self.inner.phase_done(phase);
    }
}

/// What the terminal shows: the per-service table when services were watched, and the
/// generator warning always.
pub fn render(report: &MonitorReport, with_targets: bool) -> String {
    if with_targets {
        perfbase_report::monitor::render_table(report)
    } else {
        report
            .warnings
            .iter()
            .map(|w| format!("  warning: {w}\n"))
            .collect()
    }
}
