//! Helpers shared by the end-to-end tests.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

pub static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Run {
    pub out: Output,
    pub json: Option<Value>,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn json(&self) -> &Value {
        self.json.as_ref().expect("the run wrote its result JSON")
    }
    pub fn count(&self, section: &str, key: &str) -> u64 {
        self.json()[section][key].as_u64().unwrap_or(0)
    }
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

pub fn perfbase(args: &[&str], dir: &Path) -> Run {
    let json = dir.join("result.json");
    let out = Command::cargo_bin("perfbase")
        .expect("binary built")
        .arg("http")
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("--quiet")
        .env("PERFBASE_STORE", dir.join("results.db"))
        .timeout(Duration::from_secs(60))
        .output()
        .expect("perfbase ran");
    let json = std::fs::read_to_string(&json)
        .ok()
        .map(|t| serde_json::from_str(&t).expect("result JSON parses"));
    Run { out, json }
}

/// The element of the JSON array `items` whose `key` is `value` (a phase by scenario, an
/// endpoint or monitor phase by name); panics naming what is missing.
pub fn find<'a>(items: &'a Value, key: &str, value: &str) -> &'a Value {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items}"))
        .iter()
        .find(|x| x[key] == value)
        .unwrap_or_else(|| panic!("no {key} = {value:?} in {items}"))
}

pub fn validate(result: &Value) {
    let schema_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match docs/result.schema.json: {errors:#?}"
    );
}

/// The service's URL from `var`, or `None` (with a note) when services are not running — a
/// failure instead when `PERFBASE_REQUIRE_SERVICES` is set.
pub fn service(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(u) => Some(u),
        Err(_) => {
            assert!(
                std::env::var("PERFBASE_REQUIRE_SERVICES").is_err(),
                "{var} is not set: run scripts/services.sh up"
            );
            eprintln!("note: {var} not set; skipping");
            None
        }
    }
}

/// Runs `scripts/services.sh ARGS` (e.g. `down redis`, `up redis`); panics when it fails.
pub fn services_sh(args: &[&str]) {
    let root = env!("CARGO_MANIFEST_DIR");
    let ok = std::process::Command::new(format!("{root}/scripts/services.sh"))
        .args(args)
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "scripts/services.sh {args:?} failed");
}

/// Waits until `f` gives Some, or panics naming `what` after `secs`.
pub fn wait_for<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            std::time::Instant::now() < until,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits (30 s at most) until perfbase, as process `pid`, has installed its Ctrl-C and
/// SIGTERM handlers (the kernel lists them as caught in /proc/PID/status). A signal that comes
/// before then kills it, with no exit 130 and no partial result, and a start on a fresh, loaded
/// machine can take longer than the fraction of a second a test might wait.
pub fn wait_signals_caught(pid: u32) {
    let wanted = (1u64 << (libc::SIGINT - 1)) | (1u64 << (libc::SIGTERM - 1));
    wait_for(30, "perfbase to catch SIGINT and SIGTERM", || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
        let caught = u64::from_str_radix(mask.trim(), 16).ok()?;
        (caught & wanted == wanted).then_some(())
    });
}

/// Waits (30 s at most) until process `pid` has exited. A server told to stop can take a
/// while under load, and until it is gone it may still accept connections that it never
/// answers: a test that expects refused connections waits for this, not for a fixed time.
pub fn wait_gone(pid: i32) {
    wait_for(30, "the stopped process to exit", || {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
            !s.lines()
                .any(|l| l.starts_with("State:") && l.contains("(zombie)"))
        });
        (!alive).then_some(())
    });
}

/// One variable of `scripts/services.sh env SERVICE`, read now (a test that restarted the
/// service has made the suite's environment stale).
pub fn service_var(service: &str, var: &str) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new(format!("{root}/scripts/services.sh"))
        .args(["env", service])
        .current_dir(root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("export {var}=")))
        .map(|v| v.trim_matches('\'').to_string())
        .unwrap_or_else(|| panic!("services.sh env {service} has no {var}: {text}"))
}

/// `perfbase ARGS -q --no-store --json DIR/r.json`, running in the background while a test
/// does something to the target (stops it, interrupts perfbase).
pub struct Background {
    pub child: std::process::Child,
    json: std::path::PathBuf,
}

impl Background {
    pub fn start(args: &[&str], dir: &Path) -> Background {
        let json = dir.join("r.json");
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .args(args)
            .args(["-q", "--no-store", "--json"])
            .arg(&json)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("perfbase starts");
        Background { child, json }
    }

