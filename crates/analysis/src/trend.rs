//! A metric over stored runs: its change points, its current segment, where the environment
//! changed, and the CI gate's verdict on the newest run.

use crate::changepoint::{self, newest_p, Found, Settings};
use perfbase_core::trend::{
    Better, Burst, ChangePoint, EnvironmentChange, Noise, Point, Segment, Series, TrendVerdict,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// One run's values of one metric, as read from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct RunValues {
    pub run: i64,
    pub at: Arc<str>,
    /// One per kept repetition; never empty.
    pub values: Vec<f64>,
    pub labels: Arc<BTreeMap<String, String>>,
    /// [`perfbase_core::result::Env::fingerprint`] of the run, shared by its series.
    pub env: Arc<str>,
}

impl AsRef<[f64]> for RunValues {
    fn as_ref(&self) -> &[f64] {
        &self.values
    }
}

/// What a series is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesKey {
    pub plan: String,
    pub scenario: String,
    pub step: String,
    pub metric: String,
}

impl SeriesKey {
    /// `plan / scenario / step / metric`, the empty parts left out.
    pub fn name(&self) -> String {
        [&self.plan, &self.scenario, &self.step, &self.metric]
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

/// The unit and the better direction of a trend metric; `None` for an unknown name.
pub fn metric_info(metric: &str) -> Option<(&'static str, Better)> {
    Some(match metric {
        "p50" | "p90" | "p95" | "p99" | "mean" => ("ms", Better::Lower),
        "rps" => ("/s", Better::Higher),
        "error_rate" => ("ratio", Better::Lower),
        "knee" | "operating_point" => ("/s", Better::Higher),
        _ => return None,
    })
}

/// The metrics `perfbase trend` knows, in its default order.
pub const METRICS: &[&str] = &["p50", "p99", "rps", "error_rate", "knee", "operating_point"];

/// Analyses one series (runs oldest first).
pub fn series(key: &SeriesKey, runs: Vec<RunValues>, settings: &Settings) -> Series {
    let (unit, better) = metric_info(&key.metric).unwrap_or(("", Better::Lower));
    let started = Instant::now();
    let search = changepoint::search(&runs, settings);
    let compute_us = started.elapsed().as_secs_f64() * 1e6;
    let environment_changes: Vec<EnvironmentChange> = runs
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0].env != w[1].env)
        .map(|(i, w)| EnvironmentChange {
            index: i + 1,
            from: w[0].env.to_string(),
            to: w[1].env.to_string(),
        })
        .collect();
    let means: Vec<f64> = runs.iter().map(|r| mean(&r.values)).collect();
    let change_points = change_points(&runs, &means, &search, better, &environment_changes);
    let bursts = bursts(&runs, &means, &search);
    let noise = search.autocorrelation.is_finite().then(|| Noise {
        autocorrelation: search.autocorrelation,
        assumed: search.phi,
        effective_runs: search.effective_runs(runs.len()),
    });
    let points: Vec<Point> = runs
        .into_iter()
        .map(|r| Point {
            run: r.run,
            at: r.at,
            value: mean(&r.values),
            repetitions: if r.values.len() > 1 {
                r.values
            } else {
                Vec::new()
            },
            labels: r.labels,
        })
        .collect();
    let from = change_points.last().map_or(0, |c| c.index);
    Series {
        name: key.name(),
        plan: key.plan.clone(),
        scenario: key.scenario.clone(),
        step: key.step.clone(),
        metric: key.metric.clone(),
        unit: unit.into(),
        better,
        segment: segment(&steady(&means, from, means.len(), &search), from),
        points,
        change_points,
        environment_changes,
        bursts,
        noise,
        compute_us,
    }
}

/// The search's changes as the trend's change points.
fn change_points(
    runs: &[RunValues],
    means: &[f64],
    search: &Found,
    better: Better,
    environment_changes: &[EnvironmentChange],
) -> Vec<ChangePoint> {
    let found = &search.changes;
    let outside = |a: usize, b: usize| steady(means, a, b, search);
    let mut change_points = Vec::with_capacity(found.len());
    for (i, c) in found.iter().enumerate() {
        let from = if i == 0 { 0 } else { found[i - 1].at };
        let to = found.get(i + 1).map_or(means.len(), |n| n.at);
        let (change, direction) = if c.spread {
            let widening = stdev(&outside(c.at, to)) / stdev(&outside(from, c.at)) - 1.0;
            (widening, if widening > 0.0 { "worse" } else { "better" })
        } else {
            (c.relative(), direction(better, c.after - c.before))
        };
        change_points.push(ChangePoint {
            index: c.at,
            run: runs[c.at].run,
            kind: if c.spread { "spread" } else { "level" }.into(),
            before: c.before,
            after: c.after,
            change,
            p: c.p,
            direction: direction.into(),
            environment: environment_near(environment_changes, c.at),
        });
    }
    change_points
}

