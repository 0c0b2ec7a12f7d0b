//! One step builder: a command's flags and the equivalent one-scenario plan describe the same
//! load under `--dry-run` (model, rate or connections, the protocol's in-flight cap, pacing,
//! timeout), for each kind of protocol default. Nothing is sent: no server is needed.

use crate::common::{pb, tmp};

/// The lines of a `--dry-run` that describe the load: the plan's settings, and each step's
/// bound and load without its name (a command names its step `measure`, a plan by its rate).
fn load_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| match l.trim_start().strip_prefix("step ") {
            Some(step) => step.split_once(": ").map(|(_, load)| load.to_string()),
            None => l.starts_with("timeout ").then(|| l.to_string()),
        })
        .collect()
}

/// Runs `command` with `--dry-run` and the plan `head` + `[targets.t] url` + `workload` +
/// `scenario` with `--dry-run`, and checks that both describe the same load, which holds
/// `expect`.
fn same_load(
    command: &[&str],
    head: &str,
    (url, workload): (&str, &str),
    scenario: &str,
    expect: &str,
) {
    let dir = tmp();
    let mut args = command.to_vec();
    args.push("--dry-run");
    let (code, flags, err) = pb(dir.path(), &args);
    assert_eq!(code, 0, "{args:?}: {err}");
    let plan = format!(
        "{head}\n[targets.t]\nurl = \"{url}\"\n\n[workloads.measure]\ntarget = \"t\"\n{workload}\n\n\
         [[scenarios]]\nname = \"measure\"\nworkload = \"measure\"\n{scenario}\n"
    );
    let file = dir.path().join("p.toml");
    std::fs::write(&file, plan).unwrap();
    let (code, planned, err) = pb(dir.path(), &["run", file.to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        load_lines(&flags),
        load_lines(&planned),
        "flags:\n{flags}\nplan:\n{planned}"
    );
    assert!(
        load_lines(&flags).iter().any(|l| l.contains(expect)),
        "no '{expect}' in:\n{flags}"
    );
}

#[test]
fn http_open_model_flags_and_plan_agree_on_cap_pacing_and_timeout() {
    same_load(
        &[
            "http",
            "http://127.0.0.1:9/x",
            "-r",
            "200",
            "-d",
            "2s",
            "--timeout",
            "750ms",
        ],
        "[plan]\ntimeout = \"750ms\"\n",
        ("http://127.0.0.1:9", "path = \"/x\""),
        "rate = 200\nduration = \"2s\"",
        "at most 1000 in flight",
    );
}

#[test]
fn database_open_model_takes_the_backends_cap_on_both_roads() {
    // Each request in flight holds a connection: 64, not HTTP's 1000, from flags and plans.
    same_load(
        &[
            "pg",
            "postgres://u@127.0.0.1:9/db",
            "-w",
            "select-only",
            "-r",
            "50",
            "-d",
            "1s",
        ],
        "",
        ("postgres://u@127.0.0.1:9/db", "builtin = \"select-only\""),
        "rate = 50\nduration = \"1s\"",
        "at most 64 in flight",
    );
}

#[test]
fn closed_model_and_pacing_granularity_agree() {
    same_load(
        &[
            "redis",
            "redis://127.0.0.1:9",
            "-w",
            "get",
            "-c",
            "7",
            "-n",
            "100",
        ],
        "",
        ("redis://127.0.0.1:9", "command = \"get\""),
        "concurrency = 7\nrequests = 100",
        "closed model, 7 connection(s)",
    );
    same_load(
        &[
            "nats",
            "nats://127.0.0.1:9",
            "-r",
            "10",
            "-d",
            "1s",
            "--pacing-granularity",
            "0s",
        ],
        "[plan]\npacing_granularity = \"0s\"\n",
        ("nats://127.0.0.1:9", ""),
        "rate = 10\nduration = \"1s\"",
        "at most 64 in flight",
    );
}
