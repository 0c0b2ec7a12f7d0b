//! `perfbase run` (plan files) and `perfbase demo` end to end, against reference services
//! whose behaviour is known: a capacity-capped pool, a rate limiter, fixed delays. One file per
//! topic:
//!
//! - `ladders`: rate ladders and the knee, repetitions and their statistics, stages;
//! - `checks_and_thresholds`: a plan's checks and thresholds, and the exit code they give;
//! - `http_targets`: a plan's HTTP side: per-endpoint mixes, HTTP/2, secrets, target paths;
//! - `phases`: each phase saved as it ends, and monitor samples labelled by phase;
//! - `plan_files`: malformed plans, the example plans, the demo, CLI overrides;
//! - `trust`: interleaved comparisons under drift, and precision targets.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

mod checks_and_thresholds;
mod faults;
mod http_targets;
mod ladders;
mod phases;
mod plan_files;
mod trust;

/// Writes `plan` (with `{URL}` replaced) and runs it; returns the run and the result JSON.
fn run_plan(plan: &str, url: &str, dir: &Path, extra: &[&str]) -> Run {
    run_plan_with(dir, &plan.replace("{URL}", url), |c| {
        c.args(extra);
    })
}

fn study(r: &Run) -> &Value {
    &r.json()["study"]
}
