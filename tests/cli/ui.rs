//! `perfbase ui` over real stores of real runs: the pages in headless Chromium (runs, a
//! filter, a run, A vs B against a baseline, a plan's trend; their figures against the store,
//! no console error, no request elsewhere), on SQLite and on PostgreSQL; a run agents do while
//! the UI is open, under Live and then under Runs; and who is answered (a token for
//! --allow-remote, Host checked, GET and HEAD only, no CORS).

use crate::browser::{tool, Browser};
use crate::common::*;
use perfbase_store::{RunQuery, Store};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `perfbase ui` process, killed at the end.
struct Ui {
    child: Child,
    port: u16,
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `perfbase ui --store STORE ARGS…` and reads its port from its first line.
fn start_ui(store: &str, args: &[&str], env: &[(&str, &str)]) -> Ui {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(["ui", "--store", store])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let port = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|addr| addr.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the first line names the address: {line}"));
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    Ui { child, port }
}

/// One raw request: the status line, the head and the body.
fn request(port: u16, head: &str) -> (String, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (h, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = h.lines().next().unwrap_or("").to_string();
    (status, h.to_string(), body.to_string())
}

fn get(port: u16, path: &str, host: &str, extra: &str) -> (String, String, String) {
    request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"),
    )
}

/// `count` runs of each of two plans, alternating, against the reference service; the first
/// run of `plans.0` named as baseline `baseline`.
fn fill(dir: &Path, store: &str, plans: (&str, &str), count: usize, baseline: &str) {
    let server = perfbase_reference::spawn(0).unwrap();
    for i in 0..count * 2 {
        let plan = if i % 2 == 0 { plans.0 } else { plans.1 };
        let text = format!(
            "[plan]\nname = \"{plan}\"\nmin_run_time = \"50ms\"\nmin_run_ops = 1\n\
             [targets.api]\nurl = \"http://{}\"\n[workloads.w]\ntarget = \"api\"\npath = \"/\"\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 200\nduration = \"200ms\"\n",
            server.addr
        );
        let r = run_plan_with(dir, &text, |c| {
            c.env("PERFBASE_STORE", store)
                .args(["--label", "token=s3cr3t-label"]);
        });
        assert_eq!(r.code(), 0, "{}", r.stderr());
        if i == 0 {
            let (code, _, err) = pb(
                dir,
                &["baseline", "--store", store, "set", baseline, "latest"],
            );
            assert_eq!(code, 0, "{err}");
        }
    }
}

/// Waits for a page whose script `ready` is true, after going to `url`.
fn open(b: &mut Browser, url: &str, ready: &str) {
    b.goto(url);
    wait_for(20, url, || (b.eval(ready) == json!(true)).then_some(()));
}

/// The runs listed on the page: (id, plan, p50 cell).
const ROWS: &str = r#"JSON.stringify([...document.querySelectorAll("table.runs tr")].slice(1).map((tr) =>
  [Number(tr.children[0].textContent), tr.children[2].textContent, tr.children[11].textContent,
   tr.children[6].textContent]))"#;

fn rows(b: &mut Browser) -> Vec<(i64, String, String, String)> {
    let v = b.eval(ROWS);
    serde_json::from_str(v.as_str().unwrap()).unwrap()
}

/// Browses the store in Chromium as a user would and checks each page against the store.
fn browse(store: &str, plans: (&str, &str), baseline: &str, shots: bool) {
    let ui = start_ui(store, &["--listen", "127.0.0.1:0"], &[]);
    let base = format!("http://127.0.0.1:{}", ui.port);
    let mut b = Browser::start();
    for domain in ["Runtime.enable", "Log.enable", "Network.enable"] {
        b.call(domain, json!({}));
    }
    let mut db = Store::open(store).unwrap();
    let shot = |b: &mut Browser, name: &str| {
        if shots {
            b.screenshot(&screenshots().join(name));
        }
    };
    the_runs(&mut b, &base, &mut db);
    shot(&mut b, "ui-runs.png");
    let newest = filtered(&mut b, &mut db, plans.0);
    a_run(&mut b, &newest);
    shot(&mut b, "ui-run.png");
    against(&mut b, baseline);
    shot(&mut b, "ui-compare.png");
    the_plan(&mut b, &base, plans.0);
    shot(&mut b, "ui-plan.png");
    nothing_went_wrong(&mut b, &base);
}

