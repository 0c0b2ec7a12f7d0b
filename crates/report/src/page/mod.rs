//! A "Performance Baselines" page from one plan run: the test environment (the machine and
//! each service's version as the server reported it), the test conditions, a section per
//! kind of service with its tables, the resources the services used idle and under load,
//! observations worded from the figures, and a changelog against the previous baseline.
//! What a result cannot say (versions, which section a scenario belongs to, the previous
//! baseline) comes in [`PageInput`]; [`build`] decides the content, [`markup`] renders it.

mod api;
mod bottleneck;
mod charts;
mod history;
pub mod markup;
mod matrix;
mod observe;
mod precision;
mod signif;
#[cfg(test)]
mod tests;

use crate::study_text::{judgements, latency_cells, offered, LATENCY_HEADS};
use crate::table::{Cell, Table};
use crate::{bytes, thousands, thousands_f};
use markup::{Block, Page, Section};
pub use matrix::{Matrix, Member};
use perfbase_analysis::study::Study;
use perfbase_analysis::versus::runs::{Comparison, EntryComparison};
use perfbase_core::result::RunResult;

/// A service the plan loads, as the page's environment table shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// The section it belongs to: `API (HTTP)`, `PostgreSQL`, `Redis`…
    pub kind: String,
    /// Where it was reached, secrets redacted.
    pub address: String,
    /// Product and version as the server reported them, or why not.
    pub version: String,
}

/// A baseline of the same plan saved before this run.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub run_id: i64,
    /// When it was saved, RFC 3339.
    pub saved_at: String,
    pub tool_version: String,
}

/// The changelog: what moved since the previous baseline of the same plan, and the history of
/// its baselines (newest first, this run included once it is saved).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Changelog {
    pub previous: Option<(Baseline, Comparison)>,
    pub history: Vec<Baseline>,
    /// The plan's stored p99 and throughput per step over its runs, with their change points
    /// (`perfbase trend`'s series), for the history table.
    pub trend: Vec<perfbase_core::trend::Series>,
}

/// A scenario that measures one API endpoint of one implementation: the page draws these as
/// the published page does, a table per implementation with a row per endpoint, instead of a
/// block per scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiRow {
    /// The scenario, as the plan names it.
    pub scenario: String,
    /// The implementation's table it goes in (`A`, `B`, `A, c=100`), tables in first-seen order.
    pub implementation: String,
    /// The endpoint as the table shows it (`GET /health`).
    pub endpoint: String,
    /// What the Notes column says (`checks 7 services in turn`).
    pub note: String,
}

/// Everything the page shows beyond the run's result and study.
pub struct PageInput<'a> {
    pub title: String,
    /// When the page was made (`performance-baselines-YYYYMMDD-HHMMSS`'s time), RFC 3339.
    pub generated_at: String,
    /// This run's id in the store, when it was saved.
    pub run_id: Option<i64>,
    pub result: &'a RunResult,
    pub study: &'a Study,
    /// Each scenario's section title, by scenario name, in plan order.
    pub sections: Vec<(String, String)>,
    pub services: Vec<Service>,
    /// What scenarios close with, by scenario name: pgbench's block for TPC-B, a Redis
    /// Cluster's redirects and replies per node.
    pub closing: Vec<(String, String)>,
    pub changelog: Changelog,
    /// The scenarios that are API endpoints, in the order their tables show them.
    pub api: Vec<ApiRow>,
    /// The plan's `[[matrices]]`, a section each.
    pub matrices: Vec<Matrix>,
}

