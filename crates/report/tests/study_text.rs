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
    // The scenario's threshold summary and the check.
    assert_eq!(failed.len(), 2, "{colored}");
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
    assert_eq!(plain.lines().filter(|l| l.contains("FAIL")).count(), 2);
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
