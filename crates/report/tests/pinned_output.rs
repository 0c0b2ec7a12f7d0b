//! Every report's text pinned byte for byte on small constructed results: the terminal
//! summaries of a run and of a plan, the HTML page, the JUnit XML and the baselines page. The
//! pinned files under `fixtures/pinned/` were written by the renderers as they stood before
//! their long functions were split, so a refactoring that changes a byte fails here.
//!
//! The results start from the `failed_study.json` fixture and add what it lacks, so every
//! branch the renderers take is on show: both load models, every optional line of the run
//! summary, each kind of knee and operating point, repetitions, rankings, an A-vs-B block,
//! a mix's endpoints, passing and failing checks, and a monitor section.
//!
//! An intended change of output is re-pinned with `PERFBASE_PIN=write cargo test -p
//! perfbase-report --test pinned_output`, and the diff of the pinned files reviewed.

use perfbase_analysis::versus::versus_step;
use perfbase_core::result::RunResult;
use perfbase_report::page::{Baseline, Changelog, PageInput, Service};
use perfbase_report::{html, junit, page, terminal};
use serde_json::{json, Value};
use std::path::Path;

/// Compares `actual` with the pinned file of this name, naming the first line that differs.
fn check(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pinned")
        .join(name);
    if std::env::var("PERFBASE_PIN").as_deref() == Ok("write") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let pinned =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if actual == pinned {
        return;
    }
    let (line, (was, now)) = pinned
        .split('\n')
        .zip(actual.split('\n'))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .unwrap_or((
            pinned.split('\n').count().min(actual.split('\n').count()),
            ("", ""),
        ));
    panic!(
        "{name} differs from its pinned text at line {}:\n  pinned: {was:?}\n  now:    {now:?}",
        line + 1
    );
}

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/failed_study.json")).unwrap()
}

fn result(v: Value) -> RunResult {
    serde_json::from_value(v).expect("a result")
}

fn latency(base: f64) -> Value {
    json!({"min": base / 2.0, "mean": base, "stdev": base / 10.0, "p50": base,
           "p75": base * 1.2, "p90": base * 1.5, "p95": base * 2.0, "p99": base * 3.0,
           "p999": base * 4.0, "max": base * 5.0})
}

fn endpoints() -> Value {
    let endpoint = |name: &str, requests: u64, ok: f64, status: Value, base: f64| {
        json!({"name": name, "requests": requests, "success_ratio": ok, "status": status,
               "errors": {}, "latency_ms": latency(base), "histogram": ""})
    };
    json!([
        endpoint(
            "GET /a/rather/long/path/that/the/table/has/to/cut/short",
            20,
            1.0,
            json!({"200": 20}),
            6.0
        ),
        endpoint("POST /login", 5, 0.0, json!({"500": 5}), 7.5),
    ])
}

/// The fixture's whole-run figures as a plain closed-model run over HTTP/2, with every
/// optional line of the summary: interrupted, socket errors, coordinated omission, timing,
/// endpoints, requests abandoned at the cut-off and more error samples than are shown.
fn closed_run() -> RunResult {
    let mut v = fixture();
    v["phases"] = json!([]);
    for key in ["study", "monitor"] {
        v.as_object_mut().unwrap().remove(key);
    }
    v["model"] = json!("closed");
    v["target"] = json!("https://127.0.0.1:8443/");
    v["config"] = json!({"threads": 1, "connections": 10, "duration_s": 30.0, "count": 5000,
                         "warmup_s": 2.5, "timeout_s": 5.0,
                         "protocol": {"streams_per_connection": 4}});
    v["interrupted"] = json!(true);
    v["errors"] = json!({"http_5xx": 5, "connect": 3, "timeout": 1234});
    v["aborted_in_flight"] = json!(7);
    v["coordinated_omission"] =
        json!({"expected_interval_ms": 1.5, "latency_ms": latency(40.0), "suspected": true});
    let none = json!({"min": null, "mean": null, "stdev": null, "p50": null, "p75": null,
                      "p90": null, "p95": null, "p99": null, "p999": null, "max": null});
    v["http_timing"] = json!({"new_connections": 10, "reused_connections": 12345,
        "connect_ms": latency(0.5), "tls_ms": none, "waiting_ms": latency(3.0),
        "receiving_ms": latency(150.0), "histograms": ["", "", "", ""]});
    v["endpoints"] = endpoints();
    let samples: Vec<Value> = (0..7)
        .map(|i| {
            let class = if i % 3 == 0 { "read" } else { "timeout" };
            json!({"class": class, "message": format!("sample {i} <raw>"), "count": 1000 + i})
        })
        .collect();
    v["error_samples"] = json!(samples);
    result(v)
}