/// The page of `input`.
pub fn build(input: &PageInput<'_>) -> Page {
    let r = input.result;
    let mut intro = vec![
        format!(
            "Generated {} by perfbase {}",
            input.generated_at, r.env.tool_version
        ),
        format!("Plan: {}", r.target),
    ];
    if let Some(id) = input.run_id {
        intro.push(format!("Stored as run {id}"));
    }
    let mut sections = vec![environment(input), conditions(input)];
    sections.extend(matrix::sections(input));
    let mut kinds: Vec<&str> = Vec::new();
    for (name, kind) in &input.sections {
        // A kind whose every scenario is in a matrix has nothing left to show.
        if !kinds.contains(&kind.as_str()) && !matrix::in_matrix(input, name) {
            kinds.push(kind);
        }
    }
    // The API tables go in the section of the first API scenario, or in one of their own.
    let api_kind = input.api.iter().find_map(|a| {
        input
            .sections
            .iter()
            .find(|(n, _)| *n == a.scenario)
            .map(|(_, k)| k.as_str())
    });
    if api_kind.is_none() && !input.api.is_empty() {
        let mut api = service_section(input, "API");
        api.blocks.splice(0..0, api_blocks(input));
        sections.push(api);
    }
    for kind in kinds {
        let mut section = service_section(input, kind);
        if api_kind == Some(kind) {
            section.blocks.splice(0..0, api_blocks(input));
        }
        sections.push(section);
    }
    if !input.study.checks.is_empty() {
        sections.push(checks(input.study));
    }
    if let Some(s) = resources(r) {
        sections.push(s);
    }
    if let Some(s) = bottleneck::section(input) {
        sections.push(s);
    }
    sections.push(Section {
        title: "Observations".into(),
        blocks: vec![Block::List(observe::observations(input))],
    });
    sections.push(changelog(&input.changelog));
    Page {
        title: input.title.clone(),
        intro,
        sections,
    }
}

/// The API tables and comparisons, and their charts (HTML only).
fn api_blocks(input: &PageInput<'_>) -> Vec<Block> {
    let mut blocks = api::blocks(input);
    if !blocks.is_empty() {
        blocks.push(Block::Text(precision_legend(input)));
    }
    let rows: charts::Rows<'_> = input
        .api
        .iter()
        .filter_map(|a| {
            let s = input
                .study
                .scenarios
                .iter()
                .find(|s| s.name == a.scenario)?;
            let row = s.steps.first()?;
            Some((format!("{} {}", a.implementation, a.endpoint), s, row))
        })
        .collect();
    blocks.extend(charts::section_charts("API", &rows, charts::Key::P99));
    blocks
}

/// A table of cells; the columns in `words` hold words too (notes, verdicts).
fn table_cells(head: &[&str], rows: Vec<Vec<Cell>>, text_columns: usize, words: &[usize]) -> Block {
    Block::Table(Table::new(head, rows, text_columns).words_in(words))
}

fn table(head: &[&str], rows: Vec<Vec<String>>, text_columns: usize) -> Block {
    let rows = rows
        .into_iter()
        .map(|row| row.into_iter().map(Cell::from).collect())
        .collect();
    Block::Table(Table::new(head, rows, text_columns))
}

fn environment(input: &PageInput<'_>) -> Section {
    let e = &input.result.env;
    let mut machine = vec![
        vec!["host".into(), e.hostname.clone()],
        vec!["CPU".into(), format!("{} ({} cores)", e.cpu_model, e.cores)],
        vec!["memory".into(), bytes(e.memory_bytes)],
        vec!["OS".into(), e.os.clone()],
        vec!["kernel".into(), e.kernel.clone()],
        vec!["perfbase".into(), e.tool_version.clone()],
    ];
    machine.extend(crate::agents_text(e).map(|a| vec!["agents".into(), a]));
    let services = input
        .services
        .iter()
        .map(|s| vec![s.kind.clone(), s.address.clone(), s.version.clone()])
        .collect();
    Section {
        title: "Test environment".into(),
        blocks: vec![
            table(&["", ""], machine, 2),
            Block::Text(
                "Each service as it reported itself when the run started (load generator and \
                 services on the same machine unless the addresses say otherwise):"
                    .into(),
            ),
            table(&["service", "address", "version"], services, 3),
        ],
    }
}

fn conditions(input: &PageInput<'_>) -> Section {
    let r = input.result;
    let c = &r.config;
    let mut lines = vec![
        format!(
            "{} worker thread{}, timeout {} s per operation, started {}",
            c.threads,
            if c.threads == 1 { "" } else { "s" },
            c.timeout_s,
            r.started_at
        ),
        format!(
            "scale {} (every rate and concurrency of the plan multiplied by it)",
            input.study.scale
        ),
    ];
    if !input.study.slo.is_empty() {
        lines.push(format!("SLO: {}", input.study.slo.join(", ")));
    }
    if let Some(m) = &r.monitor {
        lines.push(format!(
            "resources sampled every {} s, idle first, then through every phase",
            m.interval_s
        ));
    }
    lines.extend(noise_lines(input.study));
    let rows = input
        .study
        .scenarios
        .iter()
        .map(|s| {
            let first = s.steps.first();
            let phases: Vec<&perfbase_core::result::PhaseResult> = r
                .phases
                .iter()
                .filter(|p| p.scenario.as_deref() == Some(s.name.as_str()))
                .collect();
            let seconds: f64 = phases.iter().map(|p| p.measurement.duration_s).sum();
            vec![
                s.name.clone(),
                s.kind.clone(),
                first.map(|r| offered(&r.offered)).unwrap_or_default(),
                s.steps.len().to_string(),
                s.repetitions.to_string(),
                format!("{seconds:.1}"),
            ]
        })
        .collect();
    Section {
        title: "Test conditions".into(),
        blocks: vec![
            Block::List(lines),
            table(
                &[
                    "scenario",
                    "kind",
                    "load (first step)",
                    "steps",
                    "repetitions",
                    "measured s",
                ],
                rows,
                3,
            ),
        ],
    }
}

