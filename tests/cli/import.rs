//! `perfbase import`: plans written from a curl command and from a browser's HAR recording,
//! run against the reference service; the recorded (stale) token and id are replaced by
//! captures, no secret is written, and what cannot be imported is refused by name.

use crate::common::*;
use perfbase_reference::Route;
use serde_json::{json, Value};
use std::path::Path;

/// `perfbase import ARGS` in `dir`: exit code, stdout, stderr.
fn import(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = assert_cmd::Command::cargo_bin("perfbase")
        .unwrap()
        .arg("import")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_curl_command_becomes_a_plan_whose_run_sends_that_request() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let curl = format!(
        "curl -X POST http://{}/login -H 'Content-Type: application/json' -d '{{\"user\":\"u\"}}'",
        server.addr
    );
    let (code, plan, err) = import(&["curl", &curl], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        plan.contains("method = \"POST\"\npath = \"/login\"\n"),
        "{plan}"
    );
    assert!(
        plan.contains("concurrency = 10\nduration = \"10s\""),
        "{plan}"
    );
    // A shorter run than the imported 10 s: the count is what matters.
    let r = run_plan_with(dir.path(), &plan.replace("\"10s\"", "\"1s\""), |_| {});
    assert_eq!(r.code(), 0, "{}\n{plan}", r.stderr());
    let sent = r.json()["requests"].as_u64().unwrap();
    assert!(sent > 0);
    assert_eq!(r.json()["success_ratio"], 1.0);
    assert_eq!(
        server.stats.route(Route::Login),
        sent,
        "one login per request run"
    );
    // A body with a password: a one-step journey whose body reads it from the environment,
    // and whose Cookie (from -b, a secret too) is sent as given.
    let secret = format!(
        "curl http://{}/login -b 'sid=s-0' -d '{{\"user\":\"u\",\"password\":\"hunter22\"}}'",
        server.addr
    );
    let (code, journey, err) = import(&["curl", &secret], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        !journey.contains("hunter22") && !journey.contains("s-0"),
        "{journey}"
    );
    assert!(journey.contains("[[workloads.request.steps]]"), "{journey}");
    let before = server.stats.route(Route::Login);
    let r = run_plan_with(
        dir.path(),
        &journey.replace("duration = \"10s\"", "requests = 30"),
        |c| {
            c.env("PERFBASE_IMPORT_PASSWORD", "hunter22")
                .env("PERFBASE_IMPORT_COOKIE", "sid=s-0");
        },
    );
    assert_eq!(r.code(), 0, "{}\n{journey}", r.stderr());
    assert_eq!(server.stats.route(Route::Login) - before, 30);
    // -o writes the plan; an existing file is kept unless --force.
    let (code, stdout, err) = import(&["curl", &curl, "-o", "login.toml"], dir.path());
    assert_eq!((code, stdout.as_str()), (0, ""), "{err}");
    assert!(err.contains("perfbase run login.toml"), "{err}");
    let written = std::fs::read_to_string(dir.path().join("login.toml")).unwrap();
    assert_eq!(written, plan.replace("PLAN.toml", "login.toml"));
    std::fs::write(dir.path().join("login.toml"), "mine").unwrap();
    let (code, _, err) = import(&["curl", &curl, "-o", "login.toml"], dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("-o login.toml: the file exists"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("login.toml")).unwrap(),
        "mine"
    );
    let (code, _, err) = import(&["curl", &curl, "-o", "login.toml", "--force"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("login.toml")).unwrap(),
        written
    );
}

/// The stale token a browser was given when it recorded; a replay must never send it.
const STALE: &str = "tok-1-deadbeefdeadbeef";

/// A HAR entry as a browser records it.
fn entry(
    method: &str,
    url: &str,
    headers: Value,
    body: Option<&str>,
    answer: (u16, Value, &str),
) -> Value {
    let mut request = json!({"method": method, "url": url, "httpVersion": "HTTP/1.1",
                             "headers": headers, "queryString": [], "cookies": []});
    if let Some(b) = body {
        request["postData"] = json!({"mimeType": "application/json", "text": b});
    }
    let (status, headers, text) = answer;
    let mime = if text.starts_with('{') {
        "application/json"
    } else {
        "text/plain"
    };
    json!({"startedDateTime": "2026-11-26T10:00:00.000Z", "time": 3.5, "request": request,
           "response": {"status": status, "statusText": "", "headers": headers,
                        "content": {"size": text.len(), "mimeType": mime, "text": text}},
           "cache": {}, "timings": {"send": 0, "wait": 3, "receive": 0.5}})
}

