//! `perfbase run`'s phases: each is saved as it ends (and Ctrl-C keeps those done), and a plan's
//! monitor labels its samples with each phase.

use crate::common::*;
use serde_json::Value;
use std::process::Stdio;

#[test]
fn each_phase_is_saved_as_it_ends_and_ctrl_c_keeps_them() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = "[targets.svc]\nurl = \"{URL}\"\n[workloads.w]\ntarget = \"svc\"\n[[scenarios]]\nname = \"ladder\"\nworkload = \"w\"\nconcurrency = [1, 2, 3, 4]\nduration = \"1s\"\n"
        .replace("{URL}", &format!("http://{}/delay/2", server.addr));
    let file = dir.path().join("plan.toml");
    std::fs::write(&file, plan).unwrap();
    let out_dir = dir.path().join("out");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args([
            "run",
            file.to_str().unwrap(),
            "-q",
            "--no-store",
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two steps of 1 s done and saved: read as soon as they are, not at a fixed time, which
    // a slow start of the binary would shift.
    wait_signals_caught(child.id());
    let saved = wait_for(30, "two saved steps", || {
        let text = std::fs::read_to_string(out_dir.join("result.json")).ok()?;
        let saved: Value = serde_json::from_str(&text).ok()?;
        (saved["phases"].as_array()?.len() >= 2).then_some(saved)
    });
    assert_eq!(
        saved["phases"].as_array().unwrap().len(),
        2,
        "two steps were done and saved"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let done: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("result.json")).unwrap())
            .unwrap();
    assert_eq!(done["interrupted"], true);
    assert_eq!(
        done["phases"].as_array().unwrap().len(),
        3,
        "the interrupted step is kept too"
    );
    assert!(out_dir.join("report.md").exists());
    validate(&done);
}

#[test]
fn a_plan_monitor_labels_samples_with_each_phase() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let mut busy = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let dir = tmp();
    // The pid comes from the environment, as scripts/services.sh exports its services'.
    let plan = "[monitor]\ntargets = [\"pid:${BUSY_PID}\"]\nidle = \"600ms\"\ninterval = \"200ms\"\n[targets.svc]\nurl = \"{URL}\"\n[workloads.w]\ntarget = \"svc\"\npath = \"/delay/2\"\n[[scenarios]]\nname = \"ladder\"\nworkload = \"w\"\nconcurrency = [1, 2]\nduration = \"800ms\"\n";
    // perfbase run --monitor adds a target to the plan's own.
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let extra = format!("pid:{}", sleeper.id());
    // --monitor-idle wins over the plan's idle.
    let r = run_plan_with(
        dir.path(),
        &plan.replace("{URL}", &format!("http://{}", server.addr)),
        |c| {
            c.args(["--monitor", &extra, "--monitor-idle", "1600ms"])
                .env("BUSY_PID", busy.id().to_string());
        },
    );
    for child in [&mut busy, &mut sleeper] {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let targets = r.json()["monitor"]["targets"].as_array().unwrap();
    let labels: Vec<&str> = targets
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels[0], format!("pid:{}", busy.id()), "{labels:?}");
    assert_eq!(labels[1], extra, "{labels:?}");
    let idle = targets[0]["phases"][0]["samples"].as_u64().unwrap();
    assert!(
        idle >= 6,
        "1.6 s idle at 200 ms, not the plan's 0.6 s: {idle} samples"
    );
    assert_eq!(
        labels.len(),
        3,
        "plan's, the flag's, perfbase itself: {labels:?}"
    );
    let sleeping = targets[1]["phases"][1]["cpu_pct"]["mean"].as_f64().unwrap();
    assert!(
        sleeping < 5.0,
        "a sleeping process under load: {sleeping} %"
    );
    let target = &r.json()["monitor"]["targets"][0];
    let names: Vec<&str> = target["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["idle", "ladder c=1", "ladder c=2"], "{target}");
    validate(r.json());
}