/// The fixture's whole-run figures as an open-model run that fell short of its rate.
fn open_run() -> RunResult {
    let mut v = fixture();
    v["phases"] = json!([]);
    for key in ["study", "monitor"] {
        v.as_object_mut().unwrap().remove(key);
    }
    v["target"] = json!("http://127.0.0.1:8080/search?q=<b>&x=1");
    v["config"] = json!({"threads": 2, "rate": 200.0, "max_inflight": 64, "count": 400,
                         "warmup_s": 0.0, "timeout_s": 5.0, "protocol": {}});
    v["open_model"] = json!({"requested_rate": 200.0, "achieved_rate": 81.5, "late": 12,
                             "unsent": 3, "max_inflight": 64});
    v["status"] = json!({"0": 80});
    result(v)
}

fn step(name: &str, offered: Value, rps: f64, ok: f64, p99: f64) -> Value {
    json!({"name": name, "offered": offered, "achieved_rps": rps, "success_ratio": ok,
           "mean_ms": p99 / 3.0, "min_ms": p99 / 10.0, "p50_ms": p99 / 2.5,
           "p90_ms": p99 / 1.5, "p95_ms": p99 / 1.2, "p99_ms": p99, "max_ms": p99 * 2.0,
           "under_ms": [[5.0, 0.5], [50.0, 0.99]]})
}

/// Two runs, as `describe` gives them: a median, and too few runs for an interval.
fn summary(mean: f64) -> Value {
    json!({"n": 2, "mean": mean, "variance": mean / 100.0, "stdev": mean / 10.0,
           "min": mean * 0.9, "max": mean * 1.1, "ci95": [null, null], "median": mean,
           "coverage": null})
}

fn repetition_stats(step: &str) -> Value {
    json!({"step": step, "runs": 2, "rps": summary(50.0), "success_ratio": summary(1.0),
           "min_ms": summary(6.0), "mean_ms": summary(6.5), "p50_ms": summary(6.4),
           "p90_ms": summary(6.6), "p95_ms": summary(6.8), "p99_ms": summary(8.0),
           "max_ms": summary(9.0)})
}

fn scenario(
    name: &str,
    kind: &str,
    steps: Vec<Value>,
    knee: Value,
    operating_point: Value,
    thresholds: Value,
    passed: bool,
) -> Value {
    let mut s = json!({"name": name, "kind": kind, "workload": "w", "target": "redis://db:6379",
                       "repetitions": 1, "steps": steps, "repetition_stats": [],
                       "thresholds": thresholds, "passed": passed});
    if !knee.is_null() {
        s["knee"] = knee;
    }
    if !operating_point.is_null() {
        s["operating_point"] = operating_point;
    }
    s
}

fn threshold(phase: &str, threshold: &str, actual: f64, passed: bool) -> Value {
    json!({"phase": phase, "threshold": threshold, "actual": actual, "passed": passed})
}

fn rank_row(rank: usize, label: &str, rps: f64, mean: f64, p99: f64) -> Value {
    json!({"rank": rank, "label": label, "rps": rps, "mean_ms": mean, "p50_ms": mean,
           "p99_ms": p99, "success_ratio": 0.995})
}

fn monitor() -> Value {
    let stat = |m: f64| json!({"min": m * 0.5, "mean": m, "max": m * 1.5});
    let phase = |name: &str, cpu: f64, fds: bool, memory: bool| {
        json!({"name": name, "samples": 2, "cpu_pct": stat(cpu),
               "cpu_pct_machine": stat(cpu / 2.0), "rss_bytes": stat(5e7 + cpu * 1e5),
               "vsz_bytes": stat(2e8), "threads": stat(9.33),
               "fds": if fds { stat(24.0) } else { Value::Null },
               "ctx_switches_per_s": stat(40.0),
               "memory_current_bytes": if memory { stat(7e7) } else { Value::Null },
               "processes": stat(1.0)})
    };
    let sample = |t: f64, phase: &str, cpu: f64| {
        json!({"t_s": t, "phase": phase, "cpu_pct": cpu, "rss_bytes": 50_000_000u64,
               "vsz_bytes": 200_000_000u64, "threads": 9, "fds": 24,
               "ctx_switches_per_s": 40.0, "memory_current_bytes": 70_000_000u64,
               "processes": 1})
    };
    json!({"interval_s": 0.5, "cores": 2, "generator_saturated": false,
    "warnings": ["phase \"check all-ok\" lasted less than half a sampling interval"],
    "targets": [
        {"label": "name:redis-server", "kind": "process", "pids": [11],
         "exited_at_s": 3.25,
         "phases": [phase("idle", 1.0, true, false), phase("ladder 50/s", 40.0, false, false),
                    phase("ladder 100/s", 75.0, true, false)],
         "timeline": [sample(0.5, "idle", 1.0), sample(1.0, "ladder 50/s", 40.0),
                      sample(1.5, "ladder 100/s", 75.0)]},
        {"label": "cgroup:/system.slice/db", "kind": "cgroup", "pids": [12],
         "exited_at_s": null,
         "phases": [phase("idle", 2.0, true, true), phase("ladder 100/s", 20.0, true, true)],
         "timeline": [sample(0.5, "idle", 2.0), sample(1.0, "ladder 100/s", 20.0)]},
        {"label": "perfbase (self)", "kind": "self", "pids": [13], "exited_at_s": null,
         "phases": [phase("idle", 0.5, true, false), phase("ladder 100/s", 9.0, true, false)],
         "timeline": [sample(0.5, "idle", 0.5)]}
    ]})
}

