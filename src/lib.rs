//! perfbase: load-tests services and turns the measurements into performance baselines.
//!
//! This root package is the application: command-line flags (`cli`) and plan files (`plan`)
//! both become a [`plan::Plan`]; `runner` runs every plan (each workload through its
//! `backend`, the one seam to the protocol drivers), saves, analyses and reports; `exit`
//! decides the exit code. `app` dispatches the commands. The measuring lives in the
//! workspace crates.

// A build with some protocols left out (cargo features) leaves unused the helpers they share;
// the default build, with every protocol, still reports dead code.
#![cfg_attr(not(feature = "every-protocol"), allow(dead_code))]

#[macro_use]
pub mod out;

pub mod agent;
pub mod app;
pub mod backend;
pub mod cli;
pub mod env;
pub mod exit;
pub mod exporting;
pub mod import;
pub mod inspect;
pub mod interrupt;
#[cfg(feature = "k8s")]
pub mod k8s;
pub mod limits;
pub mod live;
pub mod merge;
pub mod monitoring;
mod noise;
pub mod page;
pub mod plan;
mod progress;
pub mod runner;
pub mod series;
pub mod serve;
pub mod store;
pub mod terminal;
pub mod trend;
pub mod ui;
