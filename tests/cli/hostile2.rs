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

/// `GET path` to `addr` over a fresh connection: the response's body.
fn get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n").map_or("", |b| b.1).to_string()
}

/// A `perfbase serve` stopped with Ctrl-C at the end, or killed when a test fails first (it
/// holds the test's stderr: left running, it would keep the test run waiting).
struct Served(Option<std::process::Child>);

impl Served {
    fn stop(mut self) {
        if let Some(child) = self.0.take() {
            interrupt(child);
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Requests the reference service at `addr` has answered.
fn answered(addr: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(&get(addr, "/stats")).unwrap();
    v["requests"].as_u64().unwrap()
}

/// Item 4: a corpus value or a literal path holding CR LF was written raw into the request
/// line, so one counted request sent a header and a second request to the server. Now the
/// path and its values are percent-encoded (HTTP/1.1 and HTTP/2 alike): the server answers
/// exactly the requests counted. A corpus or a literal value that would split a header is
/// refused at exit 2, naming the corpus and its row but never the value.
#[test]
fn plan_values_cannot_split_a_request() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let dir = tmp();
    let plan = |http2: bool, extra: &str| {
        format!(
            "[targets.svc]\nurl = \"http://{addr}\"\nhttp2 = {http2}\n\
             [corpora.v]\nvalues = [\"k HTTP/1.1\\r\\nX-Smuggled: 1\\r\\n\\r\\nGET /health\", \"a b#c\"]\n\
             pick = \"sequential\"\n\
             [workloads.w]\ntarget = \"svc\"\nok_status = [404]\n{extra}\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 1\nrequests = 10\n"
        )
    };
    for http2 in [false, true] {
        for path in [
            "path = \"/lookup/{{v}}\"",
            "path = \"/lookup/x y\\r\\nX-Evil: 1#z\"",
        ] {
            let before = answered(&addr);
            let r = run_plan_with(dir.path(), &plan(http2, path), |c| {
                c.arg("--no-store");
            });
            assert_eq!(r.code(), 0, "{path}: {}", r.stderr());
            let after = answered(&addr);
            // The /stats request before is counted once it is answered: one more than the 10.
            assert_eq!(
                after - before,
                11,
                "http2 {http2}, {path}: the server saw more requests"
            );
            let v = r.json();
            assert_eq!(v["requests"], 10, "{v}");
            assert_eq!(v["status"]["404"], 10, "{v}");
        }
    }
    server.stop();

    // A value that would split a header: the corpus's row, not the value, in the message.
    let r = run_plan_with(
        dir.path(),
        &plan(false, "headers = { X-Key = \"{{v}}\" }"),
        |_| {},
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("corpus 'v', value 1: it fills a header"),
        "{}",
        r.stderr()
    );
    assert!(!r.stderr().contains("Smuggled"), "{}", r.stderr());
    let r = run_plan_with(
        dir.path(),
        &plan(false, "headers = { X-Key = \"a\\r\\nX-Smuggled: s3cr3t\" }"),
        |_| {},
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("workloads.w.headers.X-Key: the value has a line break"),
        "{}",
        r.stderr()
    );
    assert!(!r.stderr().contains("s3cr3t"), "{}", r.stderr());
}

/// Items 5 and 6: a server whose error body echoes the request head put the Vault token into
/// the error message; a token file of two lines printed the token in the "invalid header"
/// error. Every secret perfbase sends is remembered and scrubbed from what a server says, and
/// a token that cannot be sent is refused without being shown.
#[test]
fn a_server_echoing_the_token_never_shows_it() {
    let echo =
        perfbase_reference::faulty::spawn_faulty(perfbase_reference::faulty::Fault::EchoHead)
            .unwrap();
    let url = format!("http://{}", echo.addr);
    let token = "hvs.s3cr3t-T0KEN-echoed";
    // In the load: every answer is a 500 whose message, the echo, is kept as a sample.
    let (code, text, v) = pb_env(
        &["vault", &url, "-w", "health", "-n", "5"],
        &[("VAULT_TOKEN", token)],
    );
    assert_eq!(code, 3, "no request succeeded: {text}");
    assert!(
        v["error_samples"]
            .to_string()
            .contains("cannot handle the request"),
        "the server's echo is kept: {v}"
    );
    assert!(
        !text.contains("s3cr3t") && !v.to_string().contains("s3cr3t"),
        "{text} {v}"
    );
    // Before the load: the error that stops the run quotes the echo.
    let (code, text, _) = pb_env(
        &["vault", &url, "-w", "encrypt", "-n", "5"],
        &[("VAULT_TOKEN", token)],
    );
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("cannot handle the request"),
        "the server's echo is shown: {text}"
    );
    assert!(!text.contains("s3cr3t"), "{text}");
    // HTTP: a bearer token in -H, a key in the query, both echoed in samples they never reach.
    let (code, text, v) = pb_env(
        &[
            "http",
            &format!("{url}/?sig=abcdef123&n=1"),
            "-H",
            "Authorization: Bearer s3cr3t-bearer",
            "-H",
            "Ocp-Apim-Subscription-Key: s3cr3t-key",
            "-n",
            "5",
        ],
        &[],
    );
    assert_eq!(code, 3, "{text}");
    for secret in ["s3cr3t", "abcdef123"] {
        assert!(!text.contains(secret), "{text}");
        assert!(!v.to_string().contains(secret), "{v}");
    }
    echo.stop();

    // A token with a line break inside, from a file or the environment.
    let dir = tmp();
    let file = dir.path().join("token");
    std::fs::write(&file, "hvs.s3cr3t-line1\nsecond-line\n").unwrap();
    let (code, text, _) = pb_env(
        &[
            "vault",
            "http://127.0.0.1:1",
            "--token-file",
            file.to_str().unwrap(),
            "-n",
            "1",
        ],
        &[],
    );
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("holds a line break"), "{text}");
    assert!(!text.contains("s3cr3t"), "{text}");
    let (code, text, _) = pb_env(
        &["vault", "http://127.0.0.1:1", "-n", "1"],
        &[("VAULT_TOKEN", "hvs.s3cr3t\r\nX-Evil: 1")],
    );
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("from VAULT_TOKEN holds a line break"),
        "{text}"
    );
    assert!(!text.contains("s3cr3t"), "{text}");
}

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

