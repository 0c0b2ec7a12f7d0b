//! Agents that stop early, on one machine with a shared SQLite store: an `abort_on_fail`
//! threshold failing on the agents' merged figures stops every agent through the store, and an
//! agent killed outright is found lost by `perfbase merge --wait-for` (its heartbeat stopped),
//! which merges the others into a partial run that names it.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Agent `i` of 3 of run `run`, meeting the others at the barrier of the SQLite `store`.
fn agent(dir: &Path, plan: &Path, store: &Path, run: &str, i: u32) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .arg("agent")
        .arg(plan)
        .args(["--segment", &format!("{i}/3"), "--run-id", run, "--barrier"])
        .args(["--barrier-timeout", "30s", "-q", "--store"])
        .arg(store)
        .arg("--out")
        .arg(dir.join(format!("{run}-{i}")))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn result_of(dir: &Path, run: &str, i: u32) -> Value {
    let text = std::fs::read_to_string(dir.join(format!("{run}-{i}/result.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// How long after `at_ms` (store clock) each agent of `run` last beat, by segment: an agent
/// beats every 250 ms until it exits, so it had stopped, saved and gone within 250 ms of this
/// (which is negative for one that exited before the next beat after the request).
pub fn gone_after(store: &str, run: &str, at_ms: i64) -> Vec<(String, i64)> {
    let mut s = perfbase_store::Store::open(store).unwrap();
    let now = s.clock_ms().unwrap();
    s.heartbeats(run)
        .unwrap()
        .into_iter()
        .map(|(segment, age)| (segment, now - age - at_ms))
        .collect()
}

/// Half the requests fail; `abort_on_fail = ["error_rate < 20%"]` after 2 s stops all three
/// agents of a 30-second step within 2 s of the stop request, and each result says why.
#[test]
fn abort_on_fail_on_the_merged_figures_stops_every_agent() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = dir.path().join("abort.toml");
    std::fs::write(
        &plan,
        format!(
            "[targets.api]\nurl = \"http://{}\"\n[workloads.w]\ntarget = \"api\"\n\
             [[workloads.w.mix]]\npath = \"/\"\nweight = 1\n\
             [[workloads.w.mix]]\npath = \"/status/500\"\nweight = 1\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 90\nduration = \"30s\"\n\
             abort_on_fail = [\"error_rate < 20%\"]\ndelay_abort_eval = \"2s\"\n",
            server.addr
        ),
    )
    .unwrap();
    let store = dir.path().join("shared.db");
    let started = Instant::now();
    let agents: Vec<Child> = (0..3)
        .map(|i| agent(dir.path(), &plan, &store, "ab1", i))
        .collect();
    let mut errs = String::new();
    for a in agents {
        let out = a.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(130), "{err}");
        errs.push_str(&err);
    }
    assert!(started.elapsed() < Duration::from_secs(20), "{errs}");
    let (reason, at_ms) = perfbase_store::Store::open(store.to_str().unwrap())
        .unwrap()
        .stop_request("ab1")
        .unwrap()
        .expect("a stop request in the store");
    assert!(
        reason.starts_with("abort_on_fail: 'error_rate < 20%' failed on the merged figures of"),
        "{reason}"
    );
    for i in 0..3 {
        let r = result_of(dir.path(), "ab1", i);
        assert_eq!(r["interrupted"], true);
        let why = r["stop_reason"].as_str().unwrap();
        assert!(why.contains(&reason), "{why} / {reason}");
    }
    let gone = gone_after(store.to_str().unwrap(), "ab1", at_ms);
    assert_eq!(gone.len(), 3);
    for (segment, late) in gone {
        eprintln!("agent {segment} was gone {late} ms after the stop request");
        // Beats are 250 ms apart: it had exited by its last beat's next.
        assert!(
            late + 250 < 2000,
            "agent {segment} was gone {late} ms after the request"
        );
    }
    let (code, stdout, stderr) = pb(
        dir.path(),
        &[
            "merge",
            "--run-id",
            "ab1",
            "--store",
            store.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 130, "{stderr}");
    assert!(stdout.contains("Stopped: "), "{stdout}");
    assert!(stdout.contains("abort_on_fail"), "{stdout}");
}

/// An agent killed outright (SIGKILL: no result, no goodbye) is found lost once its heartbeat
/// is older than --lost-after; the merge goes on with the other two, the merged run is partial,
/// names the segment in every step it is missing from, and is saved labelled so.
#[test]
fn an_agent_killed_outright_is_lost_and_the_merge_says_so() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = dir.path().join("lost.toml");
    std::fs::write(
        &plan,
        format!(
            "[targets.api]\nurl = \"http://{}\"\n[workloads.w]\ntarget = \"api\"\npath = \"/\"\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = [60, 90]\nduration = \"4s\"\n",
            server.addr
        ),
    )
    .unwrap();
    let store = dir.path().join("shared.db");
    let mut agents: Vec<Child> = (0..3)
        .map(|i| agent(dir.path(), &plan, &store, "lost1", i))
        .collect();
    // The barrier's 2 s after the last arrival, then 1.5 s into the first step.
    let mut s = perfbase_store::Store::open(store.to_str().unwrap()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.arrivals("lost1").unwrap().len() < 3 {
        assert!(Instant::now() < deadline, "the agents never met");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(3500));
    agents[1].kill().unwrap();
    for (i, a) in agents.into_iter().enumerate() {
        let out = a.wait_with_output().unwrap();
        if i != 1 {
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let merged = dir.path().join("merged.json");
    let (code, stdout, stderr) = pb(
        dir.path(),
        &[
            "merge",
            "--run-id",
            "lost1",
            "--wait-for",
            "3",
            "--lost-after",
            "3s",
            "--wait-timeout",
            "60s",
            "--save",
            "--store",
            store.to_str().unwrap(),
            "--json",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 130, "{stdout}{stderr}");
    assert!(
        stderr
            .contains("the agent of segment 1/3 was lost (no heartbeat for over 3s and no result)"),
        "{stderr}"
    );
    assert!(stdout.contains("LOST AGENTS: segment 1/3"), "{stdout}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    validate(&m);
    assert_eq!(m["interrupted"], true);
    assert_eq!(m["lost_segments"], serde_json::json!(["1/3"]));
    for (p, requests) in m["phases"].as_array().unwrap().iter().zip([160, 240]) {
        assert_eq!(p["missing_segments"], serde_json::json!(["1/3"]), "{p}");
        // Two agents' shares of 60/s and 90/s over 4 s.
        assert_eq!(p["requests"], requests, "{p}");
    }
    let found = s
        .history(&[("lost-segments".to_string(), "1/3".to_string())], 0)
        .unwrap();
    assert_eq!(
        found.len(),
        1,
        "the store marks the merged run as one that lost an agent"
    );
}

/// A plan that does not load fails an agent before it arrives at the barrier: the others are
/// not kept waiting for an agent that would only fail once all have met.
#[test]
fn a_bad_plan_fails_before_the_barrier() {
    let dir = tmp();
    let plan = dir.path().join("bad.toml");
    std::fs::write(
        &plan,
        "[targets.api]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"api\"\n\
         path = \"/\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = \"fast\"\n",
    )
    .unwrap();
    let store = dir.path().join("shared.db");
    let started = Instant::now();
    let out = agent(dir.path(), &plan, &store, "bad1", 0)
        .wait_with_output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.toml:9: scenarios[0].rate"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10), "{err}");
    let mut s = perfbase_store::Store::open(store.to_str().unwrap()).unwrap();
    assert!(s.arrivals("bad1").unwrap().is_empty(), "it never arrived");
}
