//! `perfbase run`'s load shapes: a rate ladder finding the knee at the right step, repetitions
//! giving exactly the statistics of their runs, and stages ramping the rate under the plan's
//! thresholds.

use super::{run_plan, study};
use crate::common::*;
use perfbase_reference::Config;
use serde_json::Value;
use std::time::Duration;

#[test]
fn a_rate_ladder_over_a_capped_service_finds_the_knee_at_the_right_step() {
    let _g = serial();
    // 2 workers × 10 ms: at most ~190 requests/s get through, whatever is offered. The last
    // good step (120/s) keeps the workers 63 % busy, so its p99 stays well inside the knee
    // rule's 3 × the first step's even on a loaded machine.
    let server = perfbase_reference::spawn_with(
        0,
        Config {
            workers: Some(2),
            work_time: Duration::from_millis(10),
            ..Config::default()
        },
    )
    .unwrap();
    let dir = tmp();
    let plan = r#"
[slo]
thresholds = ["p99 < 50ms"]
[targets.svc]
url = "{URL}"
[workloads.work]
target = "svc"
path = "/work"
[[scenarios]]
name = "ladder"
workload = "work"
rate = [50, 100, 120, 300, 400]
duration = "1500ms"
cooldown = "300ms"
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let s = &study(&r)["scenarios"][0];
    assert_eq!(s["kind"], "rate ladder");
    assert_eq!(s["knee"]["last_good"], 2, "{}", s["knee"]);
    assert_eq!(s["knee"]["first_bad"], 3, "{}", s["knee"]);
    assert!(
        s["knee"]["reason"].as_str().unwrap().contains("95 %"),
        "{}",
        s["knee"]
    );
    assert_eq!(s["operating_point"]["index"], 2, "{}", s["operating_point"]);
    let headroom = s["operating_point"]["headroom"].as_f64().unwrap();
    assert!(
        (headroom - 1.5).abs() < 1e-9,
        "300/120 − 1 = 150 %: {headroom}"
    );
    // Achieved throughput of the saturated steps sits at the capacity.
    let achieved = s["steps"][4]["achieved_rps"].as_f64().unwrap();
    assert!((150.0..=205.0).contains(&achieved), "{achieved}");
    assert_eq!(r.json()["phases"].as_array().unwrap().len(), 5);
    validate(r.json());
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains("| 300/s (knee) |"), "{report}");
    assert!(report.contains("## Test environment"));
}

