//! The results store, comparisons and reports end to end: real runs against the reference
//! service, stored in a real SQLite file (and PostgreSQL from scripts/services.sh), read back,
//! compared, gated and rendered.

use crate::common::*;
use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// Runs `perfbase ARGS` with the store in `dir`; returns (exit code, stdout, stderr).
/// The id a command that saved a run names on stderr ("saved as run N").
fn saved_id(stderr: &str) -> String {
    stderr
        .split("saved as run ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("the run was saved")
        .to_string()
}

/// Writes `plan` to DIR/NAME.toml and runs it into DIR/NAME/ and the store; returns the exit
/// code, stderr and the saved run's id.
fn stored_plan(dir: &Path, name: &str, plan: &str) -> (i32, String, String) {
    let plan_path = dir.join(format!("{name}.toml"));
    std::fs::write(&plan_path, plan).unwrap();
    let out = dir.join(name);
    let (code, _, err) = pb(
        dir,
        &[
            "run",
            plan_path.to_str().unwrap(),
            "-q",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let id = saved_id(&err);
    (code, err, id)
}

/// The p50 delta in ms that `compare`'s Markdown table gives (`| p50_ms | A | B | +Δ (…) |`).
fn p50_delta(compare: &str) -> f64 {
    let row = compare
        .lines()
        .find(|l| l.starts_with("| p50_ms |"))
        .unwrap_or_else(|| panic!("no p50 row in {compare}"));
    row.split('|')
        .nth(4)
        .and_then(|c| c.trim().trim_start_matches('+').split_whitespace().next())
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no delta in {row}"))
}

/// Loads `path` against the reference service for 1 s; returns the stored run id.
fn stored_run(dir: &Path, addr: std::net::SocketAddr, path: &str, labels: &[&str]) -> String {
    let url = format!("http://{addr}{path}");
    let mut args = vec!["http", url.as_str(), "-c", "4", "-d", "1s", "-q"];
    for l in labels {
        args.extend_from_slice(&["--label", l]);
    }
    let (code, _, err) = pb(dir, &args);
    assert_eq!(code, 0, "{err}");
    saved_id(&err)
}

#[test]
fn runs_are_stored_read_back_compared_and_gated() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let fast = stored_run(
        dir.path(),
        server.addr,
        "/delay/10",
        &["service=ref", "version=1"],
    );
    let slow = stored_run(
        dir.path(),
        server.addr,
        "/delay/30",
        &["service=ref", "version=2"],
    );
    assert_ne!(fast, slow);

    // History lists both, newest first, and filters by label.
    let (code, out, _) = pb(dir.path(), &["history"]);
    assert_eq!(code, 0);
    let fast_line = out.lines().position(|l| l.contains("/delay/10")).unwrap();
    let slow_line = out.lines().position(|l| l.contains("/delay/30")).unwrap();
    assert!(slow_line < fast_line, "{out}");
    let (_, out, _) = pb(dir.path(), &["history", "--label", "version=1"]);
    assert!(
        out.contains("/delay/10") && !out.contains("/delay/30"),
        "{out}"
    );
    // A filter that matches nothing says so, not that the store is empty.
    let (code, out, _) = pb(dir.path(), &["history", "--label", "service=nope"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("no run in") && out.contains("has the label service=nope"),
        "{out}"
    );
    // The store's flags are on the commands that use it, and only there.
    for (cmd, flags) in [
        ("serve", &[][..]),
        ("history", &["--store", "--label"][..]),
        ("show", &["--store"][..]),
        ("compare", &["--store"][..]),
        ("report", &["--store"][..]),
        ("http", &["--store", "--no-store", "--label"][..]),
        ("run", &["--store", "--no-store", "--label"][..]),
    ] {
        let (_, help, _) = pb(dir.path(), &[cmd, "--help"]);
        for flag in ["--store", "--no-store", "--label"] {
            let shown = help.contains(&format!("{flag} "));
            assert_eq!(
                shown,
                flags.contains(&flag),
                "{cmd} --help and {flag}:\n{help}"
            );
        }
    }
    let (_, help, _) = pb(dir.path(), &["history", "--help"]);
    assert!(help.contains("Only runs with this label"), "{help}");

    // The stored result reads back exactly as JSON.
    let (code, json, _) = pb(dir.path(), &["report", &fast, "--format", "json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&json).unwrap();
    validate(&v);
    assert_eq!(
        v["target"].as_str().unwrap(),
        format!("http://{}/delay/10", server.addr)
    );
    let (_, shown, _) = pb(dir.path(), &["show", "latest:version=1"]);
    assert!(
        shown.contains("/delay/10") && shown.contains("Latency ms"),
        "{shown}"
    );

    // A run compared with itself moves nothing: one run a side cannot resolve a difference.
    let (code, out, _) = pb(dir.path(), &["compare", &fast, &fast]);
    assert_eq!(code, 0);
    assert!(
        out.contains("### run: **not resolved with one run a side ("),
        "{out}"
    );

    // /delay/10 vs /delay/30: B is slower by about 20 ms at p50. The runs are named by the
    // one label whose values differ, or by the label asked for; min is compared too.
    let (_, out, _) = pb(dir.path(), &["compare", &fast, &slow]);
    assert!(out.contains("## A: version=1  vs  B: version=2"), "{out}");
    assert!(out.contains("### run: **version=2 is slower**"), "{out}");
    assert!(out.contains("| min_ms | "), "{out}");
    let (_, named, _) = pb(
        dir.path(),
        &["compare", &fast, &slow, "--name-by", "version"],
    );
    assert!(named.contains("### run: **2 is slower**"), "{named}");
    let (code, _, err) = pb(
        dir.path(),
        &["compare", &fast, &slow, "--name-by", "platform"],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "--name-by platform: run {fast} has no label platform"
        )),
        "{err}"
    );
    let delta = p50_delta(&out);
    assert!(
        (18.0..=23.0).contains(&delta),
        "p50 delta {delta} ms in {out}"
    );

    // The baseline gate: exit 1 on that regression, 0 against itself.
    let (code, _, _) = pb(dir.path(), &["baseline", "set", "v1", &fast]);
    assert_eq!(code, 0);
    let (code, out, err) = pb(dir.path(), &["baseline", "check", "v1", &slow]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("regression against baseline v1"), "{err}");
    let (code, _, _) = pb(dir.path(), &["baseline", "check", "v1", &fast]);
    assert_eq!(code, 0);
    let (_, list, _) = pb(dir.path(), &["baseline", "list"]);
    assert!(list.contains(&format!("v1: run {fast}")), "{list}");

    // Three targets: a ranking by throughput.
    let third = stored_run(dir.path(), server.addr, "/delay/20", &[]);
    let (_, out, _) = pb(dir.path(), &["compare", &slow, &fast, &third]);
    let ranks: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| 1 |") || l.starts_with("| 2 |") || l.starts_with("| 3 |"))
        .collect();
    assert_eq!(ranks.len(), 3, "{out}");
    assert!(
        ranks[0].contains("/delay/10") && ranks[2].contains("/delay/30"),
        "{out}"
    );
}

#[test]
fn reports_in_every_format() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = format!(
        "[targets.svc]\nurl = \"http://{}\"\n[workloads.d]\ntarget = \"svc\"\npath = \"/delay/5\"\n[[scenarios]]\nname = \"steady\"\nworkload = \"d\"\nrate = 100\nduration = \"500ms\"\nrepetitions = 2\nthresholds = [\"p99 < 1ms\"]\n",
        server.addr
    );
    let (code, err, id) = stored_plan(dir.path(), "out", &plan);
    assert_eq!(code, 1, "the 1 ms threshold fails: {err}");

    let (_, csv, _) = pb(dir.path(), &["report", &id, "--format", "csv"]);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "a header and one row per repetition: {csv}");
    assert!(
        rows[1].contains(",steady 100/s #1,steady,0,1,open,100,"),
        "{csv}"
    );

    let (_, xml, _) = pb(dir.path(), &["report", &id, "--format", "junit"]);
    assert!(xml.contains("failures=\"2\""), "{xml}");
    assert_eq!(
        xml.matches("<failure message=\"p99 &lt; 1ms: actual")
            .count(),
        2,
        "{xml}"
    );

    let (_, md, _) = pb(dir.path(), &["report", &id, "--format", "md"]);
    assert!(
        md.contains("### Repetitions") && md.contains("## Test environment"),
        "{md}"
    );

    let html_path = dir.path().join("r.html");
    let (code, _, _) = pb(
        dir.path(),
        &[
            "report",
            &id,
            "--format",
            "html",
            "-o",
            html_path.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("class=\"chart\""), "charts are drawn");
    for remote in ["http://", "https://", "src=\"//", "href=\"//"] {
        let outside: Vec<&str> = html
            .match_indices(remote)
            .map(|(i, _)| &html[i.saturating_sub(40)..(i + 60).min(html.len())])
            .filter(|ctx| !ctx.contains("127.0.0.1"))
            .collect();
        assert!(
            outside.is_empty(),
            "the page references {remote}: {outside:?}"
        );
    }
}

#[test]
fn a_store_on_postgresql_keeps_history_for_a_team() {
    let Some(url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let target = format!("http://{}/", server.addr);
    let tag = format!("run=cli-{}", std::process::id());
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "http", &target, "-n", "50", "-c", "2", "-q", "--store", &url, "--label", &tag,
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains(":perfbase@"),
        "the store's password is redacted: {err}"
    );
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["history", "--store", &url, "--label", &tag])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&target) && text.contains("50"), "{text}");
}

