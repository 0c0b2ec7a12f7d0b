//! One run's page: what the store knows of it (labels, source, environment and its
//! fingerprint, the baselines naming it), its downloads, the way to its plan's trend and to a
//! comparison, then its HTML report's own sections.

use super::{href, plan_href};
use crate::svg::escape;
use crate::table::{Cell, Table};
use perfbase_core::result::RunResult;
use std::fmt::Write;

/// What the store says of a run, its texts already redacted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFacts {
    pub id: i64,
    pub saved_at: String,
    pub plan: String,
    pub kind: String,
    pub outcome: String,
    pub labels: Vec<(String, String)>,
    pub source: Vec<(String, String)>,
    pub fingerprint: String,
    /// Baselines that point at this run now.
    pub baselines: Vec<String>,
    /// What "compare with" offers: (what the comparison calls it, its reference: an id or
    /// `baseline:NAME`).
    pub compare_with: Vec<(String, String)>,
}

/// The page's body.
pub fn body(f: &RunFacts, result: &RunResult) -> String {
    let mut out = String::with_capacity(128 * 1024);
    let _ = writeln!(out, "<h1>Run {}</h1>", f.id);
    let mut rows = vec![
        vec![Cell::from("saved"), Cell::from(f.saved_at.as_str())],
        vec![Cell::from("kind"), Cell::from(f.kind.as_str())],
        vec![Cell::from("outcome"), Cell::from(f.outcome.as_str())],
    ];
    if !f.plan.is_empty() {
        rows.push(vec![
            Cell::from("plan"),
            Cell::from(f.plan.as_str()).link(plan_href(&f.plan)),
        ]);
    }
    for (k, v) in &f.labels {
        rows.push(vec![
            Cell::from(format!("label {k}")),
            Cell::code(v.as_str()),
        ]);
    }
    for (k, v) in &f.source {
        rows.push(vec![
            Cell::from(format!("source {k}")),
            Cell::code(v.as_str()),
        ]);
    }
    if !f.fingerprint.is_empty() {
        rows.push(vec![
            Cell::from("environment"),
            Cell::from(f.fingerprint.as_str()),
        ]);
    }
    if !f.baselines.is_empty() {
        rows.push(vec![
            Cell::from("baseline of"),
            Cell::from(f.baselines.join(", ")),
        ]);
    }
    Table::new(&["", "value"], rows, 2)
        .class("facts")
        .html(&mut out);
    let _ = writeln!(
        out,
        "<p class=\"links\">Download: <a href=\"/runs/{id}.json\" download>result JSON</a> · \
         <a href=\"/runs/{id}.hlog\" download>HDR interval log (.hlog)</a>{}</p>",
        if f.plan.is_empty() {
            String::new()
        } else {
            format!(
                " · <a href=\"{}\">trend of {}</a>",
                escape(&plan_href(&f.plan)),
                escape(&f.plan)
            )
        },
        id = f.id
    );
    compare_form(&mut out, f);
    crate::html::body(&mut out, std::slice::from_ref(result));
    out
}

fn compare_form(out: &mut String, f: &RunFacts) {
    let _ = write!(
        out,
        "<form class=\"filter\" method=\"get\" action=\"/compare\"><input type=\"hidden\" \
         name=\"a\" value=\"{}\"><label>compare with<select name=\"b\">",
        f.id
    );
    for (name, reference) in &f.compare_with {
        let _ = write!(
            out,
            "<option value=\"{}\">{}</option>",
            escape(reference),
            escape(name)
        );
    }
    out.push_str(
        "</select></label><button type=\"submit\">compare</button></form>\n\
         <p class=\"meta\">Or any run: ",
    );
    let example = href("/compare", &[("a", &f.id.to_string()), ("b", "ID")]);
    let _ = writeln!(out, "<code>{}</code></p>", escape(&example));
}
