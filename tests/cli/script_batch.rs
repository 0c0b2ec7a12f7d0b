//! `http.batch` end to end against the reference service: requests sent together, each timed
//! on its own from the step's start, answered in order, and a batch too large refused.

use crate::common::*;
use serde_json::Value;

const SCRIPT: &str = r#"
import http from "k6/http";
import { check } from "k6";

export default async function () {
  const started = __ITER;
  const rs = await http.batch([
    ["GET", "/delay/60", null, { name: "slow" }],
    { method: "GET", url: "/delay/60", params: { name: "slow" } },
    "/",
    ["GET", __ITER % 2 ? "/" : "/status/503", null, { tags: { name: "bad" } }],
  ]);
  const odd = __ITER % 2 === 1;
  check(rs, {
    "in order": (r) => r.length === 4 && r[0].status === 200 && r[2].status === 200 && r[3].status === (odd ? 200 : 503),
    "own timings": (r) => r[2].timings.duration < r[0].timings.duration,
  });
  const named = await http.batch({ home: "/", gone: ["GET", odd ? "/status/200" : "/status/404"] });
  check(named, { "by key": (n) => n.home.status === 200 && n.gone.status === (odd ? 200 : 404) });
  check(null, { "one __ITER": () => __ITER === started });
  if (__ENV.HUGE) await http.batch(Array.from({ length: 101 }, () => "/"));
}
"#;

fn endpoint<'a>(j: &'a Value, name: &str) -> &'a Value {
    find(&j["endpoints"], "name", name)
}

#[test]
fn a_batch_sends_together_and_times_each_request_on_its_own() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    std::fs::write(dir.path().join("b.js"), SCRIPT).unwrap();
    let url = format!("http://{}", server.addr);
    let run = |env: &[&str], code: i32| {
        let json = dir.path().join("r.json");
        let out = assert_cmd::Command::cargo_bin("perfbase")
            .unwrap()
            .arg("script")
            .arg(dir.path().join("b.js"))
            .args([
                "--url",
                &url,
                "-c",
                "1",
                "-n",
                "20",
                "-q",
                "--no-store",
                "--json",
            ])
            .arg(&json)
            .args(env)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        let j: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        j
    };
    let j = run(&[], 0);
    validate(&j);
    assert_eq!(endpoint(&j, "slow")["requests"], 40);
    assert_eq!(endpoint(&j, "GET /")["requests"], 40);
    assert_eq!(endpoint(&j, "bad")["status"]["503"], 10);
    assert_eq!(endpoint(&j, "GET /status/{id}")["status"]["404"], 10);
    assert_eq!(j["iterations"]["failed"], 10);
    for c in ["in order", "own timings", "by key", "one __ITER"] {
        let c = find(&j["checks"], "name", c);
        assert_eq!(
            (c["passed"].as_u64(), c["failed"].as_u64()),
            (Some(20), Some(0)),
            "{c}"
        );
    }
    // The fast request is not charged the slow ones' time, and the two slow ones ran side
    // by side: an iteration takes about one delay, not two.
    let p50 = |e: &Value| e["latency_ms"]["p50"].as_f64().unwrap();
    assert!(
        p50(endpoint(&j, "slow")) >= 60.0,
        "{}",
        endpoint(&j, "slow")
    );
    assert!(
        p50(endpoint(&j, "GET /")) < 30.0,
        "{}",
        endpoint(&j, "GET /")
    );
    let iteration = j["iterations"]["duration_ms"]["p50"].as_f64().unwrap();
    assert!(
        (60.0..110.0).contains(&iteration),
        "iteration p50 {iteration} ms"
    );
    assert_eq!(j["iterations"]["count"], 20);

    // A batch of more than 100 requests fails its iteration, saying so; nothing is sent.
    let before = server.stats.requests();
    // Not one iteration succeeded: exit 3.
    let j = run(&["-e", "HUGE=1"], 3);
    assert_eq!(j["errors"]["script"], 20);
    let sample = j["error_samples"][0]["message"].as_str().unwrap();
    assert!(sample.contains("at most 100"), "{sample}");
    assert_eq!(server.stats.requests() - before, 20 * 6);
}
