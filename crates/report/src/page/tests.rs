//! The page on a constructed plan run: two API implementations at two endpoints and at
//! c=100, a database suite, a messaging pair declared like for like, a ranking that names a
//! scenario twice, interleaving, noise and a monitor that saw a busy service.

use super::*;
use perfbase_analysis::stats::describe;
use perfbase_analysis::versus::versus_step;
use perfbase_core::result::{LoadConfig, Measurement, Model, PhaseResult};
use perfbase_core::study::{
    Interleaving, KneeRule, Noise, Offered, RankRow, Ranking, RepetitionStats, ScenarioStudy,
    StepRow, Summary, Versus,
};
use perfbase_core::{Outcome, Recorder};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

fn measurement() -> Measurement {
    let mut rec = Recorder::new(false);
    for i in 0..50u64 {
        rec.record(
            &Outcome::http(200, 100, 50),
            Duration::from_micros(1000 + (i % 10) * 100),
            Duration::ZERO,
            Duration::from_millis(i * 20),
        );
    }
    rec.finish();
    Measurement::from_recorder(&rec, Duration::from_secs(1), None)
}

fn s(values: &[f64]) -> Summary {
    describe(values).expect("values")
}

/// A step's figures: `mean` ms per run (so latency and its spread follow) and `rps` per run.
struct Runs {
    rps: Vec<f64>,
    mean: Vec<f64>,
}

fn runs(rps: f64, mean: f64, spread: &[f64]) -> Runs {
    Runs {
        rps: spread.iter().map(|k| rps * k).collect(),
        mean: spread.iter().map(|k| mean * k).collect(),
    }
}

fn step_row(name: &str, offered: Offered, r: &Runs, success: f64) -> StepRow {
    let rps = r.rps.iter().sum::<f64>() / r.rps.len() as f64;
    let mean = r.mean.iter().sum::<f64>() / r.mean.len() as f64;
    StepRow {
        name: name.into(),
        offered,
        achieved_rps: rps,
        success_ratio: success,
        mean_ms: mean,
        min_ms: mean / 4.0,
        p50_ms: mean,
        p90_ms: mean * 1.5,
        p95_ms: mean * 2.0,
        p99_ms: mean * 3.0,
        max_ms: mean * 8.0,
        under_ms: vec![],
        invalid: None,
        p99_thirds_ms: None,
        availability: None,
    }
}

fn stats(step: &str, r: &Runs) -> RepetitionStats {
    let times = |k: f64| s(&r.mean.iter().map(|m| m * k).collect::<Vec<_>>());
    RepetitionStats {
        step: step.into(),
        runs: r.rps.len(),
        rps: s(&r.rps),
        success_ratio: s(&vec![1.0; r.rps.len()]),
        min_ms: times(0.25),
        mean_ms: times(1.0),
        p50_ms: times(1.0),
        p90_ms: times(1.5),
        p99_ms: times(3.0),
        max_ms: times(8.0),
        warmup_runs: 0,
        warmup_s: 0.0,
    }
}

/// A scenario of `kind` with steps (name, offered, runs, success), and its phases.
fn scenario(
    name: &str,
    kind: &str,
    target: Option<f64>,
    steps: Vec<(&str, Offered, Runs, f64)>,
    phases: &mut Vec<PhaseResult>,
) -> ScenarioStudy {
    for (i, (step, offered, r, _)) in steps.iter().enumerate() {
        for (k, (rps, mean)) in r.rps.iter().zip(&r.mean).enumerate() {
            let mut m = measurement();
            m.rps = *rps;
            m.latency_ms.mean = *mean;
            m.latency_ms.p99 = mean * 3.0;
            m.latency_ms.max = mean * 8.0;
            m.latency_ms.min = mean / 4.0;
            phases.push(PhaseResult {
                name: format!("{name} {step} #{}", k + 1),
                model: Model::Closed,
                scenario: Some(name.into()),
                step: Some(i as u32),
                repetition: Some(k as u32 + 1),
                offered_rate: None,
                offered_connections: match offered {
                    Offered::Concurrency(c) => Some(*c),
                    Offered::Rate(_) => None,
                },
                missing_segments: Vec::new(),
                faults: Vec::new(),
                measurement: m,
            });
        }
    }
    ScenarioStudy {
        name: name.into(),
        kind: kind.into(),
        workload: "w".into(),
        target: "http://127.0.0.1/".into(),
        repetitions: steps.first().map_or(0, |s| s.2.rps.len() as u32),
        steps: steps
            .iter()
            .map(|(n, o, r, ok)| step_row(n, *o, r, *ok))
            .collect(),
        knee: None,
        operating_point: None,
        repetition_stats: steps.iter().map(|(n, _, r, _)| stats(n, r)).collect(),
        precision_target: target,
        thresholds: vec![],
        passed: true,
    }
}