/// A concurrency ladder saturated from its first step, a rate ladder that never saturated
/// and has no operating point, a suite, and a scenario that ran no step.
fn more_scenarios() -> [Value; 4] {
    let rate = |r: f64| json!({"rate": r});
    let conc = |c: u64| json!({"concurrency": c});
    [
        scenario(
            "pool",
            "concurrency ladder",
            vec![
                step("c=1", conc(1), 90.0, 0.97, 30.0),
                step("c=2", conc(2), 95.0, 1.0, 70.0),
            ],
            json!({"last_good": null, "first_bad": 0, "reason": "errors above 1 %"}),
            json!({"index": 0, "offered": conc(1), "headroom": 0.0}),
            json!([threshold("pool c=1", "error_rate < 1%", 0.03, false)]),
            false,
        ),
        scenario(
            "flat",
            "rate ladder",
            vec![
                step("10/s", rate(10.0), 10.0, 1.0, 80.0),
                step("20.5/s", rate(20.5), 20.5, 1.0, 90.0),
            ],
            json!({"last_good": 1, "first_bad": null, "reason": null}),
            Value::Null,
            json!([threshold("flat 10/s", "rps > 5", 10.0, true)]),
            true,
        ),
        scenario(
            "ops",
            "suite",
            vec![
                step("GET", rate(100.0), 150.0, 1.0, 1.0),
                step("SET", rate(100.0), 50.0, 0.99, 3.0),
            ],
            Value::Null,
            Value::Null,
            json!([]),
            true,
        ),
        scenario(
            "idle",
            "constant",
            vec![],
            Value::Null,
            Value::Null,
            json!([]),
            true,
        ),
    ]
}

/// Rankings of each kind: far apart and close, by throughput and by latency.
fn rankings() -> Value {
    json!([
        {"name": "speed", "by": "throughput", "scenarios": ["ops", "pool"],
         "rows": [rank_row(1, "GET", 150.0, 0.33, 1.0),
                  rank_row(2, "a label longer than the twenty-eight columns", 50.0, 1.0, 3.0)]},
        {"name": "even", "by": "throughput", "scenarios": ["ladder"],
         "rows": [rank_row(1, "a", 100.0, 1.0, 3.0), rank_row(2, "b", 98.0, 1.0, 3.0)]},
        {"name": "tail", "by": "p99", "scenarios": ["flat"],
         "rows": [rank_row(1, "a", 100.0, 1.0, 3.0), rank_row(2, "b", 90.0, 1.0, 9.0)]},
        {"name": "typical", "by": "mean", "scenarios": ["nowhere"],
         "rows": [rank_row(1, "a", 100.0, 1.0, 3.0), rank_row(2, "b", 90.0, 1.02, 9.0)]},
    ])
}

/// An A-vs-B block whose B side has a run far off the others (an outlier in its box plot).
fn versus() -> Value {
    let runs = |base: f64| -> Vec<[f64; 4]> {
        (0..4)
            .map(|i| {
                let m = base + f64::from(i) * 0.1;
                [m, m * 5.0, m * 20.0, m / 10.0]
            })
            .collect()
    };
    let mut b = runs(1.5);
    b.push([30.0, 40.0, 50.0, 0.1]);
    json!([{
        "name": "A <vs> B", "a": "ladder", "b": "flat", "a_label": "Vault", "b_label": "OpenBao",
        "steps": [versus_step("encrypt", "OpenBao", runs(1.0), b).unwrap()]
    }])
}

