//! The API section as the published page has it: one table per implementation with a row per
//! endpoint (p50, p95, p99, max, the row's ±, a note), then each implementation against the
//! first at the same endpoint and load, tested over the per-run figures.

use super::markup::Block;
use super::precision;
use super::signif;
use super::{table_cells, ApiRow, PageInput};
use crate::study_text::{ms, offered};
use crate::table::Cell;
use perfbase_analysis::versus::versus_step;
use perfbase_core::study::{ScenarioStudy, StepRow, VersusStep};

/// The columns of a comparison, after what it compares at.
const COMPARED: [&str; 7] = [
    "A",
    "B",
    "A mean",
    "B mean",
    "B vs A",
    "significance",
    "verdict",
];

/// Two implementations' scenarios at one endpoint under the same load, and their comparison.
pub(crate) struct ApiPair<'a> {
    pub endpoint: &'a str,
    /// The load both ran at (`c=1`).
    pub load: String,
    pub a: &'a ApiRow,
    pub b: &'a ApiRow,
    pub versus: VersusStep,
}

fn scenario<'a>(input: &'a PageInput<'_>, name: &str) -> Option<&'a ScenarioStudy> {
    input.study.scenarios.iter().find(|s| s.name == name)
}

/// The implementations in the order the plan first names them.
fn implementations(api: &[ApiRow]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for row in api {
        if !out.contains(&row.implementation.as_str()) {
            out.push(&row.implementation);
        }
    }
    out
}

/// The load a scenario's first step offered, which decides what compares with what.
fn load(s: &ScenarioStudy) -> String {
    s.steps
        .first()
        .map(|r| offered(&r.offered))
        .unwrap_or_default()
}

/// Every like-for-like pair: per endpoint and load, the first implementation against each
/// later one. Scenarios that did not run, or have no runs on one side, are left out.
pub(crate) fn pairs<'a>(input: &'a PageInput<'_>) -> Vec<ApiPair<'a>> {
    let mut out = Vec::new();
    for (i, a) in input.api.iter().enumerate() {
        let Some(sa) = scenario(input, &a.scenario) else {
            continue;
        };
        // `a` leads when no earlier row has its endpoint and load.
        let leads = !input.api[..i].iter().any(|e| {
            e.endpoint == a.endpoint
                && scenario(input, &e.scenario).is_some_and(|s| load(s) == load(sa))
        });
        if !leads {
            continue;
        }
        for b in &input.api[i + 1..] {
            let Some(sb) = scenario(input, &b.scenario) else {
                continue;
            };
            if b.endpoint != a.endpoint
                || load(sb) != load(sa)
                || b.implementation == a.implementation
            {
                continue;
            }
            let runs_a = signif::runs_of(input.result, &a.scenario, 0);
            let runs_b = signif::runs_of(input.result, &b.scenario, 0);
            if runs_a.is_empty() || runs_b.is_empty() {
                continue;
            }
            if let Some(versus) = versus_step(&a.endpoint, &b.implementation, runs_a, runs_b) {
                out.push(ApiPair {
                    endpoint: &a.endpoint,
                    load: load(sa),
                    a,
                    b,
                    versus,
                });
            }
        }
    }
    out
}

/// A latency cell with its unit, as the published tables write them.
fn at_ms(v: f64) -> String {
    if v.is_finite() {
        format!("{} ms", ms(v))
    } else {
        "—".into()
    }
}

/// The section's blocks: the tables per implementation, then the comparisons.
pub(crate) fn blocks(input: &PageInput<'_>) -> Vec<Block> {
    let mut blocks = Vec::new();
    for implementation in implementations(&input.api) {
        let mut rows = Vec::new();
        let mut loads: Vec<String> = Vec::new();
        for row in input
            .api
            .iter()
            .filter(|r| r.implementation == implementation)
        {
            let Some(s) = scenario(input, &row.scenario) else {
                continue; // interrupted before it ran
            };
            if !loads.contains(&load(s)) {
                loads.push(load(s));
            }
            rows.extend(s.steps.iter().map(|step| endpoint_row(row, s, step)));
        }
        if rows.is_empty() {
            continue;
        }
        blocks.push(Block::Heading(format!(
            "{implementation} — latency per request ({})",
            loads.join(", ")
        )));
        blocks.push(table_cells(
            &["Endpoint", "p50", "p95", "p99", "Max", "±", "Notes"],
            rows,
            1,
            &[6],
        ));
    }
    blocks.extend(comparisons(input));
    blocks.extend(within(input));
    blocks
}

