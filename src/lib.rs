//! perfbase: load-tests services and turns the measurements into performance baselines.
//!
//! This root package is the wiring: command-line flags (`cli`), the one place that picks a
//! driver and runs the engine (`app`), exit codes (`exit`), machine facts (`env`) and Ctrl-C
//! handling (`interrupt`). The measuring lives in the workspace crates.

#[macro_use]
mod out;

pub mod app;
pub mod brokers;
pub mod cli;
pub mod env;
pub mod exit;
pub mod inspect;
pub mod interrupt;
pub mod load;
pub mod monitoring;
pub mod plan;
mod progress;
pub mod records;
pub mod sql;
pub mod study;
