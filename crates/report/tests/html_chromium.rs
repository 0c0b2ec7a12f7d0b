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

use perfbase_analysis::knee::{find_knee, KneeRule};
use perfbase_analysis::slo::operating_point;
use perfbase_analysis::study::{
    repetition_stats, CheckVerdict, PhaseVerdict, ScenarioStudy, Study,
};
use perfbase_analysis::sweep::{step_row, Offered};
use perfbase_analysis::threshold::{parse_threshold, Threshold};
use perfbase_core::result::{
    Env, LoadConfig, Measurement, Model, PhaseResult, RunResult, Tool, SCHEMA,
};
use perfbase_core::{Class, Outcome, Recorder};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Fixtures

/// xorshift64*: deterministic, dependency-free noise.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((v >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Exponentially distributed with this mean.
    fn exp(&mut self, mean: f64) -> f64 {
        -self.next().ln() * mean
    }
}

/// One simulated open-model phase against a service of `capacity` requests/s: completions at
/// min(rate, capacity) per second for `secs` seconds, M/M/1-like response times below
/// capacity, a growing queue (and some 503s and timeouts) above it.
fn open_phase(rng: &mut Rng, rate: f64, capacity: f64, secs: u32, spike_ms: f64) -> Recorder {
    let mut rec = Recorder::new(true);
    let served = rate.min(capacity);
    let n = (served * f64::from(secs)) as u64;
    rec.started_in_window = n;
    for i in 0..n {
        let t = i as f64 / served;
        let service_s = 0.0008 + rng.exp(0.0004);
        let queue_s = if rate < capacity {
            rng.exp(1.0 / (capacity - rate))
        } else {
            // Overload: the backlog grows by (rate − capacity) every second.
            (rate - capacity) / capacity * t + rng.exp(0.02)
        };
        let mut response_s = service_s + queue_s;
        if spike_ms > 0.0 && (1.0..1.3).contains(&t) {
            response_s += spike_ms / 1000.0 * rng.next();
        }
        let at = Duration::from_secs_f64(t + response_s);
        let outcome = if rate > capacity && rng.next() < 0.03 {
            Outcome::http(503, 120, 80)
        } else if rate > capacity && rng.next() < 0.005 {
            Outcome::error(Class::Timeout, "no response within 2s")
        } else {
            Outcome::http(200, 512, 80)
        };
        rec.record(
            &outcome,
            Duration::from_secs_f64(response_s),
            Duration::from_secs_f64(service_s),
            at,
        );
    }
    rec.finish();
    rec
}

fn measure(rec: &Recorder, rate: f64, secs: u32) -> Measurement {
    let d = Duration::from_secs(u64::from(secs));
    Measurement::from_recorder(rec, d, Some((rate, d, 256)))
}

fn env() -> Env {
    Env {
        cpu_model: "AMD EPYC 7B13 64-Core Processor".into(),
        cores: 8,
        memory_bytes: 32 * 1024 * 1024 * 1024,
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        kernel: "6.1.0-18-amd64".into(),
        hostname: "bench-1".into(),
        tool_version: "0.1.0".into(),
    }
}

fn config(rate: Option<f64>) -> LoadConfig {
    LoadConfig {
        threads: 4,
        connections: None,
        rate,
        max_inflight: rate.map(|_| 256),
        duration_s: Some(10.0),
        count: None,
        warmup_s: 0.0,
        timeout_s: 2.0,
        pacing_granularity_s: rate.map(|_| 0.001),
        protocol: BTreeMap::new(),
    }
}

/// Summary statistics in the monitor's shape.
fn stat(values: &[f64]) -> Value {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    json!({"min": min, "mean": mean, "max": max})
}

