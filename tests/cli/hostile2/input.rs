//! What a plan or a flag says: rates, pacing, names, k8s values.

use super::*;
use crate::common::*;
use assert_cmd::Command;
use std::time::Duration;

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

/// Item 18: `perfbase k8s` wrote any namespace, name, Secret, key, run id or image into its
/// manifests, spaces, capitals, slashes, line breaks and 100 characters included, and took
/// the ConfigMap's key from whatever the plan file was called. Each is checked against its
/// Kubernetes rule now, with exit 2 naming the flag.
#[test]
fn k8s_values_follow_the_kubernetes_rules() {
    let dir = tmp();
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, HEAD).unwrap();
    let long = "x".repeat(100);
    let cases: [(&str, &str); 8] = [
        ("--namespace", "Team A"),
        ("--namespace", &long),
        ("--name", "perf/base"),
        ("--store-secret", "Store\nSecret"),
        ("--store-key", "a key"),
        ("--run-id", "run 1"),
        ("--image", "Perfbase:latest"),
        ("--image", "perfbase:dev\n- evil: true"),
    ];
    for (flag, value) in cases {
        let mut args = vec!["k8s", plan.to_str().unwrap(), "--agents", "2"];
        for (f, good) in [
            ("--image", "perfbase:dev"),
            ("--store-secret", "perfbase-store"),
        ] {
            if f != flag {
                args.extend([f, good]);
            }
        }
        args.extend([flag, value]);
        let (code, out, stderr) = pb(dir.path(), &args);
        assert_eq!(code, 2, "{flag} {value:?}: {stderr}");
        assert!(stderr.contains(&format!("{flag} '")), "{flag}: {stderr}");
        assert!(out.is_empty(), "no manifest: {out}");
    }
    let odd = dir.path().join("my plan.toml");
    std::fs::write(&odd, HEAD).unwrap();
    let (code, _, stderr) = pb(
        dir.path(),
        &[
            "k8s",
            odd.to_str().unwrap(),
            "--agents",
            "2",
            "--image",
            "perfbase:dev",
            "--store-secret",
            "perfbase-store",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the plan's file name 'my plan.toml'"),
        "{stderr}"
    );
}
