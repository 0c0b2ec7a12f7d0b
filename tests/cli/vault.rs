//! `perfbase vault` against real dev servers started by scripts/services.sh: HashiCorp Vault
//! 1.13 (built from the Go module proxy) and OpenBao 2.7 (from PyPI). Counts are checked
//! against the servers' own state: KV versions, the audit log of transit encrypts (each
//! ciphertext decrypted back), token accessors and issued certificates.

use crate::common::*;
use assert_cmd::Command;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::time::Duration;

/// `perfbase ARGS -q --no-store --json` with VAULT_TOKEN set.
fn pb(token: &str, args: &[&str]) -> (i32, String, Value) {
    pb_env(args, &[("VAULT_TOKEN", token)])
}

/// One request to the server's API over plain HTTP/1.0: status and JSON body (null if none).
fn call(url: &str, token: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(host).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} /v1/{path} HTTP/1.0\r\nHost: {host}\r\nX-Vault-Token: {token}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |b| b.1);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// The servers that are up: (name, URL, token).
fn servers() -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    for (name, url, token) in [
        ("vault", "PERFBASE_VAULT_URL", "PERFBASE_VAULT_TOKEN"),
        ("openbao", "PERFBASE_OPENBAO_URL", "PERFBASE_OPENBAO_TOKEN"),
    ] {
        if let (Some(u), Some(t)) = (service(url), service(token)) {
            out.push((name, u, t));
        }
    }
    out
}

/// Every operation of the suite succeeds on both servers, each exactly -n times; the token,
/// the payload and the ciphertexts are in no output.
#[test]
fn vault_suite_runs_every_operation_on_vault_and_openbao() {
    let _g = serial();
    for (name, url, token) in servers() {
        let (code, text, v) = pb(
            &token,
            &[
                "vault", &url, "--init", "-w", "suite", "-c", "2", "-n", "40",
            ],
        );
        assert_eq!(code, 0, "{name}: {text}");
        validate(&v);
        let phases = v["phases"].as_array().unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "encrypt",
                "decrypt",
                "sign",
                "verify",
                "kv-write",
                "kv-read",
                "kv-list",
                "pki-issue",
                "token-create",
                "health",
                "seal-status"
            ],
            "{name}"
        );
        for p in phases {
            assert_eq!(p["requests"], 40, "{name} {}", p["name"]);
            assert_eq!(p["status"]["200"], 40, "{name} {}", p["name"]);
            assert_eq!(p["errors"], json!({}), "{name} {}", p["name"]);
        }
        let all = format!("{v}{text}");
        assert!(!all.contains(&token), "{name}: the token shows");
        assert!(!all.contains("vault:v1:"), "{name}: a ciphertext shows");
    }
}

