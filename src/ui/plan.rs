//! `/plans/NAME`: a plan's trend over its newest runs (the charts of `perfbase trend --html`,
//! change points included), the gate's verdict on its newest run as `trend --check` gives it
//! at its defaults, and the history of the baselines that named its runs.

use super::frame::{page, Problem};
use super::Server;
use perfbase_analysis::changepoint::Settings;
use perfbase_analysis::trend::check;
use perfbase_core::trend::{Trend, TrendCheck, TREND_SCHEMA};
use perfbase_report::ui::{self as view, Section};
use perfbase_store::{RunQuery, Store, TrendQuery};

/// The newest runs a plan's charts show: the page stays quick and its charts readable over
/// any history (`perfbase trend` reads them all).
const NEWEST: usize = 500;
/// `trend --check`'s default tolerance.
const TOLERANCE: f64 = 0.05;

pub fn page_of(
    server: &Server,
    store: &mut Store,
    name: &str,
) -> Result<super::http::Response, Problem> {
    let Some(listed) = store.plans()?.into_iter().find(|p| p.plan == name) else {
        return Err(Problem::NotFound(format!(
            "no stored run of a plan named '{name}'"
        )));
    };
    // The oldest of the newest runs shown: the store reads no figure before it, so the page's
    // memory does not grow with the history.
    let newest = store.runs(&RunQuery {
        plan: Some(name.to_string()),
        limit: NEWEST,
        ..RunQuery::default()
    })?;
    let q = TrendQuery {
        plan: Some(name.to_string()),
        from_run: newest.last().map(|r| r.summary.id),
        ..TrendQuery::default()
    };
    let settings = Settings::default();
    let inputs = crate::series::group(store.trend(&q)?);
    let series = crate::series::analyse(inputs, &settings);
    let verdicts: Vec<_> = series
        .iter()
        .filter_map(|s| check(s, TOLERANCE, settings.max_p))
        .collect();
    let trend = Trend {
        schema: TREND_SCHEMA.into(),
        max_p: settings.max_p,
        min_change: settings.min_change,
        check: (!verdicts.is_empty()).then(|| TrendCheck {
            tolerance: TOLERANCE,
            passed: verdicts.iter().all(|v| !v.failed),
            verdicts,
        }),
        series,
    };
    let baselines = store.plan_baselines(name)?;
    let body = view::plans::plan(&view::plans::PlanView {
        plan: name,
        runs: listed.runs,
        trend: &trend,
        baselines: &baselines,
    });
    Ok(page(
        server,
        "200 OK",
        Section::Plans,
        &format!("perfbase: plan {name}"),
        &body,
    ))
}
