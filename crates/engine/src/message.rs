//! What crosses threads between the coordinator and a worker: the [`Setup`] a worker starts
//! with, the [`Command`] that starts each phase and the [`Report`] that answers it.

use crate::phase::{EngineError, PhaseSpec};
use crate::progress::Progress;
use perfbase_core::Recorder;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct Setup<D> {
    pub(crate) id: usize,
    pub(crate) driver: Arc<D>,
    pub(crate) timeout: Duration,
    pub(crate) pacing: Duration,
    pub(crate) interrupt: Arc<AtomicBool>,
    pub(crate) progress: Arc<Progress>,
    /// Publish a copy of the recorder once a second ([`crate::EngineConfig::live`]).
    pub(crate) live: bool,
    /// This process's share of every phase ([`crate::EngineConfig::segment`]).
    pub(crate) segment: crate::Segment,
}

pub(crate) struct Command {
    pub(crate) spec: PhaseSpec,
    pub(crate) start: Instant,
    /// Workers `0..active` take part; in the open model op n goes to worker n % active.
    pub(crate) active: usize,
    /// The closed model's next op number, shared by every worker: each connection claims the
    /// next one, so whatever the workers' speeds, the ops sent are 0..N and a mix's counts
    /// are exact over whole cycles. (With op n fixed to worker n % active, a worker saw only
    /// its residues of the mix: four equal targets over two threads went 10,455/37/10,454/37.)
    pub(crate) ops: Arc<AtomicU64>,
    /// Where the phase starts on the run's clock ([`crate::RunClock`]): timelines count
    /// seconds on that clock, so the phases of a run line up.
    pub(crate) offset: Duration,
}

pub(crate) struct WorkerReport {
    pub(crate) recorder: Recorder,
    pub(crate) end: Instant,
    pub(crate) last_dispatch: Option<Instant>,
}

pub(crate) type Report = Result<WorkerReport, EngineError>;
