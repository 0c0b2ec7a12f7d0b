//! The trend's exports: Bencher's Metric Format, github-action-benchmark's two lists, and the
//! gate's JUnit, from one fixture.

#[path = "chromium/trend_fixture.rs"]
mod trend_fixture;

use perfbase_core::trend::{Better, TrendCheck, TrendVerdict};
use perfbase_report::trend::exports::{bmf, github_benchmark, junit};
use trend_fixture::trend_fixture;

#[test]
fn bmf_has_each_benchmark_with_its_measures_and_bounds() {
    let v = bmf(&trend_fixture());
    let bench = &v["nightly / db / insert"];
    assert_eq!(bench["p99"]["value"], 24.2);
    // The newest run's lowest and highest repetition.
    assert_eq!(bench["p99"]["lower_value"], 24.2 * 0.99);
    assert_eq!(bench["p99"]["upper_value"], 24.2 * 1.01);
    assert_eq!(bench["rps"]["value"], 901.0);
    assert_eq!(v.as_object().unwrap().len(), 1);
}

#[test]
fn github_benchmark_splits_by_direction() {
    let t = trend_fixture();
    let smaller = github_benchmark(&t, Better::Lower);
    let bigger = github_benchmark(&t, Better::Higher);
    assert_eq!(smaller.as_array().unwrap().len(), 1);
    assert_eq!(bigger.as_array().unwrap().len(), 1);
    assert_eq!(smaller[0]["name"], "nightly / db / insert p99");
    assert_eq!(smaller[0]["unit"], "ms");
    assert_eq!(smaller[0]["value"], 24.2);
    assert!(smaller[0]["extra"]
        .as_str()
        .unwrap()
        .starts_with("run 12, GIT_COMMIT=c011"));
    assert_eq!(bigger[0]["unit"], "/s");
}

#[test]
fn junit_fails_the_worse_series_with_its_figures() {
    let verdict = |series: &str, failed: bool| TrendVerdict {
        series: series.into(),
        scenario: "db".into(),
        step: "insert".into(),
        metric: "p99".into(),
        run: 12,
        value: 24.2,
        segment_mean: 20.0,
        segment_runs: 11,
        change: 0.21,
        p: Some(1e-5),
        verdict: if failed { "worse" } else { "steady" }.into(),
        failed,
    };
    let xml = junit(&TrendCheck {
        tolerance: 0.05,
        passed: false,
        verdicts: vec![verdict("a / p99", true), verdict("b / p99", false)],
    });
    assert!(
        xml.contains("tests=\"2\"") && xml.contains("failures=\"1\""),
        "{xml}"
    );
    assert!(
        xml.contains(
            "run 12 is +21.0 % against the 11 runs before it (p &lt; 0.001); tolerance 5.0 %"
        ),
        "{xml}"
    );
}
