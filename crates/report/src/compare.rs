//! Comparison and ranking tables, for the terminal and for Markdown.

use crate::study_text::ms;
use crate::thousands_f;
use perfbase_analysis::versus::runs::{Comparison, RankRow};
use std::fmt::Write;

pub(crate) fn value(metric: &str, v: f64) -> String {
    match metric {
        "rps" => thousands_f(v),
        "error_rate" => format!("{:.2} %", v * 100.0),
        _ => ms(v),
    }
}

pub(crate) fn delta(metric: &str, d: f64, pct: Option<f64>) -> String {
    let abs = match metric {
        "rps" => format!("{d:+.1}"),
        "error_rate" => format!("{:+.2} pp", d * 100.0),
        _ => format!("{d:+.3} ms"),
    };
    match pct {
        Some(p) => format!("{abs} ({:+.1} %)", p * 100.0),
        None => abs,
    }
}

/// " (3 vs 3 runs)" after an entry's name when a side has repeated runs.
pub(crate) fn runs_note(e: &perfbase_analysis::versus::runs::EntryComparison) -> String {
    if e.runs_a > 1 || e.runs_b > 1 {
        format!(" ({} vs {} runs)", e.runs_a, e.runs_b)
    } else {
        String::new()
    }
}

/// A p value in a column headed "p": "0.11", "< 0.001", "-" when there is none.
pub(crate) fn p_cell(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| {
        let text = perfbase_analysis::versus::welch::p_text(p);
        text.trim_start_matches("p ")
            .trim_start_matches("= ")
            .to_string()
    })
}

/// Markdown (also readable in a terminal): one table per compared entry.
pub fn render(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## A: {}  vs  B: {}\n", c.a, c.b);
    let _ = writeln!(out, "How differences are judged: {}.\n", c.method);
    if !c.not_like_for_like.is_empty() {
        let _ = writeln!(
            out,
            "**Not like for like**: A and B differ in {}; their deltas say as much about that \
             as about the system under test.\n",
            c.not_like_for_like.join(", ")
        );
    }
    for e in &c.entries {
        let runs = runs_note(e);
        let _ = writeln!(
            out,
            "### {}{runs}: **{}**{}\n",
            e.name,
            e.verdict,
            if e.regression { " — regression" } else { "" }
        );
        if e.metrics.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "| metric | A | B | delta | p | verdict |\n|---|---|---|---|---|---|"
        );
        for m in &e.metrics {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                m.metric,
                value(&m.metric, m.a),
                value(&m.metric, m.b),
                delta(&m.metric, m.delta, m.delta_pct),
                p_cell(m.p_value),
                m.verdict
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// A ranking of several targets by throughput.
pub fn render_ranking(rows: &[RankRow]) -> String {
    render_ranking_of(rows, "target")
}

/// A ranking table whose entries are called `what` (targets, scenarios), as Markdown.
pub fn render_ranking_of(rows: &[RankRow], what: &str) -> String {
    let mut out = String::new();
    crate::study_tables::ranking(rows, what).markdown(&mut out);
    out
}

/// The schema name of a comparison's JSON document.
pub const COMPARISON_SCHEMA: &str = "perfbase.comparison/v1";

/// What a comparison command decided, for CI: `compare` (A vs B), `baseline-check` (the gate)
/// or `ranking` (three runs or more).
pub struct Verdicts<'a> {
    pub kind: &'a str,
    /// The baseline's name, for a check.
    pub baseline: Option<&'a str>,
    pub comparison: Option<&'a Comparison>,
    pub ranking: Option<&'a [RankRow]>,
    /// The command's own verdict: its exit code is 0 exactly when this holds.
    pub passed: bool,
}

/// The comparison as one JSON document (`perfbase.comparison/v1`, in docs/result-schema.md).
pub fn render_json(v: &Verdicts) -> String {
    let doc = serde_json::json!({
        "schema": COMPARISON_SCHEMA,
        "tool": { "name": "perfbase", "version": env!("CARGO_PKG_VERSION") },
        "kind": v.kind,
        "baseline": v.baseline,
        "passed": v.passed,
        "regressed": v.comparison.map(Comparison::regressed),
        "comparison": v.comparison,
        "ranking": v.ranking,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// The verdicts as JUnit XML: one test case per compared entry (a regression fails it), one
/// for a comparison that is not like for like, one per ranked run.
pub fn render_junit(v: &Verdicts) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let case = |name: &str, failure: Option<String>, out: String| {
        let status = match failure {
            None => TestCaseStatus::success(),
            Some(message) => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(message).set_type(v.kind);
                s
            }
        };
        let mut c = TestCase::new(name, status);
        c.set_classname(format!("perfbase.{}", v.kind))
            .set_system_out(out);
        c
    };
    let name = match (v.baseline, v.comparison) {
        (Some(b), _) => format!("perfbase baseline check {b}"),
        (None, Some(c)) => format!("perfbase compare {} vs {}", c.a, c.b),
        (None, None) => "perfbase ranking".to_string(),
    };
    let mut suite = TestSuite::new(name.as_str());
    if let Some(c) = v.comparison {
        if !c.not_like_for_like.is_empty() {
            suite.add_test_case(case(
                "like for like",
                Some(format!(
                    "A and B differ in {}",
                    c.not_like_for_like.join(", ")
                )),
                format!("A: {}\nB: {}", c.a, c.b),
            ));
        }
        for e in &c.entries {
            // The metrics that moved, with their units, so the failure reads on its own.
            let moved: Vec<String> = e
                .metrics
                .iter()
                .filter(|m| m.significant)
                .map(|m| {
                    format!(
                        "{} {} → {} ({})",
                        m.metric,
                        value(&m.metric, m.a),
                        value(&m.metric, m.b),
                        delta(&m.metric, m.delta, m.delta_pct)
                    )
                })
                .collect();
            let failure = e
                .regression
                .then(|| format!("{}: {}", e.verdict, moved.join("; ")));
            suite.add_test_case(case(
                &e.name,
                failure,
                format!("{}; {}", e.verdict, c.method),
            ));
        }
    }
    for r in v.ranking.unwrap_or_default() {
        suite.add_test_case(case(
            &format!("#{} {}", r.rank, r.label),
            None,
            format!("{} req/s, p99 {}", thousands_f(r.rps), ms(r.p99_ms)),
        ));
    }
    let mut report = Report::new("perfbase");
    report.add_test_suite(suite);
    report.to_string().unwrap_or_default()
}
