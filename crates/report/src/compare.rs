//! Comparison and ranking tables, for the terminal and for Markdown.

use crate::study_text::ms;
use crate::thousands_f;
use perfbase_analysis::comparison::{Comparison, RankRow};
use std::fmt::Write;

fn value(metric: &str, v: f64) -> String {
    match metric {
        "rps" => thousands_f(v),
        "error_rate" => format!("{:.2} %", v * 100.0),
        _ => ms(v),
    }
}

fn delta(metric: &str, d: f64, pct: Option<f64>) -> String {
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
        let runs = if e.runs_a > 1 || e.runs_b > 1 {
            format!(" ({} vs {} runs)", e.runs_a, e.runs_b)
        } else {
            String::new()
        };
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
                m.p_value.map_or("-".into(), |p| format!("{p:.4}")),
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

/// A ranking table whose entries are called `what` (targets, scenarios).
pub fn render_ranking_of(rows: &[RankRow], what: &str) -> String {
    let mut out = format!(
        "| rank | {what} | req/s | mean ms | p99 ms | success |\n|---|---|---|---|---|---|\n"
    );
    for r in rows {
        let ordinal = match r.rank {
            1 => "1st".to_string(),
            2 => "2nd".to_string(),
            3 => "3rd".to_string(),
            n => format!("{n}th"),
        };
        let _ = writeln!(
            out,
            "| {ordinal} | {} | {} | {} | {} | {:.2} % |",
            r.label,
            thousands_f(r.rps),
            ms(r.mean_ms),
            ms(r.p99_ms),
            r.success_ratio * 100.0
        );
    }
    out
}