/// The fixture's plan run with every part of a study a report shows.
fn plan_run() -> RunResult {
    let mut v = fixture();
    let rate = |r: f64| json!({"rate": r});
    // The ladder: a knee at its second step, repeated twice, a mix of endpoints.
    let ladder = &mut v["study"]["scenarios"][0];
    ladder["knee"] = json!({"last_good": 0, "first_bad": 1, "reason": "p99 above 3 × the first"});
    ladder["operating_point"] = json!({"index": 0, "offered": rate(50.0), "headroom": 1.0});
    ladder["repetitions"] = json!(2);
    ladder["repetition_stats"] = json!([repetition_stats("50/s")]);
    let mut again = v["phases"][0].clone();
    again["name"] = json!("ladder 50/s #2");
    again["repetition"] = json!(2);
    v["phases"][0]["endpoints"] = endpoints();
    v["phases"][1]["endpoints"] = endpoints();
    let phases = v["phases"].as_array_mut().unwrap();
    phases.insert(1, again);
    // A repeated scenario the study does not describe.
    for rep in [1, 2] {
        let mut p = phases[2].clone();
        p["name"] = json!(format!("warm-up #{rep}"));
        p["scenario"] = json!("warm-up");
        p["step"] = json!(0);
        p["repetition"] = json!(rep);
        phases.push(p);
    }
    let study = &mut v["study"];
    study["scenarios"]
        .as_array_mut()
        .unwrap()
        .extend(more_scenarios());
    study["scenarios"][1]["steps"][0]["invalid"] = json!("started 1 % fewer than asked");
    study["slo"] = json!(["p99 < 50ms", "error_rate < 1%"]);
    study["scale"] = json!(0.5);
    let health = json!({"name": "health", "requests": 3, "expect": {"200": 3},
                        "actual": {"200": 3}, "passed": true});
    study["checks"].as_array_mut().unwrap().push(health);
    study["rankings"] = rankings();
    study["versus"] = versus();
    v["monitor"] = monitor();
    result(v)
}

#[test]
fn the_terminal_summary_of_a_closed_run() {
    check("terminal_closed.txt", &terminal::render(&closed_run()));
}

#[test]
fn the_terminal_summary_of_an_open_run() {
    check("terminal_open.txt", &terminal::render(&open_run()));
}

#[test]
fn the_terminal_summary_of_a_plan() {
    let r = plan_run();
    let study = r.study.as_ref().unwrap();
    check(
        "terminal_study.txt",
        &terminal::render_study(&r, study, true),
    );
}