const FIVE: [f64; 5] = [1.0, 1.01, 0.99, 1.005, 0.995];
/// Wide: the p99's interval reaches 25 % above its median.
const WIDE: [f64; 5] = [1.0, 1.25, 0.8, 1.05, 0.98];
const THREE: [f64; 3] = [1.0, 1.02, 0.98];

fn study_and_phases() -> (Study, Vec<PhaseResult>) {
    let c = Offered::Concurrency;
    let mut ph = Vec::new();
    let t = Some(0.05);
    let mut scenarios = vec![
        scenario(
            "A /health",
            "constant",
            t,
            vec![("c=1", c(1), runs(10_000.0, 0.1, &FIVE), 1.0)],
            &mut ph,
        ),
        scenario(
            "B /health",
            "constant",
            t,
            vec![("c=1", c(1), runs(6_000.0, 0.2, &WIDE), 1.0)],
            &mut ph,
        ),
        scenario(
            "A /health/all",
            "constant",
            t,
            vec![("c=1", c(1), runs(40.0, 25.0, &FIVE), 1.0)],
            &mut ph,
        ),
        scenario(
            "B /health/all",
            "constant",
            t,
            vec![("c=1", c(1), runs(150.0, 6.5, &FIVE), 0.97)],
            &mut ph,
        ),
        scenario(
            "A /health c=100",
            "constant",
            None,
            vec![("c=100", c(100), runs(100_000.0, 1.0, &THREE), 1.0)],
            &mut ph,
        ),
        scenario(
            "B /health c=100",
            "constant",
            None,
            vec![("c=100", c(100), runs(108_000.0, 0.9, &THREE), 1.0)],
            &mut ph,
        ),
        scenario(
            "PostgreSQL operations",
            "suite",
            t,
            vec![
                ("insert", c(4), runs(9_500.0, 0.4, &FIVE), 1.0),
                ("select-pk", c(4), runs(39_000.0, 0.09, &FIVE), 1.0),
                ("scan", c(4), runs(2_200.0, 1.7, &WIDE), 1.0),
            ],
            &mut ph,
        ),
        scenario(
            "AMQP 1 KB transient",
            "concurrency ladder",
            t,
            vec![
                ("c=1", c(1), runs(3_000.0, 0.3, &FIVE), 1.0),
                ("c=4", c(4), runs(9_000.0, 0.4, &FIVE), 1.0),
            ],
            &mut ph,
        ),
        scenario(
            "AMQP 1 KB persistent",
            "concurrency ladder",
            t,
            vec![
                ("c=1", c(1), runs(1_000.0, 0.93, &FIVE), 1.0),
                ("c=4", c(4), runs(2_000.0, 2.0, &FIVE), 1.0),
            ],
            &mut ph,
        ),
    ];
    // Many declared steps, so that the observations have more to choose from than they keep.
    let step_runs = |name: &str, i: u32| signif::runs_of_phases(&ph, name, i);
    let versus = Versus {
        name: "persistence".into(),
        a: "AMQP 1 KB transient".into(),
        b: "AMQP 1 KB persistent".into(),
        a_label: "Transient 1 KB messages".into(),
        b_label: "Persistent 1 KB messages".into(),
        steps: (0..2)
            .map(|i| {
                let step = ["c=1", "c=4"][i as usize];
                versus_step(
                    step,
                    "Persistent",
                    step_runs("AMQP 1 KB transient", i),
                    step_runs("AMQP 1 KB persistent", i),
                )
                .expect("runs")
            })
            .collect(),
    };
    let many = Versus {
        name: "many".into(),
        a: "A /health".into(),
        b: "B /health".into(),
        a_label: "A".into(),
        b_label: "B".into(),
        steps: (0..14)
            .map(|i| {
                let a = step_runs("A /health", 0);
                let b: Vec<[f64; 4]> = step_runs("B /health", 0)
                    .iter()
                    .map(|r| r.map(|v| v * (1.0 + i as f64 / 10.0)))
                    .collect();
                versus_step(&format!("op{i}"), "B", a, b).expect("runs")
            })
            .collect(),
    };
    let row = |rank, label: &str, p99| RankRow {
        rank,
        label: label.into(),
        rps: 100.0,
        mean_ms: p99 / 3.0,
        p50_ms: p99 / 3.0,
        p99_ms: p99,
        success_ratio: 1.0,
    };
    scenarios[0].repetitions = 5;
    let study = Study {
        plan: "plan.toml".into(),
        scale: 1.0,
        slo: vec![],
        knee_rule: KneeRule::default(),
        scenarios,
        checks: vec![],
        passed: true,
        rankings: vec![Ranking {
            name: "single-request latency".into(),
            by: "p99".into(),
            scenarios: vec!["A /health".into(), "B /health".into()],
            rows: vec![row(1, "A /health", 0.3), row(2, "B /health", 0.6)],
        }],
        versus: vec![versus, many],
        interleaved: vec![Interleaving {
            scenarios: vec!["A /health".into(), "B /health".into()],
            seed: 0,
            blocks: vec![vec![0, 1], vec![1, 0], vec![1, 0], vec![0, 1], vec![0, 1]],
        }],
        noise: Some(Noise {
            calibration_rps: Some(s(&[5000.0, 5100.0, 4900.0, 5050.0, 4950.0])),
            steal_pct: 0.4,
            others_cpu_pct: 3.5,
            limits: vec!["perfbase's worker threads were all busy in B /health c=100".into()],
        }),
    };
    (study, ph)
}

