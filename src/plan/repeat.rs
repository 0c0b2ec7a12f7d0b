//! How many times a scenario's steps run: a fixed `repetitions`, or, with `precision`, until
//! the 95 % intervals of throughput, mean and p99 latency are within that share of the figure
//! (at least [`MIN_RUNS_FOR_INTERVAL`] runs, at most `max_repetitions`, within `max_time`).
//! `[plan]` sets the defaults every scenario may override.

use super::context::{Ctx, MAX_REPETITIONS};
use super::file::{self, PlanFile, S};
use super::model::PlanError;
use perfbase_core::study::MIN_RUNS_FOR_INTERVAL;
use std::time::Duration;

/// With `precision` and no `max_repetitions`: the most runs a step takes. Twenty runs give a
/// 95 % interval between the 6th and 15th of them.
pub const DEFAULT_MAX_REPETITIONS: u32 = 20;

/// With a precision target, the least a duration-bound run measures, unless `[plan]
/// min_run_time` says otherwise: shorter runs' figures swing with every scheduling hiccup.
pub const DEFAULT_MIN_RUN_TIME: Duration = Duration::from_millis(500);
/// …and the fewest operations, unless `[plan] min_run_ops` says otherwise: a p99 of 1,000
/// stands on its 10 slowest, a p99 of 100 on one.
pub const DEFAULT_MIN_RUN_OPS: u64 = 1000;
/// A run is lengthened to its minimum at most this many times its step's own duration, so a
/// step of slow operations (a full scan) does not take the plan's whole budget.
pub const MAX_STRETCH: u32 = 4;

/// The least a duration-bound run of a precision target measures.
pub(super) fn min_run(cx: &Ctx<'_>, raw: &PlanFile) -> Result<(Duration, u64), PlanError> {
    let m = &raw.plan;
    let time = match &m.min_run_time {
        Some(t) => cx.positive_duration(t, "plan.min_run_time")?,
        None => DEFAULT_MIN_RUN_TIME,
    };
    let ops = match &m.min_run_ops {
        Some(n) => cx.positive(n, "plan.min_run_ops")?,
        None => DEFAULT_MIN_RUN_OPS,
    };
    Ok((time, ops))
}

/// What `[plan]` sets for every scenario.
pub(super) struct Defaults {
    precision: Option<f64>,
    max_repetitions: Option<u32>,
    max_time: Option<Duration>,
}

/// A scenario's repetitions as the plan sets them.
pub(super) struct Repeat {
    pub repetitions: u32,
    pub precision: Option<f64>,
    pub max_repetitions: u32,
    pub max_time: Option<Duration>,
}

pub(super) fn defaults(cx: &Ctx<'_>, raw: &PlanFile) -> Result<Defaults, PlanError> {
    let m = &raw.plan;
    Ok(Defaults {
        precision: m
            .precision
            .as_ref()
            .map(|p| share(cx, p, "plan.precision"))
            .transpose()?,
        max_repetitions: m
            .max_repetitions
            .as_ref()
            .map(|r| runs(cx, r, "plan.max_repetitions"))
            .transpose()?,
        max_time: m
            .max_time
            .as_ref()
            .map(|t| cx.positive_duration(t, "plan.max_time"))
            .transpose()?,
    })
}

pub(super) fn scenario(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
    d: &Defaults,
) -> Result<Repeat, PlanError> {
    let repetitions = sd
        .repetitions
        .as_ref()
        .map(|r| runs(cx, r, &format!("{field}.repetitions")))
        .transpose()?;
    let precision = match &sd.precision {
        Some(p) => Some(share(cx, p, &format!("{field}.precision"))?),
        None => d.precision,
    };
    let max_repetitions = sd
        .max_repetitions
        .as_ref()
        .map(|r| runs(cx, r, &format!("{field}.max_repetitions")))
        .transpose()?
        .or(d.max_repetitions);
    let max_time = match &sd.max_time {
        Some(t) => Some(cx.positive_duration(t, &format!("{field}.max_time"))?),
        None => d.max_time,
    };
    let Some(precision) = precision else {
        // Without a precision target, a maximum has nothing to stop.
        const ONLY: &str = "only bounds a precision target: set precision (e.g. \"5%\"), or \
                            give repetitions alone";
        if let Some(r) = &sd.max_repetitions {
            return Err(cx.err(r, format!("{field}.max_repetitions"), ONLY));
        }
        if let Some(t) = &sd.max_time {
            return Err(cx.err(t, format!("{field}.max_time"), ONLY));
        }
        let n = repetitions.unwrap_or(1);
        return Ok(Repeat {
            repetitions: n,
            precision: None,
            max_repetitions: n,
            max_time: None,
        });
    };
    // An interval needs this many runs, so a precision target never stops sooner.
    let least = repetitions.unwrap_or(0).max(MIN_RUNS_FOR_INTERVAL as u32);
    let most = max_repetitions.unwrap_or(DEFAULT_MAX_REPETITIONS.max(least));
    if most < least {
        let why = format!(
            "{most} is fewer than {least}, the fewest runs its precision target takes (a 95 % \
             interval needs {MIN_RUNS_FOR_INTERVAL}); raise it or leave precision out"
        );
        return Err(match &sd.max_repetitions {
            Some(r) => cx.err(r, format!("{field}.max_repetitions"), why),
            None => cx.err(&sd.name, format!("{field} (plan.max_repetitions)"), why),
        });
    }
    Ok(Repeat {
        repetitions: least,
        precision: Some(precision),
        max_repetitions: most,
        max_time,
    })
}

/// `"5%"` or `"0.5 %"` as a share (0.05), above 0 and below 100 %.
fn share(cx: &Ctx<'_>, s: &S<String>, field: &str) -> Result<f64, PlanError> {
    let text = s.get_ref().trim();
    let pct = text
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|p| p.is_finite() && *p > 0.0 && *p < 100.0);
    match pct {
        Some(p) => Ok(p / 100.0),
        None => Err(cx.err(
            s,
            field,
            format!("'{text}' is not a share in percent above 0 and below 100, such as \"5%\""),
        )),
    }
}

/// A run count: at least 1, at most the plan's limit.
fn runs(cx: &Ctx<'_>, r: &S<i64>, field: &str) -> Result<u32, PlanError> {
    cx.count(r, field, MAX_REPETITIONS, "repetitions a scenario may have")
        .map(|n| n as u32)
}
