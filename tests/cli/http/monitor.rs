//! `perfbase http --monitor`: services sampled idle and under load, exits marked, and a
//! selector that matches nothing refused before any load.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn monitor_reports_services_idle_and_under_load_and_marks_exits() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let mut busy = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let mut idle = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let idle_pid = idle.id();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2500));
        let _ = idle.kill();
        let _ = idle.wait();
    });
    let dir = tmp();
    let url = format!("http://{}/delay/5", server.addr);
    let busy_sel = format!("pid:{}", busy.id());
    let idle_sel = format!("pid:{idle_pid}");
    let r = perfbase(
        &[
            &url,
            "-c",
            "2",
            "-d",
            "2500ms",
            "--monitor",
            &busy_sel,
            "--monitor",
            &idle_sel,
            "--monitor-idle",
            "1s",
            "--monitor-interval",
            "250ms",
        ],
        dir.path(),
    );
    killer.join().unwrap();
    let _ = busy.kill();
    let _ = busy.wait();
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let m = &r.json()["monitor"];
    let target = |label: &str| {
        m["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["label"] == label)
            .cloned()
            .unwrap()
    };
    let phase = |t: &Value, name: &str| {
        t["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap()
    };
    let b = target(&busy_sel);
    for name in ["idle", "measure"] {
        let cpu = phase(&b, name)["cpu_pct"]["mean"].as_f64().unwrap();
        assert!((50.0..=105.0).contains(&cpu), "busy loop {name}: {cpu} %");
    }
    let rss = phase(&b, "measure")["rss_bytes"]["mean"].as_f64().unwrap();
    assert!(rss > 100_000.0 && rss < 200e6, "{rss}");
    let i = target(&idle_sel);
    assert!(phase(&i, "idle")["cpu_pct"]["mean"].as_f64().unwrap() < 5.0);
    let exited = i["exited_at_s"]
        .as_f64()
        .expect("the killed process is marked as exited");
    assert!((2.0..=5.0).contains(&exited), "{exited}");
    let me = target("perfbase (self)");
    assert!(phase(&me, "measure")["cpu_pct"]["mean"].as_f64().unwrap() > 0.0);
    assert!(r.stdout().contains("Resources"), "{}", r.stdout());
    validate(r.json());
}

#[test]
fn a_monitor_selector_matching_nothing_is_bad_input_before_any_load() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let r = perfbase(
        &[&url, "-n", "10", "--monitor", "name:no-such-process-here"],
        dir.path(),
    );
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr()
            .contains("`name:no-such-process-here` matches nothing"),
        "{}",
        r.stderr()
    );
    assert_eq!(server.stats.requests(), 0, "no load was sent");
}
