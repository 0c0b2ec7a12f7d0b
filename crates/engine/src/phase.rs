//! What a phase is and what it yields: the [`Load`] shape, the [`PhaseSpec`] the caller asks
//! for, the merged [`PhaseOutcome`], and the [`EngineError`] when the engine cannot run at all.
//! Plain data shared by the coordinator and the workers; it imports no other engine file but
//! the pacer.

use crate::pacer::Pacer;
use perfbase_core::Recorder;
use std::time::{Duration, SystemTime};
use thiserror::Error;

/// The shape of the load in one phase.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// Closed model: `connections` sessions, each starting its next op when the last completes.
    Closed { connections: u64 },
    /// Open model: ops start when the pacer says, on at most `max_inflight` sessions.
    Open { pacer: Pacer, max_inflight: u64 },
    /// No load for the phase's duration (a cool-down between steps); sessions stay open.
    Idle,
}

impl Load {
    /// The most sessions this load can use at once.
    pub fn sessions(&self) -> u64 {
        match self {
            Load::Closed { connections } => *connections,
            Load::Open { max_inflight, .. } => *max_inflight,
            Load::Idle => 1,
        }
    }

    /// How many workers can take part: a worker needs at least one session.
    pub fn active_workers(&self, threads: usize) -> usize {
        (threads as u64).min(self.sessions()).max(1) as usize
    }
}

/// One phase: a load, stopped by whichever of duration and count comes first.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSpec {
    pub name: String,
    pub load: Load,
    pub duration: Option<Duration>,
    pub count: Option<u64>,
    /// False for warm-up: run the load, discard the measurements.
    pub record: bool,
}

/// What a phase measured, merged over all workers.
#[derive(Debug)]
pub struct PhaseOutcome {
    pub index: usize,
    pub spec: PhaseSpec,
    pub recorder: Recorder,
    /// Wall-clock time of the phase start (a label only).
    pub started_at: SystemTime,
    /// From the phase start until the last operation finished (or, if ops in flight were
    /// aborted, until the cut-off).
    pub elapsed: Duration,
    /// Open model: the send window the achieved rate is computed over.
    pub window: Duration,
    pub interrupted: bool,
    /// The share of the schedule this process ran.
    pub segment: crate::Segment,
}

impl PhaseOutcome {
    /// The measured block of this phase (open-model bookkeeping included).
    pub fn measurement(&self) -> perfbase_core::result::Measurement {
        let open = match self.spec.load {
            Load::Open {
                pacer,
                max_inflight,
            } => Some((
                // A segment's requested rate is its share of the schedule's.
                pacer.mean_rate() / f64::from(self.segment.count.max(1)),
                self.window,
                max_inflight,
            )),
            _ => None,
        };
        let mut m =
            perfbase_core::result::Measurement::from_recorder(&self.recorder, self.elapsed, open);
        if matches!(self.spec.load, Load::Closed { .. }) {
            m.coordinated_omission = perfbase_core::result::CoEstimate::of(&self.recorder.response);
        }
        m
    }
}

/// Why the engine could not run at all.
#[derive(Debug, Error)]
pub enum EngineError {
    /// The OS refused a thread, runtime or timer; lower `--threads` or check ulimits.
    #[error(
        "could not start worker {worker}: {source} (try fewer --threads, or raise `ulimit -n`)"
    )]
    Start {
        worker: usize,
        #[source]
        source: std::io::Error,
    },
    /// A worker thread ended without reporting; this is a bug in perfbase.
    #[error("worker {0} stopped unexpectedly; please report this as a perfbase bug")]
    WorkerLost(usize),
}
