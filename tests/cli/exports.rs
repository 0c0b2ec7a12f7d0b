//! What other tools read: HdrHistogram interval logs (`--hdr-log`) and the percentile
//! distribution (`report --format hgrm`), read back with the hdrhistogram crate's own reader.

use crate::common::*;
use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::path::Path;

/// Each interval of a log: (tag, start s, duration s, histogram).
fn read_log(path: &Path) -> Vec<(String, f64, f64, Histogram<u64>)> {
    let text = std::fs::read_to_string(path).expect("the log was written");
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        match entry.expect("every line of the log parses") {
            LogEntry::Interval(i) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(i.encoded_histogram())
                    .unwrap();
                let h: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
                out.push((
                    i.tag().map(|t| t.as_str().to_string()).unwrap_or_default(),
                    i.start_timestamp().as_secs_f64(),
                    i.duration().as_secs_f64(),
                    h,
                ));
            }
            LogEntry::StartTime(_) | LogEntry::BaseTime(_) => {}
        }
    }
    out
}

fn response_histogram(result: &serde_json::Value) -> Histogram<u64> {
    perfbase_core::result::decode_histogram(result["histogram"]["response"].as_str().unwrap())
        .unwrap()
}

#[test]
fn an_hdr_log_holds_every_second_exactly_and_two_logs_merge_like_the_results() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let url = format!("http://{}/", server.addr);
    let mut merged_log: Option<Histogram<u64>> = None;
    let mut merged_results: Option<Histogram<u64>> = None;
    let mut requests = 0;
    for run in 0..2 {
        let dir = tmp();
        let log = dir.path().join("latency.hlog");
        let r = perfbase(
            &[
                &url,
                "-r",
                "300",
                "-d",
                "2500ms",
                "--hdr-log",
                log.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(r.code(), 0, "{}", r.stderr());
        let v = r.json();
        let intervals = read_log(&log);
        let timeline = v["timeline"].as_array().unwrap();
        // One interval per second that completed something, in order, each the very
        // histogram the result's timeline point was computed from.
        let busy: Vec<&serde_json::Value> = timeline
            .iter()
            .filter(|p| p["requests"].as_u64() > Some(0))
            .collect();
        assert_eq!(intervals.len(), busy.len(), "run {run}");
        assert!(
            intervals.len() >= 3,
            "2.5 s give 3 seconds: {}",
            intervals.len()
        );
        for ((tag, start, duration, h), p) in intervals.iter().zip(&busy) {
            assert_eq!(tag, "measure");
            assert_eq!(start.floor() as u64, p["second"].as_u64().unwrap());
            assert!(
                (duration - p["span_s"].as_f64().unwrap()).abs() < 1e-3,
                "{duration} {p}"
            );
            assert_eq!(h.len(), p["requests"].as_u64().unwrap());
            assert_eq!(
                h.value_at_quantile(0.99) as f64 / 1000.0,
                p["p99_ms"].as_f64().unwrap()
            );
            merged_log
                .get_or_insert_with(|| Histogram::new_from(h))
                .add(h)
                .unwrap();
        }
        assert!(
            intervals[intervals.len() - 1].2 < 1.0,
            "the last second is partial"
        );
        requests += v["requests"].as_u64().unwrap();
        let whole = response_histogram(v);
        match &mut merged_results {
            Some(m) => m.add(&whole).unwrap(),
            None => merged_results = Some(whole),
        }
    }
    // Merging both logs gives what merging both results gives: every request, and each
    // percentile in the same bucket (the log's seconds keep 2 significant digits, the
    // result 3, and HDR's finer buckets nest in the coarser ones).
    let (logs, results) = (merged_log.unwrap(), merged_results.unwrap());
    assert_eq!(logs.len(), requests);
    assert_eq!(results.len(), requests);
    for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
        let exact = results.value_at_quantile(q);
        assert_eq!(
            logs.highest_equivalent(exact),
            logs.value_at_quantile(q),
            "quantile {q}: results {exact} µs"
        );
    }
}

