//! The live progress line on a terminal: elapsed, requests/s, errors and the phase's p99 so
//! far, rewritten in place about once a second.

use perfbase_engine::{Observer, PhaseOutcome, PhaseSpec};
use std::io::Write;
use std::time::Duration;

pub(crate) struct ProgressLine {
    pub(crate) enabled: bool,
    rate: RateMeter,
}

impl ProgressLine {
    pub(crate) fn new(enabled: bool) -> Self {
        ProgressLine {
            enabled,
            rate: RateMeter::default(),
        }
    }
}

/// Completions per second since the last reading of a phase's running count.
#[derive(Default)]
pub(crate) struct RateMeter {
    last: (Duration, u64),
}

impl RateMeter {
    pub(crate) fn rate(&mut self, elapsed: Duration, completed: u64) -> f64 {
        let (t0, n0) = std::mem::replace(&mut self.last, (elapsed, completed));
        let dt = elapsed.saturating_sub(t0).as_secs_f64();
        if dt > 0.0 && completed >= n0 {
            (completed - n0) as f64 / dt
        } else {
            0.0
        }
    }

    /// A new phase starts counting from zero.
    pub(crate) fn reset(&mut self) {
        self.last = (Duration::ZERO, 0);
    }
}

impl Observer for ProgressLine {
    fn tick(&mut self, phase: &PhaseSpec, elapsed: Duration, p: perfbase_engine::ProgressSnapshot) {
        if !self.enabled {
            return;
        }
        let rate = self.rate.rate(elapsed, p.completed);
        let total = phase
            .duration
            .map(|d| format!("/{}", perfbase_core::units::format_duration(d)))
            .unwrap_or_default();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K  [{}] {:.0}s{total}  {} requests  {:.0} req/s  errors {}  p99 {:.2} ms",
            phase.name,
            elapsed.as_secs_f64(),
            perfbase_report::thousands(p.completed),
            rate,
            perfbase_report::thousands(p.errors),
            p.p99_ms
        );
        let _ = err.flush();
    }

    fn phase_done(&mut self, _phase: &PhaseOutcome) {
        self.rate.reset();
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
