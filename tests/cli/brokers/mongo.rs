//! `perfbase mongo` against FerretDB (the MongoDB wire protocol): every operation of the suite,
//! the open model, bad documents, a server stopped mid-run and missing collections.

use super::pb;
use crate::common::*;

/// `perfbase mongo` against FerretDB: --init builds the collections, the suite runs every
/// operation with every request a success, and one operation runs in the open model.
#[test]
fn mongo_suite_runs_every_operation_and_the_open_model() {
    let Some(url) = service("PERFBASE_MONGODB_URL") else {
        return;
    };
    let _g = serial();
    let url = format!("{}/perfbase_cli", url.trim_end_matches('/'));
    let (code, text, v) = pb(&[
        "mongo",
        &url,
        "--init",
        "--keyspace",
        "100",
        "--scan-docs",
        "500",
        "-c",
        "2",
        "-n",
        "60",
    ]);
    assert_eq!(code, 0, "{text}");
    let phases = v["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "insert-one",
            "find-one",
            "find-scan",
            "update-one",
            "aggregate",
            "aggregate-complex",
            "delete-one"
        ]
    );
    for p in phases {
        assert_eq!(p["requests"], 60, "{}", p["name"]);
        assert_eq!(
            p["success_ratio"], 1.0,
            "{}: {}",
            p["name"], p["error_samples"]
        );
    }
    assert_eq!(v["protocol"], "mongodb");
    // 60 random deletes of 100 keys repeat some: the repeats matched nothing, and say so.
    assert!(text.contains("matched no document"), "{text}");
    validate(&v);
    let (code, text, v) = pb(&[
        "mongo",
        &url,
        "-w",
        "find-one",
        "-r",
        "50",
        "-d",
        "1s",
        "--keyspace",
        "100",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["model"], "open");
    assert_eq!(v["status"]["0"], 50, "{v}");
    // In a plan: a concurrency ladder of find-one after rebuilding the collections.
    let dir = tmp();
    let plan = format!(
        "[targets.db]\nurl = \"{url}\"\n[workloads.find]\ntarget = \"db\"\ncommand = \"find-one\"\nkeyspace = 100\ninit = true\n[[scenarios]]\nname = \"ladder\"\nworkload = \"find\"\nconcurrency = [1, 2]\nrequests = 40\n"
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let phases = r.json()["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for p in phases {
        assert_eq!(p["requests"], 40);
        assert_eq!(p["success_ratio"], 1.0, "{}", p["error_samples"]);
    }
    // A field of another protocol is an error at its line.
    let bad = plan.replace("init = true", "prefill = true");
    let r = run_plan_with(dir.path(), &bad, |_| {});
    assert_eq!(r.code(), 2);
    // (The list of protocols that take it grows with them: Redis's is among them.)
    let e = r.stderr();
    assert!(
        e.contains("workloads.find.prefill: applies to redis://")
            && e.contains("not to target 'db'"),
        "{e}"
    );
    // A document template that is no JSON object, or on an operation that inserts nothing.
    let (code, text, _) = pb(&["mongo", &url, "-w", "insert-one", "--document", "{\"a\": "]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--document: not JSON"), "{text}");
    let (code, text, _) = pb(&["mongo", &url, "-w", "find-one", "--document", "{}"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("-w find-one inserts none"), "{text}");
    // A bad URL and a bad workload are one clear line each.
    let (code, text, _) = pb(&["mongo", "mongodb://u:s3cret@127.0.0.1:1/x", "-w", "findOne"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("--workload 'findOne'") && !text.contains("s3cret"),
        "{text}"
    );
}

/// FerretDB stopped mid-run: counted connect or read errors, a complete result, and the run
/// recovers once it is back; a run without --init on an empty database is refused by name.
#[test]
fn mongo_server_stopped_mid_run_and_missing_collections() {
    let Some(url) = service("PERFBASE_MONGODB_URL") else {
        return;
    };
    let _g = serial();
    let url = format!("{}/perfbase_stop", url.trim_end_matches('/'));
    let (code, text, _) = pb(&["mongo", &url, "--init", "-w", "insert-one", "-n", "1"]);
    assert_eq!(code, 0, "{text}");
    let args = [
        "mongo",
        url.as_str(),
        "-w",
        "find-one",
        "-c",
        "2",
        // FerretDB drains its connections for about 3 s after SIGTERM before it stops.
        "-d",
        "10s",
        "--timeout",
        "1s",
    ];
    stopped_mid_run(&args, "mongodb");
    let empty = format!("{}_never_made", url);
    let (code, text, _) = pb(&["mongo", &empty, "-w", "find-one", "-n", "1"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("collection perfbase_docs in database perfbase_stop_never_made is empty or missing: run with --init"),
        "{text}"
    );
}
