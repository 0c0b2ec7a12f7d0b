//! Hostile input, round 2 (issue 30): each case a minimal reproduction that failed before its
//! fix.

use crate::common::*;
use assert_cmd::Command;
use std::time::Duration;

const HEAD: &str = "[targets.svc]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"svc\"\n\
                    [[scenarios]]\nname = \"s\"\nworkload = \"w\"\n";

/// Item 1: a rate too small to pace (directly, in a stage, in a ramp, or after `--scale`)
/// panicked converting its interval to a Duration (exit 134) once the worker ran, and
/// `--dry-run` accepted it. Now it is exit 2 at its line, dry run or not.
#[test]
fn a_rate_too_small_to_pace_is_refused_at_its_line() {
    let dir = tmp();
    let plan = |body: &str| format!("{HEAD}{body}");
    let cases = [
        (plan("rate = 1e-20\n"), vec![], "plan.toml:8: scenarios[0].rate: rate '0.00000000000000…' is below 0.001/s"),
        (
            plan("stages = [{ rate = 1e-20, duration = \"1s\" }]\n"),
            vec![],
            "plan.toml:8: scenarios[0].stages[0].rate: rate '0.00000000000000…' is below 0.001/s",
        ),
        (
            plan("stages = [{ ramp_to = 1e-20, duration = \"1s\" }]\n"),
            vec![],
            "plan.toml:8: scenarios[0].stages[0].ramp_to: rate '0.00000000000000…' is below 0.001/s",
        ),
        (
            plan("rate = 10\nduration = \"1s\"\n"),
            vec!["--scale", "1e-30"],
            "plan.toml:8: scenarios[0].rate: 1.0e-29/s after scale 1e-30: below 0.001/s",
        ),
    ];
    for (text, extra, want) in &cases {
        for dry in [false, true] {
            let mut args = extra.clone();
            if dry {
                args.push("--dry-run");
            }
            let r = run_plan_with(dir.path(), text, |c| {
                c.args(&args);
            });
            assert_eq!(r.code(), 2, "{text} {args:?}: {}", r.stderr());
            assert!(r.stderr().contains(want), "want {want:?} in {}", r.stderr());
            assert!(!r.stderr().contains("panicked"));
        }
    }
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "http",
            "http://127.0.0.1:1/",
            "-r",
            "0.0001",
            "-d",
            "1s",
            "--no-store",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is below 0.001/s"), "{err}");
}

/// Item 3: `--pacing-granularity 1000h` hung or sent one burst, still said "achieved 10.0/s"
/// and exited 0. A granularity coarser than 100 ms is refused, on the command line and in a
/// plan, before anything is sent.
#[test]
fn a_pacing_too_coarse_to_be_a_rate_is_refused() {
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "http",
            "http://127.0.0.1:1/",
            "-r",
            "10",
            "-d",
            "1s",
            "--no-store",
        ])
        .args(["--pacing-granularity", "1000h"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--pacing-granularity") && err.contains("coarser than 100ms"),
        "{err}"
    );
    let dir = tmp();
    let plan =
        format!("[plan]\npacing_granularity = \"101ms\"\n{HEAD}rate = 10\nduration = \"1s\"\n");
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.arg("--dry-run");
    });
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("plan.toml:2: plan.pacing_granularity: 101ms is coarser than 100ms"),
        "{}",
        r.stderr()
    );
    // The bound itself paces.
    let plan =
        format!("[plan]\npacing_granularity = \"100ms\"\n{HEAD}rate = 10\nduration = \"1s\"\n");
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.arg("--dry-run");
    });
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

/// Item 7: plan and scenario names holding ESC, BEL or NUL were printed raw on the terminal.
/// They are refused at their line; a file name, which any file system allows, is escaped.
#[test]
fn names_with_control_characters_are_refused_at_their_line() {
    let dir = tmp();
    let cases = [
        (
            format!("[plan]\nname = \"a\\u001b]0;pwned\\u0007\"\n{HEAD}rate = 1\n"),
            "plan.toml:2: plan.name: holds the control character \\x1b",
        ),
        (
            HEAD.replace("name = \"s\"", "name = \"s\\u0000\"") + "rate = 1\n",
            "plan.toml:6: scenarios[0].name: holds the control character \\x00",
        ),
    ];
    for (plan, want) in &cases {
        let r = run_plan_with(dir.path(), plan, |c| {
            c.arg("--dry-run");
        });
        assert_eq!(r.code(), 2, "{plan}: {}", r.stderr());
        assert!(r.stderr().contains(want), "want {want:?} in {}", r.stderr());
        assert!(
            !r.stderr().contains('\u{1b}'),
            "the error itself is printable"
        );
    }
    // A plan without a name is named after its file: escaped, never raw.
    let file = dir.path().join("evil\u{1b}[2J.toml");
    std::fs::write(&file, format!("{HEAD}rate = 1\nduration = \"1s\"\n")).unwrap();
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .arg("run")
        .arg(&file)
        .arg("--dry-run")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("evil\\x1b[2J"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}

/// Item 14: `--store /dev/null` (any device) wrote `unsaved-*.json` into /dev. A store that is
/// a device, FIFO or socket is refused before any load; `--no-store` still runs.
#[test]
fn a_store_that_is_a_device_is_refused_before_the_load() {
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "http",
            "http://127.0.0.1:1/",
            "-n",
            "1",
            "--store",
            "/dev/null",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--store /dev/null: not a file but a device"),
        "{err}"
    );
    assert!(!err.contains("saved"), "nothing ran: {err}");
    assert!(
        !std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("unsaved-")),
        "no unsaved run in /dev"
    );
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "http",
            "http://127.0.0.1:1/",
            "-n",
            "1",
            "--store",
            "/dev/null",
            "--no-store",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "runs, no request succeeds: exit 3"
    );
}

/// Item 16: a result of another schema version was read without a word. `show`, `compare`,
/// `report` and `merge` now refuse it, naming the file and both versions.
#[test]
fn a_result_of_another_schema_is_refused_by_name() {
    let dir = tmp();
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "http",
            "http://127.0.0.1:1/",
            "-n",
            "1",
            "--no-store",
            "--json",
        ])
        .arg(dir.path().join("v1.json"))
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let v1 = std::fs::read_to_string(dir.path().join("v1.json")).unwrap();
    let v2 = v1.replacen("perfbase.result/v1", "perfbase.result/v2", 1);
    std::fs::write(dir.path().join("v2.json"), v2).unwrap();
    let (code, out, _) = pb(
        dir.path(),
        &["show", dir.path().join("v1.json").to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}");
    let v2 = dir.path().join("v2.json");
    for args in [
        vec!["show", v2.to_str().unwrap()],
        vec!["report", v2.to_str().unwrap(), "--format", "json"],
    ] {
        let (code, _, err) = pb(dir.path(), &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("schema 'perfbase.result/v2' is not perfbase.result/v1"),
            "{args:?}: {err}"
        );
    }
}