/// The values of runs `a..b` that are not in a burst.
fn steady(means: &[f64], a: usize, b: usize, search: &Found) -> Vec<f64> {
    (a..b)
        .filter(|&i| !search.bursts.iter().any(|r| r.contains(&i)))
        .map(|i| means[i])
        .collect()
}

/// The search's bursts, each against the level of the segment it sits in.
fn bursts(runs: &[RunValues], means: &[f64], search: &Found) -> Vec<Burst> {
    search
        .bursts
        .iter()
        .map(|r| {
            let from = search
                .changes
                .iter()
                .map(|c| c.at)
                .filter(|&at| at <= r.start)
                .max()
                .unwrap_or(0);
            let to = search
                .changes
                .iter()
                .map(|c| c.at)
                .find(|&at| at > r.start)
                .unwrap_or(means.len());
            let level = mean(&steady(means, from, to, search));
            let value = mean(&means[r.clone()]);
            Burst {
                index: r.start,
                run: runs[r.start].run,
                runs: r.len(),
                value,
                change: (value - level) / level.abs(),
            }
        })
        .collect()
}

/// The environment change at a change point (within one run), worded for the report.
fn environment_near(changes: &[EnvironmentChange], at: usize) -> Option<String> {
    changes
        .iter()
        .find(|e| e.index.abs_diff(at) <= 1)
        .map(|e| format!("{} → {}: not like for like", e.from, e.to))
}

fn direction(better: Better, delta: f64) -> &'static str {
    match (better, delta < 0.0) {
        (Better::Lower, true) | (Better::Higher, false) => "better",
        _ => "worse",
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn stdev(v: &[f64]) -> f64 {
    crate::stats::describe(v).map_or(f64::NAN, |s| s.stdev)
}

/// The current segment from run `from`, given its runs' values outside bursts.
fn segment(values: &[f64], from: usize) -> Segment {
    let stdev = stdev(values);
    Segment {
        from,
        runs: values.len(),
        mean: if values.is_empty() {
            f64::NAN
        } else {
            mean(values)
        },
        stdev,
    }
}

/// The CI gate on one series: does its newest run leave the current segment for the worse, by
/// more than `tolerance` (a fraction) and at p below `max_p`?
pub fn check(series: &Series, tolerance: f64, max_p: f64) -> Option<TrendVerdict> {
    let (newest, earlier) = series.points.split_last()?;
    let last = earlier.len();
    // The segment the newest run is judged against: since the last change point before it.
    let from = series
        .change_points
        .iter()
        .map(|c| c.index)
        .filter(|&i| i < last)
        .max()
        .unwrap_or(0);
    // Bursts are not the segment's level or its noise.
    let segment: Vec<f64> = earlier[from..]
        .iter()
        .enumerate()
        .filter(|(i, _)| !series.in_burst(from + i))
        .map(|(_, p)| p.value)
        .collect();
    let segment_mean = if segment.is_empty() {
        f64::NAN
    } else {
        mean(&segment)
    };
    let change = (newest.value - segment_mean) / segment_mean.abs();
    let p = newest_p(&segment, newest.value);
    let env_changed = series.environment_changes.iter().any(|e| e.index == last);
    let worse = direction(series.better, newest.value - segment_mean) == "worse";
    let (verdict, failed) = match p {
        _ if env_changed => ("not like for like", false),
        None => ("too few runs", false),
        Some(p) if p < max_p && change.abs() > tolerance => {
            if worse {
                ("worse", true)
            } else {
                ("better", false)
            }
        }
        Some(_) => ("steady", false),
    };
    Some(TrendVerdict {
        series: series.name.clone(),
        scenario: series.scenario.clone(),
        step: series.step.clone(),
        metric: series.metric.clone(),
        run: newest.run,
        value: newest.value,
        segment_mean,
        segment_runs: segment.len(),
        change,
        p,
        verdict: verdict.into(),
        failed,
    })
}
