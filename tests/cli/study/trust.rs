//! Baselines people can trust: compared scenarios run interleaved, so a drifting machine
//! cannot fake a difference (the same set-up run in sequence shows how it would), and a
//! precision target repeats a step until its figures are pinned down — or marks them.

use super::{run_plan, study};
use crate::common::*;
use perfbase_reference::Config;
use serde_json::Value;
use std::time::Duration;

/// Two identical services whose /lookup grows 2 ms slower every second they run, started
/// together: whichever scenario runs later looks slower.
fn drifting_pair() -> (
    perfbase_reference::Background,
    perfbase_reference::Background,
) {
    let config = Config {
        lookup_drift: Duration::from_millis(2),
        ..Config::default()
    };
    let a = perfbase_reference::spawn_with(0, config.clone()).unwrap();
    let b = perfbase_reference::spawn_with(0, config).unwrap();
    (a, b)
}

const VERSUS_PLAN: &str = r#"
[plan]
interleave = INTERLEAVE
seed = 3
[targets.a]
url = "{A}"
[targets.b]
url = "{B}"
[workloads.a]
target = "a"
path = "/lookup/key-1"
[workloads.b]
target = "b"
path = "/lookup/key-1"
[[scenarios]]
name = "A"
workload = "a"
concurrency = 1
duration = "300ms"
repetitions = 6
[[scenarios]]
name = "B"
workload = "b"
concurrency = 1
duration = "300ms"
repetitions = 6
[[versus]]
a = "A"
b = "B"
"#;

/// The mean latency block of the plan's one A-vs-B: B's difference in percent and its p.
fn mean_versus(r: &Run) -> (f64, f64) {
    let stat = &study(r)["versus"][0]["steps"][0]["stats"][0];
    assert_eq!(stat["stat"], "mean", "{stat}");
    (
        stat["delta_pct"].as_f64().unwrap(),
        stat["p_value"].as_f64().unwrap(),
    )
}

fn run_versus(interleave: bool) -> Run {
    let (a, b) = drifting_pair();
    let dir = tmp();
    let plan = VERSUS_PLAN
        .replace("INTERLEAVE", &interleave.to_string())
        .replace("{A}", &format!("http://{}", a.addr))
        .replace("{B}", &format!("http://{}", b.addr));
    let r = run_plan(&plan, "", dir.path(), &[]);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    r
}

#[test]
fn interleaved_runs_see_no_difference_between_identical_drifting_services() {
    let _g = serial();
    let r = run_versus(true);
    let (delta, p) = mean_versus(&r);
    assert!(
        p >= 0.05,
        "identical services differ: {delta:+.1} %, p = {p}"
    );
    // The order is on record: six blocks of both, each pair balanced (AB then BA).
    let order = &study(&r)["interleaved"][0];
    assert_eq!(order["scenarios"], serde_json::json!(["A", "B"]), "{order}");
    let blocks: Vec<Vec<u64>> = serde_json::from_value(order["blocks"].clone()).unwrap();
    assert_eq!(blocks.len(), 6, "{order}");
    for pair in blocks.chunks(2) {
        assert_eq!(pair[0].len(), 2);
        assert_eq!(pair[0][0], pair[1][1], "{order}");
    }
    // The runs alternate in the result as they ran.
    let sides: Vec<&str> = r.json()["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["scenario"].as_str().unwrap())
        .collect();
    assert_ne!(sides[..6], ["A"; 6], "{sides:?}");
}

/// What interleaving is for: the very same set-up run in sequence (all of A, then all of B)
/// finds B significantly slower, although the two services are the same.
#[test]
fn the_same_drift_run_in_sequence_fakes_a_difference() {
    let _g = serial();
    let r = run_versus(false);
    let (delta, p) = mean_versus(&r);
    assert!(
        p < 0.05 && delta > 0.0,
        "B should look slower: {delta:+.1} %, p = {p}"
    );
    assert!(study(&r)["interleaved"].is_null(), "{}", study(&r));
}

const PRECISION_PLAN: &str = r#"
[plan]
precision = "10%"
max_repetitions = 12
min_run_ops = 50           # the drifting service's 300 ms runs lengthen a little, the steady one's not
[targets.svc]
url = "{URL}"
[workloads.lookup]
target = "svc"
path = "/lookup/key-1"
[[scenarios]]
name = "s"
workload = "lookup"
concurrency = 1
duration = "DURATION"
"#;

/// The plan's one scenario as the result has it, its report.md, and each run's measured
/// seconds.
fn precision_run(config: Config, duration: &str) -> (Value, String, Vec<f64>) {
    let server = perfbase_reference::spawn_with(0, config).unwrap();
    let dir = tmp();
    let r = run_plan(
        &PRECISION_PLAN.replace("DURATION", duration),
        &format!("http://{}", server.addr),
        dir.path(),
        &[],
    );
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    let durations = r.json()["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["duration_s"].as_f64().unwrap())
        .collect();
    (study(&r)["scenarios"][0].clone(), report, durations)
}

/// The interval's wider side over the median, as the result's figures give it.
fn precision_of(summary: &Value) -> f64 {
    let (lo, hi, m) = (
        summary["ci95"][0].as_f64().unwrap(),
        summary["ci95"][1].as_f64().unwrap(),
        summary["median"].as_f64().unwrap(),
    );
    (hi - m).max(m - lo) / m
}

#[test]
fn a_precision_target_stops_a_steady_step_once_met_and_marks_a_drifting_one() {
    let _g = serial();
    // Steady: a fixed 50 ms per lookup, whose jitter (the timer's, the machine's, the rest of
    // the suite running beside it) is small beside it; 2 s runs of about 40 lookups each.
    let (steady, _, _) = precision_run(
        Config {
            lookup_delay: Duration::from_millis(50),
            ..Config::default()
        },
        "2s",
    );
    assert_eq!(steady["precision_target"], 0.1, "{steady}");
    let runs = steady["repetitions"].as_u64().unwrap();
    assert!((5..12).contains(&runs), "{runs} runs: {steady}");
    let stats = &steady["repetition_stats"][0];
    for figure in ["rps", "mean_ms", "p99_ms"] {
        let p = precision_of(&stats[figure]);
        assert!(p <= 0.1, "{figure}: ±{:.1} % after {runs} runs", p * 100.0);
    }
    // Drifting: every run is slower than the last, so the runs never agree.
    let (drifting, report, durations) = precision_run(
        Config {
            lookup_drift: Duration::from_millis(5),
            ..Config::default()
        },
        "300ms",
    );
    assert_eq!(drifting["repetitions"], 12, "{drifting}");
    let p = precision_of(&drifting["repetition_stats"][0]["mean_ms"]);
    // Its first run (300 ms) fell short of 50 lookups, so the later ones were lengthened,
    // never past 4 × the step's duration (1.2 s, plus the last operations' drain: 1.2526 s
    // was measured on a loaded fresh machine, so 100 ms of slack).
    let (first, last) = (durations[0], durations[durations.len() - 1]);
    assert!(first < 0.4 && last > 0.4 && last <= 1.3, "{durations:?}");
    assert!(p > 0.1, "±{:.1} %", p * 100.0);
    // Marked where it is read.
    assert!(report.contains("(target ±10 %: missed)"), "{report}");
}
