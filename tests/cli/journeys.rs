//! Journeys end to end against the reference service's stateful API: set-up login, steps that
//! carry the token and the item's id, checks, cookies, feeders, mixes, the open model's clock,
//! and the errors of a plan that cannot work.

use crate::common::*;
use perfbase_reference::Route;

/// A plan with target `url`, the workload body `workload` and scenario lines `scenario`.
fn plan(url: &str, workload: &str, scenario: &str) -> String {
    format!(
        "[plan]\nname = \"journeys\"\n\n[targets.api]\nurl = \"{url}\"\n\n\
         [workloads.j]\ntarget = \"api\"\n{workload}\n\n[[scenarios]]\nname = \"s\"\n\
         workload = \"j\"\n{scenario}\n"
    )
}

const LOGIN: &str = r#"setup = [
  { name = "login", method = "POST", path = "/login", body = '{"user":"u","password":"p"}', capture = { token = { json = "/access_token" } } },
]"#;

/// Create, read and delete with the token; the id from the Location header.
const CRUD: &str = r#"steps = [
  { name = "create", method = "POST", path = "/items", headers = { Authorization = "Bearer {{token}}" }, body = '{"name":"x"}', capture = { id = { header = "Location", regex = "/items/(\\d+)" } }, check = { created = { status = [201] } }, group = "item" },
  { name = "read", path = "/items/{{id}}", headers = { Authorization = "Bearer {{token}}" }, check = { same = { json = "/id", equals = "{{id}}" } }, group = "item" },
  { name = "delete", method = "DELETE", path = "/items/{{id}}", headers = { Authorization = "Bearer {{token}}" }, check = { gone = { status = [204] } }, group = "item" },
  { name = "session", path = "/session" },
  { name = "session again", path = "/session", check = { returning = { json = "/returning", equals = "true" } } },
]"#;

/// Runs `text` as DIR/plan.toml.
fn run_plan(dir: &std::path::Path, text: &str) -> Run {
    run_plan_with(dir, text, |_| {})
}

