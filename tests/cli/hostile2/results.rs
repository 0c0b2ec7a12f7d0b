//! What is kept of a run, and where: signals, lost results, stores, merges, folders.

use super::*;
use crate::common::*;
use assert_cmd::Command;
use std::time::Duration;

/// Item 12: a signal that came between phases, where no phase saw it, left a result that said
/// `interrupted: false` and exited 0, though the plan had not run. Any run that did not
/// finish its plan is interrupted: exit 130, and the result file and the store say so.
#[test]
fn a_signal_between_phases_marks_the_run_interrupted() {
    let dir = tmp();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!("{HEAD}concurrency = [1, 2, 3]\nduration = \"1s\"\nrepetitions = 2\n"),
    )
    .unwrap();
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 4;
    let out = dir.path().join("out");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .arg("run")
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .args(["-q", "--start-at", &start.to_string()])
        .env("PERFBASE_STORE", dir.path().join("results.db"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // While it waits for its start: after the signal, no phase is started at all.
    wait_signals_caught(child.id());
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{stderr}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true, "{v}");
    let (code, text, _) = pb(dir.path(), &["history"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("(interrupted)"),
        "the store says so too: {text}"
    );
}

/// Item 13: when neither the store nor the file beside it could take a result (a full disk,
/// here a store path under a file), the run exited 0 and its measurements were gone. Now it
/// exits 4, says so, and prints the result's JSON on standard output, the last place left.
#[test]
fn a_result_nothing_could_keep_exits_4_and_goes_to_stdout() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let url = format!("http://{}/", line.trim().rsplit("http://").next().unwrap());
    let dir = tmp();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["http", &url, "-n", "5", "--store"])
        .arg(file.join("results.db"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    server.stop();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("the result follows on standard output"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = &stdout[stdout.find('{').unwrap()..stdout.rfind("\n}").unwrap() + 2];
    let v: serde_json::Value = serde_json::from_str(json).expect("the whole result");
    assert_eq!(v["requests"], 5, "{v}");
}

/// Item 9: a libpq connection string as --store became a SQLite file of that name, and the
/// password was printed in "saved as run 1 in …". It is a PostgreSQL store now, and its
/// password never shows, whether it opens or not.
#[test]
fn a_libpq_connection_string_is_a_postgres_store() {
    let dir = tmp();
    let conninfo = "host=127.0.0.1 port=1 dbname=perf user=pb password=s3cr3t-pw connect_timeout=2";
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "http",
            "http://127.0.0.1:1/",
            "-n",
            "1",
            "--timeout",
            "200ms",
            "--store",
            conninfo,
        ])
        .current_dir(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("host=127.0.0.1"),
        "named as the store: {stderr}"
    );
    assert!(!stderr.contains("s3cr3t"), "{stderr}");
    let made: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        made.iter().all(|n| !n.contains("host=")),
        "no SQLite file of that name: {made:?}"
    );
    let Some(pg) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    // The same store as the URL, written as a connection string, takes the run.
    let u = url::Url::parse(&pg).unwrap();
    let conninfo = format!(
        "host={} port={} dbname={} user={} password={}",
        u.host_str().unwrap(),
        u.port().unwrap_or(5432),
        u.path().trim_start_matches('/'),
        u.username(),
        u.password().unwrap_or("")
    );
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let url = format!("http://{}/", line.trim().rsplit("http://").next().unwrap());
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["http", &url, "-n", "3", "--store", &conninfo])
        .current_dir(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    server.stop();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("saved as run"), "{stderr}");
    assert!(stderr.contains("password=[redacted]"), "{stderr}");
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
        .args(["http", "http://127.0.0.1:1/", "-n", "1", "--no-store"])
        .env("PERFBASE_STORE", "/dev/null")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    // --no-store skips the environment's store, device or not (--no-store with a --store
    // flag is a contradiction, refused: see judgement_calls_are_decided).
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

/// Item 15: `merge` took anything with segment labels: results of another plan, of unlike
/// load models, and a `--plan` the agents did not run. Each is refused now, saying why.
#[test]
fn merge_refuses_what_is_not_one_run() {
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = |file: &str, name: &str, load: &str| {
        let path = dir.path().join(file);
        std::fs::write(
            &path,
            format!(
                "[plan]\nname = \"{name}\"\n[targets.ref]\nurl = \"http://{}\"\n\
                 [workloads.w]\ntarget = \"ref\"\npath = \"/\"\n[[scenarios]]\nname = \"s\"\n\
                 workload = \"w\"\n{load}\n",
                server.addr
            ),
        )
        .unwrap();
        path
    };
    let closed = plan("a.toml", "a", "concurrency = 2\nrequests = 20");
    let other = plan("b.toml", "b", "concurrency = 2\nrequests = 20");
    let open = plan("a-open.toml", "a", "rate = 100\nrequests = 20");
    let segment = |plan: &std::path::Path, i: u32, out: &str| {
        let (code, _, stderr) = pb(
            dir.path(),
            &[
                "run",
                plan.to_str().unwrap(),
                "--segment",
                &format!("{i}/2"),
                "--out",
                dir.path().join(out).to_str().unwrap(),
                "-q",
                "--no-store",
            ],
        );
        assert_eq!(code, 0, "{stderr}");
        dir.path()
            .join(out)
            .join("result.json")
            .to_str()
            .unwrap()
            .to_string()
    };
    let (a0, a1) = (segment(&closed, 0, "a0"), segment(&closed, 1, "a1"));
    let b1 = segment(&other, 1, "b1");
    let o1 = segment(&open, 1, "o1");
    let merge = |args: &[&str]| {
        let mut all = vec!["merge"];
        all.extend_from_slice(args);
        pb(dir.path(), &all)
    };
    let (code, _, stderr) = merge(&[&a0, &a1]);
    assert_eq!(code, 0, "one run's segments merge: {stderr}");
    let (code, _, stderr) = merge(&[&a0, &b1]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("are not parts of one run: they ran the plans 'a' and 'b'"),
        "{stderr}"
    );
    let (code, _, stderr) = merge(&[&a0, &o1]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("load models are closed and open"),
        "{stderr}"
    );
    let (code, _, stderr) = merge(&[&a0, &a1, "--plan", other.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--plan is plan 'b', but"), "{stderr}");
    assert!(stderr.contains("ran plan 'a'"), "{stderr}");
    // The same plan's segment, from a run of another day.
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a1).unwrap()).unwrap();
    old["started_at"] = "2026-01-01T00:00:00.000Z".into();
    let old_file = dir.path().join("old.json");
    std::fs::write(&old_file, old.to_string()).unwrap();
    let (code, _, stderr) = merge(&[&a0, old_file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("they started"), "{stderr}");
}

/// Item 17: two runs of one plan started in the same second shared one output folder, and
/// one result was lost. Each claims its own folder now (`…-2` for the second).
#[test]
fn two_runs_in_one_second_keep_two_folders() {
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    std::fs::write(
        dir.path().join("p.toml"),
        format!(
            "[targets.ref]\nurl = \"http://{}\"\n[workloads.w]\ntarget = \"ref\"\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 1\nrequests = 5\n",
            server.addr
        ),
    )
    .unwrap();
    let spawn = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .args(["run", "p.toml", "-q", "--no-store"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Three at once: at least two of them share a second.
    let children = [spawn(), spawn(), spawn()];
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let runs: Vec<_> = std::fs::read_dir(dir.path().join(".perfbase/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert!(
        runs.iter().all(|r| r.join("result.json").is_file()),
        "{runs:?}"
    );
}
