//! The terminal and Markdown renderings of a study, from the result of a real run (a ladder
//! over `/delay/5` with a threshold it cannot meet, and a check against `/status/500` that
//! expects 200s), kept as a fixture.

use perfbase_analysis::study::Study;
use perfbase_core::result::RunResult;
use perfbase_report::{markdown, terminal};

fn fixture() -> (RunResult, Study) {
    let text = include_str!("fixtures/failed_study.json");
    let r: RunResult = serde_json::from_str(text).expect("the fixture is a result");
    let study: Study = r.study.clone().expect("a plan run with its study");
    (r, study)
}

const RED: &str = "\x1b[31m";

#[test]
fn failed_thresholds_and_checks_are_red_on_a_terminal_and_plain_elsewhere() {
    let (r, study) = fixture();
    assert!(!study.passed);
    let colored = terminal::render_study(&r, &study, true);
    let failed: Vec<&str> = colored.lines().filter(|l| l.contains("FAIL")).collect();
    // In the summary table, the scenario's and the check's rows; then the scenario's
    // threshold line and the check's.
    assert_eq!(failed.len(), 4, "{colored}");
    for line in failed {
        assert!(
            line.starts_with(RED) && line.ends_with("\x1b[0m"),
            "{line:?}"
        );
    }
    assert!(
        colored.contains("check all-ok: expected 5 × 200; got 5 × 500"),
        "{colored}"
    );
    for line in colored.lines().filter(|l| !l.contains("FAIL")) {
        assert!(!line.contains(RED), "only failures are red: {line:?}");
    }
    let plain = terminal::render_study(&r, &study, false);
    assert!(!plain.contains('\x1b'), "{plain}");
    assert_eq!(plain.lines().filter(|l| l.contains("FAIL")).count(), 4);
}

#[test]
fn a_plans_summary_is_a_row_per_scenario_and_check_with_its_own_figures() {
    let (r, study) = fixture();
    let rows = perfbase_report::study_text::summary_rows(&r, &study);
    let names: Vec<&str> = rows.iter().map(|(c, _)| c[0].as_str()).collect();
    assert_eq!(names, ["ladder", "check all-ok"]);
    let (ladder, failed) = &rows[0];
    assert!(failed, "its threshold failed: {ladder:?}");
    // The ladder's p99 is the range over its own steps, not the run's mix with the check.
    let steps = &study.scenarios[0].steps;
    let lo = steps.iter().map(|s| s.p99_ms).fold(f64::INFINITY, f64::min);
    let hi = steps
        .iter()
        .map(|s| s.p99_ms)
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(
        ladder[6],
        format!(
            "{}–{}",
            perfbase_report::study_text::ms(lo),
            perfbase_report::study_text::ms(hi)
        )
    );
    assert_eq!(ladder[8], "FAIL");
    let (check, failed) = &rows[1];
    assert!(failed);
    assert_eq!(
        (check[4].as_str(), check[8].as_str()),
        ("got 5 × 500", "FAIL")
    );
    let md = markdown::render(&r, &study);
    let at = md.find("## Summary").expect("a summary table");
    assert!(
        at < md.find("## Test environment").unwrap(),
        "it opens the report"
    );
    assert!(
        md.contains("| check all-ok | check | 1 | 5 | got 5 × 500 |"),
        "{md}"
    );
    let html = perfbase_report::html::render(std::slice::from_ref(&r));
    assert!(
        html.contains("<tr class=\"fail\"><td class=\"l\">ladder</td>"),
        "{html}"
    );
}

#[test]
fn sweep_tables_show_avg_min_p90_and_the_share_under_each_bucket() {
    let (r, study) = fixture();
    let rows = &study.scenarios[0].steps;
    let text = terminal::render_study(&r, &study, false);
    let header = text
        .lines()
        .find(|l| l.trim_start().starts_with("step"))
        .unwrap();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        columns,
        [
            "step",
            "offered",
            "achieved/s",
            "success",
            "avg",
            "ms",
            "min",
            "ms",
            "p50",
            "ms",
            "p90",
            "ms",
            "p95",
            "ms",
            "p99",
            "ms",
            "max",
            "ms",
            "<50ms",
            "<100ms",
            "<200ms"
        ]
    );
    for row in rows {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", row.name)))
            .unwrap_or_else(|| panic!("a line for {}: {text}", row.name));
        let shares: Vec<String> = row
            .under_ms
            .iter()
            .map(|(_, s)| format!("{:.1}%", s * 100.0))
            .collect();
        assert!(
            line.contains(&shares.join("  ")),
            "{line:?} lacks {shares:?}"
        );
        // avg and min as the VU-ladder studies report them, before the percentiles.
        let cells = format!(
            "{:>8} {:>8} {:>8}",
            format!("{:.2}", row.mean_ms),
            format!("{:.2}", row.min_ms),
            format!("{:.2}", row.p50_ms)
        );
        assert!(line.contains(&cells), "{line:?} lacks {cells:?}");
    }
    let md = markdown::render(&r, &study);
    assert!(
        md.contains("| step | offered | achieved/s | success | avg ms | min ms | p50 ms | p90 ms | p95 ms | p99 ms | max ms | < 50 ms | < 100 ms | < 200 ms |"),
        "{md}"
    );
    assert!(md.contains("FAIL"), "{md}");
}

#[test]
fn threshold_values_are_in_the_threshold_unit() {
    use perfbase_report::study_text::threshold_value;
    assert_eq!(threshold_value("p99 < 50ms", 12.345).unwrap(), "12.3 ms");
    assert_eq!(
        threshold_value("error_rate < 1%", 0.0123).unwrap(),
        "1.23 %"
    );
    assert_eq!(threshold_value("rps > 100", 250.0).unwrap(), "250.0/s");
    assert_eq!(threshold_value("p99 < 50ms", f64::NAN), None);
}