/// The runs page: its count is the store's, and it lists a page of them.
fn the_runs(b: &mut Browser, base: &str, db: &mut Store) {
    // The runs, newest first.
    open(
        b,
        &format!("{base}/"),
        "document.body.dataset.page === 'runs'",
    );
    let total: u64 = b
        .eval("Number(document.querySelector('#count').dataset.total)")
        .as_u64()
        .unwrap();
    let all = db
        .browse(&RunQuery {
            limit: 1,
            ..RunQuery::default()
        })
        .unwrap();
    assert_eq!(total, all.total);
    assert_eq!(rows(b).len(), total.min(50) as usize);
}

/// The runs of `plan`, through the form: each row's figures are the store's, its secret label
/// redacted. Returns the newest.
fn filtered(b: &mut Browser, db: &mut Store, plan: &str) -> perfbase_store::BrowsedRun {
    // Filtered by plan, through the form.
    let submit = format!(
        "document.querySelector('select[name=plan]').value = {}; \
         document.querySelector('form.filter').submit(); true",
        json!(plan)
    );
    b.eval(&submit);
    wait_for(20, "the filtered page", || {
        (b.eval("location.search.includes('plan=') && document.readyState === 'complete'")
            == json!(true))
        .then_some(())
    });
    let listed = rows(b);
    let stored = db
        .browse(&RunQuery {
            plan: Some(plan.into()),
            limit: 50,
            ..RunQuery::default()
        })
        .unwrap();
    assert_eq!(listed.len(), stored.runs.len());
    for (row, run) in listed.iter().zip(&stored.runs) {
        assert_eq!(row.0, run.summary.id);
        assert_eq!(row.1, plan);
        assert_eq!(row.2, perfbase_report::study_text::ms(run.summary.p50_ms));
        assert!(
            row.3.contains("token=[redacted]") && !row.3.contains("s3cr3t"),
            "{row:?}"
        );
    }
    stored.runs[0].clone()
}

/// A run's page, from its link in the list: its report's tables, charts and figures.
fn a_run(b: &mut Browser, run: &perfbase_store::BrowsedRun) {
    // A run, from its link.
    let newest = run.summary.id;
    b.eval("document.querySelector('table.runs a').click(); true");
    let ready =
        format!("location.pathname === '/runs/{newest}' && document.readyState === 'complete'");
    wait_for(20, "the run's page", || {
        (b.eval(&ready) == json!(true)).then_some(())
    });
    let page: Value = b.eval(
        "({h1: document.querySelector('h1').textContent, charts: document.querySelectorAll('svg.chart').length, \
          tables: document.querySelectorAll('table').length, text: document.body.innerText})",
    );
    assert_eq!(page["h1"], format!("Run {newest}"));
    assert!(page["charts"].as_u64().unwrap() >= 1, "{}", page["charts"]);
    assert!(page["tables"].as_u64().unwrap() >= 3);
    let requests = perfbase_report::thousands(run.summary.requests);
    assert!(page["text"].as_str().unwrap().contains(&requests));
}

/// The run against the baseline, chosen in its page's form.
fn against(b: &mut Browser, baseline: &str) {
    // Against the baseline, chosen in the run's form.
    let choose = format!(
        "document.querySelector('select[name=b]').value = {}; \
         document.querySelector('form[action=\"/compare\"]').submit(); true",
        json!(format!("baseline:{baseline}"))
    );
    b.eval(&choose);
    wait_for(20, "the comparison", || {
        (b.eval("location.pathname === '/compare' && document.readyState === 'complete'")
            == json!(true))
        .then_some(())
    });
    let compared: Value = b.eval(
        "({verdict: document.querySelector('#verdict').textContent, tables: document.querySelectorAll('table.verdicts').length, \
          charts: document.querySelectorAll('svg.chart').length, search: location.search})",
    );
    assert!(compared["tables"].as_u64().unwrap() >= 1, "{compared}");
    assert!(compared["charts"].as_u64().unwrap() >= 1, "{compared}");
    assert!(
        compared["search"].as_str().unwrap().contains("baseline"),
        "shareable by its URL: {compared}"
    );
}