#[test]
fn a_plan_logs_each_step_under_its_own_tag_and_the_report_writes_hgrm() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
[plan]
name = "ladder"
[targets.ref]
url = "http://{}"
[workloads.root]
target = "ref"
path = "/"
[[scenarios]]
name = "rates"
workload = "root"
duration = "1200ms"
rate = [100, 200]
"#,
            server.addr
        ),
    )
    .unwrap();
    let log = dir.path().join("plan.hlog");
    let out = dir.path().join("out");
    let (code, stdout, stderr) = pb(
        dir.path(),
        &[
            "run",
            plan.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--hdr-log",
            log.to_str().unwrap(),
            "-q",
            "--no-store",
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let intervals = read_log(&log);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let phases = result["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for p in phases {
        let name = p["name"].as_str().unwrap();
        let tag = name.replace(' ', "_");
        let logged: u64 = intervals
            .iter()
            .filter(|i| i.0 == tag)
            .map(|i| i.3.len())
            .sum();
        assert_eq!(logged, p["requests"].as_u64().unwrap(), "{name}");
    }
    // Intervals follow the run's clock: the second step's start after the first's.
    let starts: Vec<f64> = intervals.iter().map(|i| i.1).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");

    let (code, hgrm, stderr) = pb(
        dir.path(),
        &[
            "report",
            out.join("result.json").to_str().unwrap(),
            "--format",
            "hgrm",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let whole = response_histogram(&result);
    let last = hgrm
        .lines()
        .rfind(|l| !l.starts_with('#') && !l.is_empty())
        .unwrap();
    let cols: Vec<&str> = last.split_whitespace().collect();
    assert_eq!(
        cols[0],
        format!("{:.3}", whole.max() as f64 / 1000.0),
        "{hgrm}"
    );
    assert_eq!(cols[1], "1.000000000000");
    assert_eq!(cols[2], whole.len().to_string());
    assert!(
        hgrm.contains(&format!("Total count    = {:>12}", whole.len())),
        "{hgrm}"
    );
}

#[test]
fn jsonl_streams_seconds_and_phases_on_stdout_and_a_reader_leaving_stops_only_the_stream() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let result = dir.path().join("result.json");
    let (code, stdout, stderr) = pb(
        dir.path(),
        &[
            "http",
            &url,
            "-r",
            "200",
            "-d",
            "2500ms",
            "--warmup",
            "500ms",
            "--jsonl",
            "-",
            "--json",
            result.to_str().unwrap(),
            "--no-store",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    // Standard output is JSON lines only; the summary went to stderr.
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(stderr.contains("Response ms"), "{stderr}");
    let kinds: Vec<(&str, &str)> = lines
        .iter()
        .map(|v| {
            (
                v["type"].as_str().unwrap(),
                v["phase"].as_str().or(v["name"].as_str()).unwrap(),
            )
        })
        .collect();
    let phases: Vec<&(&str, &str)> = kinds.iter().filter(|k| k.0 == "phase").collect();
    assert_eq!(
        phases,
        [&("phase", "warmup"), &("phase", "measure")],
        "{kinds:?}"
    );
    // About one line a second while measuring, the counts growing, before the phase's line.
    let seconds: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|v| v["type"] == "second" && v["phase"] == "measure")
        .collect();
    assert!((2..=3).contains(&seconds.len()), "{stdout}");
    let counts: Vec<u64> = seconds
        .iter()
        .map(|v| v["requests"].as_u64().unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    let measure = lines.last().unwrap();
    assert_eq!(measure["type"], "phase");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(measure["requests"], saved["requests"]);
    assert_eq!(measure["requests"], 500);
    assert_eq!(measure["status"], saved["status"]);
    assert!(*counts.last().unwrap() <= 500);

    // Two outputs on stdout would interleave: refused before any load.
    let (code, _, stderr) = pb(
        dir.path(),
        &[
            "http",
            &url,
            "-n",
            "10",
            "--jsonl",
            "-",
            "--json",
            "-",
            "--no-store",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--json and --jsonl cannot share stdout"),
        "{stderr}"
    );

    // A reader that reads one line and leaves: the run goes on and saves its result.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args([
            "http", &url, "-r", "100", "-d", "2500ms", "--jsonl", "-", "--json",
        ])
        .arg(&result)
        .arg("--no-store")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.starts_with("{\"type\":\"second\""), "{first}");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert_eq!(saved["requests"], 250);
}
