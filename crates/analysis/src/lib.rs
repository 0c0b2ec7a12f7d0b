//! perfbase-analysis: pure analysis over measured results.
//!
//! This crate's job is to turn [`perfbase_core::result::Measurement`]s into plain structs with
//! verdicts, answering four questions:
//!
//! - where does a service saturate? ([`knee::find_knee`] over the rows of a rate or
//!   concurrency ladder built with [`sweep::step_row`]);
//! - what rate can it hold within its SLO? ([`slo::operating_point`], with SLOs written as
//!   [`threshold::Threshold`]s such as `p99 < 200ms`);
//! - how stable are repeated runs? ([`stats::describe`]: mean, sample variance, 95 % CI);
//! - is A different from B? ([`versus`]: one module for every A-vs-B question: Welch's
//!   unequal-variance t-test in [`versus::welch`](mod@versus::welch), stored runs and baselines compared in
//!   [`versus::runs`], a plan's `[[versus]]` over repetitions in `versus` itself).
//!
//! Everything here is a pure function of its inputs: no I/O, no clocks, no randomness.
//! The crate must not depend on tokio, on the drivers, the engine, the reports or the stores —
//! only on `perfbase-core` (for the result schema and unit parsing), serde, thiserror and
//! statrs (the t distribution behind confidence intervals and Welch's test).
//! Callers (the CLI, the reports) render the structs returned here; this crate never prints.
//! The structs that make up a result's `study` section (rows, knee, operating point,
//! summaries, verdicts, the study itself) are defined in `perfbase_core::study`, so any reader
//! of a result can type them, and re-exported here under the modules that compute them.
//!
//! Every formula carries a comment naming its source.

pub mod changepoint;
pub mod knee;
pub mod ranking;
pub mod slo;
pub mod stats;
pub mod study;
pub mod sweep;
pub mod threshold;
mod threshold_parse;
pub mod trend;
mod verdict;
pub mod versus;
pub mod warmup;

#[cfg(test)]
pub(crate) mod fixtures;

pub use knee::{find_knee, Knee, KneeRule};
pub use slo::{operating_point, operating_point_with, OperatingPoint};
pub use stats::{describe, student_t_cdf, t_quantile_975, Summary};
pub use sweep::{step_row, Offered, StepRow};
pub use threshold::{Metric, Op, Stat, Threshold, ThresholdError, Verdict};
pub use threshold_parse::parse_threshold;
pub use versus::welch::{welch, Welch};