/// How quiet the machine was, how precise the figures came out, and which scenarios ran
/// interleaved in which order.
fn noise_lines(study: &Study) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(n) = &study.noise {
        match (n.floor_pct(), n.calibration_rps) {
            (Some(f), Some(c)) => lines.push(format!(
                "noise floor: a fixed piece of CPU work, timed before the load, varied ±{f:.1} % \
                 run to run over {} runs (coefficient of variation); differences smaller than \
                 that are within the machine's own noise",
                c.n
            )),
            _ => lines.push("noise floor: no calibration ran, so none is known".into()),
        }
        let pct = |v: f64| {
            if v.is_finite() {
                format!("{v:.1} %")
            } else {
                "not measured".into()
            }
        };
        lines.push(format!(
            "CPU steal (time the hypervisor gave other guests): {} of all CPU time; other \
             processes' CPU: {} of one core, over the run",
            pct(n.steal_pct),
            pct(n.others_cpu_pct)
        ));
    }
    if let Some((met, all, target)) = precision::met_share(study.scenarios.iter()) {
        lines.push(format!(
            "precision target ±{} % (95 % interval of the median run): {met} of {all} rows met \
             it; the others are marked {}",
            precision::target_pct(target),
            precision::MISSED
        ));
    }
    let cold: Vec<(usize, f64)> = study
        .scenarios
        .iter()
        .flat_map(|s| &s.repetition_stats)
        .filter(|r| r.warmup_runs > 0)
        .map(|r| (r.warmup_runs, r.warmup_s))
        .collect();
    if !cold.is_empty() {
        lines.push(format!(
            "warm-up by measurement: {} step{} started cold; their first {} run{} ({:.1} s) \
             are left out of their rows (MSER over the runs, each drop outside the kept runs' \
             99 % prediction interval)",
            cold.len(),
            if cold.len() == 1 { "" } else { "s" },
            cold.iter().map(|c| c.0).sum::<usize>(),
            if cold.iter().map(|c| c.0).sum::<usize>() == 1 {
                ""
            } else {
                "s"
            },
            cold.iter().map(|c| c.1).sum::<f64>()
        ));
    }
    for i in &study.interleaved {
        let names = match i.scenarios.as_slice() {
            [a, b] => format!("{a} and {b}"),
            more => more.join(", "),
        };
        lines.push(format!(
            "{names} ran interleaved in seeded blocks: {}, seed {}",
            i.letters(),
            i.seed
        ));
    }
    lines
}

/// The rankings whose first scenario is in section `kind`: a table each, best first, under a
/// heading that names what it ranks by.
fn rankings(input: &PageInput<'_>, kind: &str) -> Vec<Block> {
    let section_of = |scenario: &str| {
        input
            .sections
            .iter()
            .find(|(n, _)| n == scenario)
            .map(|(_, k)| k.as_str())
    };
    let mut blocks = Vec::new();
    for ranking in input
        .study
        .rankings
        .iter()
        .filter(|k| k.scenarios.first().and_then(|s| section_of(s)) == Some(kind))
    {
        blocks.push(Block::Heading(format!(
            "Ranking: {} — {}",
            ranking.name,
            criterion(&ranking.by)
        )));
        // One row per scenario step, repetitions merged: the runner ranks them so.
        blocks.push(Block::Table(crate::study_tables::ranking(
            &ranking.rows,
            "scenario",
        )));
    }
    blocks
}