#[test]
fn a_label_the_store_would_refuse_stops_the_command_before_any_load() {
    let dir = tmp();
    let (code, out, err) = pb(
        dir.path(),
        &[
            "http",
            "http://127.0.0.1:9/",
            "-n",
            "1",
            "--label",
            "build id=7",
        ],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--label: invalid label 'build id=7'"), "{err}");
    assert!(
        !dir.path().join("results.db").exists(),
        "nothing ran, nothing was stored"
    );
}

#[test]
fn repeated_runs_are_compared_by_welch_from_json_files_and_gated_by_tolerance() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    // Runs a 4-repetition plan on `path`; returns (its result.json, its stored run id).
    let run = |name: &str, path: &str| -> (String, String) {
        let plan = format!(
            "[plan]\nlabels = {{ service = \"ref\", build = \"{name}\" }}\n[targets.svc]\nurl = \"http://{}\"\n[workloads.d]\ntarget = \"svc\"\npath = \"{path}\"\n[[scenarios]]\nname = \"steady\"\nworkload = \"d\"\nconcurrency = 2\nduration = \"400ms\"\nrepetitions = 4\n",
            server.addr
        );
        let (code, err, id) = stored_plan(dir.path(), name, &plan);
        assert_eq!(code, 0, "{err}");
        let out = dir.path().join(name);
        (out.join("result.json").to_str().unwrap().to_string(), id)
    };
    let (a, a_id) = run("a", "/delay/10");
    let (b, b_id) = run("b", "/delay/14");
    // From the JSON files: 4 runs a side, so the verdict rests on Welch's t-test.
    let (code, out, err) = pb(dir.path(), &["compare", &a, &b]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Welch's t-test"), "{out}");
    assert!(out.contains("**B is slower**"), "{out}");
    let delta = p50_delta(&out);
    assert!((3.0..=5.5).contains(&delta), "p50 +4 ms: {delta} in {out}");
    // The plan's labels reached the store.
    let (_, listed, _) = pb(dir.path(), &["history", "--label", "build=b"]);
    let ids: Vec<&str> = listed
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids, [b_id.as_str()], "{listed}");
    // The gate: +40 % at p50 is a regression at the default 5 %, not at a 50 % tolerance.
    let (code, _, _) = pb(dir.path(), &["baseline", "set", "main", &a_id]);
    assert_eq!(code, 0);
    let junit = dir.path().join("gate.xml");
    let junit = junit.to_str().unwrap();
    let (code, json, err) = pb(
        dir.path(),
        &[
            "baseline", "check", "main", &b_id, "--json", "-", "--junit", junit,
        ],
    );
    assert_eq!(code, 1, "{err}");
    // With --json -, standard output is the JSON alone; the tables went to stderr.
    let v: Value = serde_json::from_str(&json).expect("stdout is the comparison JSON");
    assert_eq!(v["schema"], "perfbase.comparison/v1");
    assert_eq!(v["kind"], "baseline-check");
    assert_eq!(v["baseline"], "main");
    assert_eq!(
        (v["passed"].as_bool(), v["regressed"].as_bool()),
        (Some(false), Some(true))
    );
    let entry = &v["comparison"]["entries"][0];
    assert_eq!(
        (entry["runs_a"].as_u64(), entry["runs_b"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(entry["regression"], true);
    let p50 = find(&entry["metrics"], "metric", "p50_ms");
    assert!(p50["p_value"].as_f64().unwrap() < 0.05, "{p50}");
    assert!(
        err.contains("B is slower") && err.contains("regression"),
        "{err}"
    );
    let suite = junit_suite(junit);
    assert_eq!((suite.tests, suite.failures), (1, 1));
    let quick_junit::TestCaseStatus::NonSuccess { message, .. } = &suite.test_cases[0].status
    else {
        panic!("the regression is a failure")
    };
    let message = message.as_ref().unwrap().as_str();
    assert!(
        message.starts_with("B is slower: ") && message.contains("p50_ms"),
        "{message}"
    );
    assert!(
        message.contains(" ms"),
        "failures carry their units: {message}"
    );

    let (code, _, err) = pb(
        dir.path(),
        &[
            "baseline",
            "check",
            "main",
            &b_id,
            "--tolerance",
            "50%",
            "--junit",
            junit,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let suite = junit_suite(junit);
    assert_eq!((suite.tests, suite.failures), (1, 0));

    // compare writes the same document, and a ranking its rows.
    let doc = dir.path().join("compare.json");
    let (code, _, err) = pb(
        dir.path(),
        &["compare", &a, &b, "--json", doc.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
    assert_eq!(v["kind"], "compare");
    assert_eq!(v["comparison"]["entries"][0]["verdict"], "B is slower");
    let (code, json, err) = pb(dir.path(), &["compare", &a, &b, &a, "--json", "-"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["kind"], "ranking");
    assert_eq!(v["ranking"].as_array().unwrap().len(), 3);
}

/// The one test suite of a JUnit file, read back with quick-junit's parser.
fn junit_suite(path: &str) -> quick_junit::TestSuite {
    let xml = std::fs::read_to_string(path).unwrap();
    let mut report = quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit");
    assert_eq!(report.test_suites.len(), 1, "{xml}");
    report.test_suites.remove(0)
}

#[test]
fn missing_runs_and_files_are_named() {
    let dir = tmp();
    let missing = dir.path().join("nowhere/r.json");
    let missing = missing.to_str().unwrap();
    for (args, want) in [
        (
            vec!["report", missing, "--format", "md"],
            format!("{missing}: no such file"),
        ),
        (
            vec!["compare", "a.json", "b.json"],
            "a.json: no such file".to_string(),
        ),
        (vec!["show", "99"], "no run 99".to_string()),
        (
            vec!["baseline", "check", "nope", "1"],
            "no baseline 'nope'".to_string(),
        ),
    ] {
        let (code, _, err) = pb(dir.path(), &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(&want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
