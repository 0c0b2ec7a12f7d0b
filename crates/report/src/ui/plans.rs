//! The plans (each with its count of runs and its newest) and one plan's page: the gate's
//! verdict on its newest run (`trend --check`), the history of the baselines that named its
//! runs, and its trend's charts with their change points.

use super::{href, plan_href};
use crate::svg::escape;
use crate::table::{Cell, Look, Table};
use perfbase_core::trend::Trend;
use std::fmt::Write;

/// A plan as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanItem {
    pub plan: String,
    pub runs: u64,
    pub newest: i64,
    pub newest_started_at: String,
}

/// The plans page's body.
pub fn list(plans: &[PlanItem]) -> String {
    let mut out = String::from("<h1>Plans</h1>\n");
    if plans.is_empty() {
        out.push_str(
            "<p>No stored run of a plan yet: runs of plan files (perfbase run PLAN.toml) are \
             listed here by their plan's name.</p>\n",
        );
        return out;
    }
    let rows = plans
        .iter()
        .map(|p| {
            vec![
                Cell::from(p.plan.as_str()).link(plan_href(&p.plan)),
                Cell::from(p.runs.to_string()).link(href("/", &[("plan", &p.plan)])),
                Cell::from(p.newest.to_string()).link(format!("/runs/{}", p.newest)),
                Cell::from(p.newest_started_at.as_str()),
            ]
        })
        .collect();
    Table::new(&["plan", "runs", "newest run", "started (UTC)"], rows, 1)
        .words_in(&[3])
        .class("plans")
        .html(&mut out);
    out
}

/// What one plan's page shows.
pub struct PlanView<'a> {
    pub plan: &'a str,
    pub runs: u64,
    /// The trend over its runs, with the gate's verdict on the newest.
    pub trend: &'a Trend,
    /// (baseline, run id, set at), newest first.
    pub baselines: &'a [(String, i64, String)],
}

/// A plan's page body.
pub fn plan(v: &PlanView) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = writeln!(
        out,
        "<h1>Plan {}</h1>\n<p class=\"meta\">{} stored runs · <a href=\"{}\">list them</a></p>",
        escape(v.plan),
        v.runs,
        escape(&href("/", &[("plan", v.plan)]))
    );
    if let Some(check) = &v.trend.check {
        let (word, look) = if check.passed {
            ("the gate passes on the newest run", Look::Pass)
        } else {
            ("the gate fails on the newest run", Look::Fail)
        };
        let _ = writeln!(
            out,
            "<h2>Gate</h2>\n<p id=\"gate\" data-passed=\"{}\" class=\"{}\"><strong>{word}</strong> \
             (trend --check, tolerance {:.1} %)</p>",
            check.passed,
            if look == Look::Pass { "pass" } else { "fail" },
            check.tolerance * 100.0
        );
    }
    out.push_str("<h2>Baselines</h2>\n");
    if v.baselines.is_empty() {
        out.push_str("<p>No baseline has named a run of this plan.</p>\n");
    } else {
        let rows = v
            .baselines
            .iter()
            .map(|(name, id, at)| {
                vec![
                    Cell::from(name.as_str()),
                    Cell::from(id.to_string()).link(format!("/runs/{id}")),
                    Cell::from(at.as_str()),
                ]
            })
            .collect();
        Table::new(&["baseline", "run", "set at (UTC)"], rows, 1)
            .words_in(&[2])
            .class("baselines")
            .html(&mut out);
    }
    out.push_str("<h2>Trend</h2>\n");
    crate::trend::html::body(&mut out, v.trend);
    out
}
