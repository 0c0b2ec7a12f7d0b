//! perfbase-core: the small, stable interface crate at the root of the dependency graph.
//!
//! It holds what every other crate agrees on: the [`Outcome`] of one operation and its
//! [`Class`], the [`Driver`]/[`Session`] traits that protocols implement, the [`Recorder`]
//! that turns timed outcomes into HDR histograms and counters, unit parsing
//! (`250ms`, `2k/s`), secret redaction, and the `perfbase.result/v1` schema types — including
//! the data of its `study` and `monitor` sections ([`study`], [`monitor`]), whose undefined
//! figures go through the one NaN serde adapter, [`nan`].
//!
//! It must not depend on tokio or on any other perfbase crate: drivers, the engine and the
//! reports all meet here, so it stays free of runtimes and I/O.

pub mod availability;
pub mod clock;
pub mod closing;
pub mod conditions;
pub mod driver;
mod endpoint;
mod histogram;
pub mod host;
pub mod iteration;
pub mod latency;
pub mod merge;
pub mod metric;
pub mod monitor;
pub mod nan;
pub mod omission;
pub mod outage;
pub mod outcome;
pub mod percent;
pub mod phase;
pub mod recorder;
pub mod redact;
pub mod result;
pub mod run_outcome;
pub mod stream;
pub mod study;
mod tally;
pub mod timeline;
pub mod timing;
pub mod trend;
pub mod units;
pub mod versus;

pub use driver::{Driver, Session, Then};
pub use outcome::{CheckBits, Class, ConnUse, Outcome, Timing, MAX_CHECKS};
pub use recorder::Recorder;