/// `perfbase report --format FORMAT` of the run in DIR/out.
fn report(dir: &std::path::Path, format: &str) -> String {
    let out = assert_cmd::Command::cargo_bin("perfbase")
        .unwrap()
        .args(["report", "--format", format])
        .arg(dir.join("out/result.json"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn endpoint(r: &Run, name: &str) -> u64 {
    find(&r.json()["endpoints"], "name", name)["requests"]
        .as_u64()
        .unwrap_or(0)
}

fn check(r: &Run, name: &str) -> (u64, u64) {
    let c = find(&r.json()["checks"], "name", name);
    (c["passed"].as_u64().unwrap(), c["failed"].as_u64().unwrap())
}

#[test]
fn a_thousand_journeys_make_exactly_a_thousand_of_each_step_with_no_401() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}", server.addr);
    let r = run_plan(
        dir.path(),
        &plan(
            &url,
            &format!("{LOGIN}\n{CRUD}"),
            "concurrency = 4\nrequests = 1000",
        ),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    validate(r.json());
    let s = &server.stats;
    assert_eq!(s.route(Route::Login), 1, "the set-up logs in once");
    for route in [Route::ItemsCreate, Route::ItemsRead, Route::ItemsDelete] {
        assert_eq!(s.route(route), 1000, "{route:?}");
    }
    assert_eq!(s.route(Route::Unauthorized), 0);
    // Cookies round-trip: each iteration's second /session brought back the first's cookie.
    assert_eq!(s.route(Route::SessionNew), 1000);
    assert_eq!(s.route(Route::SessionReturning), 1000);
    assert_eq!(r.json()["requests"], 5000);
    for step in ["create", "read", "delete", "session", "session again"] {
        assert_eq!(endpoint(&r, step), 1000, "{step}");
    }
    let it = &r.json()["iterations"];
    assert_eq!(
        (it["count"].as_u64(), it["failed"].as_u64()),
        (Some(1000), Some(0))
    );
    for c in ["created", "same", "gone", "returning"] {
        assert_eq!(check(&r, c), (1000, 0), "{c}");
    }
    // The group of create, read and delete: one pass per iteration, as long as its steps.
    let item = find(&r.json()["groups"], "name", "item");
    assert_eq!(item["count"], 1000);
    let p50 = |v: &serde_json::Value| v["latency_ms"]["p50"].as_f64().unwrap();
    let steps: f64 = ["create", "read", "delete"]
        .iter()
        .map(|s| p50(find(&r.json()["endpoints"], "name", s)))
        .sum();
    let group = item["duration_ms"]["p50"].as_f64().unwrap();
    let whole = r.json()["iterations"]["duration_ms"]["p50"]
        .as_f64()
        .unwrap();
    assert!(
        group >= steps * 0.5 && group < whole,
        "{steps} {group} {whole}"
    );
    assert!(
        r.stdout().is_empty() || !r.stdout().contains("tok-"),
        "no token shown"
    );
    // The CSV's journey columns: iterations, failed, p95, checks passed and failed.
    let text = report(dir.path(), "csv");
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .ends_with("iterations,iterations_failed,iteration_p95_ms,checks_passed,checks_failed"));
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(row[row.len() - 5..][..2], ["1000", "0"]);
    assert_eq!(row[row.len() - 2..], ["4000", "0"]);
}

#[test]
fn a_capture_that_finds_nothing_is_named_counted_and_the_run_goes_on() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    // The read's capture names a field its answer does not have.
    let wrong = CRUD.replace(
        r#"equals = "{{id}}" } }, group"#,
        r#"equals = "{{id}}" } }, capture = { size = { json = "/sise" } }, group"#,
    );
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            &format!("{LOGIN}\n{wrong}"),
            "concurrency = 2\nrequests = 50",
        ),
    );
    // Not one iteration succeeded: the journey did not work (exit 3, issue 47).
    assert_eq!(r.code(), 3, "{}", r.stderr());
    assert_eq!(r.json()["errors"]["capture"], 50);
    let sample = &r.json()["error_samples"][0];
    assert_eq!(sample["class"], "capture");
    let msg = sample["message"].as_str().unwrap();
    assert!(
        msg.contains("step 'read': capture 'size': JSON pointer /sise found nothing"),
        "{msg}"
    );
    // Each iteration stopped at its failed step: nothing was deleted.
    assert_eq!(server.stats.route(Route::ItemsCreate), 50);
    assert_eq!(server.stats.route(Route::ItemsRead), 50);
    assert_eq!(server.stats.route(Route::ItemsDelete), 0);
    assert_eq!(r.json()["iterations"]["failed"], 50);
    assert_eq!(endpoint(&r, "create"), 50);
    // On failure = "continue": later steps go out; those that need a value a failed capture
    // should have given say so.
    let steps = CRUD.replace(
        r#"capture = { id = { header = "Location", regex = "/items/(\\d+)" } }"#,
        r#"capture = { id = { json = "/idd" } }"#,
    );
    let dir = tmp();
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            &format!("on_failure = \"continue\"\n{LOGIN}\n{steps}"),
            "concurrency = 2\nrequests = 10",
        ),
    );
    assert_eq!(r.json()["errors"]["capture"], 30, "{}", r.json()["errors"]);
    assert_eq!(endpoint(&r, "session again"), 10);
    // Most requests succeeded, but not one iteration: exit 3, as with "stop" (issue 47,
    // item 14: it was 0).
    assert_eq!(r.code(), 3, "{}", r.stderr());
    let samples = r.json()["error_samples"].to_string();
    assert!(samples.contains("'{{id}}' has no value"), "{samples}");
}

