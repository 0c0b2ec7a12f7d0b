//! A "Performance Baselines" page from one plan run: the test environment (the machine and
//! each service's version as the server reported it), the test conditions, a section per
//! kind of service with its tables, the resources the services used idle and under load,
//! observations worded from the figures, and a changelog against the previous baseline.
//! What a result cannot say (versions, which section a scenario belongs to, the previous
//! baseline) comes in [`PageInput`]; [`build`] decides the content, [`markup`] renders it.

pub mod markup;
mod observe;

use crate::study_text::{findings, latency_cells, offered, LATENCY_HEADS};
use crate::table::{Cell, Table};
use crate::{bytes, thousands, thousands_f};
use markup::{Block, Page, Section};
use perfbase_analysis::comparison::{Comparison, EntryComparison};
use perfbase_analysis::study::Study;
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
    let mut kinds: Vec<&str> = Vec::new();
    for (_, kind) in &input.sections {
        if !kinds.contains(&kind.as_str()) {
            kinds.push(kind);
        }
    }
    for kind in kinds {
        sections.push(service_section(input, kind));
    }
    if !input.study.checks.is_empty() {
        sections.push(checks(input.study));
    }
    if let Some(s) = resources(r) {
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

fn table(head: &[&str], rows: Vec<Vec<String>>, text_columns: usize) -> Block {
    let rows = rows
        .into_iter()
        .map(|row| row.into_iter().map(Cell::from).collect())
        .collect();
    Block::Table(Table::new(head, rows, text_columns))
}

fn environment(input: &PageInput<'_>) -> Section {
    let e = &input.result.env;
    let machine = vec![
        vec!["host".into(), e.hostname.clone()],
        vec!["CPU".into(), format!("{} ({} cores)", e.cpu_model, e.cores)],
        vec!["memory".into(), bytes(e.memory_bytes)],
        vec!["OS".into(), e.os.clone()],
        vec!["kernel".into(), e.kernel.clone()],
        vec!["perfbase".into(), e.tool_version.clone()],
    ];
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

fn service_section(input: &PageInput<'_>, kind: &str) -> Section {
    let mut blocks = Vec::new();
    for (name, _) in input.sections.iter().filter(|(_, k)| k == kind) {
        let Some(s) = input.study.scenarios.iter().find(|s| &s.name == name) else {
            continue; // interrupted before it ran
        };
        blocks.push(Block::Heading(format!(
            "{} — {} on {}",
            s.name, s.kind, s.target
        )));
        let mut head = vec!["step", "offered", "achieved/s", "success"];
        head.extend(LATENCY_HEADS);
        let rows = s
            .steps
            .iter()
            .map(|row| {
                let mut cells = vec![
                    row.name.clone(),
                    offered(&row.offered),
                    thousands_f(row.achieved_rps),
                    format!("{:.2} %", row.success_ratio * 100.0),
                ];
                cells.extend(latency_cells(row));
                cells
            })
            .collect();
        blocks.push(table(&head, rows, 2));
        let found = findings(s, input.study);
        if !found.is_empty() {
            blocks.push(Block::List(found));
        }
        for (_, block) in input.closing.iter().filter(|(n, _)| n == name) {
            blocks.push(Block::Code(block.clone()));
        }
    }
    // A ranking shows in the section of its first scenario.
    let section_of = |scenario: &str| {
        input
            .sections
            .iter()
            .find(|(n, _)| n == scenario)
            .map(|(_, k)| k.as_str())
    };
    for ranking in input
        .study
        .rankings
        .iter()
        .filter(|k| k.scenarios.first().and_then(|s| section_of(s)) == Some(kind))
    {
        blocks.push(Block::Heading(format!("Ranking: {}", ranking.name)));
        let rows = ranking
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.rank.to_string(),
                    r.label.clone(),
                    thousands_f(r.rps),
                    crate::study_text::ms(r.mean_ms),
                    crate::study_text::ms(r.p99_ms),
                    format!("{:.2} %", r.success_ratio * 100.0),
                ]
            })
            .collect();
        blocks.push(table(
            &["rank", "scenario", "req/s", "mean ms", "p99 ms", "success"],
            rows,
            2,
        ));
    }
    Section {
        title: kind.to_string(),
        blocks,
    }
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
            let idle = t.phases.iter().find(|p| p.name == "idle");
            let load: Vec<_> = t
                .phases
                .iter()
                .filter(|p| p.name != "idle" && !p.name.ends_with("cool-down"))
                .collect();
            let weighted = |f: &dyn Fn(&perfbase_core::monitor::PhaseStats) -> f64| {
                let n: usize = load.iter().map(|p| p.samples).sum();
                (n > 0)
                    .then(|| load.iter().map(|p| f(p) * p.samples as f64).sum::<f64>() / n as f64)
            };
            let peak = |f: &dyn Fn(&perfbase_core::monitor::PhaseStats) -> f64| {
                load.iter().map(|p| f(p)).fold(f64::NAN, f64::max)
            };
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
    Some(Section {
        title: "Resources".into(),
        blocks: vec![
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
        ],
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
        .partition(|e| e.verdict != "within noise");
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
            "Stayed within noise: {}.",
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