/// The plan's `[[versus]]` between two endpoints of one implementation (health checks in
/// turn against at once, on the same stack): a table of their own, since the pairs above
/// compare implementations.
fn within(input: &PageInput<'_>) -> Vec<Block> {
    let row_of = |name: &str| input.api.iter().find(|r| r.scenario == name);
    let mut rows = Vec::new();
    for v in &input.study.versus {
        let (Some(a), Some(b)) = (row_of(&v.a), row_of(&v.b)) else {
            continue;
        };
        if a.implementation != b.implementation {
            continue;
        }
        for step in &v.steps {
            let Some(mean) = step.stats.iter().find(|s| s.stat == "mean") else {
                continue;
            };
            rows.push(vec![
                Cell::from(a.implementation.clone()),
                Cell::from(a.endpoint.clone()),
                Cell::from(b.endpoint.clone()),
                Cell::from(at_ms(mean.a.mean)),
                Cell::from(at_ms(mean.b.mean)),
                Cell::from(mean.delta_pct.map_or("—".into(), |d| format!("{d:+.1} %"))),
                Cell::from(signif::significance(mean)),
                Cell::from(verdict(&b.endpoint, mean)),
            ]);
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading("Within each implementation".into()),
        Block::Text(
            "The plan's comparisons of two endpoints on one implementation, their runs \
             interleaved; tested as above."
                .into(),
        ),
        table_cells(
            &[&["implementation"][..], &COMPARED].concat(),
            rows,
            3,
            &[6, 7],
        ),
    ]
}

/// "X is 12 % faster", "X is 3 % slower", or why the runs do not tell.
fn verdict(b: &str, mean: &perfbase_core::study::VersusStat) -> String {
    if signif::resolved(mean) {
        match mean.delta_pct {
            Some(d) if d < 0.0 => format!("{b} is {:.0} % faster", -d),
            Some(d) => format!("{b} is {d:.0} % slower"),
            None => "resolved".into(),
        }
    } else {
        format!(
            "not resolved with {}",
            signif::runs_phrase(mean.a.n, mean.b.n)
        )
    }
}

/// A row of an implementation's table: `step` of the scenario behind `row`.
fn endpoint_row(row: &ApiRow, s: &ScenarioStudy, step: &StepRow) -> Vec<Cell> {
    let endpoint = if s.steps.len() > 1 {
        format!("{} ({})", row.endpoint, step.name)
    } else {
        row.endpoint.clone()
    };
    let mut note = row.note.clone();
    if step.success_ratio < 1.0 {
        let failed = format!("{:.2} % failed", (1.0 - step.success_ratio) * 100.0);
        note = if note.is_empty() {
            failed
        } else {
            format!("{note}; {failed}")
        };
    }
    vec![
        Cell::from(endpoint),
        Cell::from(at_ms(step.p50_ms)),
        Cell::from(at_ms(step.p95_ms)),
        Cell::from(at_ms(step.p99_ms)),
        Cell::from(at_ms(step.max_ms)),
        precision_cell(precision::cell(s, &step.name)),
        Cell::from(note),
    ]
}

/// "A vs B per endpoint": every implementation against the first at the same endpoint and
/// load, with the significance of the difference.
fn comparisons(input: &PageInput<'_>) -> Vec<Block> {
    let pairs = pairs(input);
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut blocks = Vec::new();
    blocks.push(Block::Heading("A vs B per endpoint".into()));
    blocks.push(Block::Text(
        "Each pair ran at the same endpoint and load; the mean latency of every run is \
             compared with Welch's t-test on their logarithms, and a difference counts as resolved \
             at p < 0.05."
            .into(),
    ));
    let rows = pairs.iter().map(pair_row).collect();
    blocks.push(table_cells(
        &[&["Endpoint", "load"][..], &COMPARED].concat(),
        rows,
        4,
        &[7, 8],
    ));
    blocks
}

/// The ± cell, in bold when it missed its target (so the mark stands out in both markups).
pub(crate) fn precision_cell(p: precision::Precision) -> Cell {
    if p.missed {
        Cell::new(p.text, crate::table::Look::Fail)
    } else {
        Cell::from(p.text)
    }
}

fn pair_row(p: &ApiPair<'_>) -> Vec<Cell> {
    let Some(mean) = p.versus.stats.iter().find(|s| s.stat == "mean") else {
        return Vec::new();
    };
    let delta = mean.delta_pct.map_or("—".into(), |d| format!("{d:+.1} %"));
    let verdict = verdict(&p.b.implementation, mean);
    vec![
        Cell::from(p.endpoint),
        Cell::from(p.load.clone()),
        Cell::from(p.a.implementation.clone()),
        Cell::from(p.b.implementation.clone()),
        Cell::from(at_ms(mean.a.mean)),
        Cell::from(at_ms(mean.b.mean)),
        Cell::from(delta),
        Cell::from(signif::significance(mean)),
        Cell::from(verdict),
    ]
}