fn stat(mean: f64) -> serde_json::Value {
    json!({"min": mean * 0.9, "mean": mean, "max": mean * 1.1})
}

fn phase(name: &str, cpu: f64) -> serde_json::Value {
    json!({"name": name, "samples": 4, "cpu_pct": stat(cpu), "cpu_pct_machine": stat(cpu / 2.0),
           "rss_bytes": stat(50e6), "vsz_bytes": stat(200e6), "threads": stat(4.0),
           "ctx_switches_per_s": stat(100.0), "processes": stat(1.0)})
}

fn monitor() -> perfbase_core::monitor::MonitorReport {
    let target = |label: &str, kind: &str, busy: f64| {
        json!({"label": label, "kind": kind, "pids": [1],
               "phases": [phase("idle", 0.5), phase("PostgreSQL operations scan #1", busy),
                          phase("PostgreSQL operations scan #2", busy), phase("A /health c=1 #1", 20.0)],
               "timeline": []})
    };
    serde_json::from_value(json!({"interval_s": 0.5, "cores": 2,
        "targets": [target("postgres", "process", 97.0), target("perfbase (self)", "self", 30.0)],
        "generator_saturated": false, "warnings": []}))
    .expect("a monitor report")
}

fn result(study: Study, phases: Vec<PhaseResult>) -> RunResult {
    let config = LoadConfig {
        threads: 2,
        connections: None,
        rate: None,
        max_inflight: None,
        duration_s: None,
        count: None,
        warmup_s: 0.0,
        timeout_s: 5.0,
        pacing_granularity_s: None,
        protocol: BTreeMap::new(),
    };
    RunResult {
        started_at: "2026-01-01T00:00:00Z".into(),
        phases,
        study: Some(study),
        monitor: Some(monitor()),
        ..RunResult::of("plan", "http", (Model::Closed, config), measurement())
    }
}

fn api_row(scenario: &str, implementation: &str, endpoint: &str, note: &str) -> ApiRow {
    ApiRow {
        scenario: scenario.into(),
        implementation: implementation.into(),
        endpoint: endpoint.into(),
        note: note.into(),
    }
}

fn page_of(r: &RunResult) -> Page {
    let study = r.study.as_ref().expect("study");
    let sections = study
        .scenarios
        .iter()
        .map(|s| {
            let kind = match s.name.as_str() {
                n if n.contains('/') => "API (HTTP)",
                n if n.starts_with("PostgreSQL") => "PostgreSQL",
                _ => "RabbitMQ (AMQP)",
            };
            (s.name.clone(), kind.to_string())
        })
        .collect();
    build(&PageInput {
        title: "Performance Baselines".into(),
        generated_at: "2026-01-01T00:00:00Z".into(),
        run_id: None,
        result: r,
        study,
        sections,
        services: vec![],
        closing: vec![],
        changelog: Changelog::default(),
        api: vec![
            api_row("A /health", "A", "GET /health", "simple health check"),
            api_row(
                "A /health/all",
                "A",
                "GET /health/all",
                "checks services in turn",
            ),
            api_row("B /health", "B", "GET /health", "simple health check"),
            api_row(
                "B /health/all",
                "B",
                "GET /health/all",
                "checks services at once",
            ),
            api_row("A /health c=100", "A, c=100", "GET /health", "ab -c 100"),
            api_row("B /health c=100", "B, c=100", "GET /health", "ab -c 100"),
        ],
        matrices: Vec::new(),
    })
}

