//! perfbase-engine: turns a list of phases into timed operations against any
//! [`perfbase_core::Driver`], and the outcomes into merged [`perfbase_core::Recorder`]s.
//!
//! One phase = a [`Load`] (open: a [`Pacer`] says when op *n* should start; closed: N
//! connections each send the next op when the previous completes) × a stop condition
//! (duration and/or count) × the driver's sessions. Workers are threads with a
//! single-threaded tokio runtime each, their own recorder and their own connections: no lock,
//! channel or allocation per operation.
//!
//! The engine knows only the driver traits and the clock; it must not depend on any driver,
//! report or store crate.

mod closed;
mod context;
mod local;
mod message;
mod op;
mod open;
pub mod pacer;
mod phase;
mod progress;
mod runtime;
mod segment;
mod timer;
mod worker;

pub use pacer::Pacer;
pub use phase::{EngineError, Load, PhaseOutcome, PhaseSpec};
pub use progress::{Progress, ProgressSnapshot};
pub use runtime::{
    pacing_problem, run, EngineConfig, Observer, RunClock, DEFAULT_PACING, MAX_PACING, START_LEAD,
};
pub use segment::Segment;
