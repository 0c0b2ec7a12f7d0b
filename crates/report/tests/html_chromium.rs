//! The HTML report in a real browser: realistic results (a plan with a rate ladder, a repeated
//! constant scenario, checks and a monitor section; and a plain open-model run) rendered to one
//! page, checked as text and then opened in headless Chromium (Debian's `chromium` package):
//!
//! (a) it renders: the DOM Chromium dumps holds exactly the charts the fixture calls for;
//! (b) no console message: Chromium runs with `--enable-logging=stderr --v=0`, which prints
//!     every console message of the page as a `CONSOLE(line)` log line on stderr (whatever its
//!     level); the page has no script, so *any* such line is a failure. A probe page that
//!     calls `console.error` proves the detector sees one;
//! (c) no network: the HTML has no external reference (no src, no href but `#anchors`, no
//!     url(), no `//` in any attribute), and Chromium, run with every host name mapped to
//!     NOTFOUND and a net log, shows no URL request made for the page: the file:// page itself
//!     is read outside the network stack, so any URL_REQUEST that a document initiated (or
//!     that is isolated under the page's file:// site) is a failure. Chromium's own background
//!     requests (component updater, account list), which it makes whatever the page and despite
//!     the --disable-* flags, carry the initiator "not an origin" and are only listed. The probe
//!     page's `<img src="http://…">` proves the reader attributes a page's request to it;
//! (d) a screenshot (1280 × 4000) is written next to the page for a person to look at.
//!
//! Without Chromium the browser test prints a note and passes, unless
//! `PERFBASE_REQUIRE_SERVICES=1` demands it.

use perfbase_core::result::Measurement;
use perfbase_core::Recorder;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[path = "chromium/fixtures.rs"]
mod fixtures;
#[path = "chromium/trend_fixture.rs"]
mod trend_fixture;
use fixtures::{http_run, plan_run};
use trend_fixture::trend_fixture;

/// Charts the fixture calls for (see the rule in perfbase_report::html):
/// plan run: distribution, timeline, latency-vs-rate and achieved-vs-offered (one ladder),
/// boxplot (steady, 3 repetitions), monitor (CPU) and monitor-memory (RSS) = 7; http run: distribution, timeline = 2; with
/// both on one page, the comparison distribution chart = 1.
const PLAN_CHARTS: usize = 7;
const HTTP_CHARTS: usize = 2;
const PAGE_CHARTS: usize = PLAN_CHARTS + HTTP_CHARTS + 1;

