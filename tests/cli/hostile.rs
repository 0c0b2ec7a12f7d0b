//! Hostile or unusual inputs and outputs: endless input files, and result paths that are
//! symbolic links, FIFOs, devices or standard output.

use crate::common::*;
use assert_cmd::Command;
use std::time::{Duration, Instant};

fn perfbase_cmd(dir: &std::path::Path) -> Command {
    let mut cmd = Command::cargo_bin("perfbase").expect("binary built");
    cmd.current_dir(dir)
        .env("PERFBASE_STORE", dir.join("results.db"))
        .timeout(Duration::from_secs(60));
    cmd
}

#[test]
fn endless_body_and_targets_files_are_refused_quickly() {
    let dir = tmp();
    let targets = dir.path().join("t.txt");
    std::fs::write(&targets, "POST http://127.0.0.1:9/\n@/dev/zero\n").unwrap();
    for args in [
        vec![
            "http",
            "http://127.0.0.1:9/",
            "--body-file",
            "/dev/zero",
            "-n",
            "1",
        ],
        vec!["http", "--targets", targets.to_str().unwrap(), "-n", "1"],
    ] {
        let started = Instant::now();
        let out = perfbase_cmd(dir.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("256 MiB limit"), "{args:?}: {err}");
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?}");
    }
    // The targets file names its line.
    let out = perfbase_cmd(dir.path())
        .args(["http", "--targets", targets.to_str().unwrap(), "-n", "1"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("t.txt:2"));
}

/// Runs five requests against `server` writing the result to `json`; returns stdout, stderr.
fn run_to(dir: &std::path::Path, addr: std::net::SocketAddr, json: &str) -> (String, String) {
    let out = perfbase_cmd(dir)
        .args([
            "http",
            &format!("http://{addr}/"),
            "-n",
            "5",
            "-c",
            "1",
            "--json",
            json,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{json}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn result_paths_never_destroy_what_they_point_to() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let d = dir.path();

    // A symbolic link stays a link; its target gets the result.
    std::fs::write(d.join("target.json"), "old").unwrap();
    std::os::unix::fs::symlink("target.json", d.join("lnk.json")).unwrap();
    run_to(d, server.addr, "lnk.json");
    assert!(std::fs::symlink_metadata(d.join("lnk.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(d.join("target.json")).unwrap();
    assert!(text.contains("perfbase.result/v1"), "{text}");

    // A FIFO stays a FIFO, and its reader gets the whole result once.
    let fifo = d.join("ff");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    run_to(d, server.addr, "ff");
    let got = reader.join().unwrap();
    let v: serde_json::Value = serde_json::from_str(&got).expect("one whole JSON document");
    assert_eq!(v["requests"], 5);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

    // A device is written, not replaced.
    run_to(d, server.addr, "/dev/null");
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());

    // `-` is standard output, which then carries only the JSON; the text goes to stderr.
    let (stdout, stderr) = run_to(d, server.addr, "-");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is the JSON");
    assert_eq!(v["requests"], 5);
    assert!(stderr.contains("Requests"), "{stderr}");

    // `report -` and `show -` read standard input.
    for cmd in ["report", "show"] {
        let out = perfbase_cmd(d)
            .args([cmd, "-"])
            .write_stdin(stdout.clone())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(&server.addr.to_string()), "{cmd}: {text}");
    }
}

#[test]
fn serve_stays_on_loopback_unless_told() {
    let dir = tmp();
    let out = perfbase_cmd(dir.path())
        .args(["serve", "--host", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-remote"), "{err}");
}

/// Peak resident memory of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn large_bodies_are_streamed_not_buffered_per_connection() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let dir = tmp();
    // 8 connections at once, each fetching 64 MiB: buffered whole, that is 512 MiB.
    let out = perfbase_cmd(dir.path())
        .args([
            "http",
            &format!("http://{addr}/bytes/67108864"),
            "-c",
            "8",
            "-n",
            "16",
        ])
        .arg("--no-store")
        .output()
        .unwrap();
    assert_ok(&out);
    let peak = peak_rss_kib(child.id());
    interrupt(child);
    assert!(peak < 64 * 1024, "the server peaked at {peak} KiB");
}

#[test]
fn an_unreadable_cacert_is_an_error_even_for_http() {
    let dir = tmp();
    let out = perfbase_cmd(dir.path())
        .args([
            "http",
            "http://127.0.0.1:9/",
            "--cacert",
            "/nonexistent",
            "-n",
            "1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--cacert /nonexistent: cannot read"), "{err}");
}

#[test]
fn a_store_that_is_a_folder_keeps_the_unsaved_run_inside_it() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let store = dir.path().join("runs");
    std::fs::create_dir(&store).unwrap();
    let out = perfbase_cmd(dir.path())
        .args([
            "http",
            &format!("http://{}/", server.addr),
            "-n",
            "3",
            "-c",
            "1",
        ])
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    assert_ok(&out);
    let inside: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        inside
            .iter()
            .any(|n| n.starts_with("unsaved-") && n.ends_with(".json")),
        "{inside:?}"
    );
}

#[test]
fn invalid_utf8_is_located_by_line_in_plans_and_targets_files() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("p.toml"), b"[plan]\nname = \"\xff\"\n").unwrap();
    std::fs::write(d.join("t.txt"), b"GET http://127.0.0.1:9/\nX-A: \xff\n").unwrap();
    for (args, want) in [
        (
            vec!["run", "p.toml", "--dry-run"],
            "p.toml:2: file: cannot read the plan: not UTF-8",
        ),
        (
            vec!["http", "--targets", "t.txt", "-n", "1"],
            "t.txt:2: not UTF-8 text",
        ),
    ] {
        let out = perfbase_cmd(d).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
}

/// Found by fuzzing (`crates/fuzz`): each input is also kept in the fuzz corpus.
#[test]
fn fuzzing_findings_stay_fixed() {
    let dir = tmp();
    let d = dir.path();
    // -H accepted a header name no HTTP server would (`A${uth`), which passed --dry-run
    // and failed only the real run.
    let out = perfbase_cmd(d)
        .args(["http", "http://127.0.0.1:9/", "-H", "A${uth: x", "-n", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A targets file's bad line was echoed whole, secrets and all.
    for (i, text) in [
        "GET http://127.0.0.1:9/ Authorization: Bearer s3cret\n",
        "GET http://127.0.0.1:9/\nAuthorization Bearer s3cret: x\n",
        "GET http://127.0.0.1:9/\nBearer s3cret\n",
    ]
    .iter()
    .enumerate()
    {
        let file = d.join(format!("t{i}.txt"));
        std::fs::write(&file, text).unwrap();
        let out = perfbase_cmd(d)
            .args(["http", "--targets", file.to_str().unwrap(), "-n", "1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("t{i}.txt:")) && !err.contains("s3cret"),
            "{err}"
        );
    }
}

/// The run exited 0, or the assertion shows its stderr.
fn assert_ok(out: &std::process::Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
}