/// A monitor section: the service and perfbase itself, sampled every second through an idle
/// baseline and every phase, CPU following the load.
fn monitor(phases: &[(String, f64, u32)]) -> Value {
    let mut rng = Rng(7);
    let mut schedule = vec![("idle".to_string(), 0.0, 5u32)];
    schedule.extend(phases.iter().cloned());
    let targets = [
        ("name:demo-service", "process", 1.0),
        ("perfbase (self)", "self", 0.35),
    ];
    let targets: Vec<Value> = targets
        .iter()
        .map(|(label, kind, weight)| {
            let mut t = 0.0;
            let mut timeline = Vec::new();
            let mut phase_stats = Vec::new();
            for (name, rate, secs) in &schedule {
                let mut cpu = Vec::new();
                let mut rss = Vec::new();
                for _ in 0..*secs {
                    t += 1.0;
                    let c = weight * (1.5 + rate.min(520.0) * 0.16) + rng.next() * 4.0;
                    let r = 48.0 * 1024.0 * 1024.0 + rate * 20_000.0 + rng.next() * 1e6;
                    cpu.push(c);
                    rss.push(r);
                    timeline.push(json!({
                        "t_s": t, "phase": name, "cpu_pct": c, "rss_bytes": r as u64,
                        "vsz_bytes": (r * 3.0) as u64, "threads": 9, "fds": 24,
                        "ctx_switches_per_s": 40.0 + rate * 2.0, "memory_current_bytes": null,
                        "processes": 1
                    }));
                }
                let machine: Vec<f64> = cpu.iter().map(|c| c / 8.0).collect();
                phase_stats.push(json!({
                    "name": name, "samples": secs, "cpu_pct": stat(&cpu),
                    "cpu_pct_machine": stat(&machine), "rss_bytes": stat(&rss),
                    "vsz_bytes": stat(&rss.iter().map(|r| r * 3.0).collect::<Vec<_>>()),
                    "threads": stat(&[9.0]), "fds": stat(&[24.0]),
                    "ctx_switches_per_s": stat(&[40.0 + rate * 2.0]),
                    "memory_current_bytes": null, "processes": stat(&[1.0])
                }));
            }
            json!({
                "label": label, "kind": kind, "pids": [4242], "exited_at_s": null,
                "phases": phase_stats, "timeline": timeline
            })
        })
        .collect();
    json!({
        "interval_s": 1.0, "cores": 8, "targets": targets,
        "generator_saturated": false, "warnings": []
    })
}