/// The page without its stylesheet, and every chart but the box plots reduced to its kind:
/// the charts' drawing is not what these functions decide, the box plots' is.
fn outline(page: &str) -> String {
    let (head, rest) = page.split_once("<style>").unwrap();
    let (_, mut rest) = rest.split_once("</style>").unwrap();
    let mut out = format!("{head}<style>…</style>");
    while let Some(at) = rest.find("<svg ") {
        let end = at + rest[at..].find("</svg>").unwrap() + "</svg>".len();
        let svg = &rest[at..end];
        out.push_str(&rest[..at]);
        if svg.contains("data-chart=\"boxplot\"") {
            out.push_str(svg);
        } else {
            let kind = svg.split('"').nth(3).unwrap();
            out.push_str(&format!("<svg data-chart=\"{kind}\">…</svg>"));
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_html_page_of_a_plan() {
    check(
        "html_plan.html",
        &outline(&html::render(std::slice::from_ref(&plan_run()))),
    );
}

#[test]
fn the_html_page_of_several_runs() {
    let page = html::render(&[closed_run(), open_run()]);
    check("html_runs.html", &outline(&page));
}

#[test]
fn the_junit_document_of_a_plan_and_two_runs() {
    let (plan, closed, open) = (plan_run(), closed_run(), open_run());
    let runs = [
        ("plan".to_string(), &plan),
        ("closed".to_string(), &closed),
        ("open".to_string(), &open),
    ];
    check("junit.xml", &junit::render(&runs));
}

fn baseline(run_id: i64) -> Baseline {
    Baseline {
        run_id,
        saved_at: format!("2026-01-0{run_id}T00:00:00Z"),
        tool_version: "0.1.0".into(),
    }
}

/// The changelog against a baseline where two entries moved and two did not.
fn moved_changelog() -> Changelog {
    let metric = |name: &str, a: f64, b: f64, pct: Option<f64>| {
        json!({"metric": name, "a": a, "b": b, "delta": b - a, "delta_pct": pct,
               "p_value": null, "significant": true, "better": false, "worse": true,
               "verdict": "B is slower"})
    };
    // A figure that did not move: no side is better or worse.
    let still = |name: &str, a: f64, b: f64| {
        json!({"metric": name, "a": a, "b": b, "delta": b - a, "delta_pct": (b - a) / a,
               "p_value": null, "significant": false, "better": false, "worse": false,
               "verdict": "not resolved"})
    };
    let entry = |name: &str, verdict: &str, metrics: Vec<Value>| {
        json!({"name": name, "runs_a": 1, "runs_b": 1, "metrics": metrics,
               "verdict": verdict, "regression": false})
    };
    let mut comparison: perfbase_analysis::versus::runs::Comparison = serde_json::from_value(json!({
        "a": "a", "b": "b", "method": "Welch's t-test at p < 0.05", "tolerance": 0.05,
        "alpha": 0.05, "not_like_for_like": ["another scale"],
        "entries": [
            entry("ladder 50/s", "B is slower",
                  vec![metric("rps", 1234.5, 1000.0, Some(-0.19)), metric("p99_ms", 0.1234, 1.0, None)]),
            entry("ladder 100/s", "mixed", vec![metric("p99_ms", 12.0, 15.0, Some(0.25))]),
            entry("ops GET", "not resolved with one run a side (+1.0 %)", vec![still("rps", 100.0, 101.0)]),
            entry("ops SET", "not resolved with one run a side (−0.5 %)", vec![still("rps", 200.0, 199.0)]),
        ]
    }))
    .unwrap();
    // A figure the baseline did not have.
    comparison.entries[0].metrics[1].b = f64::NAN;
    Changelog {
        previous: Some((baseline(1), comparison)),
        history: vec![baseline(2), baseline(1)],
        trend: Vec::new(),
    }
}

fn page_input<'a>(r: &'a RunResult, changelog: Changelog) -> PageInput<'a> {
    let study = r.study.as_ref().unwrap();
    let sections = study
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let kind = if i % 2 == 0 { "API (HTTP)" } else { "Redis" };
            (s.name.clone(), kind.to_string())
        })
        .collect();
    PageInput {
        title: "Performance Baselines".into(),
        generated_at: "2026-01-03T00:00:00Z".into(),
        run_id: Some(3),
        result: r,
        study,
        sections,
        services: vec![Service {
            kind: "Redis".into(),
            address: "redis://db:6379".into(),
            version: "Redis 7.2.4".into(),
        }],
        closing: vec![("pool".into(), "redirects: 0\nreplies per node: 12\n".into())],
        changelog,
        api: Vec::new(),
        matrices: Vec::new(),
    }
}

#[test]
fn the_baselines_page_of_a_plan() {
    let r = plan_run();
    let page = page::build(&page_input(&r, moved_changelog()));
    check("page.md", &page.markdown());
}

/// The part of a page's Markdown from its section `title` on to the next section.
fn section(markdown: &str, title: &str) -> String {
    let at = markdown.find(&format!("\n## {title}\n")).unwrap();
    let rest = &markdown[at + 1..];
    let end = rest[1..].find("\n## ").map_or(rest.len(), |e| e + 2);
    rest[..end].to_string()
}

#[test]
fn the_changelog_of_a_first_baseline_and_of_one_where_nothing_moved() {
    let r = plan_run();
    let first = page::build(&page_input(&r, Changelog::default())).markdown();
    let mut quiet = moved_changelog();
    if let Some((_, c)) = quiet.previous.as_mut() {
        c.entries.retain(|e| !e.moved());
        c.not_like_for_like.clear();
    }
    quiet.history.clear();
    let quiet = page::build(&page_input(&r, quiet)).markdown();
    check(
        "page_changelogs.md",
        &(section(&first, "Changelog") + &section(&quiet, "Changelog")),
    );
}

#[test]
fn a_plan_where_nothing_stands_out_says_so() {
    let mut v = fixture();
    let study = &mut v["study"];
    study["checks"] = json!([]);
    study["scenarios"][0]["thresholds"] = json!([]);
    study["scenarios"][0]["passed"] = json!(true);
    study["scenarios"][0]["knee"] = Value::Null;
    v.as_object_mut().unwrap().remove("monitor");
    let r = result(v);
    let page = page::build(&page_input(&r, Changelog::default())).markdown();
    check(
        "page_quiet_observations.md",
        &section(&page, "Observations"),
    );
}