fn service_section(input: &PageInput<'_>, kind: &str) -> Section {
    let mut blocks = Vec::new();
    let mut chart_rows: charts::Rows<'_> = Vec::new();
    for (name, _) in input.sections.iter().filter(|(_, k)| k == kind) {
        if input.api.iter().any(|a| &a.scenario == name) || matrix::in_matrix(input, name) {
            continue; // in the API tables, or a matrix's
        }
        let Some(s) = input.study.scenarios.iter().find(|s| &s.name == name) else {
            continue; // interrupted before it ran
        };
        blocks.push(Block::Heading(format!(
            "{} — {} on {}",
            s.name, s.kind, s.target
        )));
        let mut head = vec!["step", "offered", "achieved/s", "success"];
        head.extend(LATENCY_HEADS);
        head.push("±");
        let rows = s
            .steps
            .iter()
            .map(|row| {
                let mut cells: Vec<Cell> = vec![
                    row.name.clone().into(),
                    offered(&row.offered).into(),
                    thousands_f(row.achieved_rps).into(),
                    format!("{:.2} %", row.success_ratio * 100.0).into(),
                ];
                cells.extend(latency_cells(row).map(Cell::from));
                cells.push(api::precision_cell(precision::cell(s, &row.name)));
                cells
            })
            .collect();
        blocks.push(table_cells(&head, rows, 2, &[]));
        chart_rows.extend(s.steps.iter().map(|row| {
            let label = if s.steps.len() > 1 {
                format!("{} {}", s.name, row.name)
            } else {
                s.name.clone()
            };
            (label, s, row)
        }));
        // The ± column says how stable the runs were; the judgements say the rest.
        let found = judgements(s, input.study);
        if !found.is_empty() {
            blocks.push(Block::List(found));
        }
        for (_, block) in input.closing.iter().filter(|(n, _)| n == name) {
            blocks.push(Block::Code(block.clone()));
        }
    }
    let has_api = input
        .sections
        .iter()
        .any(|(n, k)| k == kind && input.api.iter().any(|a| a.scenario == *n));
    if !blocks.is_empty() && !has_api {
        blocks.push(Block::Text(precision_legend(input)));
    }
    blocks.extend(rankings(input, kind));
    blocks.extend(charts::section_charts(
        kind,
        &chart_rows,
        charts::Key::Throughput,
    ));
    Section {
        title: kind.to_string(),
        blocks,
    }
}

/// What a ranking orders by, in words.
fn criterion(by: &str) -> String {
    match by {
        "throughput" => "by throughput, highest first (ties by mean latency)".into(),
        "p50" | "p99" => format!("by {by} latency, lowest first"),
        _ => "by mean latency, lowest first".into(),
    }
}

/// What the ± column means, said once under a section's tables.
fn precision_legend(input: &PageInput<'_>) -> String {
    let mut text = "± is the wider side of the 95 % interval of the median run, as a share of it, \
                    for the worst of throughput, mean and p99 latency; — when fewer than 5 runs \
                    allow no interval."
        .to_string();
    if input
        .study
        .scenarios
        .iter()
        .any(|s| s.precision_target.is_some())
    {
        text.push_str(&format!(
            " {} marks a row that missed the plan's precision target.",
            precision::MISSED
        ));
    }
    text
}

fn checks(study: &Study) -> Section {
    let rows = study
        .checks
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                thousands(c.requests),
                crate::study_text::counts(&c.expect),
                crate::study_text::counts(&c.actual),
                if c.passed { "pass" } else { "FAIL" }.into(),
            ]
        })
        .collect();
    Section {
        title: "Checks".into(),
        blocks: vec![table(
            &["check", "requests", "expected", "got", "verdict"],
            rows,
            1,
        )],
    }
}

