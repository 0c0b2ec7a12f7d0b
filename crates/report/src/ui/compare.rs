//! A vs B: `perfbase compare`'s verdicts for two stored runs (or a run and a baseline), each
//! entry's metrics as the report's table model, then both runs side by side as the report of
//! several runs opens (their table and their latency distributions on one chart).

use crate::compare::{delta, p_cell, runs_note, value};
use crate::svg::escape;
use crate::table::{Cell, Look, Table};
use perfbase_analysis::versus::runs::Comparison;
use perfbase_core::result::RunResult;
use std::fmt::Write;

/// The page's body: `c` judged A (`a`) against B (`b`), each side linked to its run page.
pub fn body(c: &Comparison, a: (&str, &RunResult), b: (&str, &RunResult)) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = writeln!(
        out,
        "<h1>A vs B</h1>\n<p>A: <a href=\"{}\">{}</a> · B: <a href=\"{}\">{}</a></p>",
        escape(a.0),
        escape(&c.a),
        escape(b.0),
        escape(&c.b)
    );
    let _ = writeln!(
        out,
        "<p class=\"meta\">How differences are judged: {}.</p>",
        escape(&c.method)
    );
    if !c.not_like_for_like.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"error\" id=\"unlike\">Not like for like: A and B differ in {}; their \
             deltas say as much about that as about the system under test.</p>",
            escape(&c.not_like_for_like.join(", "))
        );
    }
    let verdict = if c.regressed() {
        "B regressed"
    } else {
        "no regression"
    };
    let _ = writeln!(out, "<p id=\"verdict\"><strong>{verdict}</strong></p>");
    for e in &c.entries {
        let runs = runs_note(e);
        let _ = writeln!(
            out,
            "<h2>{}{}: {}{}</h2>",
            escape(&e.name),
            escape(&runs),
            escape(&e.verdict),
            if e.regression { " — regression" } else { "" }
        );
        if e.metrics.is_empty() {
            continue;
        }
        let rows = e
            .metrics
            .iter()
            .map(|m| {
                let look = if m.worse {
                    Look::Fail
                } else if m.better {
                    Look::Pass
                } else {
                    Look::Plain
                };
                vec![
                    Cell::from(m.metric.as_str()),
                    Cell::from(value(&m.metric, m.a)),
                    Cell::from(value(&m.metric, m.b)),
                    Cell::from(delta(&m.metric, m.delta, m.delta_pct)),
                    Cell::from(p_cell(m.p_value)),
                    Cell::new(m.verdict.as_str(), look),
                ]
            })
            .collect();
        Table::new(&["metric", "A", "B", "delta", "p", "verdict"], rows, 1)
            .words_in(&[5])
            .class("verdicts")
            .html(&mut out);
    }
    out.push_str("<h2>Side by side</h2>\n<p class=\"meta\">#1 is A, #2 is B.</p>\n");
    crate::html::side_by_side(&mut out, &[a.1.clone(), b.1.clone()]);
    out
}