fn charts_of(html: &str, kind: &str) -> usize {
    html.matches(&format!(r#"class="chart" data-chart="{kind}""#))
        .count()
}

/// Every attribute value in the page: (name, value).
fn attributes(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("=\"") {
        let name: String = rest[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == ':')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let after = &rest[i + 2..];
        let end = after.find('"').unwrap_or(after.len());
        out.push((name, after[..end].to_string()));
        rest = &after[end.min(after.len())..];
        rest = rest.get(1..).unwrap_or("");
    }
    out
}

fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    for banned in [
        "<script",
        "<link",
        "<img",
        "<iframe",
        "<object",
        "<embed",
        "@import",
        "url(",
        " src=",
        "srcset=",
        "xlink:href",
        "xmlns",
    ] {
        assert!(!lower.contains(banned), "the page contains {banned}");
    }
    let attrs = attributes(html);
    assert!(attrs.len() > 200, "attribute scan found too little");
    for (name, value) in attrs {
        let v = value.to_ascii_lowercase();
        assert!(
            !v.contains("://") && !v.starts_with("//") && !v.starts_with("data:"),
            "attribute {name}=\"{value}\" references something outside the page"
        );
        if name == "href" {
            assert!(
                value.starts_with('#'),
                "href=\"{value}\" is not an in-page anchor"
            );
        }
    }
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html_report");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn page_is_self_contained_escaped_and_has_the_expected_charts() {
    let plan = plan_run();
    let http = http_run();

    let one = perfbase_report::html::render(std::slice::from_ref(&plan));
    assert_eq!(one.matches(r#"class="chart""#).count(), PLAN_CHARTS);
    for kind in [
        "distribution",
        "timeline",
        "latency-vs-rate",
        "achieved-vs-offered",
        "boxplot",
        "monitor",
        "monitor-memory",
    ] {
        assert_eq!(charts_of(&one, kind), 1, "{kind}");
    }
    // The knee, the SLO line, pass/fail cells and the monitor table are there.
    assert!(one.contains(">knee "), "knee label");
    assert!(one.contains(">SLO p99 &lt; 50ms<"), "SLO line label");
    assert!(one.contains(r#"<td class="fail">FAIL</td>"#));
    assert!(one.contains(r#"<td class="pass">pass</td>"#));
    assert!(one.contains("Idle vs under load"));
    assert!(one.contains("checkout &lt;beta&gt; &amp; co"));
    assert!(!one.contains("<beta>"));

    let two = perfbase_report::html::render(std::slice::from_ref(&http));
    assert_eq!(two.matches(r#"class="chart""#).count(), HTTP_CHARTS);
    assert!(
        two.contains("service time"),
        "open model: service time shown"
    );
    assert!(!two.contains("<script>alert(1)"), "target escaped");
    assert!(two.contains("q=&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(two.contains("connection refused &lt;b&gt;(os error 111)&lt;/b&gt;"));

    let page = perfbase_report::html::render(&[plan, http]);
    assert_eq!(page.matches(r#"class="chart""#).count(), PAGE_CHARTS);
    assert_eq!(charts_of(&page, "distribution"), 3);
    assert_self_contained(&page);
    assert_self_contained(&one);
    assert_self_contained(&two);
    assert!(page.starts_with("<!DOCTYPE html>"));

    // A run with nothing measured draws no chart at all.
    let mut empty = http_run();
    let rec = Recorder::new(false);
    empty.measurement = Measurement::from_recorder(&rec, Duration::ZERO, None);
    let html = perfbase_report::html::render(&[empty]);
    assert_eq!(html.matches(r#"class="chart""#).count(), 0);
    assert!(perfbase_report::html::render(&[]).contains("No runs"));
}

// ---------------------------------------------------------------------------------------------
// Chromium

const CHROMIUM: &str = "/usr/bin/chromium";

/// Runs Chromium headless on `url` with a fresh profile; kills it after 90 s.
fn chromium(extra: &[String], url: &str) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(CHROMIUM);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(extra)
    .arg(url)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(90);
    // Drain the pipes on threads so a chatty Chromium never blocks on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut so, &mut b);
        b
    });
    let t_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut se, &mut b);
        b
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Console messages Chromium logged (`--enable-logging=stderr --v=0` prints each as
/// `[pid:tid:time:LEVEL:CONSOLE(line)] "message", source: URL (line)`).
fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// One URL request from a Chromium net log.
#[derive(Debug)]
struct Request {
    url: String,
    /// The origin of the document that asked for it; "not an origin" for the browser's own
    /// requests (component updater, account and time services), which no page initiated.
    initiator: String,
    network_isolation_key: String,
}

impl Request {
    /// Whether a document (the page, or anything it loaded) asked for this URL: a document
    /// initiator, or a request isolated under the file:// site of the page.
    fn made_for_a_page(&self) -> bool {
        self.initiator != "not an origin" || self.network_isolation_key.contains("file://")
    }
}

/// Every URL_REQUEST in a Chromium net log, from its URL_REQUEST_START_JOB event. The log is
/// JSON: `{"constants": {"logEventTypes": {..}, "logSourceType": {"URL_REQUEST": n, ..}},
/// "events": [{"source": {"type": n}, "type": t, "params": {"url": .., "initiator": ..}}, ..]}`;
/// a log cut short at exit is closed before parsing.
fn url_requests(netlog: &Path) -> Vec<Request> {
    let text = std::fs::read_to_string(netlog).expect("net log written");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| {
        let t = text.trim_end().trim_end_matches(',');
        serde_json::from_str(&format!("{t}]}}")).expect("net log is JSON")
    });
    let url_request = v["constants"]["logSourceType"]["URL_REQUEST"]
        .as_u64()
        .expect("net log constants name URL_REQUEST");
    let start_job = v["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        .as_u64()
        .expect("net log constants name URL_REQUEST_START_JOB");
    let text = |x: &Value| x.as_str().unwrap_or_default().to_string();
    v["events"]
        .as_array()
        .expect("net log events")
        .iter()
        .filter(|e| {
            e["source"]["type"].as_u64() == Some(url_request)
                && e["type"].as_u64() == Some(start_job)
                && e["params"]["url"].is_string()
        })
        .map(|e| Request {
            url: text(&e["params"]["url"]),
            initiator: text(&e["params"]["initiator"]),
            network_isolation_key: text(&e["params"]["network_isolation_key"]),
        })
        .collect()
}

fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

#[test]
fn renders_in_headless_chromium_without_errors_or_network() {
    if !Path::new(CHROMIUM).exists() {
        if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
            panic!("{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium)");
        }
        eprintln!(
            "note: {CHROMIUM} not found, skipping the browser checks (apt-get install chromium)"
        );
        return;
    }
    let dir = out_dir();
    let page = dir.join("report.html");
    let html = perfbase_report::html::render(&[plan_run(), http_run()]);
    std::fs::write(&page, &html).unwrap();
    let url = file_url(&page);
    let no_dns = r#"--host-resolver-rules=MAP * ~NOTFOUND"#.to_string();
    let logging = ["--enable-logging=stderr".to_string(), "--v=0".to_string()];

    // The detectors first: a page that logs a console error and asks for a remote image.
    let probe = dir.join("probe.html");
    std::fs::write(
        &probe,
        "<!DOCTYPE html><html><body><p>probe</p><img src=\"http://probe.invalid/x.png\">\
         <script>console.error('perfbase-probe-error')</script></body></html>",
    )
    .unwrap();
    let probe_log = dir.join("probe-netlog.json");
    let _ = std::fs::remove_file(&probe_log);
    let mut args = vec![
        "--dump-dom".to_string(),
        no_dns.clone(),
        format!("--log-net-log={}", probe_log.display()),
    ];
    args.extend(logging.iter().cloned());
    let out = chromium(&args, &file_url(&probe));
    let console = console_lines(&out.stderr);
    assert!(
        console.iter().any(|l| l.contains("perfbase-probe-error")),
        "the console detector must see the probe's console.error; stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = url_requests(&probe_log);
    assert!(
        requests
            .iter()
            .any(|r| r.url.starts_with("http://probe.invalid/") && r.made_for_a_page()),
        "the net-log reader must see the probe's image request as the page's: {requests:#?}"
    );

    // (a), (b), (c): the report.
    let netlog = dir.join("report-netlog.json");
    let _ = std::fs::remove_file(&netlog);
    let mut args = vec![
        "--dump-dom".to_string(),
        no_dns.clone(),
        format!("--log-net-log={}", netlog.display()),
    ];
    args.extend(logging.iter().cloned());
    let out = chromium(&args, &url);
    assert!(out.status.success(), "chromium failed: {:?}", out.status);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        dom.matches(r#"class="chart""#).count(),
        PAGE_CHARTS,
        "charts in the rendered DOM"
    );
    // The DOM Chromium built has every chart as SVG with drawn content.
    assert_eq!(dom.matches("<svg ").count(), PAGE_CHARTS);
    assert!(dom.matches("<path ").count() >= 10);
    let console = console_lines(&out.stderr);
    assert!(console.is_empty(), "console messages: {console:#?}");
    // Chromium's own background requests (component updater, account list; all failing
    // here, every host name resolves to NOTFOUND) happen whatever the page is, despite the
    // --disable-* flags: they are listed, not counted against the page.
    let requests = url_requests(&netlog);
    let from_page: Vec<&Request> = requests
        .iter()
        .filter(|r| r.made_for_a_page() && r.url != url)
        .collect();
    assert!(from_page.is_empty(), "the page requested: {from_page:#?}");
    for r in requests.iter().filter(|r| !r.made_for_a_page()) {
        eprintln!("(browser's own request, not the page's: {})", r.url);
    }

    // (d): a screenshot to look at.
    let shot = dir.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,4000".to_string(),
            "--hide-scrollbars".to_string(),
            no_dns,
        ],
        &url,
    );
    assert!(
        out.status.success(),
        "chromium screenshot failed: {:?}",
        out.status
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 50_000,
        "screenshot looks empty"
    );
    eprintln!("report: {}\nscreenshot: {}", page.display(), shot.display());
}

#[test]
fn the_trend_page_renders_in_chromium_with_a_chart_per_series() {
    let html = perfbase_report::trend::html::render(&trend_fixture(), "Trend: nightly");
    assert_self_contained(&html);
    assert_eq!(charts_of(&html, "trend"), 2);
    // Labels from the store are escaped where they show (the hover titles).
    assert!(
        html.contains("GIT_COMMIT=c007&lt;&amp;&gt;"),
        "labels escaped"
    );
    assert!(!html.contains("c007<&>"));
    // The burst is drawn apart, named in the caption, and kept out of the segment's step.
    assert!(
        html.contains("run 5: 2,700/s, burst (outlier event)"),
        "burst dot"
    );
    assert!(html.contains("burst at run 5 (1 run, +200.0 % off its segment)"));
    if !Path::new(CHROMIUM).exists() {
        if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
            panic!("{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium)");
        }
        return;
    }
    let dir = out_dir();
    let page = dir.join("trend.html");
    std::fs::write(&page, &html).unwrap();
    let url = file_url(&page);
    let netlog = dir.join("trend-netlog.json");
    let _ = std::fs::remove_file(&netlog);
    let args = vec![
        "--dump-dom".to_string(),
        r#"--host-resolver-rules=MAP * ~NOTFOUND"#.to_string(),
        format!("--log-net-log={}", netlog.display()),
        "--enable-logging=stderr".to_string(),
        "--v=0".to_string(),
    ];
    let out = chromium(&args, &url);
    assert!(out.status.success(), "chromium failed: {:?}", out.status);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert_eq!(dom.matches("<svg ").count(), 2, "a drawn chart per series");
    // The runs' line and the segment means' steps in each chart.
    assert!(dom.matches("<path ").count() >= 4);
    assert!(
        dom.contains("+21.0 % worse"),
        "the change point's line is labelled"
    );
    assert!(dom.contains("environment changed"));
    let console = console_lines(&out.stderr);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let requests = url_requests(&netlog);
    let from_page: Vec<&Request> = requests
        .iter()
        .filter(|r| r.made_for_a_page() && r.url != url)
        .collect();
    assert!(from_page.is_empty(), "the page requested: {from_page:#?}");
}
