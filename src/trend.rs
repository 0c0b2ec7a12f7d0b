//! `perfbase trend` (metrics over stored runs, change points, the trend gate and exports) and
//! `perfbase history prune`.

use crate::cli::{PruneArgs, TrendArgs};
use crate::exit::{bad_input, AppError, Exit};
use crate::store::StoreOptions;
use perfbase_analysis::changepoint::Settings;
use perfbase_analysis::trend::{check, metric_info, RunValues, SeriesKey, METRICS};
use perfbase_core::trend::{Better, Series, Trend, TrendCheck, TREND_SCHEMA};
use perfbase_report::trend as report;
use perfbase_store::TrendQuery;
use std::path::Path;

/// Runs `perfbase trend`.
pub fn trend(a: TrendArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    if let Some(bad) = a
        .metrics
        .iter()
        .find(|m| metric_info(m).is_none() || *m == "mean")
    {
        return Err(bad_input(format!(
            "--metric {bad}: not a trend metric; use one or more of {}",
            METRICS.join(", ")
        )));
    }
    if !(a.max_p > 0.0 && a.max_p < 1.0) {
        return Err(bad_input(format!(
            "--max-p {}: give a p between 0 and 1, e.g. 0.001",
            a.max_p
        )));
    }
    if a.last == Some(0) {
        return Err(bad_input(
            "--last 0: nothing would be kept; give the number of newest runs to look at, e.g. --last 30",
        ));
    }
    let settings = Settings {
        max_p: a.max_p,
        min_change: a.min_change,
        ..Settings::default()
    };
    let mut inputs = match &a.series {
        Some(path) => read_series_file(path)?,
        None => read_store(&a, o)?,
    };
    if let Some(n) = a.last {
        for (_, runs) in &mut inputs {
            runs.drain(..runs.len().saturating_sub(n));
        }
    }
    let series: Vec<Series> = crate::series::analyse(inputs, &settings);
    let check = a.check.then(|| {
        let verdicts: Vec<_> = series
            .iter()
            .filter_map(|s| check(s, a.tolerance, a.max_p))
            .collect();
        TrendCheck {
            tolerance: a.tolerance,
            passed: verdicts.iter().all(|v| !v.failed),
            verdicts,
        }
    });
    // A gate that judged nothing (an unknown plan, labels nothing has, an empty --series
    // file) must not pass a CI job.
    if check.as_ref().is_some_and(|c| c.verdicts.is_empty()) {
        return Err(bad_input(format!(
            "trend --check judged nothing: {} matched no run; check the plan name, --label, \
             --scenario, --step and --metric (perfbase history lists what is stored)",
            match &a.series {
                Some(path) => format!("--series {}", path.display()),
                None => "the selection".into(),
            }
        )));
    }
    let trend = Trend {
        schema: TREND_SCHEMA.into(),
        max_p: a.max_p,
        min_change: a.min_change,
        series,
        check,
    };
    emit(&a, &trend)?;
    Ok(match &trend.check {
        Some(c) if !c.passed => Exit::CheckFailed,
        _ => Exit::Success,
    })
}

/// Prints the table and writes the files asked for. A file given as `-` takes standard
/// output, and the table goes to standard error.
fn emit(a: &TrendArgs, trend: &Trend) -> Result<(), AppError> {
    if a.files()
        .iter()
        .any(|(_, f)| f.as_deref() == Some(Path::new("-")))
    {
        crate::out::give_stdout_to_data();
    }
    out!("{}", report::render(trend));
    let json = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    for (flag, path) in a.files() {
        let Some(path) = path else { continue };
        let body = match flag {
            "--json" => serde_json::to_string_pretty(trend).unwrap_or_default() + "\n",
            "--html" => report::html::render(trend, &title(a)),
            "--junit" => match &trend.check {
                Some(c) => report::exports::junit(c),
                None => return Err(bad_input("--junit writes the gate's verdicts: add --check")),
            },
            "--bmf" => json(&report::exports::bmf(trend)),
            "--github-smaller" => json(&report::exports::github_benchmark(trend, Better::Lower)),
            _ => json(&report::exports::github_benchmark(trend, Better::Higher)),
        };
        perfbase_report::json::write_text_atomic(path, &body)
            .map_err(|e| bad_input(format!("{flag} {}: cannot write: {e}", path.display())))?;
    }
    Ok(())
}

fn title(a: &TrendArgs) -> String {
    match &a.plan {
        Some(p) => format!("Trend: {p}"),
        None => "Trend".into(),
    }
}

/// The selection's series from the store, in plan, scenario and step order of first
/// appearance, metrics in [`METRICS`] order.
fn read_store(
    a: &TrendArgs,
    o: &StoreOptions,
) -> Result<Vec<(SeriesKey, Vec<RunValues>)>, AppError> {
    let q = TrendQuery {
        plan: a.plan.clone(),
        labels: crate::store::parse_labels(&a.labels)?,
        scenario: a.scenario.clone(),
        step: a.step.clone(),
        metrics: a.metrics.clone(),
        from_run: None,
    };
    let mut store = crate::store::open(o)?;
    let trend = store.trend(&q).map_err(|e| bad_input(e.to_string()))?;
    Ok(crate::series::group(trend))
}

/// `--series FILE`: one `{"name": …, "values": […]}` per line, each value one run.
fn read_series_file(path: &Path) -> Result<Vec<(SeriesKey, Vec<RunValues>)>, AppError> {
    #[derive(serde::Deserialize)]
    struct Line {
        name: String,
        values: Vec<f64>,
    }
    let text = perfbase_drivers::input::read_text(path)
        .map_err(|e| bad_input(format!("--series {}: cannot read: {e}", path.display())))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("--series {}, line {}", path.display(), i + 1);
        let l: Line = serde_json::from_str(line).map_err(|e| {
            bad_input(format!(
                "{}: {e}; write {{\"name\": \"…\", \"values\": [1.0, 2.0]}}",
                at()
            ))
        })?;
        if l.values.iter().any(|v| !v.is_finite()) {
            return Err(bad_input(format!(
                "{}: every value must be a finite number",
                at()
            )));
        }
        let key = SeriesKey {
            plan: String::new(),
            scenario: l.name,
            step: String::new(),
            metric: String::new(),
        };
        let runs = l
            .values
            .into_iter()
            .enumerate()
            .map(|(i, v)| RunValues {
                run: i as i64,
                at: "".into(),
                values: vec![v],
                labels: Default::default(),
                env: "".into(),
            })
            .collect();
        out.push((key, runs));
    }
    Ok(out)
}

/// Runs `perfbase history prune`.
pub fn prune(a: PruneArgs, o: &StoreOptions) -> Result<Exit, AppError> {
    if a.keep_days.is_none() && a.keep_last.is_none() {
        return Err(bad_input(
            "history prune needs --keep-days N, --keep-last N or both (a run either keeps is kept)",
        ));
    }
    let mut store = crate::store::open(o)?;
    let p = store
        .prune(a.keep_days, a.keep_last, std::time::SystemTime::now())
        .map_err(|e| bad_input(e.to_string()))?;
    outln!(
        "pruned {} runs; kept {} ({} of them because a baseline points at them)",
        p.deleted,
        p.kept,
        p.kept_for_baselines
    );
    Ok(Exit::Success)
}
