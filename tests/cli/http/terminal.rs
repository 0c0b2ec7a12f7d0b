//! `perfbase http` as a user's shell runs it: Ctrl-C stops it and keeps the partial result, a
//! closed stdout loses nothing, and the progress line shows on a terminal only.

use crate::common::*;
use assert_cmd::Command;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_stops_within_a_second_and_writes_the_partial_result() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let json = dir.path().join("result.json");
    let url = format!("http://{}/delay/3000", server.addr);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(["http", &url, "-c", "3", "-d", "60s", "--quiet", "--json"])
        .arg(&json)
        .env("PERFBASE_STORE", dir.path().join("results.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_signals_caught(child.id());
    std::thread::sleep(Duration::from_millis(3500));
    let sent = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "stopped in {:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(130));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(
        v["status"]["200"], 3,
        "the first round of 3 requests completed"
    );
    assert_eq!(v["aborted_in_flight"], 3, "the second round was in flight");
    assert!(String::from_utf8_lossy(&out.stdout).contains("INTERRUPTED"));
    validate(&v);
    // The partial result is in the store too, whole.
    let stored = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["report", "latest", "--format", "json"])
        .env("PERFBASE_STORE", dir.path().join("results.db"))
        .output()
        .unwrap();
    assert!(stored.status.success(), "{stored:?}");
    let stored: Value = serde_json::from_slice(&stored.stdout).unwrap();
    assert_eq!(stored["interrupted"], true);
    assert_eq!(stored["status"], v["status"]);
    assert_eq!(stored["aborted_in_flight"], 3);
}

#[test]
fn a_closed_stdout_loses_nothing_and_is_no_panic() {
    // `perfbase http … | head -1`: the reader hangs up before the summary is printed.
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let json = dir.path().join("result.json");
    let store = dir.path().join("results.db");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(["http", &format!("http://{}/health", server.addr)])
        .args(["-n", "200", "-c", "2", "--quiet", "--json"])
        .arg(&json)
        .env("PERFBASE_STORE", &store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["status"]["200"], 200);
    let history = Command::cargo_bin("perfbase")
        .unwrap()
        .arg("history")
        .env("PERFBASE_STORE", &store)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&history.stdout);
    assert!(history.status.success());
    assert_eq!(
        listed.lines().filter(|l| l.contains("/health")).count(),
        1,
        "the run was stored: {listed}"
    );
}

#[test]
fn the_progress_line_shows_on_a_terminal_only_and_not_with_quiet() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let bin = assert_cmd::cargo::cargo_bin("perfbase");
    let url = format!("http://{}/delay/5", server.addr);
    // `script` (util-linux) gives the run a pseudo-terminal, as a user's shell would.
    let on_a_terminal = |extra: &str| {
        let cmd = format!(
            "{} http {url} -c 2 -d 2500ms --no-store {extra}",
            bin.display()
        );
        let out = std::process::Command::new("script")
            .args(["-qfec", &cmd, "/dev/null"])
            .current_dir(dir.path())
            .output()
            .expect("script (util-linux) runs");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = on_a_terminal("");
    // Rewritten in place (\r) about once a second, with what has completed so far.
    let ticks: Vec<&str> = shown
        .split('\r')
        .filter(|l| l.contains("[measure]"))
        .collect();
    assert!(ticks.len() >= 2, "{shown:?}");
    let completed = |tick: &str| -> u64 {
        let words: Vec<&str> = tick.split_whitespace().collect();
        let i = words.iter().position(|w| *w == "requests").unwrap();
        words[i - 1].replace(',', "").parse().unwrap()
    };
    // 2 connections × 5 ms: ~400/s, so well over 50 by the first tick at 1 s.
    assert!(completed(ticks[0]) > 50, "{:?}", ticks[0]);
    assert!(completed(ticks[1]) > completed(ticks[0]), "{ticks:?}");
    for t in &ticks {
        assert!(
            t.contains("/2500ms") && t.contains("errors 0") && t.contains("p99 "),
            "{t:?}"
        );
    }
    assert!(shown.contains("Requests"), "the summary follows: {shown:?}");
    let quiet = on_a_terminal("--quiet");
    assert!(!quiet.contains("[measure]"), "{quiet:?}");
    assert!(quiet.contains("Requests"), "{quiet:?}");
    // Not a terminal: no progress line either.
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["http", &url, "-c", "2", "-d", "1500ms", "--no-store"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("[measure]"));
}