/// The plan's page: a chart per series, the gate, the baseline.
fn the_plan(b: &mut Browser, base: &str, plan: &str) {
    // The plan's trend.
    let plan_url = format!("{base}/plans/{plan}");
    open(b, &plan_url, "document.body.dataset.page === 'plans'");
    let trend: Value = b.eval(
        "({charts: document.querySelectorAll('svg.chart').length, gate: !!document.querySelector('#gate'), \
          baselines: document.querySelectorAll('table.baselines tr').length})",
    );
    assert_eq!(trend["charts"], 4, "p50, p99, rps and error_rate: {trend}");
    assert_eq!(trend["gate"], true, "{trend}");
    assert_eq!(
        trend["baselines"], 2,
        "its head and the one baseline: {trend}"
    );
}

/// No console error or exception in any page, and no request to another address.
fn nothing_went_wrong(b: &mut Browser, base: &str) {
    // Nothing went wrong in the page, and nothing was fetched from elsewhere.
    b.eval("true");
    for e in &b.events {
        let method = e["method"].as_str().unwrap_or("");
        let p = &e["params"];
        assert!(method != "Runtime.exceptionThrown", "{e}");
        assert!(
            !(method == "Runtime.consoleAPICalled" && p["type"] == "error"),
            "{e}"
        );
        assert!(
            !(method == "Log.entryAdded" && p["entry"]["level"] == "error"),
            "{e}"
        );
        if method == "Network.requestWillBeSent" {
            let url = p["request"]["url"].as_str().unwrap_or("");
            assert!(url.starts_with(base) || url.starts_with("data:"), "{url}");
        }
    }
}

fn screenshots() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_pages_show_the_stored_runs_in_chromium() {
    let Some(_) = tool("/usr/bin/chromium") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    let store = dir.path().join("ui.db");
    let store = store.to_str().unwrap();
    fill(dir.path(), store, ("checkout", "search"), 20, "release");
    browse(store, ("checkout", "search"), "release", true);
}

