//! `[[scenarios.faults]]` and availability over time: a plan stops its server (SIGSTOP) 1 s
//! into the run and resumes it (SIGCONT) at 2.5 s while the load goes on; the result shows
//! the outage where the faults put it, its failures and its recovery, and a `recovery_s`
//! threshold judges it.

use super::{run_plan, study};
use crate::common::*;

const PLAN: &str = r#"
[plan]
timeout = "300ms"
[targets.svc]
url = "{URL}"
[workloads.get]
target = "svc"
path = "/health"
[[scenarios]]
name = "paused"
workload = "get"
concurrency = 4
duration = "4s"
thresholds = ["recovery_s < 0.5", "outage_s < 10s"]
[[scenarios.faults]]
at = "1s"
run = ["kill", "-STOP", "{PID}"]
[[scenarios.faults]]
at = "2500ms"
run = ["kill", "-CONT", "{PID}"]
"#;

#[test]
fn a_server_paused_by_a_fault_shows_as_an_outage_of_the_faults_length() {
    let _g = serial();
    let dir = tmp();
    let (child, line) = serve(&[]);
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let plan = PLAN.replace("{PID}", &child.id().to_string());
    let r = run_plan(&plan, &format!("http://{addr}"), dir.path(), &[]);
    // Never leave the server stopped, whatever the run did.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
    interrupt(child);
    // recovery_s < 0.5 fails: exit 1, and the run's figures are all there.
    assert_eq!(r.code(), 1, "{}\n{}", r.stdout(), r.stderr());
    let v = r.json();
    validate(v);
    let phase = &v["phases"][0];
    let faults = phase["faults"]
        .as_array()
        .expect("the faults are in the phase");
    assert_eq!(faults.len(), 2, "{faults:?}");
    let at = |i: usize| faults[i]["at_s"].as_f64().unwrap();
    assert_eq!(faults[0]["exit"], 0);
    assert!(faults[0]["command"]
        .as_str()
        .unwrap()
        .starts_with("kill -STOP"));
    let (stop, resume) = (at(0), at(1));
    assert!((resume - stop - 1.5).abs() < 0.1, "{stop} → {resume}");
    let a = &phase["availability"];
    let outage = a["outage_s"].as_f64().unwrap();
    // From the last success before the stop to the first after the resume.
    assert!(
        (outage - (resume - stop)).abs() < 0.25,
        "outage {outage} s, faults {stop} → {resume}: {a}"
    );
    let o = &a["outages"][0];
    let from = o["from_s"].as_f64().unwrap();
    assert!((from - stop).abs() < 0.1, "{from} vs {stop}");
    assert!(o["errors"]["timeout"].as_u64().unwrap() >= 4, "{o}");
    // Timeouts come 300 ms after the stop; the first success after the resume.
    let recovery = a["recovery_s"].as_f64().unwrap();
    assert!(
        (recovery - (resume - stop - 0.3)).abs() < 0.25,
        "{recovery}"
    );
    assert_eq!(a["recovered"], true);
    assert!(!o["first_successes_ms"].as_array().unwrap().is_empty());
    // The thresholds: the outage was under 10 s, the recovery over 0.5 s.
    let t = &study(&r)["scenarios"][0]["thresholds"];
    let passed = |text: &str| {
        t.as_array()
            .unwrap()
            .iter()
            .find(|x| x["threshold"] == text)
            .unwrap_or_else(|| panic!("{text} judged: {t}"))["passed"]
            .clone()
    };
    assert_eq!(passed("recovery_s < 0.5"), false);
    assert_eq!(passed("outage_s < 10s"), true);
    // Every report says what was out.
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("no success for"), "{md}");
    assert!(md.contains("timeout"), "{md}");
}

#[test]
fn a_fault_due_after_its_step_is_refused_with_its_line() {
    let dir = tmp();
    let plan = PLAN.replace("at = \"2500ms\"", "at = \"4s\"");
    let r = run_plan(&plan, "http://127.0.0.1:9", dir.path(), &[]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(r.stderr().contains("faults[1].at"), "{}", r.stderr());
    assert!(r.stderr().contains("never happen"), "{}", r.stderr());
}