fn fixture() -> RunResult {
    let (study, phases) = study_and_phases();
    result(study, phases)
}

/// The rows of every Markdown table under a `### heading` that starts with `prefix`.
fn tables_under(md: &str, prefix: &str) -> Vec<Vec<Vec<String>>> {
    let mut out = Vec::new();
    for part in md.split("\n### ").skip(1) {
        if !part.starts_with(prefix) {
            continue;
        }
        let rows = part
            .lines()
            .filter(|l| l.starts_with("| "))
            .skip(1)
            .map(|l| {
                l.trim_matches('|')
                    .split(" | ")
                    .map(|c| c.trim().to_string())
                    .collect()
            })
            .collect();
        out.push(rows);
    }
    out
}

fn section_of<'m>(md: &'m str, title: &str) -> &'m str {
    let at = md.find(&format!("\n## {title}\n")).expect(title);
    let rest = &md[at + 1..];
    &rest[..rest[1..].find("\n## ").map_or(rest.len(), |e| e + 1)]
}

#[test]
fn api_tables_per_implementation_have_the_published_columns() {
    let md = page_of(&fixture()).markdown();
    let head = "| Endpoint | p50 | p95 | p99 | Max | ± | Notes |";
    for implementation in ["A", "B", "A, c=100", "B, c=100"] {
        let at = md
            .find(&format!("### {implementation} — latency per request"))
            .unwrap_or_else(|| panic!("{implementation}:\n{md}"));
        assert!(
            md[at..].lines().nth(2) == Some(head),
            "{}",
            &md[at..at + 200]
        );
    }
    let a = &tables_under(&md, "A — latency")[0];
    assert_eq!(a.len(), 2);
    assert_eq!(a[0][0], "GET /health");
    assert_eq!(a[1][6], "checks services in turn");
    // The failures show in the row's notes.
    let b = &tables_under(&md, "B — latency")[0];
    assert!(b[1][6].ends_with("3.00 % failed"), "{:?}", b[1]);
    // API scenarios are not drawn a second time as blocks of their own.
    assert!(!md.contains("### A /health — constant"), "{md}");
    // A against B, at the same endpoint and load only.
    let vs = &tables_under(&md, "A vs B per endpoint")[0];
    assert_eq!(vs.len(), 3, "{vs:?}");
    assert!(
        vs.iter().all(|r| r[2] == "A" || r[2] == "A, c=100"),
        "{vs:?}"
    );
    assert!(
        vs[1][8].starts_with("B is") && vs[1][7].contains("p < 0.001"),
        "{vs:?}"
    );
}

#[test]
fn a_row_that_missed_its_target_is_marked_and_too_few_runs_say_so() {
    let md = page_of(&fixture()).markdown();
    let b = &tables_under(&md, "B — latency")[0];
    assert_eq!(b[0][5], "**⚠ ±25 % (target 5 %)**", "{b:?}");
    let a = &tables_under(&md, "A — latency")[0];
    assert_eq!(a[0][5], "±1.0 %", "{a:?}");
    let c100 = &tables_under(&md, "A, c=100 — latency")[0];
    assert_eq!(c100[0][5], "— (3 runs)");
    // Suites and ladders have the column too.
    let pg = &tables_under(&md, "PostgreSQL operations — suite")[0];
    assert!(pg[2].last().unwrap().contains("⚠"), "{pg:?}");
    assert!(!md.contains("throughput varied by"), "{md}");
    // The conditions say how many rows met the target.
    let cond = section_of(&md, "Test conditions");
    assert!(cond.contains("rows met it"), "{cond}");
    assert!(
        cond.contains("ran interleaved in seeded blocks: AB BA BA AB AB, seed 0"),
        "{cond}"
    );
    assert!(
        cond.contains("varied ±1.6 % run to run over 5 runs"),
        "{cond}"
    );
}