/// What a browser recorded against the service at `base`: a login, an item created, read
/// and deleted with the token, the page's script, and an image from a CDN.
fn recording(base: &str) -> String {
    let auth = json!([{"name": "Authorization", "value": format!("Bearer {STALE}")},
                      {"name": "Cookie", "value": "sid=s-1-0123456789abcdef"},
                      {"name": "Accept", "value": "application/json"}]);
    let none = json!([]);
    let login_answer =
        format!(r#"{{"access_token":"{STALE}","token_type":"Bearer","expires_in":3600}}"#);
    json!({"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "130"},
    "entries": [
        entry("GET", &format!("{base}/app.js"), none.clone(), None, (200, none.clone(), "init()")),
        entry("POST", &format!("{base}/login"), json!([{"name": "Host", "value": "x"}]),
              Some(r#"{"user":"u","password":"p"}"#), (200, none.clone(), &login_answer)),
        entry("POST", &format!("{base}/items"), auth.clone(), Some(r#"{"name":"x"}"#),
              (201, json!([{"name": "Location", "value": "/items/7"}]), r#"{"id":7}"#)),
        entry("GET", "https://cdn.example.com/x.png", none.clone(), None, (200, none.clone(), "")),
        entry("GET", &format!("{base}/items/7"), auth.clone(), None,
              (200, none.clone(), r#"{"id":7,"size":10}"#)),
        entry("DELETE", &format!("{base}/items/7"), auth, None, (204, none, "")),
    ]}})
    .to_string()
}

#[test]
fn a_har_recording_becomes_a_journey_that_takes_fresh_values_from_its_answers() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let base = format!("http://{}", server.addr);
    std::fs::write(dir.path().join("site.har"), recording(&base)).unwrap();
    let (code, plan, err) = import(&["har", "site.har"], dir.path());
    assert_eq!(code, 0, "{err}");
    println!("{plan}");
    assert!(
        !plan.contains("deadbeef"),
        "the stale token is not written: {plan}"
    );
    assert!(
        !plan.contains("0123456789abcdef"),
        "nor the recorded cookie: {plan}"
    );
    assert_eq!(plan.matches("\ncapture.").count(), 2, "{plan}");
    for line in [
        &format!("4 requests to {base}, replayed") as &str,
        "#   1 static asset (scripts, styles, images, fonts; --include-static keeps them)",
        "#   1 request to another origin (a journey talks to one): https://cdn.example.com",
        "capture.access_token = { json = \"/access_token\" }",
        "capture.id = { json = \"/id\" }",
        "headers.Authorization = \"Bearer {{access_token}}\"",
        "path = \"/items/{{id}}\"",
        "#   export PERFBASE_IMPORT_PASSWORD=…",
    ] {
        assert!(plan.contains(line), "{line}\n---\n{plan}");
    }
    let n = 25;
    let r = run_plan_with(
        dir.path(),
        &plan.replace("requests = 10", &format!("requests = {n}")),
        |c| {
            c.env("PERFBASE_IMPORT_PASSWORD", "p");
        },
    );
    assert_eq!(r.code(), 0, "{}\n{plan}", r.stderr());
    let s = &server.stats;
    assert_eq!(s.route(Route::Login), n, "a fresh token per journey");
    for route in [Route::ItemsCreate, Route::ItemsRead, Route::ItemsDelete] {
        assert_eq!(s.route(route), n, "{route:?}");
    }
    assert_eq!(
        s.route(Route::Unauthorized),
        0,
        "the stale token was never sent"
    );
    assert_eq!(r.json()["iterations"]["failed"], 0);
    let checks = find(&r.json()["checks"], "name", "status");
    assert_eq!(
        (checks["passed"].as_u64(), checks["failed"].as_u64()),
        (Some(4 * n), Some(0))
    );
}

#[test]
fn what_cannot_be_imported_is_refused_by_name() {
    let dir = tmp();
    std::fs::write(dir.path().join("bad.har"), "<html>").unwrap();
    let (code, out, err) = import(&["har", "bad.har"], dir.path());
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("bad.har: not an HTTP Archive"), "{err}");
    let (code, _, err) = import(&["har", "missing.har"], dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing.har: cannot read it"), "{err}");
    let (code, out, err) = import(&["curl", "curl --proxy p http://127.0.0.1:1/"], dir.path());
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("curl's --proxy is not read by perfbase import"),
        "{err}"
    );
    let (code, _, err) = import(
        &["curl", "curl -d @nowhere.json http://127.0.0.1:1/"],
        dir.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("-d @nowhere.json: cannot read it"), "{err}");
}

/// A recording of more requests than a journey has steps is refused at import, naming the
/// limit, instead of a plan that cannot run (issue 47's judgement call: a HAR over 64).
#[test]
fn a_recording_longer_than_a_journey_is_refused_at_import() {
    let dir = tmp();
    let none = json!([]);
    let entries: Vec<Value> = (0..65)
        .map(|i| {
            let url = format!("http://127.0.0.1:9/page/{i}");
            entry("GET", &url, none.clone(), None, (200, none.clone(), "ok"))
        })
        .collect();
    let har = json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
                             "entries": entries}});
    std::fs::write(dir.path().join("long.har"), har.to_string()).unwrap();
    let (code, out, err) = import(&["har", "long.har"], dir.path());
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("65 requests") && err.contains("at most 64 steps"),
        "{err}"
    );
    assert!(out.is_empty());
}