#[test]
fn a_check_failing_one_time_in_ten_reads_90_percent_and_fails_its_threshold() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let text = plan(
        &format!("http://{}", server.addr),
        r#"steps = [ { path = "/status/{{codes}}", check = { fine = { status = [200] } } } ]"#,
        "concurrency = 1\nrequests = 100",
    )
    .replace(
        "[workloads.j]",
        "[corpora.codes]\nvalues = [\"200\", \"200\", \"200\", \"200\", \"200\", \"200\", \
         \"200\", \"200\", \"200\", \"404\"]\npick = \"sequential\"\n\n[workloads.j]",
    )
    .replace(
        "name = \"journeys\"",
        "name = \"journeys\"\nthresholds = [\"checks > 95%\"]",
    );
    let r = run_plan(dir.path(), &text);
    assert_eq!(r.code(), 1, "a failed threshold: {}", r.stderr());
    assert_eq!(check(&r, "fine"), (90, 10));
    assert_eq!(r.json()["errors"]["http_4xx"], 10);
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("| `fine` | 90 | 10 |"), "{md}");
    assert!(md.contains("checks > 95%"), "{md}");
    let junit = report(dir.path(), "junit");
    assert!(junit.contains("checks passed: fine 90 of 100"), "{junit}");
    assert!(
        junit.contains("checks &gt; 95%") || junit.contains("checks > 95%"),
        "{junit}"
    );
    // A status the check lists is expected: a planned 404 is then no error.
    let dir = tmp();
    let r = run_plan(
        dir.path(),
        &text.replace("status = [200]", "status = [200, 404]"),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["success_ratio"], 1.0);
}

#[test]
fn open_model_journeys_start_at_the_rate_and_a_stall_shows_on_its_step_only() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            r#"think = "100ms"
steps = [ { name = "home", path = "/" }, { name = "slow", path = "/delay/200" }, { name = "last", path = "/" } ]"#,
            "rate = 20\nduration = \"2s\"",
        ),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let it = &r.json()["iterations"];
    assert_eq!(it["count"], 40, "20 journeys a second for 2 s");
    let achieved = r.json()["phases"][0]["open_model"]["achieved_rate"]
        .as_f64()
        .unwrap();
    assert!((achieved - 20.0).abs() < 0.5, "{achieved}");
    let p50 = |name: &str| {
        find(&r.json()["endpoints"], "name", name)["latency_ms"]["p50"]
            .as_f64()
            .unwrap()
    };
    assert!(p50("slow") >= 200.0, "{}", p50("slow"));
    // The think times (100 ms before each later step) are nobody's latency.
    assert!(
        p50("home") < 50.0 && p50("last") < 50.0,
        "{} {}",
        p50("home"),
        p50("last")
    );
    let duration = it["duration_ms"]["p50"].as_f64().unwrap();
    assert!(
        duration >= 400.0,
        "200 ms of stall and 200 of think: {duration}"
    );
}

#[test]
fn a_queue_feeder_gives_each_row_once_and_ends_the_run() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    std::fs::write(
        dir.path().join("users.csv"),
        "user,password\nann,a1\nbob,b2\ncid,c3\n",
    )
    .unwrap();
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            r#"feed = { file = "users.csv", strategy = "queue" }
steps = [ { name = "login", method = "POST", path = "/login", body = '{"user":"{{user}}","password":"{{password}}"}', check = { in = { json = "/token_type", equals = "Bearer" } } } ]"#,
            "concurrency = 2\nduration = \"20s\"",
        ),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["iterations"]["count"], 3);
    assert_eq!(server.stats.route(Route::Login), 3);
    assert!(
        r.json()["duration_s"].as_f64().unwrap() < 5.0,
        "ended when the rows did"
    );
}

#[test]
fn without_the_jar_a_step_may_send_its_own_cookie() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let url = format!("http://{}", server.addr);
    // The session id from the first answer's Set-Cookie, sent back by hand.
    let steps = r#"steps = [
  { path = "/session", capture = { sid = { header = "Set-Cookie", regex = "sid=([^;]+)" } } },
  { path = "/session", headers = { Cookie = "sid={{sid}}" }, check = { back = { json = "/returning", equals = "true" } } },
]"#;
    let dir = tmp();
    let r = run_plan(
        dir.path(),
        &plan(
            &url,
            &format!("cookies = false\n{steps}"),
            "concurrency = 1\nrequests = 5",
        ),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(check(&r, "back"), (5, 0));
    assert_eq!(server.stats.route(Route::SessionReturning), 5);
    // With the jar on, the jar writes Cookie: a step's own is refused before any load.
    let dir = tmp();
    let r = run_plan(
        dir.path(),
        &plan(&url, steps, "concurrency = 1\nrequests = 5"),
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("cookies = false to write Cookie yourself"),
        "{}",
        r.stderr()
    );
}

