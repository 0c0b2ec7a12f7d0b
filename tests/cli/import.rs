//! `perfbase import`: plans written from a curl command and from a browser's HAR recording
//! run against the reference service, with stale recorded values replaced by captures and no
//! secret written.

use crate::common::*;
use perfbase_reference::Route;
use serde_json::json;

fn import(args: &[&str], dir: &std::path::Path) -> (i32, String, String) {
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
fn a_curl_command_becomes_a_plan_that_runs() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let curl = format!(
        "curl -X POST http://{}/login -H 'Content-Type: application/json' \
         -d '{{\"user\":\"u\",\"password\":\"hunter22\"}}'",
        server.addr
    );
    let (code, plan, err) = import(&["curl", &curl], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(!plan.contains("hunter22"), "no secret written: {plan}");
    assert!(plan.contains("export PERFBASE_IMPORT_PASSWORD"), "{plan}");
    let plan = plan.replace("duration = \"10s\"", "requests = 20");
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.env("PERFBASE_IMPORT_PASSWORD", "hunter22");
    });
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(server.stats.route(Route::Login), 20);
}

/// A HAR as a browser records it against the service at `addr`: a login, an item created,
/// read and deleted with the (by now stale) token and id, a script and a foreign image.
fn har(addr: &str) -> serde_json::Value {
    let stale = "tok-1-deadbeefdeadbeef";
    let auth = json!({"name": "Authorization", "value": format!("Bearer {stale}")});
    let entry = |method: &str,
                 url: String,
                 headers: serde_json::Value,
                 body: Option<&str>,
                 status: u16,
                 rheaders: serde_json::Value,
                 text: &str,
                 mime: &str| {
        let mut req = json!({"method": method, "url": url, "headers": headers});
        if let Some(b) = body {
            req["postData"] = json!({"mimeType": "application/json", "text": b});
        }
        json!({"request": req, "response": {"status": status, "headers": rheaders,
               "content": {"mimeType": mime, "text": text}}})
    };
    let base = format!("http://{addr}");
    json!({"log": {"version": "1.2", "entries": [
        entry("GET", format!("{base}/app.js"), json!([]), None, 200, json!([]), "x()", "application/javascript"),
        entry("POST", format!("{base}/login"),
              json!([{"name": "Content-Type", "value": "application/json"}, {"name": ":authority", "value": addr}]),
              Some(r#"{"user":"u","password":"p"}"#), 200, json!([]),
              &format!(r#"{{"access_token":"{stale}","token_type":"Bearer","expires_in":3600}}"#),
              "application/json"),
        entry("POST", format!("{base}/items"), json!([auth, {"name": "Cookie", "value": "sid=s-1-x"}]),
              Some(r#"{"name":"x"}"#), 201, json!([{"name": "Location", "value": "/items/7"}]),
              r#"{"id":7}"#, "application/json"),
        entry("GET", "https://cdn.example.com/x.png".into(), json!([]), None, 200, json!([]), "", "image/png"),
        entry("POST", "https://analytics.example.com/collect".into(), json!([]), Some("{}"), 204, json!([]), "", ""),
        entry("GET", format!("{base}/items/7"), json!([auth]), None, 200, json!([]),
              r#"{"id":7,"size":12}"#, "application/json"),
        entry("DELETE", format!("{base}/items/7"), json!([auth]), None, 204, json!([]), "", ""),
    ]}})
}

#[test]
fn a_har_recording_becomes_a_journey_that_captures_fresh_values() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let file = dir.path().join("site.har");
    std::fs::write(&file, har(&server.addr.to_string()).to_string()).unwrap();
    let (code, plan, err) = import(&["har", "site.har"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        !plan.contains("deadbeef"),
        "the stale token is captured, not written: {plan}"
    );
    assert!(plan.contains("2 static asset(s)"), "{plan}");
    assert!(
        plan.contains("1 request(s) to other origins (https://analytics.example.com)"),
        "{plan}"
    );
    assert!(
        plan.contains(r#"capture = { "access_token" = { json = "/access_token" } }"#),
        "{plan}"
    );
    assert!(
        plan.contains(r#"capture = { "id" = { json = "/id" } }"#),
        "{plan}"
    );
    assert!(plan.contains("path = \"/items/{{id}}\""), "{plan}");
    assert!(plan.contains("Bearer {{access_token}}"), "{plan}");
    assert!(
        !plan.contains("sid=") && !plan.contains(":authority"),
        "{plan}"
    );
    // The recorded password is a variable the run must be given.
    assert!(plan.contains("export PERFBASE_IMPORT_PASSWORD"), "{plan}");
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.env("PERFBASE_IMPORT_PASSWORD", "p");
    });
    assert_eq!(r.code(), 0, "{}\n{plan}", r.stderr());
    let s = &server.stats;
    // Ten iterations of the four steps, each with a fresh token and id.
    assert_eq!(s.route(Route::Login), 10);
    for route in [Route::ItemsCreate, Route::ItemsRead, Route::ItemsDelete] {
        assert_eq!(s.route(route), 10, "{route:?}");
    }
    assert_eq!(s.route(Route::Unauthorized), 0);
    // -o writes the file, and will not overwrite it without --force.
    let (code, _, err) = import(&["har", "site.har", "-o", "plan.toml"], dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("plan.toml exists"), "{err}");
    let (code, _, _) = import(&["har", "site.har", "-o", "new.toml"], dir.path());
    assert_eq!(code, 0);
}

#[test]
fn what_cannot_be_imported_is_refused_by_name() {
    let dir = tmp();
    std::fs::write(dir.path().join("bad.har"), "<html>").unwrap();
    let (code, _, err) = import(&["har", "bad.har"], dir.path());
    assert_eq!(code, 2);
    assert!(err.contains("bad.har: not an HTTP Archive"), "{err}");
    let (code, _, err) = import(&["curl", "curl --proxy p http://127.0.0.1:1/"], dir.path());
    assert_eq!(code, 2);
    assert!(err.contains("--proxy is not read"), "{err}");
}
