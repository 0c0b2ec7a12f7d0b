//! What crosses threads between the coordinator and a worker: the [`Setup`] a worker starts
//! with, the [`Command`] that starts each phase and the [`Report`] that answers it.

use crate::phase::{EngineError, PhaseSpec};
use crate::progress::Progress;
use perfbase_core::Recorder;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) struct Setup<D> {
    pub(crate) id: usize,
    pub(crate) driver: Arc<D>,
    pub(crate) timeout: Duration,
    pub(crate) pacing: Duration,
    pub(crate) interrupt: Arc<AtomicBool>,
    pub(crate) progress: Arc<Progress>,
}

pub(crate) struct Command {
    pub(crate) spec: PhaseSpec,
    pub(crate) start: Instant,
    /// Workers `0..active` take part; op n goes to worker n % active.
    pub(crate) active: usize,
}

pub(crate) struct WorkerReport {
    pub(crate) recorder: Recorder,
    pub(crate) end: Instant,
    pub(crate) last_dispatch: Option<Instant>,
}

pub(crate) type Report = Result<WorkerReport, EngineError>;