/// A plan run: a rate ladder 100–600/s against a 520/s service (one repetition), a constant
/// 200/s scenario repeated three times (the second repetition has a latency spike), two checks
/// (one failing), SLO `p99 < 50ms`, and a monitor section.
fn plan_run() -> RunResult {
    let mut rng = Rng(0x5eed);
    let capacity = 520.0;
    let secs = 4;
    let slo: Vec<Threshold> = vec![parse_threshold("p99 < 50ms").unwrap()];
    let buckets = [5.0, 10.0, 50.0];
    let mut phases = Vec::new();
    let mut total = Recorder::new(true);
    let mut total_elapsed = Duration::ZERO;
    let mut monitor_phases = Vec::new();

    // Rate ladder.
    let mut rows = Vec::new();
    let mut ladder_ms = Vec::new();
    for (k, rate) in [100.0, 200.0, 300.0, 400.0, 500.0, 600.0]
        .into_iter()
        .enumerate()
    {
        let rec = open_phase(&mut rng, rate, capacity, secs, 0.0);
        let m = measure(&rec, rate, secs);
        total.merge(&rec);
        total_elapsed += Duration::from_secs(u64::from(secs));
        let step = format!("rate={rate}/s");
        rows.push(step_row(&step, Offered::Rate(rate), &m, &buckets));
        let name = format!("ladder {step}");
        monitor_phases.push((name.clone(), rate, secs));
        phases.push(PhaseResult {
            name,
            model: Model::Open,
            scenario: Some("ladder".into()),
            step: Some(k as u32),
            repetition: Some(1),
            offered_rate: Some(rate),
            offered_connections: None,
            measurement: m.clone(),
        });
        ladder_ms.push(m);
    }
    let rule = KneeRule::default();
    let knee = find_knee(&rows, &rule);
    let usable = knee.first_bad.unwrap_or(rows.len());
    let refs: Vec<&Measurement> = ladder_ms[..usable].iter().collect();
    let mut op = operating_point(&rows[..usable], &refs, &slo, &knee);
    if let Some(op) = op.as_mut() {
        op.headroom = knee
            .first_bad
            .map(|b| rows[b].offered.amount() / op.offered.amount() - 1.0);
    }
    assert!(knee.first_bad.is_some(), "the fixture ladder must saturate");
    let ladder = ScenarioStudy {
        name: "ladder".into(),
        kind: "rate ladder".into(),
        workload: "browse".into(),
        target: "http://127.0.0.1:8080/".into(),
        repetitions: 1,
        steps: rows,
        knee: Some(knee),
        operating_point: op,
        repetition_stats: Vec::new(),
        thresholds: Vec::new(),
        passed: true,
    };

    // Constant scenario, three repetitions.
    let gates = [
        parse_threshold("p99 < 20ms").unwrap(),
        parse_threshold("error_rate < 1%").unwrap(),
    ];
    let mut merged = Recorder::new(true);
    let mut runs = Vec::new();
    let mut verdicts = Vec::new();
    for rep in 1..=3u32 {
        let spike = if rep == 2 { 120.0 } else { 0.0 };
        let rec = open_phase(&mut rng, 200.0, capacity, secs, spike);
        let m = measure(&rec, 200.0, secs);
        merged.merge(&rec);
        total.merge(&rec);
        total_elapsed += Duration::from_secs(u64::from(secs));
        let name = format!("steady rate=200/s #{rep}");
        for g in &gates {
            verdicts.push(PhaseVerdict {
                phase: name.clone(),
                verdict: g.check(&m),
            });
        }
        monitor_phases.push((name.clone(), 200.0, secs));
        phases.push(PhaseResult {
            name,
            model: Model::Open,
            scenario: Some("steady".into()),
            step: Some(0),
            repetition: Some(rep),
            offered_rate: Some(200.0),
            offered_connections: None,
            measurement: m.clone(),
        });
        runs.push(m);
    }
    merged.finish();
    let m_all = measure(&merged, 200.0, 3 * secs);
    let refs: Vec<&Measurement> = runs.iter().collect();
    let steady = ScenarioStudy {
        name: "steady".into(),
        kind: "constant".into(),
        workload: "browse".into(),
        target: "http://127.0.0.1:8080/".into(),
        repetitions: 3,
        steps: vec![step_row(
            "rate=200/s",
            Offered::Rate(200.0),
            &m_all,
            &buckets,
        )],
        knee: None,
        operating_point: None,
        repetition_stats: repetition_stats("rate=200/s", &refs).into_iter().collect(),
        passed: verdicts.iter().all(|v| v.verdict.passed),
        thresholds: verdicts,
    };

    let checks = vec![
        CheckVerdict::judge(
            "health",
            10,
            BTreeMap::from([("200".to_string(), 10)]),
            BTreeMap::from([("200".to_string(), 10)]),
        ),
        CheckVerdict::judge(
            "login without token",
            5,
            BTreeMap::from([("401".to_string(), 5)]),
            BTreeMap::from([("401".to_string(), 4), ("200".to_string(), 1)]),
        ),
    ];
    let passed = steady.passed && checks.iter().all(|c| c.passed);
    let study = Study {
        plan: "checkout <beta> & co".into(),
        scale: 1.0,
        slo: vec!["p99 < 50ms".into()],
        knee_rule: rule,
        scenarios: vec![ladder, steady],
        checks,
        passed,
        rankings: Vec::new(),
        versus: Vec::new(),
    };
    total.finish();
    RunResult {
        schema: SCHEMA.into(),
        run_id: None,
        segment: None,
        clock_offset_ms: None,
        tool: Tool {
            name: "perfbase".into(),
            version: "0.1.0".into(),
        },
        started_at: "2026-03-02T10:15:00Z".into(),
        target: "plan checkout (plans/checkout.toml)".into(),
        protocol: "http".into(),
        model: Model::Open,
        config: config(None),
        interrupted: false,
        measurement: Measurement::from_recorder(&total, total_elapsed, None),
        phases,
        study: Some(study),
        monitor: Some(serde_json::from_value(monitor(&monitor_phases)).expect("a monitor report")),
        env: env(),
    }
}

/// A plain `perfbase http` run: open model, 300/s for 10 s, with a hostile-looking target to
/// exercise escaping.
fn http_run() -> RunResult {
    let mut rng = Rng(42);
    let mut rec = open_phase(&mut rng, 300.0, 520.0, 10, 60.0);
    rec.record(
        &Outcome::error(Class::Connect, "connection refused <b>(os error 111)</b>"),
        Duration::from_millis(1),
        Duration::from_millis(1),
        Duration::from_millis(9_500),
    );
    rec.finish();
    RunResult {
        schema: SCHEMA.into(),
        run_id: None,
        segment: None,
        clock_offset_ms: None,
        tool: Tool {
            name: "perfbase".into(),
            version: "0.1.0".into(),
        },
        started_at: "2026-03-02T11:00:00Z".into(),
        target: "http://127.0.0.1:8080/search?q=<script>alert(1)</script>&token=[redacted]".into(),
        protocol: "http".into(),
        model: Model::Open,
        config: config(Some(300.0)),
        interrupted: false,
        measurement: measure(&rec, 300.0, 10),
        phases: Vec::new(),
        study: None,
        monitor: None,
        env: env(),
    }
}

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
