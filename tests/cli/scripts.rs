//! Scripted workloads end to end against the reference service: a JavaScript journey's
//! exact counts and checks, a stall on its own request, the open model's clock through a
//! script's steps, and bad scripts (syntax, exceptions, loops, allocations, files outside
//! the script's folder) failing as they should while the run goes on.

use crate::common::*;
use perfbase_reference::Route;
use std::path::Path;

/// A plan over `url` whose workload runs DIR/`script` (with `extra` workload lines), and
/// the scenario lines `scenario`.
fn plan(url: &str, script: &str, extra: &str, scenario: &str) -> String {
    format!(
        "[plan]\nname = \"scripts\"\n\n[targets.api]\nurl = \"{url}\"\n\n\
         [workloads.s]\ntarget = \"api\"\nscript = \"{script}\"\n{extra}\n\n[[scenarios]]\n\
         name = \"s\"\nworkload = \"s\"\n{scenario}\n"
    )
}

fn run_plan(dir: &Path, text: &str) -> Run {
    run_plan_with(dir, text, |_| {})
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn endpoint<'a>(r: &'a Run, name: &str) -> &'a serde_json::Value {
    find(&r.json()["endpoints"], "name", name)
}

fn check(r: &Run, name: &str) -> (u64, u64) {
    let c = find(&r.json()["checks"], "name", name);
    (c["passed"].as_u64().unwrap(), c["failed"].as_u64().unwrap())
}

/// The bench's journey: log in once in setup, then create, read and delete with the token.
const CRUD: &str = r#"
import http from "perfbase/http";
import { check, group, sleep } from "perfbase";
import { sha256, hmac } from "perfbase/crypto";

export async function setup() {
  const res = await http.post("/login", JSON.stringify({ user: "u", password: "p" }),
    { headers: { "Content-Type": "application/json" } });
  return { token: res.json().access_token };
}

export default async function (data) {
  const auth = { Authorization: "Bearer " + data.token, "X-Sig": hmac("sha256", __ENV.API_SECRET, "x", "hex") };
  await group("item", async () => {
    const created = await http.post("/items", JSON.stringify({ name: "x", sum: sha256("x") }),
      { headers: auth, name: "create" });
    check(created, { "created": (r) => r.status === 201 });
    const id = created.json().id;
    const read = await http.get(`/items/${id}`, { headers: auth, name: "read" });
    check(read, { "same": (r) => r.json("id") === id });
    const gone = await http.del(`/items/${id}`, null, { headers: auth, name: "delete" });
    check(gone, { "gone": (r) => r.status === 204 });
  });
  if (__ITER === 1 && __VU === 1) console.log("secret is", __ENV.API_SECRET);
}
"#;

#[test]
fn a_thousand_script_journeys_make_exactly_a_thousand_of_each_request() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    write(dir.path(), "crud.js", CRUD);
    let text = plan(
        &format!("http://{}", server.addr),
        "crud.js",
        "env = { API_SECRET = \"s3cr3t-of-the-script\" }",
        "concurrency = 4\nrequests = 1000",
    );
    let r = run_plan(dir.path(), &text);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    validate(r.json());
    let s = &server.stats;
    assert_eq!(s.route(Route::Login), 1, "setup() runs once");
    for route in [Route::ItemsCreate, Route::ItemsRead, Route::ItemsDelete] {
        assert_eq!(s.route(route), 1000, "{route:?}");
    }
    assert_eq!(s.route(Route::Unauthorized), 0);
    assert_eq!(r.json()["requests"], 3000, "no request but the script's");
    for name in ["item: create", "item: read", "item: delete"] {
        assert_eq!(endpoint(&r, name)["requests"], 1000, "{name}");
    }
    for c in ["created", "same", "gone"] {
        assert_eq!(check(&r, c), (1000, 0), "{c}");
    }
    let it = &r.json()["iterations"];
    assert_eq!(
        (it["count"].as_u64(), it["failed"].as_u64()),
        (Some(1000), Some(0))
    );
    assert_eq!(find(&r.json()["groups"], "name", "item")["count"], 1000);
    // The secret the script printed and signed with is nowhere in the outputs.
    let result = std::fs::read_to_string(dir.path().join("out/result.json")).unwrap();
    for text in [r.stdout(), r.stderr(), result] {
        assert!(!text.contains("s3cr3t-of-the-script"), "{text}");
    }
    assert!(r.stderr().contains("secret is"), "{}", r.stderr());
}

#[test]
fn a_stall_lands_on_its_request_and_the_open_model_keeps_its_clock() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    write(
        dir.path(),
        "stall.js",
        r#"import http from "k6/http";
import { sleep } from "k6";
export default async function () {
  await http.get("/", { name: "home" });
  sleep(0.1);
  await http.get("/delay/200", { name: "slow" });
  sleep(0.1);
  await http.get("/", { name: "last" });
}
"#,
    );
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            "stall.js",
            "",
            "rate = 20\nduration = \"2s\"",
        ),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let it = &r.json()["iterations"];
    assert_eq!(it["count"], 40, "20 iterations a second for 2 s");
    let achieved = r.json()["phases"][0]["open_model"]["achieved_rate"]
        .as_f64()
        .unwrap();
    assert!((achieved - 20.0).abs() < 0.5, "{achieved}");
    let p50 = |name: &str| endpoint(&r, name)["latency_ms"]["p50"].as_f64().unwrap();
    assert!(p50("slow") >= 200.0, "{}", p50("slow"));
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
fn a_syntax_error_stops_the_run_before_any_load_with_its_line() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    write(
        dir.path(),
        "bad.js",
        "export default async function () {\n  let x = ;\n}\n",
    );
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            "bad.js",
            "",
            "concurrency = 1\nrequests = 10",
        ),
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let e = r.stderr();
    assert!(e.contains("bad.js:2:11") && e.contains("let x = ;"), "{e}");
    assert!(e.contains("workloads.s.script"), "{e}");
    assert_eq!(server.stats.requests(), 0, "no load");
}

