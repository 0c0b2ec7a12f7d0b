//! `perfbase trend` over a real history: 40 stored runs of a plan against the reference
//! service, slowed by 5 % from run 25 on. The change is found at run 25 and nowhere else, the
//! gate passes on runs 1–24 and fails at run 25 naming the step and the metric; and bad input
//! to `trend` and `history prune` is refused clearly.

use crate::common::*;
use perfbase_reference::Config;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const PLAN: &str = r#"
[plan]
name = "nightly"
min_run_time = "100ms"
min_run_ops = 1
[targets.api]
url = "{URL}"
[workloads.lookup]
target = "api"
path = "/lookup/key-1"
[[scenarios]]
name = "lookup"
workload = "lookup"
concurrency = 8
duration = "300ms"
repetitions = 3
"#;

/// A reference service whose /lookup sleeps `delay_ms`.
fn service(delay_ms: u64) -> perfbase_reference::Background {
    let config = Config {
        lookup_delay: Duration::from_millis(delay_ms),
        ..Config::default()
    };
    perfbase_reference::spawn_with(0, config).unwrap()
}

/// `perfbase trend --plan nightly --metric p50,rps ARGS…` on the store in `dir`.
fn trend(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["trend", "--plan", "nightly", "--metric", "p50,rps"];
    all.extend_from_slice(args);
    pb(dir, &all)
}

#[test]
fn a_slowdown_from_run_25_is_found_there_and_gated() {
    let _serial = serial();
    let dir = tmp();
    // 20 ms of sleep against 22 ms: about +10 % on p50 and −9 % on throughput, twice the
    // gate's default tolerance. On this 2-core machine, with the suite running beside it, a
    // run's p50 varies by ~1.2 %, so a +5 % step is only 4σ: the prediction test at
    // p < 0.001 would pass or fail it by luck. p99 is left out: of ~100 requests per
    // repetition it is the largest but one, which a busy machine moves by more than that.
    let (before, after) = (service(20), service(22));
    for run in 1..=40 {
        let server = if run < 25 { &before } else { &after };
        let plan = PLAN.replace("{URL}", &format!("http://{}", server.addr));
        let r = run_plan_with(dir.path(), &plan, |_| {});
        assert_eq!(r.code(), 0, "run {run}: {}", r.stderr());
        if run > 25 {
            continue;
        }
        let (code, out, err) = trend(dir.path(), &["--check"]);
        if run < 25 {
            assert_eq!(code, 0, "run {run} failed the gate:\n{out}{err}");
        } else {
            assert_eq!(code, 1, "run 25 passed the gate:\n{out}{err}");
            assert!(out.contains("FAIL nightly / lookup / c=8 / p50"), "{out}");
        }
    }
    // The machine itself moves: a fresh CI run once found throughput 1.4 % higher from run
    // 14 on (p < 0.001), a real shift of the machine, not of the service. Changes under 3 %
    // are below what this test is about; the step it plants is ~9 %.
    let json = dir.path().join("trend.json");
    let (code, out, err) = trend(
        dir.path(),
        &["--json", json.to_str().unwrap(), "--min-change", "3%"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(t["schema"], "perfbase.trend/v1");
    let series = t["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "{t}");
    for s in series {
        assert_eq!(s["points"].as_array().unwrap().len(), 40);
        let cps = s["change_points"].as_array().unwrap();
        assert_eq!(cps.len(), 1, "{}: {cps:?}\n{out}", s["name"]);
        let index = cps[0]["index"].as_u64().unwrap();
        assert!(index.abs_diff(24) <= 1, "{}: {cps:?}", s["name"]);
        assert_eq!(cps[0]["direction"], "worse");
        let change = cps[0]["change"].as_f64().unwrap().abs();
        assert!((0.05..0.15).contains(&change), "{change}");
    }
    assert!(out.contains("worse (p < 0.001)"), "{out}");
}

#[test]
fn trend_refuses_bad_input_clearly() {
    let dir = tmp();
    let (code, _, err) = pb(dir.path(), &["trend", "--metric", "p42"]);
    assert_eq!(code, 2);
    assert!(err.contains("--metric p42: not a trend metric"), "{err}");
    let file = dir.path().join("series.jsonl");
    std::fs::write(
        &file,
        "{\"name\": \"a\", \"values\": [1, 2]}\n{\"name\": 3}\n",
    )
    .unwrap();
    let (code, _, err) = pb(dir.path(), &["trend", "--series", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("series.jsonl, line 2"), "{err}");
    let (code, _, err) = pb(dir.path(), &["trend", "--junit", "-"]);
    assert_eq!(code, 2);
    assert!(err.contains("add --check"), "{err}");
    let (code, _, err) = pb(dir.path(), &["history", "prune"]);
    assert_eq!(code, 2);
    assert!(err.contains("--keep-days N, --keep-last N"), "{err}");
    // An empty store has no trend: said, not an error.
    let (code, out, _) = pb(dir.path(), &["trend"]);
    assert_eq!(code, 0);
    assert!(out.contains("No stored runs match"), "{out}");
    let (code, out, err) = pb(dir.path(), &["history", "prune", "--keep-last", "5"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("pruned 0 runs"), "{out}");
    // A gate that judged nothing fails (issue 47, item 12): an unknown plan, an empty
    // --series file, --last 0.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let series = file.to_str().unwrap();
    std::fs::write(&file, "{\"name\": \"a\", \"values\": [1, 2, 3]}\n").unwrap();
    let cases: [&[&str]; 3] = [
        &["trend", "--plan", "no-such-plan", "--check"],
        &["trend", "--series", empty.to_str().unwrap(), "--check"],
        &["trend", "--series", series, "--check", "--last", "0"],
    ];
    for args in cases {
        let (code, _, err) = pb(dir.path(), args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("judged nothing") || err.contains("--last 0"),
            "{args:?}: {err}"
        );
    }
    let (code, _, err) = pb(dir.path(), &["trend", "--series", series, "--check"]);
    assert_eq!(code, 0, "{err}");
}