/// Item 2: `--json`, `--jsonl` or `--hdr-log` naming a FIFO with no reader blocked the run for
/// minutes (a plain open waits for a reader), and SIGTERM could not end it. Now an output
/// waits at most 5 s for its reader, then is refused by name; the run is still stored. With
/// a reader, the FIFO gets the output as before.
#[test]
fn a_fifo_with_no_reader_never_hangs_the_run() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let url = format!("http://{}/", line.trim().rsplit("http://").next().unwrap());
    let dir = tmp();
    let fifo = dir.path().join("f");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for (flag, code) in [("--json", 4), ("--jsonl", 2), ("--hdr-log", 4)] {
        let started = std::time::Instant::now();
        let out = Command::cargo_bin("perfbase")
            .unwrap()
            .args(["http", &url, "-r", "50", "-d", "1s", flag])
            .arg(&fifo)
            .env("PERFBASE_STORE", dir.path().join("results.db"))
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{flag}: {stderr}");
        assert!(
            stderr.contains("a FIFO with no reader for 5 s"),
            "{flag}: {stderr}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{flag}: {:?}",
            started.elapsed()
        );
    }
    // The two runs that measured were stored all the same.
    let (_, history, _) = pb(dir.path(), &["history"]);
    assert_eq!(
        history.lines().filter(|l| l.contains("http://")).count(),
        2,
        "{history}"
    );
    // With a reader, the FIFO gets the whole result.
    let reader = std::process::Command::new("cat")
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["http", &url, "-n", "5", "--no-store", "--json"])
        .arg(&fifo)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = reader.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
    assert_eq!(v["requests"], 5);
    server.stop();
}

/// Item 8: a hostile name went raw into the Markdown report: a link, raw HTML, emphasis, or
/// (with a `|`) a split table row. Now every outside text is escaped in Markdown as in HTML.
#[test]
fn hostile_names_stay_text_in_the_markdown_report() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let dir = tmp();
    let plan = format!(
        "[targets.svc]\nurl = \"http://{addr}\"\n[workloads.w]\ntarget = \"svc\"\n\
         [[scenarios]]\nname = \"[all passed](http://evil.example) <img src=x> *ok* | cell\"\n\
         workload = \"w\"\nconcurrency = 1\nrequests = 5\n"
    );
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.arg("--no-store");
    });
    server.stop();
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(
        md.contains("\\[all passed](http://evil.example) \\<img src=x> \\*ok\\* \\| cell"),
        "{md}"
    );
    // Everywhere the name shows (summary, heading, findings), escaped.
    assert_eq!(
        md.matches("[all passed]").count(),
        md.matches("\\[all passed]").count(),
        "{md}"
    );
    assert!(md.matches("\\[all passed]").count() >= 2, "{md}");
}

/// Item 10: `serve --tls-cert FILE` read like an input and overwrote FILE, following symbolic
/// links. It is `--tls-cert-out` now (the old spelling warns), and it never overwrites what an
/// earlier `perfbase serve` did not write.
#[test]
fn serve_never_overwrites_a_file_it_did_not_write() {
    let dir = tmp();
    let precious = dir.path().join("precious.pem");
    std::fs::write(&precious, "my own key\n").unwrap();
    let link = dir.path().join("link.pem");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    for path in [&precious, &link] {
        let out = Command::cargo_bin("perfbase")
            .unwrap()
            .args(["serve", "--port", "0", "--tls-cert-out"])
            .arg(path)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("was not written by perfbase serve"),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "my own key\n");
    }
    // A new file is written; a second serve replaces its own; the old spelling warns.
    let cert = dir.path().join("cert.pem");
    for flag in ["--tls-cert-out", "--tls-cert-out", "--tls-cert"] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .args(["serve", "--port", "0", flag])
            .arg(&cert)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("https://"), "{flag}: {line}");
        interrupt_keeping(&mut child);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.contains("--tls-cert is now --tls-cert-out"),
            flag == "--tls-cert",
            "{stderr}"
        );
        assert!(std::fs::read_to_string(&cert)
            .unwrap()
            .contains("BEGIN CERTIFICATE"));
    }
}