#[test]
fn exceptions_loops_and_allocations_fail_their_iteration_only() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    write(
        dir.path(),
        "faults.js",
        r#"import http from "perfbase/http";
export default async function () {
  await http.get("/", { name: "home" });
  if (__ITER % 10 === 3) throw new Error("boom");
  if (__VU === 1 && __ITER === 5) { while (true) {} }
  if (__VU === 2 && __ITER === 5) { const big = new Uint8Array(1 << 30); big[0] = 1; }
  if (__VU === 3 && __ITER === 5) open("x.txt");
}
"#,
    );
    let started = std::time::Instant::now();
    let r = run_plan(
        dir.path(),
        &plan(
            &format!("http://{}", server.addr),
            "faults.js",
            "",
            "concurrency = 4\nduration = \"3s\"",
        ),
    );
    assert!(started.elapsed().as_secs() < 20, "the run ends on time");
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let j = r.json();
    let iterations = j["iterations"]["count"].as_u64().unwrap();
    let failed = j["iterations"]["failed"].as_u64().unwrap();
    let script = j["errors"]["script"].as_u64().unwrap();
    assert!(iterations > 100, "{iterations}");
    assert_eq!(failed, script, "every failed iteration is one script error");
    assert!(
        script >= iterations / 10 && script <= iterations / 10 + 8,
        "{script} of {iterations}"
    );
    assert_eq!(
        endpoint(&r, "home")["requests"],
        iterations,
        "each iteration's request counted"
    );
    let samples = serde_json::to_string(&j["error_samples"]).unwrap();
    for expected in [
        "Error: boom",
        "faults.js:4",
        "interrupted",
        "out of memory",
        "open() reads files",
    ] {
        assert!(samples.contains(expected), "{expected}: {samples}");
    }
}

#[test]
fn a_script_reads_and_imports_only_inside_its_folder_and_has_no_sockets() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let root = tmp();
    let dir = root.path().join("s");
    std::fs::create_dir(&dir).unwrap();
    write(root.path(), "secret.txt", "top secret");
    write(&dir, "users.csv", "name,pass\nann,a1\nbob,b2\n");
    write(&dir, "lib.js", "export const greeting = 'hi';\n");
    let url = format!("http://{}", server.addr);
    let cases = [
        (
            "const s = open('../secret.txt');\n",
            "only inside its own folder",
        ),
        (
            "import { x } from '../secret.js';\n",
            "only files inside its own folder",
        ),
        ("import * as os from 'os';\n", "no such module"),
        ("import exec from 'k6/execution';\n", "use __VU and __ITER"),
    ];
    for (line, expected) in cases {
        write(
            &dir,
            "t.js",
            &format!("{line}export default async function () {{}}\n"),
        );
        let r = run_plan(
            &dir,
            &plan(&url, "t.js", "", "concurrency = 1\nrequests = 1"),
        );
        assert_eq!(r.code(), 2, "{line}: {}", r.stderr());
        assert!(r.stderr().contains(expected), "{line}: {}", r.stderr());
    }
    // Inside the folder: a CSV shared by every user, an import; no socket API in sight.
    write(
        &dir,
        "t.js",
        r#"import http from "perfbase/http";
import { check } from "perfbase";
import { SharedArray, parseCSV } from "perfbase/data";
import { greeting } from "./lib.js";
const users = new SharedArray("users", () => parseCSV(open("users.csv")));
export default async function () {
  const u = users[__ITER % users.length];
  const res = await http.get("/?user=" + u.name, { name: "home" });
  check(res, {
    "two users": () => users.length === 2 && greeting === "hi",
    "no sockets": () => typeof fetch === "undefined" && typeof require === "undefined" &&
      typeof XMLHttpRequest === "undefined" && typeof WebSocket === "undefined",
    "frozen": () => Object.isFrozen(users),
    "headers": (r) => Object.keys(r.headers).length > 0 && r.timings.duration >= 0 && __VU >= 1,
  });
}
"#,
    );
    let r = run_plan(
        &dir,
        &plan(&url, "t.js", "", "concurrency = 1\nrequests = 20"),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    for c in ["two users", "no sockets", "frozen", "headers"] {
        assert_eq!(check(&r, c), (20, 0), "{c}");
    }
}

#[test]
fn the_script_command_runs_a_script_with_its_flags() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    write(
        dir.path(),
        "q.js",
        r#"import http from "perfbase/http";
export async function browse() { await http.get("/bytes/" + __ENV.ITEM); }
"#,
    );
    let out = assert_cmd::Command::cargo_bin("perfbase")
        .unwrap()
        .arg("script")
        .arg(dir.path().join("q.js"))
        .args([
            "--url",
            &format!("http://{}", server.addr),
            "--function",
            "browse",
        ])
        .args(["-e", "ITEM=7", "-c", "2", "-n", "50", "-q", "--json"])
        .arg(dir.path().join("r.json"))
        .env("PERFBASE_STORE", dir.path().join("results.db"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    // One endpoint, named by its template.
    let e = find(&j["endpoints"], "name", "GET /bytes/{id}");
    assert_eq!(e["requests"], 50);
    assert_eq!(j["iterations"]["count"], 50);
}
