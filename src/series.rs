//! Stored runs as trend series: the store's figures grouped by plan, scenario, step and
//! metric, and analysed. Shared by `perfbase trend` and the baselines page, and importing
//! neither.

use perfbase_analysis::changepoint::Settings;
use perfbase_analysis::trend::{series, RunValues, SeriesKey, METRICS};
use perfbase_core::trend::Series;
use perfbase_store::{TrendPoint, TrendQuery, TrendRun};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The analysed series of a selection, at the default settings (the baselines page's history).
pub fn stored_series(
    store: &mut perfbase_store::Store,
    q: &TrendQuery,
) -> Result<Vec<Series>, perfbase_store::StoreError> {
    let (runs, points) = store.trend(q)?;
    Ok(group(&runs, points)
        .into_iter()
        .map(|(key, runs)| series(&key, runs, &Settings::default()))
        .collect())
}

pub fn group(runs: &[TrendRun], points: Vec<TrendPoint>) -> Vec<(SeriesKey, Vec<RunValues>)> {
    // A run's fingerprint is shared by its series, not copied into each.
    let by_id: BTreeMap<i64, (&TrendRun, Arc<str>)> = runs
        .iter()
        .map(|r| (r.id, (r, Arc::from(r.env.as_str()))))
        .collect();
    let mut order: Vec<(String, String, String)> = Vec::new();
    let mut values: BTreeMap<(String, String, String, String), Vec<RunValues>> = BTreeMap::new();
    for p in points {
        let Some((run, env)) = by_id.get(&p.run) else {
            continue;
        };
        // Compared before it is copied: a store of 10,000 runs has 200,000 points.
        if !order
            .iter()
            .any(|(a, b, c)| *a == p.plan && *b == p.scenario && *c == p.step)
        {
            order.push((p.plan.clone(), p.scenario.clone(), p.step.clone()));
        }
        let list = values
            .entry((p.plan, p.scenario, p.step, p.metric))
            .or_default();
        match list.last_mut() {
            Some(last) if last.run == p.run => last.values.push(p.value),
            _ => list.push(RunValues {
                run: p.run,
                at: run.started_at.clone(),
                values: vec![p.value],
                labels: run
                    .labels
                    .iter()
                    .chain(&run.source)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                env: Arc::clone(env),
            }),
        }
    }
    let mut out = Vec::new();
    for (plan, scenario, step) in order {
        for metric in METRICS {
            let k = (
                plan.clone(),
                scenario.clone(),
                step.clone(),
                (*metric).to_string(),
            );
            if let Some(runs) = values.remove(&k) {
                let key = SeriesKey {
                    plan: k.0,
                    scenario: k.1,
                    step: k.2,
                    metric: k.3,
                };
                out.push((key, runs));
            }
        }
    }
    out
}