#[test]
fn journeys_mix_by_weight_exactly() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            r#"journeys = [
  { name = "browse", weight = 3, steps = [ { name = "home", path = "/" } ] },
  { name = "buy", weight = 1, steps = [ { name = "home", path = "/" }, { name = "pay", path = "/status/201" } ] },
]"#,
            "concurrency = 2\nrequests = 100",
        ),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(endpoint(&r, "browse: home"), 75);
    assert_eq!(endpoint(&r, "buy: home"), 25);
    assert_eq!(endpoint(&r, "buy: pay"), 25);
}

#[test]
fn a_journey_that_cannot_work_is_refused_before_any_load() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let url = format!("http://{}", server.addr);
    let cases: [(&str, i32, &str); 5] = [
        (
            r#"steps = [ { path = "/", group = "a" }, { path = "/x" }, { path = "/y", group = "a" } ]"#,
            2,
            "the steps of group 'a' must follow one another",
        ),
        (
            r#"steps = [ { path = "/items/{{idd}}" } ]"#,
            2,
            "'{{idd}}' names no capture, feeder column or corpus",
        ),
        (
            r#"steps = [ { path = "/items/{{id}}" }, { path = "/x", capture = { id = { json = "/id" } } } ]"#,
            2,
            "'{{id}}' has no value yet: it is captured only by a later step",
        ),
        (
            r#"steps = [ { path = "/", capture = { id = { json = "id" } } } ]"#,
            2,
            "'id' is no JSON pointer: write it from the root, as /id",
        ),
        (
            r#"setup = [ { name = "login", path = "/status/500" } ]
steps = [ { path = "/" } ]"#,
            3,
            "set-up step 'login' failed",
        ),
    ];
    for (workload, code, message) in cases {
        let dir = tmp();
        let r = run_plan(
            dir.path(),
            &plan(&url, workload, "concurrency = 1\nrequests = 5"),
        );
        assert_eq!(r.code(), code, "{workload}: {}", r.stderr());
        assert!(r.stderr().contains(message), "{workload}: {}", r.stderr());
        if code == 2 {
            assert!(
                r.stderr().contains("plan.toml:"),
                "names the file: {}",
                r.stderr()
            );
        }
    }
    assert_eq!(server.stats.route(Route::ItemsRead), 0);
}

/// A feeder's rows cost their text, not an allocation per cell (issue 47, item 7: 4 million
/// one-character rows, 8 MB, took 1.36 GB, 1.0 GB even in --dry-run). Two million rows (4 MB)
/// took about 520 MB in a dry run; now well under 300 MB (about 40 MB alone, 193 MB seen in
/// a full suite run, where the allocator keeps more of what it freed).
#[test]
fn a_feeder_of_two_million_rows_costs_its_text() {
    let dir = tmp();
    let mut csv = String::from("user\n");
    csv.push_str(&"a\n".repeat(2_000_000));
    std::fs::write(dir.path().join("users.csv"), csv).unwrap();
    let text = plan(
        "http://127.0.0.1:9",
        r#"feed = { file = "users.csv", strategy = "shuffle" }
steps = [ { name = "get", path = "/u/{{user}}" } ]"#,
        "concurrency = 1\nrequests = 10",
    );
    std::fs::write(dir.path().join("p.toml"), text).unwrap();
    // Reaped by wait4 below, which also gives its peak memory.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(["run", "p.toml", "--dry-run"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The child's own peak resident set, from the kernel's accounting of it.
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; the pid is this test's own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{status}"
    );
    let peak_mb = usage.ru_maxrss / 1024;
    assert!(peak_mb < 300, "2 million feeder rows took {peak_mb} MB");
}
