//! The runs page: the filter form, one page of runs newest first with their headline figures,
//! and the links to the next page.

use super::{href, plan_href};
use crate::study_text::ms;
use crate::svg::escape;
use crate::table::{Cell, Look, Table};
use crate::{thousands, thousands_f};
use std::fmt::Write;

/// One run as listed, its texts already redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub started_at: String,
    pub plan: String,
    pub kind: String,
    pub target: String,
    pub outcome: String,
    pub requests: u64,
    pub rps: f64,
    pub success_ratio: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub labels: Vec<(String, String)>,
    /// The source's commit, branch or build, as one text.
    pub source: String,
}

/// The filter as the form shows it (what was asked, refilled as written).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub plan: String,
    /// `key=value`, comma-separated.
    pub label: String,
    pub source: String,
    pub since: String,
    pub until: String,
    pub outcome: String,
}

impl Filter {
    /// The filter's pairs, for a link that keeps it.
    pub fn pairs(&self) -> Vec<(&str, &str)> {
        vec![
            ("plan", self.plan.as_str()),
            ("label", self.label.as_str()),
            ("source", self.source.as_str()),
            ("since", self.since.as_str()),
            ("until", self.until.as_str()),
            ("outcome", self.outcome.as_str()),
        ]
    }
}

/// What the runs page shows.
pub struct RunsView<'a> {
    pub rows: &'a [RunRow],
    /// How many runs the filter matches in all.
    pub total: u64,
    pub filter: &'a Filter,
    /// Every plan, for the form's list.
    pub plans: &'a [String],
    /// The outcomes the form offers.
    pub outcomes: &'a [&'a str],
    /// The id the next (older) page starts below, when there is one.
    pub older: Option<i64>,
    /// Whether this is not the newest page.
    pub paged: bool,
}

/// The page's body.
pub fn body(v: &RunsView) -> String {
    let mut out = String::from("<h1>Runs</h1>\n");
    form(&mut out, v);
    let shown = v.rows.len();
    let _ = writeln!(
        out,
        "<p class=\"meta\" id=\"count\" data-total=\"{}\">{} run{} match{}; {} shown, newest first.</p>",
        v.total,
        thousands(v.total),
        if v.total == 1 { "" } else { "s" },
        if v.total == 1 { "es" } else { "" },
        shown
    );
    if shown > 0 {
        table(v.rows).class("runs").html(&mut out);
    }
    out.push_str("<p class=\"pages\">");
    if v.paged {
        let _ = write!(
            out,
            "<a href=\"{}\">newest</a>",
            escape(&href("/", &v.filter.pairs()))
        );
    }
    if let Some(before) = v.older {
        let mut pairs = v.filter.pairs();
        let before = before.to_string();
        pairs.push(("before", &before));
        let _ = write!(
            out,
            "<a id=\"older\" href=\"{}\">older runs</a>",
            escape(&href("/", &pairs))
        );
    }
    out.push_str("</p>\n");
    out
}

fn form(out: &mut String, v: &RunsView) {
    let f = v.filter;
    out.push_str("<form class=\"filter\" method=\"get\" action=\"/\">");
    let _ = write!(
        out,
        "<label>plan<select name=\"plan\"><option value=\"\">any</option>"
    );
    for p in v.plans {
        let sel = if *p == f.plan { " selected" } else { "" };
        let _ = write!(out, "<option value=\"{0}\"{sel}>{0}</option>", escape(p));
    }
    out.push_str("</select></label>");
    for (name, value, hint, kind) in [
        ("label", &f.label, "key=value,…", "text"),
        ("source", &f.source, "commit or branch", "text"),
        ("since", &f.since, "", "date"),
        ("until", &f.until, "", "date"),
    ] {
        let _ = write!(
            out,
            "<label>{name}<input type=\"{kind}\" name=\"{name}\" value=\"{}\" placeholder=\"{hint}\"></label>",
            escape(value)
        );
    }
    out.push_str("<label>outcome<select name=\"outcome\"><option value=\"\">any</option>");
    for o in v.outcomes {
        let sel = if *o == f.outcome { " selected" } else { "" };
        let _ = write!(out, "<option value=\"{o}\"{sel}>{o}</option>");
    }
    out.push_str("</select></label><button type=\"submit\">filter</button></form>\n");
}

/// The runs as the report's table model.
pub fn table(rows: &[RunRow]) -> Table {
    let body = rows
        .iter()
        .map(|r| {
            let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let outcome = match r.outcome.as_str() {
                "passed" => Cell::new("passed", Look::Pass),
                other => Cell::new(other, Look::Fail),
            };
            let plan = if r.plan.is_empty() {
                Cell::from("—")
            } else {
                Cell::from(r.plan.as_str()).link(plan_href(&r.plan))
            };
            vec![
                Cell::from(r.id.to_string()).link(format!("/runs/{}", r.id)),
                Cell::from(
                    r.started_at
                        .chars()
                        .take(19)
                        .collect::<String>()
                        .replace('T', " "),
                ),
                plan,
                Cell::from(r.kind.as_str()),
                Cell::code(r.target.as_str()),
                outcome,
                Cell::from(labels.join(", ")),
                Cell::from(r.source.as_str()),
                Cell::from(thousands(r.requests)),
                Cell::from(thousands_f(r.rps)),
                Cell::success(r.success_ratio),
                Cell::from(ms(r.p50_ms)),
                Cell::from(ms(r.p99_ms)),
            ]
        })
        .collect();
    Table::new(
        &[
            "run",
            "started (UTC)",
            "plan",
            "kind",
            "target",
            "outcome",
            "labels",
            "source",
            "requests",
            "req/s",
            "success",
            "p50 ms",
            "p99 ms",
        ],
        body,
        8,
    )
}