/// N KV writes leave the secret at version +N; N transit encrypts reach the server (its audit
/// log) and each ciphertext decrypts back to the plaintext sent; N token creates make N
/// tokens; N certificate issues store N certificates.
#[test]
fn counts_match_vaults_own_state() {
    let Some(url) = service("PERFBASE_VAULT_URL") else {
        return;
    };
    let token = service("PERFBASE_VAULT_TOKEN").unwrap();
    let _g = serial();
    let path = format!("perfbase/counts-{}", std::process::id());
    let (code, text, _) = pb(
        &token,
        &[
            "vault",
            &url,
            "--init",
            "--kv-path",
            &path,
            "-w",
            "kv-read",
            "-n",
            "1",
        ],
    );
    assert_eq!(code, 0, "{text}");
    let version = |url: &str| {
        let (s, v) = call(url, &token, "GET", &format!("secret/metadata/{path}"), None);
        assert_eq!(s, 200, "{v}");
        v["data"]["current_version"].as_u64().unwrap()
    };
    let before = version(&url);
    let (code, text, _) = pb(
        &token,
        &[
            "vault",
            &url,
            "--kv-path",
            &path,
            "-w",
            "kv-write",
            "-c",
            "3",
            "-n",
            "25",
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(version(&url), before + 25);

    // Transit: the audit log (raw) sees every encrypt with its plaintext and ciphertext.
    let dir = tmp();
    // The server runs as its own user, which must be able to write there.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let log = dir.path().join("audit.log");
    let audit = format!("perfbase-test-{}", std::process::id());
    let (s, v) = call(
        &url,
        &token,
        "PUT",
        &format!("sys/audit/{audit}"),
        Some(json!({"type": "file", "options": {"file_path": log, "log_raw": "true"}})),
    );
    assert_eq!(s, 204, "enabling the audit log: {v}");
    let (code, text, _) = pb(
        &token,
        &["vault", &url, "-w", "encrypt", "-c", "2", "-n", "30"],
    );
    let (s, _) = call(&url, &token, "DELETE", &format!("sys/audit/{audit}"), None);
    assert_eq!(s, 204);
    assert_eq!(code, 0, "{text}");
    let lines = std::fs::read_to_string(&log).unwrap();
    let mut pairs = Vec::new();
    for line in lines.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        if e["type"] == "response"
            && e["request"]["path"] == "transit/encrypt/perfbase-aes256-gcm96"
        {
            pairs.push((
                e["request"]["data"]["plaintext"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                e["response"]["data"]["ciphertext"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            ));
        }
    }
    assert_eq!(pairs.len(), 30, "encrypts the server answered");
    let batch: Vec<Value> = pairs
        .iter()
        .map(|(_, c)| json!({ "ciphertext": c }))
        .collect();
    let (s, v) = call(
        &url,
        &token,
        "POST",
        "transit/decrypt/perfbase-aes256-gcm96",
        Some(json!({ "batch_input": batch })),
    );
    assert_eq!(s, 200, "{v}");
    let back = v["data"]["batch_results"].as_array().unwrap();
    assert_eq!(back.len(), 30);
    for ((plain, _), r) in pairs.iter().zip(back) {
        assert_eq!(r["plaintext"].as_str(), Some(plain.as_str()), "{r}");
    }

    // Tokens and certificates, counted by the server's lists.
    let listed = |path: &str| {
        let (s, v) = call(&url, &token, "GET", &format!("{path}?list=true"), None);
        assert_eq!(s, 200, "{path}: {v}");
        v["data"]["keys"].as_array().unwrap().len()
    };
    let (tokens, certs) = (listed("auth/token/accessors"), listed("pki/certs"));
    let (code, text, _) = pb(&token, &["vault", &url, "-w", "token-create", "-n", "12"]);
    assert_eq!(code, 0, "{text}");
    let (code, text, _) = pb(&token, &["vault", &url, "-w", "pki-issue", "-n", "7"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(listed("auth/token/accessors"), tokens + 12);
    assert_eq!(listed("pki/certs"), certs + 7);
}

/// A token without rights is refused before any load, naming the cause; an op the token may
/// not do under load is counted as http_4xx with Vault's message as the sample; a missing key
/// asks for --init; a bad key type and a plain token flag are input errors.
#[test]
fn denied_missing_and_bad_input_are_named() {
    let Some(url) = service("PERFBASE_VAULT_URL") else {
        return;
    };
    let root = service("PERFBASE_VAULT_TOKEN").unwrap();
    let _g = serial();
    let (code, text, _) = pb("not-a-token", &["vault", &url, "-w", "encrypt", "-n", "5"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("permission denied (403)"), "{text}");
    assert!(!text.contains("not-a-token"), "{text}");

    // A token of the default policy may look itself up but not read sys/mounts... nor create
    // tokens with policies it lacks: under load, each is a classified 403 with Vault's words.
    let (s, v) = call(
        &url,
        &root,
        "POST",
        "auth/token/create",
        Some(json!({"policies": ["default"], "no_default_policy": false, "ttl": "10m"})),
    );
    assert_eq!(s, 200, "{v}");
    let weak = v["auth"]["client_token"].as_str().unwrap().to_string();
    let (code, text, v) = pb(&weak, &["vault", &url, "-w", "kv-write", "-n", "20"]);
    assert_eq!(code, 3, "no request succeeded: {text}");
    assert_eq!(v["requests"], 20, "{v}");
    assert_eq!(v["status"]["403"], 20, "{v}");
    assert_eq!(v["errors"]["http_4xx"], 20, "{v}");
    let sample = &v["error_samples"][0];
    assert_eq!(sample["class"], "http_4xx");
    assert_eq!(
        sample["message"],
        "permission denied (403): 1 error occurred: * permission denied"
    );
    assert_eq!(sample["count"], 20);
    assert!(!v.to_string().contains(&weak));

    let (code, text, _) = pb(
        &root,
        &[
            "vault",
            &url,
            "-w",
            "sign",
            "--sign-key-type",
            "ecdsa-p521",
            "-n",
            "5",
        ],
    );
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("no transit key 'perfbase-ecdsa-p521'; make it with --init"),
        "{text}"
    );
    let (code, text, _) = pb(&root, &["vault", &url, "--key-type", "ed25519", "-n", "5"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("key type 'ed25519' does not encrypt"),
        "{text}"
    );
    let (code, text, _) = pb(&root, &["vault", &url, "--token", "x", "-n", "5"]);
    assert_eq!(code, 2, "{text}");
    let (code, text, _) = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["vault", &url, "-n", "1", "--no-store"])
        .env_remove("VAULT_TOKEN")
        .output()
        .map(|o| {
            (
                o.status.code().unwrap(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
                (),
            )
        })
        .unwrap();
    assert_eq!(code, 2);
    assert!(text.contains("VAULT_TOKEN is not set"), "{text}");
}

/// A server sealed mid-run: its 503s are classified with Vault's words, the run goes on and
/// keeps a complete result, and it succeeds again once unsealed — on Vault and on OpenBao.
///
/// While it seals, a server holds every request until the seal is done (OpenBao's log shows
/// it stopping its cluster listeners in between: 0.1–0.5 s here when idle, over 1 s beside
/// the rest of the suite on a fresh machine). A request held past the run's 1 s timeout ends
/// as a timeout, which is what it is: no answer came. So every op is a 200, a 503, or a
/// timeout, and there are no more timeouts than the connections could spend held by the seal
/// and the unseal.
#[test]
fn a_server_sealed_mid_run_gives_classified_errors_and_a_complete_result() {
    let _g = serial();
    for (name, url, token) in servers() {
        let key_var = format!("PERFBASE_{}_UNSEAL_KEY", name.to_uppercase());
        let key = service(&key_var).unwrap();
        let (code, text, _) = pb(
            &token,
            &["vault", &url, "--init", "-w", "kv-read", "-n", "1"],
        );
        assert_eq!(code, 0, "{name}: {text}");
        let dir = tmp();
        let json = dir.path().join("r.json");
        let run = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .args([
                "vault",
                &url,
                "-w",
                "kv-read",
                "-c",
                "2",
                "-d",
                "4s",
                "--timeout",
                "1s",
            ])
            .args(["-q", "--no-store", "--json"])
            .arg(&json)
            .env("VAULT_TOKEN", &token)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1200));
        let sealing = std::time::Instant::now();
        let (s, v) = call(&url, &token, "PUT", "sys/seal", None);
        let sealing = sealing.elapsed();
        assert_eq!(s, 204, "{name}: sealing: {v}");
        std::thread::sleep(Duration::from_millis(1200));
        let unsealing = std::time::Instant::now();
        let (s, v) = call(
            &url,
            &token,
            "PUT",
            "sys/unseal",
            Some(json!({ "key": key })),
        );
        let unsealing = unsealing.elapsed();
        assert_eq!(
            (s, &v["sealed"]),
            (200, &json!(false)),
            "{name}: unsealing: {v}"
        );
        let out = run.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: the run goes on: {stderr}"
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        validate(&v);
        let sealed = v["errors"]["http_5xx"].as_u64().unwrap_or(0);
        assert!(
            sealed > 0,
            "{name}: the sealed second was counted: {}",
            v["errors"]
        );
        assert_eq!(v["status"]["503"].as_u64(), Some(sealed), "{name}");
        let sample_of = |class: &str| {
            v["error_samples"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["class"] == class)
                .unwrap_or_else(|| panic!("{name}: {}", v["error_samples"]))
                .clone()
        };
        assert_eq!(
            sample_of("http_5xx")["message"],
            "sealed or standby (503): Vault is sealed",
            "{name}"
        );
        let total = v["requests"].as_u64().unwrap();
        let ok = v["status"]["200"].as_u64().unwrap();
        let held = v["errors"]["timeout"].as_u64().unwrap_or(0);
        let classes: Vec<&String> = v["errors"].as_object().unwrap().keys().collect();
        assert!(
            classes.iter().all(|c| *c == "http_5xx" || *c == "timeout"),
            "{name}: only 503s and held requests: {}",
            v["errors"]
        );
        // A timed-out request has no status: it shows as 0.
        assert_eq!(
            v["status"]["0"].as_u64().unwrap_or(0),
            held,
            "{name}: {}",
            v["status"]
        );
        assert_eq!(
            ok + sealed + held,
            total,
            "{name}: every op is a 200, a 503 or a request held past its timeout: {} {}",
            v["status"],
            v["errors"]
        );
        // Each of the 2 connections can time out once per second the seal or unseal took.
        let most = 2 * (sealing.as_secs_f64().ceil() + unsealing.as_secs_f64().ceil()) as u64;
        assert!(
            held <= most,
            "{name}: {held} timeouts, but sealing took {sealing:?} and unsealing {unsealing:?}"
        );
        if held > 0 {
            assert_eq!(
                sample_of("timeout")["message"],
                "no complete response within 1s",
                "{name}"
            );
        }
        let timeline = v["timeline"].as_array().unwrap();
        let ok_in = |p: &Value| p["requests"].as_u64().unwrap() - p["errors"].as_u64().unwrap();
        assert!(ok_in(&timeline[0]) > 0, "{name}: {timeline:?}");
        assert!(
            ok_in(timeline.last().unwrap()) > 0,
            "{name}: recovered: {timeline:?}"
        );
        assert!(!v.to_string().contains(&token), "{name}");
    }
}

/// plans/vault-transit.toml at a small scale (2 runs of 1 s per operation and server): the
/// summary gives, per server and operation, the mean and variance of mean, p99, max and min
/// latency over the runs, and per statistic OpenBao's difference from Vault in words.
#[test]
fn the_transit_study_plan_prints_the_summary_and_the_a_vs_b_blocks() {
    if servers().len() < 2 {
        return;
    }
    let _g = serial();
    let root = env!("CARGO_MANIFEST_DIR");
    let plan = std::fs::read_to_string(format!("{root}/plans/vault-transit.toml")).unwrap();
    assert!(plan.contains("repetitions = 100") && plan.contains("concurrency = 1300"));
    let small = plan
        .replace("repetitions = 100", "repetitions = 2")
        .replace("duration = \"10s\"", "duration = \"1s\"")
        .replace("scale = 0.01", "scale = 0.002");
    let dir = tmp();
    let run = run_plan_with(dir.path(), &small, |_| {});
    assert_eq!(run.code(), 0, "{}{}", run.stdout(), run.stderr());
    let out = run.stdout();
    let ops = ["encrypt", "decrypt", "sign", "verify"];
    for op in ops {
        assert!(
            out.contains(&format!("transit: Vault 1.13 vs OpenBao 2.7 — {op}\n")),
            "{out}"
        );
    }
    let summary = |label: &str| {
        out.lines()
            .filter(|l| {
                l.trim_start()
                    .starts_with(&format!("{label} (2 runs) — Mean: mean "))
            })
            .count()
    };
    assert_eq!(summary("Vault 1.13"), 4, "{out}");
    assert_eq!(summary("OpenBao 2.7"), 4, "{out}");
    for stat in ["Mean", "P99", "Max", "Min"] {
        let verdicts: Vec<&str> = out
            .lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with(&format!("{stat}, against Vault 1.13: ")))
            .collect();
        assert_eq!(verdicts.len(), 4, "{stat}: {out}");
        for v in verdicts {
            assert!(
                (v.contains("OpenBao 2.7 is ")
                    && (v.contains("% faster (") || v.contains("% slower (")))
                    || v.contains("not resolved with 2 runs ("),
                "{v}"
            );
            // Two runs with the same figure on both sides (a min at 1 µs resolution) leave
            // no spread for Welch's test; the line says so instead of giving a p-value.
            assert!(
                (v.contains("p = ") || v.contains("p < 0.001") || v.contains("every run alike)"))
                    && !v.contains("p = 0.000")
                    && !v.contains("within noise"),
                "{v}"
            );
        }
    }
    let study = &run.json()["study"]["versus"][0];
    assert_eq!(study["a_label"], "Vault 1.13");
    let steps = study["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    for (s, op) in steps.iter().zip(ops) {
        assert_eq!(s["step"], op);
        assert_eq!(s["runs_a"].as_array().unwrap().len(), 2);
        let stats: Vec<&str> = s["stats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["stat"].as_str().unwrap())
            .collect();
        assert_eq!(stats, ["mean", "p99", "max", "min"]);
    }
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(
        report.contains("## A vs B: transit: Vault 1.13 vs OpenBao 2.7"),
        "{report}"
    );
}

/// The open model paces Vault ops at the asked rate, and --monitor watches the server beside.
#[test]
fn open_model_and_the_monitor() {
    let Some(url) = service("PERFBASE_VAULT_URL") else {
        return;
    };
    let token = service("PERFBASE_VAULT_TOKEN").unwrap();
    let pid = service("PERFBASE_VAULT_PID").unwrap();
    let _g = serial();
    let watch = format!("pid:{pid}");
    let (code, text, v) = pb(
        &token,
        &[
            "vault",
            &url,
            "-w",
            "health",
            "-r",
            "200",
            "-d",
            "2s",
            "--monitor",
            &watch,
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["model"], "open");
    assert_eq!(v["requests"], 400, "{v}");
    assert_eq!(v["status"]["200"], 400);
    let targets = v["monitor"]["targets"].as_array().unwrap();
    assert!(
        targets
            .iter()
            .any(|t| t["label"].as_str() == Some(watch.as_str())),
        "{targets:?}"
    );
}
