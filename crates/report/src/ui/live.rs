//! The runs in progress: each run whose agents beat in the store now, leading to its live
//! view (the dashboard's page, fed from the store).

use crate::table::{Cell, Table};
use perfbase_core::percent::encode_component;

/// A run in progress as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveItem {
    pub run: String,
    pub segments: u64,
    pub age_ms: i64,
}

/// The live page's body.
pub fn list(runs: &[LiveItem]) -> String {
    // The list follows the store without a script: the page reloads itself.
    let mut out = String::from("<meta http-equiv=\"refresh\" content=\"5\">\n<h1>Live</h1>\n");
    if runs.is_empty() {
        out.push_str(
            "<p id=\"none\">No run in progress. A run shows here while its agents beat in this \
             store: <code>perfbase agent PLAN.toml --run-id ID --segment 0/1</code> on one \
             machine, or the pods of <code>perfbase k8s</code>. This page reloads every 5 s.</p>\n",
        );
    } else {
        let rows = runs
            .iter()
            .map(|r| {
                vec![
                    Cell::from(r.run.as_str()).link(format!("/live/{}/", encode_component(&r.run))),
                    Cell::from(r.segments.to_string()),
                    Cell::from(format!("{:.1} s ago", r.age_ms as f64 / 1000.0)),
                ]
            })
            .collect();
        Table::new(&["run", "agents", "last heartbeat"], rows, 1)
            .class("live")
            .html(&mut out);
    }
    out
}