#[test]
fn repetitions_give_exactly_the_statistics_of_their_runs() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = r#"
[targets.svc]
url = "{URL}"
[workloads.d]
target = "svc"
path = "/delay/3"
[[scenarios]]
name = "stable"
workload = "d"
rate = 100
duration = "700ms"
repetitions = 4
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let phases = r.json()["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    let stats = &study(&r)["scenarios"][0]["repetition_stats"][0];
    assert_eq!(stats["runs"], 4);
    for (key, pick) in [
        ("p99_ms", "p99"),
        ("mean_ms", "mean"),
        ("max_ms", "max"),
        ("min_ms", "min"),
        ("p50_ms", "p50"),
    ] {
        let values: Vec<f64> = phases
            .iter()
            .map(|p| p["latency_ms"][pick].as_f64().unwrap())
            .collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let s = &stats[key];
        assert!(
            (s["mean"].as_f64().unwrap() - mean).abs() < 1e-9,
            "{key}: {s} vs mean {mean}"
        );
        assert!(
            (s["variance"].as_f64().unwrap() - variance).abs() < 1e-9,
            "{key}: {s} vs variance {variance}"
        );
        // Four runs are too few for a 95 % interval of the median run (five make 93.75 %):
        // none is given, rather than one that does not hold.
        assert!(
            s["ci95"][0].is_null() && s["ci95"][1].is_null(),
            "{key}: {s}"
        );
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let median = (sorted[1] + sorted[2]) / 2.0;
        assert!(
            (s["median"].as_f64().unwrap() - median).abs() < 1e-9,
            "{key}: {s}"
        );
    }
    let rps: Vec<f64> = phases.iter().map(|p| p["rps"].as_f64().unwrap()).collect();
    let mean = rps.iter().sum::<f64>() / 4.0;
    assert!((stats["rps"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    // The merged step row counts every run.
    let total: u64 = phases.iter().map(|p| p["requests"].as_u64().unwrap()).sum();
    assert_eq!(r.json()["requests"].as_u64().unwrap(), total);
    assert!((270..=290).contains(&total), "4 × 70 requests: {total}");
    validate(r.json());
}

#[test]
fn stages_ramp_the_rate_and_plan_thresholds_gate_every_phase() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    // A one-value-per-line corpus walked in order, and a CSV corpus picked by weight.
    std::fs::write(dir.path().join("codes.txt"), "200\n200\n200\n503\n").unwrap();
    std::fs::write(dir.path().join("codes.csv"), "code,weight\n200,3\n201,1\n").unwrap();
    let plan = r#"
[plan]
thresholds = ["error_rate < 1%", "rps > 100000"]
[targets.svc]
url = "{URL}"
[corpora.seq]
file = "codes.txt"
pick = "sequential"
[corpora.weighted]
file = "codes.csv"
column = "code"
weight_column = "weight"
pick = "weighted"
[workloads.weighted]
target = "svc"
path = "/status/{{weighted}}"
[workloads.seq]
target = "svc"
path = "/status/{{seq}}"
[[scenarios]]
name = "ramp"
workload = "weighted"
stages = [
  { rate = 100, duration = "1s" },
  { ramp_to = 300, duration = "2s" },
  { concurrency = 2, duration = "500ms" },
]
[[checks]]
name = "in order"
workload = "seq"
requests = 40
expect = { 200 = 30, 503 = 10 }
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    // "rps > 100000" fails in every phase: a plan threshold gates a stages scenario.
    assert_eq!(r.code(), 1, "{}\n{}", r.stdout(), r.stderr());
    let all = r.json()["phases"].as_array().unwrap();
    let phases: Vec<&Value> = all.iter().filter(|p| p["scenario"] == "ramp").collect();
    assert_eq!(phases.len(), 3, "{all:?}");
    let requests = |i: usize| phases[i]["requests"].as_u64().unwrap();
    assert!(
        (98..=102).contains(&requests(0)),
        "100/s for 1 s: {}",
        requests(0)
    );
    // 100 → 300 /s over 2 s is 400 requests: 150 in the first second, 250 in the second.
    assert!((392..=408).contains(&requests(1)), "ramp: {}", requests(1));
    let tl = phases[1]["timeline"].as_array().unwrap();
    let second = |i: usize| tl[i]["requests"].as_u64().unwrap();
    assert!(
        (140..=160).contains(&second(0)),
        "ramp second 1: {} in {tl:?}",
        second(0)
    );
    assert!(
        (240..=260).contains(&second(1)),
        "ramp second 2: {}",
        second(1)
    );
    assert_eq!(
        phases[1]["open_model"]["requested_rate"], 200.0,
        "the ramp's mean"
    );
    assert_eq!(phases[0]["model"], "open");
    assert_eq!(phases[2]["model"], "closed");
    assert_eq!(phases[2]["offered_connections"], 2);
    assert!(requests(2) > 0);
    // Weighted 3:1 between 200 and 201 over all three stages.
    let (mut ok200, mut ok201) = (0u64, 0u64);
    for p in &phases {
        ok200 += p["status"]["200"].as_u64().unwrap_or(0);
        ok201 += p["status"]["201"].as_u64().unwrap_or(0);
    }
    let share = ok201 as f64 / (ok200 + ok201) as f64;
    assert!(
        (0.20..=0.30).contains(&share),
        "201 share {share}: {ok200} / {ok201}"
    );
    // Both plan thresholds are judged on every phase; only the rps one fails.
    let s = &study(&r)["scenarios"][0];
    assert_eq!(s["kind"], "stages");
    let t = s["thresholds"].as_array().unwrap();
    assert_eq!(t.len(), 6, "{t:?}");
    for row in t {
        let failed = row["threshold"] == "rps > 100000";
        assert_eq!(row["passed"], !failed, "{row}");
    }
    // The sequential corpus is walked in order: exactly 3 × 200 per 503.
    let check = &study(&r)["checks"][0];
    assert_eq!(check["passed"], true, "{check}");
    validate(r.json());
}