/// CPU and memory of each watched service: idle, and over the phases under load.
fn resources(r: &RunResult) -> Option<Section> {
    let m = r.monitor.as_ref()?;
    let rows = m
        .targets
        .iter()
        .map(|t| {
            let idle = t.idle();
            let weighted =
                |f: &dyn Fn(&perfbase_core::monitor::PhaseStats) -> f64| t.loaded_mean(f);
            let peak = |f: &dyn Fn(&perfbase_core::monitor::PhaseStats) -> f64| t.loaded_peak(f);
            let pct = |v: Option<f64>| v.map_or("—".into(), |v| format!("{v:.1}"));
            let mem = |v: Option<f64>| {
                v.filter(|v| v.is_finite())
                    .map_or("—".into(), |v| bytes(v as u64))
            };
            vec![
                t.label.clone(),
                pct(idle.map(|p| p.cpu_pct.mean)),
                pct(weighted(&|p| p.cpu_pct.mean)),
                pct(Some(peak(&|p| p.cpu_pct.max)).filter(|v| v.is_finite())),
                mem(idle.map(|p| p.rss_bytes.mean)),
                mem(Some(peak(&|p| p.rss_bytes.max))),
                mem(idle.map(|p| p.vsz_bytes.mean)),
                mem(Some(peak(&|p| p.vsz_bytes.max))),
            ]
        })
        .collect();
    let mut blocks = vec![
        Block::Text(
            "CPU in % of one core (200 = two cores busy); under load is the mean over every \
                 measured phase, weighted by samples; peak is the highest sample."
                .into(),
        ),
        table(
            &[
                "service",
                "CPU % idle",
                "CPU % under load",
                "CPU % peak",
                "RSS idle",
                "RSS peak",
                "VSZ idle",
                "VSZ peak",
            ],
            rows,
            1,
        ),
    ];
    blocks.extend(charts::resources(m));
    Some(Section {
        title: "Resources".into(),
        blocks,
    })
}

fn changelog(c: &Changelog) -> Section {
    let mut blocks = match &c.previous {
        None => vec![Block::Text(
            "First baseline of this plan: nothing earlier to compare with. The next run's \
             changelog compares with this one."
                .into(),
        )],
        Some((base, cmp)) => against_previous(base, cmp),
    };
    if !c.history.is_empty() {
        let rows = c
            .history
            .iter()
            .map(|b| {
                vec![
                    b.run_id.to_string(),
                    b.saved_at.clone(),
                    b.tool_version.clone(),
                ]
            })
            .collect();
        blocks.push(Block::Heading("Baselines of this plan".into()));
        blocks.push(table(&["run", "saved", "perfbase"], rows, 1));
    }
    blocks.extend(history::blocks(&c.trend));
    Section {
        title: "Changelog".into(),
        blocks,
    }
}

/// What moved since the previous baseline: a table of the entries beyond noise, then the
/// names of those within it.
fn against_previous(base: &Baseline, cmp: &Comparison) -> Vec<Block> {
    let mut blocks = vec![Block::Text(format!(
        "Against the previous baseline, run {} of {} (perfbase {}); {}.",
        base.run_id, base.saved_at, base.tool_version, cmp.method
    ))];
    if !cmp.not_like_for_like.is_empty() {
        blocks.push(Block::Text(format!(
            "Not like for like: {} — the deltas below are partly differences of set-up.",
            cmp.not_like_for_like.join("; ")
        )));
    }
    let (moved, stayed): (Vec<_>, Vec<_>) = cmp
        .entries
        .iter()
        .partition(|e| e.moved() || !e.comparable());
    if moved.is_empty() {
        blocks.push(Block::Text("Nothing moved beyond noise.".into()));
    } else {
        let rows = moved
            .iter()
            .map(|e| {
                vec![
                    e.name.clone(),
                    e.verdict.clone(),
                    movement(e, "rps"),
                    movement(e, "p99_ms"),
                ]
            })
            .collect();
        blocks.push(Block::Text("Moved beyond noise:".into()));
        blocks.push(table(&["entry", "verdict", "req/s", "p99 ms"], rows, 2));
    }
    if !stayed.is_empty() {
        let names: Vec<&str> = stayed.iter().map(|e| e.name.as_str()).collect();
        blocks.push(Block::Text(format!(
            "Not resolved (no significant move): {}.",
            names.join(", ")
        )));
    }
    blocks
}

/// One metric of an entry from the baseline's figure to this run's (`1,234.5 → 1,000.0
/// (-19.0 %)`), or a dash when the entry lacks it.
fn movement(e: &EntryComparison, metric: &str) -> String {
    e.metrics
        .iter()
        .find(|m| m.metric == metric)
        .map_or("—".into(), |m| {
            format!(
                "{} → {}{}",
                short(m.a),
                short(m.b),
                m.delta_pct
                    .map(|p| format!(" ({:+.1} %)", p * 100.0))
                    .unwrap_or_default()
            )
        })
}

/// A figure in few digits: 1,234.5 or 0.123.
fn short(v: f64) -> String {
    if !v.is_finite() {
        "—".into()
    } else if v.abs() >= 100.0 {
        thousands_f(v)
    } else {
        format!("{v:.3}")
    }
}