    /// Waits for the run; returns its exit code, its stderr and the result it wrote.
    pub fn finish(self) -> (Option<i32>, String, Value) {
        let out = self.child.wait_with_output().expect("perfbase ran");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let text = std::fs::read_to_string(&self.json)
            .unwrap_or_else(|e| panic!("no result JSON ({e}): {stderr}"));
        let v = serde_json::from_str(&text).expect("result JSON parses");
        (out.status.code(), stderr, v)
    }
}

/// Writes `plan` to DIR/plan.toml and runs `perfbase run` on it (`--out DIR/out -q`, the store
/// in DIR), after `setup` adds to the command (flags, environment); the run has
/// DIR/out/result.json when it was written.
pub fn run_plan_with(dir: &Path, plan: &str, setup: impl FnOnce(&mut Command)) -> Run {
    let file = dir.join("plan.toml");
    std::fs::write(&file, plan).expect("plan written");
    let out_dir = dir.join("out");
    let mut cmd = Command::cargo_bin("perfbase").expect("binary built");
    cmd.arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out_dir)
        .arg("-q")
        .env("PERFBASE_STORE", dir.join("results.db"))
        .timeout(Duration::from_secs(120));
    setup(&mut cmd);
    let out = cmd.output().expect("perfbase ran");
    let json = std::fs::read_to_string(out_dir.join("result.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).expect("result JSON parses"));
    Run { out, json }
}

/// Starts `perfbase serve --port 0 EXTRA…`; returns it and the first line it printed.
/// It then hangs up on the server's stdout, as `perfbase serve | head -1` would: the server
/// must go on serving and exit 0 on Ctrl-C all the same.
pub fn serve(extra: &[&std::ffi::OsStr]) -> (std::process::Child, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(["serve", "--port", "0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

/// Stops a `perfbase serve` with Ctrl-C and checks that it exits 0.
pub fn interrupt(mut child: std::process::Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// Runs `perfbase ARGS…` with the store in `dir` (`results.db`): exit code, stdout, stderr.
pub fn pb(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(args)
        .env("PERFBASE_STORE", dir.join("results.db"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs perfbase with `args` (a run of several seconds with a 1 s timeout), stops `service`
/// 1.5 s in and starts it again 1.5 s after it stopped: the run goes on (exit 0), the stop is counted as transport
/// errors, the password never shows, and successes come before the stop and after the restart.
pub fn stopped_mid_run(args: &[&str], service: &str) {
    stopped_mid_run_by(args, service, || services_sh(&["down", service]));
}

/// As [`stopped_mid_run`], with `stop` stopping the server (one process of a service that runs
/// several); `scripts/services.sh up SERVICE` starts it again.
pub fn stopped_mid_run_by(args: &[&str], service: &str, stop: impl FnOnce()) {
    let dir = tmp();
    let run = Background::start(args, dir.path());
    std::thread::sleep(Duration::from_millis(1500));
    stop();
    std::thread::sleep(Duration::from_millis(1500));
    services_sh(&["up", service]);
    let (code, stderr, v) = run.finish();
    assert_eq!(code, Some(0), "{service}: the run goes on: {stderr}");
    validate(&v);
    let e = &v["errors"];
    let transport = ["read", "connect", "write", "timeout"]
        .iter()
        .map(|c| e[c].as_u64().unwrap_or(0))
        .sum::<u64>();
    assert!(transport > 0, "{service}: the stop was counted: {e}");
    assert!(
        !v.to_string().contains(":perfbase@"),
        "{service}: the password never shows"
    );
    // Successes before the stop and again in the last second, after the restart.
    let timeline = v["timeline"].as_array().unwrap();
    let ok = |p: &Value| p["requests"].as_u64().unwrap() - p["errors"].as_u64().unwrap();
    assert!(ok(&timeline[0]) > 0, "{service}: {timeline:?}");
    assert!(
        ok(&timeline[timeline.len() - 1]) > 0,
        "{service}: it recovered: {timeline:?}"
    );
}

/// `perfbase ARGS -q --no-store --json` with `env` set: exit code, stdout and stderr
/// together, and the result (null when none was written).
pub fn pb_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, Value) {
    let dir = tmp();
    let json = dir.path().join("r.json");
    let mut cmd = Command::cargo_bin("perfbase").unwrap();
    cmd.args(args)
        .args(["-q", "--no-store", "--json"])
        .arg(&json)
        .timeout(Duration::from_secs(120));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), text, v)
}
