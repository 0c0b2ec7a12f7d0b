//! Failover as a client sees it: a five-node Vault cluster (scripts/services.sh up vault_ha)
//! loaded through a standby while a plan's fault kills the active node. The result's outage
//! must match what the cluster's own logs say: it starts at the kill, ends no earlier than
//! the new active node's `post-unseal setup complete` and at most 2 s after it (the standby
//! learning the new leader). The run goes on and recovers.

use crate::common::*;
use std::path::Path;

const PLAN: &str = r#"
[plan]
timeout = "5s"
[targets.standby]
url = "{URL}"
protocol = "vault"
token_env = "PERFBASE_VAULT_HA_TOKEN"
[workloads.encrypt]
target = "standby"
command = "encrypt"
init = true
[[scenarios]]
name = "failover"
workload = "encrypt"
concurrency = 4
duration = "14s"
thresholds = ["recovery_s < 10"]
[[scenarios.faults]]
at = "4s"
run = ["{SERVICES}", "kill-active", "vault_ha"]
"#;

/// Seconds since the epoch of a Vault log line's UTC timestamp (`2026-11-30T11:23:01.234Z`).
fn log_time(line: &str) -> Option<f64> {
    let ts = line.split_whitespace().next()?.strip_suffix('Z')?;
    let (date, time) = ts.split_once('T')?;
    let d: Vec<i64> = date
        .split('-')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let (h, rest) = time.split_once(':')?;
    let (m, s) = rest.split_once(':')?;
    let (y, mo, da) = (d[0], d[1], d[2]);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60;
    Some(secs as f64 + s.parse::<f64>().ok()?)
}

/// When a node took over after `killed_at`: the first `post-unseal setup complete` after an
/// `acquired lock, enabling active operation`, in any node's log.
fn took_over(dir: &Path, killed_at: f64) -> Option<(String, f64)> {
    (1..=5).find_map(|n| {
        let log = std::fs::read_to_string(dir.join(format!("node{n}/vault_ha.log"))).ok()?;
        let mut locked = false;
        for line in log.lines() {
            let Some(t) = log_time(line).filter(|t| *t >= killed_at) else {
                continue;
            };
            locked |= line.contains("acquired lock, enabling active operation");
            if locked && line.contains("post-unseal setup complete") {
                return Some((format!("node{n}"), t));
            }
        }
        None
    })
}

#[test]
fn killing_the_active_node_shows_an_outage_as_long_as_the_leader_election() {
    let _g = serial();
    if service("PERFBASE_VAULT_HA_URLS").is_none() {
        return;
    }
    // Whole again (a previous run killed a node), and read now: the active node may have moved.
    services_sh(&["up", "vault_ha"]);
    let standby = service_var("vault_ha", "PERFBASE_VAULT_HA_STANDBY_URL");
    let token = service_var("vault_ha", "PERFBASE_VAULT_HA_TOKEN");
    let dir_var = service_var("vault_ha", "PERFBASE_VAULT_HA_DIR");
    let root = env!("CARGO_MANIFEST_DIR");
    let plan = PLAN
        .replace("{URL}", &standby)
        .replace("{SERVICES}", &format!("{root}/scripts/services.sh"));
    let dir = tmp();
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.env("PERFBASE_VAULT_HA_TOKEN", &token);
    });
    // The cluster whole again for whatever runs next, before any assertion.
    services_sh(&["up", "vault_ha"]);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let v = r.json();
    validate(v);
    let phase = &v["phases"][0];
    let fault = &phase["faults"][0];
    assert_eq!(fault["exit"], 0, "{fault}");
    let said = fault["output"].as_str().unwrap();
    let killed_at: f64 = said
        .lines()
        .find(|l| l.starts_with("killed "))
        .and_then(|l| l.rsplit(" at ").next())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("the kill's time in {said:?}"));
    let (node, active_at) = took_over(Path::new(&dir_var), killed_at)
        .unwrap_or_else(|| panic!("no node took over after {killed_at} ({said})"));
    let election = active_at - killed_at;
    let a = &phase["availability"];
    let o = &a["outages"][0];
    let outage = o["length_s"].as_f64().unwrap();
    eprintln!("killed: {said}; {node} active {election:.3} s later; outage {outage:.3} s: {a}");
    // Nothing succeeds before a node has taken over; after that, the standby the load goes
    // through still has to learn the new active node before it forwards again. A fresh CI
    // run measured outage 3.165 s for an election of 2.164 s (1.0006 s of catch-up), so the
    // catch-up gets 2 s.
    assert!(
        outage > election - 0.5 && outage < election + 2.0,
        "outage {outage:.3} s, election {election:.3} s ({node}): {a}"
    );
    // It began at the kill: 4 s into the run, on the run's clock.
    let from = o["from_s"].as_f64().unwrap();
    let at = fault["at_s"].as_f64().unwrap();
    assert!(
        (from - at).abs() < 0.5,
        "outage from {from} s, kill at {at} s"
    );
    assert!(
        o["errors"].as_object().is_some_and(|e| !e.is_empty()),
        "failures by class: {o}"
    );
    assert_eq!(a["recovered"], true, "{a}");
    assert!(!o["first_successes_ms"].as_array().unwrap().is_empty());
    // The run went on: every second before the kill and the last whole one succeeded (the
    // share of failures says little: a standby's redirects come far faster than answers).
    let tail = phase["timeline"].as_array().unwrap();
    for t in &tail[..3] {
        assert_eq!(t["errors"], 0, "{t}");
    }
    let last = &tail[tail.len() - 2];
    assert!(last["requests"].as_u64().unwrap() > last["errors"].as_u64().unwrap());
}
