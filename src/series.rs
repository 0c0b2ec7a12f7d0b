//! Stored runs as trend series: the store's figures grouped by plan, scenario, step and
//! metric, and analysed. Shared by `perfbase trend` and the baselines page, and importing
//! neither.

use perfbase_analysis::changepoint::Settings;
use perfbase_analysis::trend::{series, RunValues, SeriesKey, METRICS};
use perfbase_core::trend::Series;
use perfbase_store::{Trend, TrendQuery};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The analysed series of a selection, at the default settings (the baselines page's history).
pub fn stored_series(
    store: &mut perfbase_store::Store,
    q: &TrendQuery,
) -> Result<Vec<Series>, perfbase_store::StoreError> {
    Ok(analyse(group(store.trend(q)?), &Settings::default()))
}

/// Analyses each series, in their order, on as many threads as there are cores: series are
/// independent, and a 10,000-run store's 20 took a quarter of a second on one core.
pub fn analyse(inputs: Vec<(SeriesKey, Vec<RunValues>)>, settings: &Settings) -> Vec<Series> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = threads.min(inputs.len());
    if threads <= 1 {
        return inputs
            .into_iter()
            .map(|(key, runs)| series(&key, runs, settings))
            .collect();
    }
    let count = inputs.len();
    let todo = Mutex::new(inputs.into_iter().enumerate());
    let done = Mutex::new(Vec::with_capacity(count));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                // The lock is held only to take the next series, not while it is analysed.
                let next = todo.lock().unwrap_or_else(PoisonError::into_inner).next();
                let Some((i, (key, runs))) = next else { break };
                let one = series(&key, runs, settings);
                done.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((i, one));
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, s)| s).collect()
}

/// What a run gives each of its series.
struct RunShared {
    at: Arc<str>,
    labels: Arc<BTreeMap<String, String>>,
    env: Arc<str>,
}

/// The store's figures as series: in plan, scenario and step order of first appearance,
/// metrics in [`METRICS`] order (others left out), each series' runs oldest first.
pub fn group(t: Trend) -> Vec<(SeriesKey, Vec<RunValues>)> {
    // What a run gives each of its series, made once per run (a 10,000-run store has 200,000
    // points): its fingerprint shared, its labels and source merged.
    let shared: Vec<RunShared> = t
        .runs
        .iter()
        .map(|r| {
            let labels = r.labels.iter().chain(&r.source);
            let labels = labels.map(|(k, v)| (k.clone(), v.clone())).collect();
            RunShared {
                at: Arc::from(r.started_at.as_str()),
                labels: Arc::new(labels),
                env: Arc::from(r.env.as_str()),
            }
        })
        .collect();
    let mut lists: Vec<Vec<RunValues>> = vec![Vec::new(); t.keys.len()];
    for p in t.points {
        // Both are in run order: a search, not a map.
        let Ok(i) = t.runs.binary_search_by_key(&p.run, |r| r.id) else {
            continue;
        };
        let list = &mut lists[p.key];
        match list.last_mut() {
            Some(last) if last.run == p.run => last.values.push(p.value),
            _ => list.push(RunValues {
                run: p.run,
                at: Arc::clone(&shared[i].at),
                values: vec![p.value],
                labels: Arc::clone(&shared[i].labels),
                env: Arc::clone(&shared[i].env),
            }),
        }
    }
    let mut places: Vec<(&str, &str, &str)> = Vec::new();
    for k in &t.keys {
        let place = (k.plan.as_str(), k.scenario.as_str(), k.step.as_str());
        if !places.contains(&place) {
            places.push(place);
        }
    }
    let mut out = Vec::new();
    for (plan, scenario, step) in places {
        for metric in METRICS {
            let found = t.keys.iter().position(|k| {
                (
                    k.plan.as_str(),
                    k.scenario.as_str(),
                    k.step.as_str(),
                    k.metric.as_str(),
                ) == (plan, scenario, step, metric)
            });
            if let Some(i) = found.filter(|&i| !lists[i].is_empty()) {
                let key = SeriesKey {
                    plan: plan.into(),
                    scenario: scenario.into(),
                    step: step.into(),
                    metric: (*metric).into(),
                };
                out.push((key, std::mem::take(&mut lists[i])));
            }
        }
    }
    out
}
