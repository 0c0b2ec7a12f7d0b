//! The trend for other tools: the gate's verdicts as JUnit XML, and the newest run of every
//! series in the formats benchmark trackers read: Bencher's Metric Format (BMF) and
//! github-action-benchmark's `customSmallerIsBetter` / `customBiggerIsBetter` lists.

use perfbase_core::trend::{Better, Series, Trend, TrendCheck};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::{json, Map, Value};

/// One JUnit test case per series judged by `--check`; a worse series is a failure whose
/// message gives the change, its p and the tolerance.
pub fn junit(check: &TrendCheck) -> String {
    let mut suite = TestSuite::new("perfbase trend");
    for v in &check.verdicts {
        let status = if v.failed {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_type("trend").set_message(format!(
                "run {} is {} against the {} runs before it ({}); tolerance {:.1} %",
                v.run,
                super::percent(v.change),
                v.segment_runs,
                v.p.map_or_else(
                    || "p unknown".into(),
                    perfbase_analysis::versus::welch::p_text
                ),
                check.tolerance * 100.0
            ));
            s
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(v.series.clone(), status);
        case.set_classname(format!("trend.{}", v.metric));
        suite.add_test_case(case);
    }
    let mut report = Report::new("perfbase");
    report.add_test_suite(suite);
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- JUnit could not be written: {e} -->\n"))
}

/// The newest run of a series: its mean, and the lowest and highest repetition.
fn newest(s: &Series) -> Option<(f64, f64, f64)> {
    let p = s.points.last()?;
    let reps = if p.repetitions.is_empty() {
        std::slice::from_ref(&p.value)
    } else {
        &p.repetitions[..]
    };
    let lo = reps.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = reps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((p.value, lo, hi))
}

/// The benchmark a series belongs to in the trackers: everything but the metric.
fn bench_name(s: &Series) -> String {
    [&s.plan, &s.scenario, &s.step]
        .into_iter()
        .filter(|t| !t.is_empty())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Bencher Metric Format: `{benchmark: {measure: {value, lower_value, upper_value}}}`, the
/// bounds being the newest run's lowest and highest repetition.
pub fn bmf(trend: &Trend) -> Value {
    let mut out = Map::new();
    for s in &trend.series {
        let Some((value, lo, hi)) = newest(s) else {
            continue;
        };
        let bench = out
            .entry(bench_name(s))
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = bench {
            m.insert(
                s.metric.clone(),
                json!({"value": value, "lower_value": lo, "upper_value": hi}),
            );
        }
    }
    Value::Object(out)
}

/// github-action-benchmark's custom format for the series that are better when `better`:
/// `[{name, unit, value, range, extra}]`, one entry per series.
pub fn github_benchmark(trend: &Trend, better: Better) -> Value {
    let entries = trend
        .series
        .iter()
        .filter(|s| s.better == better)
        .filter_map(|s| {
            let (value, lo, hi) = newest(s)?;
            let run = s.points.last()?;
            let mut extra = format!("run {}", run.run);
            for (k, v) in run.labels.iter() {
                extra.push_str(&format!(", {k}={v}"));
            }
            Some(json!({
                "name": format!("{} {}", bench_name(s), s.metric),
                "unit": s.unit,
                "value": value,
                "range": format!("{lo}..{hi}"),
                "extra": extra,
            }))
        })
        .collect();
    Value::Array(entries)
}
