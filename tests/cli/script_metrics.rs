//! A script's own metrics end to end against the reference service: counted exactly, in the
//! result, the reports and thresholds, and merged exactly across two agents.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// Every kind of metric, with values known in advance: each iteration adds 1 to `items`,
/// `__ITER % 10` to `spread` (so 0..9 as often each), `status === 200` to `ok_share` (the
/// reference answers /status/503 every fourth iteration), and sets `depth` to 7.
const SCRIPT: &str = r#"
import http from "perfbase/http";
import { Counter, Gauge, Rate, Trend } from "k6/metrics";

const items = new Counter("items");
const spread = new Trend("spread");
const ok = new Rate("ok_share");
const depth = new Gauge("depth");
const waited = new Trend("waited", true);

export default async function () {
  spread.add(__ITER % 10);
  const res = await http.get(__ITER % 4 === 0 ? "/status/503" : "/");
  ok.add(res.status === 200);
  waited.add(res.timings.duration);
  items.add(1);
  depth.add(7);
}
"#;

fn metric<'a>(j: &'a Value, name: &str) -> &'a Value {
    find(&j["metrics"], "name", name)
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `perfbase script` on SCRIPT with `args` (one user per VU gives `__ITER` 1..n each).
fn script(dir: &Path, url: &str, args: &[&str]) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .arg("script")
        .arg(dir.join("m.js"))
        .args(["--url", url])
        .args(args)
        .env("PERFBASE_STORE", dir.join("results.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn script_metrics_reach_the_result_the_reports_and_thresholds() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    std::fs::write(dir.path().join("m.js"), SCRIPT).unwrap();
    let url = format!("http://{}", server.addr);
    let json = dir.path().join("r.json");
    // 400 iterations of one user, judged by `thresholds` (each a --threshold).
    let judged = |thresholds: &[&str]| {
        let mut args = vec![
            "-q",
            "-c",
            "1",
            "-n",
            "400",
            "--json",
            json.to_str().unwrap(),
        ];
        for t in thresholds {
            args.extend(["--threshold", t]);
        }
        script(dir.path(), &url, &args)
    };
    let shared = [
        "items count >= 400",
        "spread p(95) <= 9",
        "ok_share rate > 0.74",
    ];
    let out = judged(&[&shared[..], &["depth value == 7"]].concat());
    // `==` is no operator: refused before any load, with the forms named.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown operator '=='"), "{stderr}");
    assert_eq!(server.stats.requests(), 0);

    let out = judged(&[&shared[..], &["depth value <= 7", "waited:p(99) < 10s"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let j = read(&json);
    validate(&j);
    let items = metric(&j, "items");
    assert_eq!(
        (items["kind"].as_str(), items["value"].as_f64()),
        (Some("counter"), Some(400.0))
    );
    let spread = metric(&j, "spread");
    assert_eq!(spread["samples"], 400);
    // __ITER runs 0..399 for the one user: 0..9 forty times each.
    assert_eq!(
        (spread["min"].as_f64(), spread["max"].as_f64()),
        (Some(0.0), Some(9.0))
    );
    assert_eq!(spread["values"]["mean"].as_f64(), Some(4.5));
    let ok = metric(&j, "ok_share");
    assert_eq!(
        (ok["trues"].as_u64(), ok["value"].as_f64()),
        (Some(300), Some(0.75))
    );
    assert_eq!(metric(&j, "depth")["value"].as_f64(), Some(7.0));
    assert_eq!(metric(&j, "waited")["samples"], 400);
    assert_eq!(j["status"]["503"], 100);
    let verdicts = j["study"]["scenarios"][0]["thresholds"]
        .as_array()
        .expect("verdicts");
    assert_eq!(verdicts.len(), 5, "{verdicts:?}");
    assert!(verdicts.iter().all(|v| v["passed"] == true), "{verdicts:?}");

    // Every report shows them.
    let (code, md, err) = pb(
        dir.path(),
        &["report", json.to_str().unwrap(), "--format", "md"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        md.contains("Script metrics") && md.contains("`ok_share` | rate | 400 | 75.00 %"),
        "{md}"
    );
    let (code, html, err) = pb(
        dir.path(),
        &["report", json.to_str().unwrap(), "--format", "html"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        html.contains("class=\"metrics\"") && html.contains("waited"),
        "html"
    );
    // A threshold that fails, and one on a metric the script does not have (it matched
    // nothing): both fail the run, which still keeps its result.
    let out = script(
        dir.path(),
        &url,
        &[
            "-c",
            "1",
            "-n",
            "40",
            "--json",
            json.to_str().unwrap(),
            "--threshold",
            "ok_share rate >= 0.9",
            "--threshold",
            "no_such_metric count > 0",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The terminal's summary has them too.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Metrics") && text.contains("ok_share"),
        "{text}"
    );
    let j = read(&json);
    let verdicts = j["study"]["scenarios"][0]["thresholds"].as_array().unwrap();
    assert!(
        verdicts.iter().all(|v| v["passed"] == false),
        "{verdicts:?}"
    );
    assert_eq!(metric(&j, "items")["value"].as_f64(), Some(40.0));
}

#[test]
fn script_metrics_of_two_agents_merge_to_exactly_one_machines() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    std::fs::write(dir.path().join("m.js"), SCRIPT).unwrap();
    let url = format!("http://{}", server.addr);
    let script = dir.path().join("m.js");
    let args = [
        "script",
        script.to_str().unwrap(),
        "--url",
        &url,
        "-c",
        "2",
        "-n",
        "600",
    ];
    let files = crate::agents::agents(dir.path(), 2, &args);
    let parts: Vec<Value> = files.iter().map(|f| read(Path::new(f))).collect();
    let merged = dir.path().join("merged.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--json", merged.to_str().unwrap()]);
    let (code, _, stderr) = pb(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    let m = read(&merged);
    validate(&m);
    assert_eq!(metric(&m, "items")["value"].as_f64(), Some(600.0));
    let (a, b) = (metric(&parts[0], "ok_share"), metric(&parts[1], "ok_share"));
    let ok = metric(&m, "ok_share");
    assert_eq!(ok["samples"], 600);
    assert_eq!(
        ok["trues"],
        a["trues"].as_u64().unwrap() + b["trues"].as_u64().unwrap()
    );
    assert_eq!(ok["trues"], m["status"]["200"]);
    // The trend's histogram is the union of the agents', its count and extremes exact.
    let decode = |v: &Value| {
        perfbase_core::result::decode_histogram(v["histogram"].as_str().unwrap()).unwrap()
    };
    let mut union = decode(metric(&parts[0], "waited"));
    union.add(decode(metric(&parts[1], "waited"))).unwrap();
    let waited = metric(&m, "waited");
    assert_eq!(decode(waited), union);
    assert_eq!(waited["samples"], 600);
    let max = |v: &Value| v["max"].as_f64().unwrap();
    assert_eq!(
        max(waited),
        max(metric(&parts[0], "waited")).max(max(metric(&parts[1], "waited")))
    );
    assert_eq!(metric(&m, "depth")["value"].as_f64(), Some(7.0));
}

#[test]
fn a_bad_metric_is_named_at_load_and_a_bad_value_fails_its_iteration() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}", server.addr);
    let cases = [
        ("new Trend(\"p95\");", "one of perfbase's own"),
        ("new Trend(\"a b\");", "letters, digits and '_'"),
        (
            "new Trend(\"x\"); new Counter(\"x\");",
            "metric 'x' is already a trend",
        ),
    ];
    for (line, expected) in cases {
        let text = format!(
            "import {{ Counter, Trend }} from \"k6/metrics\";\n{line}\nexport default async function () {{}}\n"
        );
        std::fs::write(dir.path().join("m.js"), text).unwrap();
        let out = script(dir.path(), &url, &["-q", "-n", "1", "--no-store"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{line}: {stderr}");
        assert!(stderr.contains(expected), "{line}: {stderr}");
    }
    // A value that is no number fails its iteration (class script), and the run goes on.
    std::fs::write(
        dir.path().join("m.js"),
        "import http from \"k6/http\";\nimport { Trend } from \"k6/metrics\";\n\
         const t = new Trend(\"t\");\n\
         export default async function () {\n  await http.get(\"/\");\n  t.add(__ITER % 2 ? \"many\" : 1);\n\
           if (__ENV.FLOOD) for (;;) t.add(1);\n}\n",
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = script(
        dir.path(),
        &url,
        &[
            "-q",
            "-c",
            "1",
            "-n",
            "20",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = read(&json);
    assert_eq!(metric(&j, "t")["samples"], 10);
    assert_eq!(j["errors"]["script"], 10);
    let sample = j["error_samples"][0]["message"].as_str().unwrap();
    assert!(
        sample.contains("add(many) is not a finite number"),
        "{sample}"
    );
    // Values without end between two requests: stopped at 1,024, the iteration failed, the
    // values it added counted.
    let out = script(
        dir.path(),
        &url,
        &[
            "-q",
            "-c",
            "1",
            "-n",
            "20",
            "-e",
            "FLOOD=1",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    // Not one iteration succeeded: exit 3, the result kept.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = read(&json);
    assert_eq!(metric(&j, "t")["samples"], 10 * 1024);
    assert_eq!(j["errors"]["script"], 20);
    let flood = j["error_samples"].as_array().unwrap().iter().any(|s| {
        s["message"]
            .as_str()
            .unwrap()
            .contains("more than 1024 metric values between two requests")
    });
    assert!(flood, "{}", j["error_samples"]);
}