/// Ctrl-C to a child whose output the caller still reads.
fn interrupt_keeping(child: &mut std::process::Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
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

/// The judgement calls of issue 30, each decided and kept by a test: a replaced result keeps
/// its mode; perfbase frames bodies itself (a Transfer-Encoding or a wrong Content-Length is
/// refused); `user:pw@` is sent as Basic credentials; contradictory flags are refused or
/// warned about; `${VAR}` is expanded in a path and refused in a name.
#[test]
fn judgement_calls_are_decided() {
    use std::os::unix::fs::PermissionsExt as _;
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let url = format!("http://{addr}/");
    let dir = tmp();
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("perfbase")
            .unwrap()
            .args(args)
            .env("PERFBASE_STORE", dir.path().join("results.db"))
            .current_dir(dir.path())
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // The mode of a replaced --json.
    for mode in [0o600, 0o444] {
        let json = dir.path().join(format!("r{mode:o}.json"));
        std::fs::write(&json, "{}").unwrap();
        std::fs::set_permissions(&json, std::fs::Permissions::from_mode(mode)).unwrap();
        let (code, err) = run(&[
            "http",
            &url,
            "-n",
            "2",
            "--no-store",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let kept = std::fs::metadata(&json).unwrap().permissions().mode() & 0o777;
        assert_eq!(kept, mode, "{mode:o}");
    }
    // Framing.
    let (code, err) = run(&[
        "http",
        &url,
        "-n",
        "1",
        "--no-store",
        "-H",
        "Transfer-Encoding: chunked",
        "-b",
        "x",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("'Transfer-Encoding'"), "{err}");
    let (code, err) = run(&[
        "http",
        &url,
        "-n",
        "1",
        "--no-store",
        "-H",
        "Content-Length: 5",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the body is 0 bytes"), "{err}");
    // Contradictions.
    let refused: [&[&str]; 5] = [
        &["--no-store", "--label", "a=b"],
        &["--no-store", "--store", "x.db"],
        &["--no-store", "--json", "same.json", "--jsonl", "same.json"],
        &["--no-store", "--metrics-linger", "5s"],
        &[
            "--no-store",
            "--hdr-log",
            "same.json",
            "--json",
            "./same.json",
        ],
    ];
    for extra in refused {
        let mut args = vec!["http", url.as_str(), "-n", "1"];
        args.extend_from_slice(extra);
        let (code, err) = run(&args);
        assert_eq!(code, 2, "{extra:?}: {err}");
    }
    let (code, err) = run(&["http", &url, "-n", "1", "--no-store", "-k"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("-k has no effect"), "{err}");
    let (code, err) = run(&[
        "http",
        &url,
        "-n",
        "1",
        "--no-store",
        "--metrics-listen",
        "0.0.0.0:0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("to any host that can reach this one"), "{err}");
    let (code, err) = run(&[
        "http",
        &url,
        "-n",
        "5",
        "--no-store",
        "--jsonl",
        "/dev/full",
    ]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("--jsonl /dev/full: cannot write"), "{err}");
    // ${VAR}: expanded in a path (the endpoint keeps it as written), refused in a name.
    let plan = format!(
        "[targets.svc]\nurl = \"http://{addr}\"\n[workloads.w]\ntarget = \"svc\"\n\
         path = \"/status/${{PB_STATUS}}\"\nok_status = [418]\n\
         [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 1\nrequests = 3\n"
    );
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.env("PB_STATUS", "418").arg("--no-store");
    });
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["status"]["418"], 3, "{}", r.json());
    assert!(r.json().to_string().contains("/status/${PB_STATUS}"));
    let r = run_plan_with(
        dir.path(),
        &plan.replace("name = \"s\"", "name = \"s ${PB_STATUS}\""),
        |c| {
            c.env("PB_STATUS", "418");
        },
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("not expanded in names"),
        "{}",
        r.stderr()
    );
    server.stop();

    // Credentials in the URL are sent as Basic (the echo shows the header, redacted).
    let echo =
        perfbase_reference::faulty::spawn_faulty(perfbase_reference::faulty::Fault::EchoHead)
            .unwrap();
    let (_, text, v) = pb_env(
        &[
            "vault",
            &format!("http://alice:s3cr3t-pw@{}", echo.addr),
            "-w",
            "health",
            "-n",
            "1",
        ],
        &[("VAULT_TOKEN", "hvs.token-for-the-echo")],
    );
    let samples = v["error_samples"].to_string();
    assert!(
        samples.contains("Authorization: [redacted]"),
        "{samples} {text}"
    );
    assert!(
        !text.contains("s3cr3t") && !v.to_string().contains("s3cr3t"),
        "{text}"
    );
    echo.stop();
}