#[test]
fn the_pages_show_the_runs_of_a_postgresql_store() {
    let Some(url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    let Some(_) = tool("/usr/bin/chromium") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // The shared database holds other tests' runs: this test's plans are its own.
    let tag = std::process::id();
    let (a, b) = (format!("ui-a-{tag}"), format!("ui-b-{tag}"));
    let baseline = format!("ui-{tag}");
    fill(dir.path(), &url, (&a, &b), 4, &baseline);
    browse(&url, (&a, &b), &baseline, false);
}

#[test]
fn a_run_agents_do_shows_under_live_then_under_runs() {
    let Some(_) = tool("/usr/bin/chromium") else {
        return;
    };
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let store = dir.path().join("live.db");
    let store = store.to_str().unwrap();
    // The store exists (migrated) before the UI opens it.
    Store::open(store).unwrap();
    let ui = start_ui(store, &["--listen", "127.0.0.1:0"], &[]);
    let base = format!("http://127.0.0.1:{}", ui.port);
    let mut b = Browser::start();
    let plan = dir.path().join("live.toml");
    std::fs::write(
        &plan,
        format!(
            "[plan]\nname = \"nightly\"\n[targets.api]\nurl = \"http://{}\"\n[workloads.w]\n\
             target = \"api\"\npath = \"/\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\n\
             rate = 200\nduration = \"6s\"\n",
            server.addr
        ),
    )
    .unwrap();
    let mut agent = Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .arg("agent")
        .arg(&plan)
        .args([
            "--segment",
            "0/1",
            "--run-id",
            "ui-live",
            "-q",
            "--store",
            store,
            "--out",
        ])
        .arg(dir.path().join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(30, "the run under Live", || {
        b.goto(&format!("{base}/live"));
        (b.eval("!!document.querySelector('a[href=\"/live/ui-live/\"]')") == json!(true))
            .then_some(())
    });
    b.eval("document.querySelector('a[href=\"/live/ui-live/\"]').click(); true");
    wait_for(20, "the live view's frames", || {
        (b.eval("Number(document.body.dataset.frames || 0) >= 2") == json!(true)).then_some(())
    });
    assert_eq!(agent.wait().unwrap().code(), Some(0));
    let id = wait_for(30, "the live view turned into the run's page", || {
        let path = b.eval("location.pathname");
        path.as_str()?.strip_prefix("/runs/")?.parse::<i64>().ok()
    });
    open(
        &mut b,
        &format!("{base}/"),
        "document.body.dataset.page === 'runs'",
    );
    let listed = rows(&mut b);
    assert_eq!(
        listed.first().map(|r| (r.0, r.1.as_str())),
        Some((id, "nightly")),
        "{listed:?}"
    );
}

#[test]
fn remote_pages_need_the_token_a_known_host_and_only_read() {
    let dir = tmp();
    let store = dir.path().join("r.db");
    let store = store.to_str().unwrap();
    Store::open(store).unwrap();
    let token = "0123456789abcdef-ui-token";
    // A remote address needs --allow-remote, and --allow-remote a token from the environment.
    for (args, env, says) in [
        (vec!["--listen", "0.0.0.0:0"], vec![], "--allow-remote"),
        (
            vec!["--listen", "0.0.0.0:0", "--allow-remote"],
            vec![],
            "PERFBASE_UI_TOKEN",
        ),
        (
            vec!["--listen", "0.0.0.0:0", "--allow-remote"],
            vec![("PERFBASE_UI_TOKEN", "short")],
            "at least 16",
        ),
        (vec!["--listen", "nowhere"], vec![], "not an address"),
    ] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .args(["ui", "--store", store])
            .args(&args)
            .env_remove("PERFBASE_UI_TOKEN")
            .envs(env)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    remote(store, token);
    // On loopback, no token, but a name other than localhost or an address is refused.
    let ui = start_ui(store, &["--listen", "127.0.0.1:0"], &[]);
    let (status, _, _) = get(ui.port, "/", "evil.example", "");
    assert!(status.contains("403"), "{status}");
    let (status, _, _) = get(ui.port, "/", &format!("localhost:{}", ui.port), "");
    assert!(status.contains("200"), "{status}");
    // An oversized head is refused, not read without end.
    let (status, _, _) = get(
        ui.port,
        "/",
        "127.0.0.1",
        &"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(500),
    );
    assert!(status.contains("400"), "{status}");
    // Bytes that are not text get their 400 too, not a silent close.
    let mut s = TcpStream::connect(("127.0.0.1", ui.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"\xff\xfe\x00 / HTTP/1.1\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
}

/// A UI on all addresses: the token (Bearer or the cookie a `?token=` visit sets), a known
/// Host, GET and HEAD only, no CORS.
fn remote(store: &str, token: &str) {
    let ui = start_ui(
        store,
        &[
            "--listen",
            "0.0.0.0:0",
            "--allow-remote",
            "--public-name",
            "perf.example",
        ],
        &[("PERFBASE_UI_TOKEN", token)],
    );
    let host = format!("127.0.0.1:{}", ui.port);
    let bearer = format!("Authorization: Bearer {token}\r\n");
    let (status, head, _) = get(ui.port, "/", &host, "");
    assert!(status.contains("401"), "{status}");
    assert!(head.contains("WWW-Authenticate: Bearer"), "{head}");
    let (status, _, _) = get(
        ui.port,
        "/",
        &host,
        "Authorization: Bearer wrong-token-of-some-length\r\n",
    );
    assert!(status.contains("401"), "{status}");
    let (status, head, body) = get(ui.port, "/", &host, &bearer);
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("<h1>Runs</h1>"));
    assert!(
        !head.to_ascii_lowercase().contains("access-control"),
        "{head}"
    );
    let (status, _, _) = get(ui.port, "/", "perf.example", &bearer);
    assert!(status.contains("200"), "a --public-name: {status}");
    let (status, _, _) = get(ui.port, "/", "evil.example", &bearer);
    assert!(status.contains("403"), "a foreign Host: {status}");
    // ?token= once: a cookie, and the token gone from the address.
    let (status, head, _) = get(ui.port, &format!("/plans?token={token}&x=1"), &host, "");
    assert!(status.contains("303"), "{status}");
    assert!(head.contains("Location: /plans?x=1\r\n"), "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("Set-Cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    assert!(
        head.contains("HttpOnly") && head.contains("SameSite=Strict"),
        "{head}"
    );
    let (status, _, _) = get(ui.port, "/plans", &host, &format!("Cookie: {cookie}\r\n"));
    assert!(status.contains("200"), "{status}");
    // Read-only: no method but GET and HEAD.
    for method in ["POST", "DELETE", "PUT"] {
        let (status, head, _) = request(
            ui.port,
            &format!("{method} / HTTP/1.1\r\nHost: {host}\r\n{bearer}Content-Length: 0\r\nConnection: close\r\n\r\n"),
        );
        assert!(status.contains("405"), "{method}: {status}");
        assert!(head.contains("Allow: GET, HEAD"), "{head}");
    }
}
