//! A command's suite (`perfbase redis -w suite`, `pg -w suite`…) on the terminal: its title,
//! one row per operation on the table model, then each operation's error samples.

use crate::table::text::{Column, Layout};
use crate::table::{Cell, Table};
use perfbase_core::result::RunResult;
use std::fmt::Write as _;

/// The suite's title, its table of operations and their error samples.
pub fn render_suite(result: &RunResult, title: &str) -> String {
    let mut out = format!("{title}\n");
    // An operation that completed nothing has no latency.
    let ms = |v: f64| {
        if v.is_nan() {
            "—".to_string()
        } else {
            format!("{v:.3}")
        }
    };
    let rows = result
        .phases
        .iter()
        .map(|p| {
            let m = &p.measurement;
            vec![
                Cell::from(p.name.as_str()),
                crate::thousands(m.requests).into(),
                crate::thousands_f(m.rps).into(),
                ms(m.latency_ms.mean).into(),
                ms(m.latency_ms.p95).into(),
                ms(m.latency_ms.p99).into(),
                crate::thousands(m.errors.values().sum::<u64>()).into(),
            ]
        })
        .collect();
    let head = [
        "operation",
        "ops",
        "ops/s",
        "avg ms",
        "p95 ms",
        "p99 ms",
        "errors",
    ];
    let table = Table::new(&head, rows, 1);
    // The operation column as wide as its longest name, at least 12; the figures fixed.
    let widths = [10, 12, 9, 9, 9, 8];
    let mut columns = vec![Column::fit().at_least(12)];
    columns.extend(widths.iter().map(|&w| Column::fixed(w)));
    table.text(&Layout::new("  ", columns), false, &mut out);
    for p in &result.phases {
        for e in &p.measurement.error_samples {
            let _ = writeln!(out, "  {}: {} ×{}: {}", p.name, e.class, e.count, e.message);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suite table as `perfbase` printed it by hand before the table model drew it.
    fn by_hand(result: &RunResult, title: &str) -> String {
        let mut out = format!("{title}\n");
        let w = result
            .phases
            .iter()
            .map(|p| p.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(12);
        let _ = writeln!(
            out,
            "  {:<w$} {:>10} {:>12} {:>9} {:>9} {:>9} {:>8}",
            "operation", "ops", "ops/s", "avg ms", "p95 ms", "p99 ms", "errors"
        );
        let ms = |v: f64| {
            if v.is_nan() {
                "—".to_string()
            } else {
                format!("{v:.3}")
            }
        };
        for p in &result.phases {
            let m = &p.measurement;
            let _ = writeln!(
                out,
                "  {:<w$} {:>10} {:>12} {:>9} {:>9} {:>9} {:>8}",
                p.name,
                crate::thousands(m.requests),
                crate::thousands_f(m.rps),
                ms(m.latency_ms.mean),
                ms(m.latency_ms.p95),
                ms(m.latency_ms.p99),
                crate::thousands(m.errors.values().sum::<u64>())
            );
        }
        for p in &result.phases {
            for e in &p.measurement.error_samples {
                let _ = writeln!(out, "  {}: {} ×{}: {}", p.name, e.class, e.count, e.message);
            }
        }
        out
    }

    fn results() -> Vec<RunResult> {
        let base: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/failed_study.json"))
                .expect("fixture parses");
        // A long operation name widens the first column, an empty phase has no latency, and
        // error samples follow the table.
        let mut varied = base.clone();
        varied["phases"][0]["name"] = "an-operation-with-a-long-name".into();
        varied["phases"][1]["latency_ms"]["mean"] = serde_json::Value::Null;
        varied["phases"][1]["error_samples"] = serde_json::json!([
            { "class": "timeout", "count": 3, "message": "no answer within 5 s" },
            { "class": "http_5xx", "count": 1, "message": "503 Service Unavailable" }
        ]);
        [base, varied]
            .into_iter()
            .map(|v| serde_json::from_value(v).expect("a result"))
            .collect()
    }

    #[test]
    fn the_table_model_draws_the_suite_as_it_was_drawn_by_hand() {
        for r in results() {
            assert!(!r.phases.is_empty());
            assert_eq!(render_suite(&r, "suite title"), by_hand(&r, "suite title"));
        }
    }
}