#[test]
fn no_interval_is_impossible() {
    let r = fixture();
    let page = page_of(&r);
    let md = page.markdown();
    // No cell of any table holds a negative number (but a signed difference, B vs A).
    let mut head: Vec<String> = Vec::new();
    for line in md.lines().filter(|l| !l.starts_with("|-")) {
        if !line.starts_with("| ") {
            head.clear();
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect();
        if head.is_empty() {
            head = cells;
            continue;
        }
        for (i, cell) in cells.iter().enumerate() {
            let c = cell.trim_matches('*');
            let signed = head.get(i).is_some_and(|h| h == "B vs A");
            let sides = c.starts_with('−') && c.contains("/ +");
            assert!(
                signed || sides || !(c.starts_with('-') || c.starts_with('−')),
                "{line}"
            );
            let share = c.strip_prefix('±').or_else(|| c.strip_prefix("⚠ ±"));
            if let Some(share) = share.filter(|s| !s.is_empty()) {
                let v: f64 = share.split(' ').next().unwrap().parse().unwrap();
                assert!((0.0..100.0).contains(&v), "{line}");
            }
        }
    }
    // Every whisker lies within the runs of the figure it belongs to.
    let study = r.study.as_ref().unwrap();
    let ranges: Vec<(f64, f64)> = study
        .scenarios
        .iter()
        .flat_map(|s| &s.repetition_stats)
        .flat_map(|x| [x.rps, x.p99_ms])
        .map(|s| (s.min, s.max))
        .collect();
    let html = page.html();
    let mut whiskers = 0;
    for tip in html.split(", 95 % interval ").skip(1) {
        let (lo, hi) = tip.split_once('<').unwrap().0.split_once('–').unwrap();
        let num = |t: &str| t.replace(',', "").parse::<f64>().unwrap();
        let (lo, hi) = (num(lo), num(hi));
        assert!(lo >= 0.0 && lo <= hi);
        let within = ranges
            .iter()
            .any(|(min, max)| lo >= min * 0.999 - 0.01 && hi <= max * 1.001 + 0.01);
        assert!(within, "{lo}–{hi}");
        whiskers += 1;
    }
    assert!(whiskers > 0);
}

#[test]
fn rankings_state_their_criterion_and_repeat_no_row() {
    let md = page_of(&fixture()).markdown();
    assert!(
        md.contains("### Ranking: single-request latency — by p99 latency, lowest first"),
        "{md}"
    );
    for t in tables_under(&md, "Ranking:") {
        let labels: Vec<&String> = t.iter().map(|r| &r[1]).collect();
        let mut unique = labels.clone();
        unique.dedup();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), labels.len(), "{labels:?}");
        let ranks: Vec<&String> = t.iter().map(|r| &r[0]).collect();
        assert_eq!(ranks, ["1", "2"]);
    }
}

#[test]
fn observations_are_few_ranked_and_signed_with_their_significance() {
    let md = page_of(&fixture()).markdown();
    let obs: Vec<&str> = section_of(&md, "Observations")
        .lines()
        .filter(|l| l.starts_with("- "))
        .collect();
    assert!(obs.len() <= observe::MAX, "{obs:#?}");
    assert_eq!(obs.len(), observe::MAX);
    // A failure always comes first.
    assert!(
        obs[0].contains("B /health/all: 3.00 % of operations failed"),
        "{obs:#?}"
    );
    // The declared pair, like an engineer would say it.
    assert!(
        obs.iter().any(|o| o.contains(
            "Persistent 1 KB messages take 3.1× the mean latency of Transient 1 KB messages at c=1"
        ) && o.contains("p < 0.001, 5 runs each")),
        "{obs:#?}"
    );
    // Every comparison carries its significance, and figures that missed their target
    // carry the mark.
    assert!(
        obs.iter()
            .skip(1)
            .all(|o| o.contains("p ") || o.contains("runs")),
        "{obs:#?}"
    );
    assert!(
        obs.iter().any(|o| o.contains("(⚠ ±25 %, target 5 %)")),
        "{obs:#?}"
    );
}

#[test]
fn bottlenecks_name_the_busy_service_and_the_recorded_limits() {
    let md = page_of(&fixture()).markdown();
    let b = section_of(&md, "Bottlenecks");
    assert!(
        b.contains("postgres kept a core busy (up to 97 % of one core")
            && b.contains("PostgreSQL operations scan (runs #1, #2)"),
        "{b}"
    );
    assert!(b.contains("perfbase's worker threads were all busy"), "{b}");
    assert!(!b.contains("perfbase itself was the limit"), "{b}");
}

#[test]
fn the_html_page_has_its_charts_and_the_markdown_none() {
    let page = page_of(&fixture());
    let html = page.html();
    let count = |kind: &str| html.matches(&format!("data-chart=\"{kind}\"")).count();
    // API, PostgreSQL and RabbitMQ: bars and percentile curves each.
    assert_eq!(count("bars"), 3, "{html}");
    assert_eq!(count("percentiles"), 3);
    assert_eq!(count("resources-cpu"), 1);
    assert_eq!(count("resources-rss"), 1);
    assert!(html.contains("class=\"whisker\""));
    assert!(!html.contains("<script") && !html.contains("http://www.w3.org"));
    assert!(!page.markdown().contains("<svg"));
}
