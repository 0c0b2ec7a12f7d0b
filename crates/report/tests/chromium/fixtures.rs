//! The browser test's fixtures: a realistic plan run (a rate ladder past its knee, a repeated
//! constant scenario, checks, a monitor section) and a plain open-model HTTP run, made from
//! recorders filled with deterministic noise, so the page has every kind of chart.

use perfbase_analysis::knee::{find_knee, KneeRule};
use perfbase_analysis::slo::operating_point;
use perfbase_analysis::study::{
    repetition_stats, CheckVerdict, PhaseVerdict, ScenarioStudy, Study,
};
use perfbase_analysis::sweep::{step_row, Offered};
use perfbase_analysis::{parse_threshold, Threshold};
use perfbase_core::result::{Env, LoadConfig, Measurement, Model, PhaseResult, RunResult};
use perfbase_core::{Class, Outcome, Recorder};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

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
        node: None,
        agents: Vec::new(),
        tool_version: "0.1.0".into(),
        source: Default::default(),
        services: Default::default(),
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
pub fn plan_run() -> RunResult {
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
            missing_segments: Vec::new(),
            faults: Vec::new(),
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
        precision_target: None,
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
            missing_segments: Vec::new(),
            faults: Vec::new(),
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
        precision_target: None,
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
        interleaved: Vec::new(),
        noise: None,
        rankings: Vec::new(),
        versus: Vec::new(),
    };
    total.finish();
    let measurement = Measurement::from_recorder(&total, total_elapsed, None);
    let target = "plan checkout (plans/checkout.toml)";
    RunResult {
        started_at: "2026-03-02T10:15:00Z".into(),
        phases,
        study: Some(study),
        monitor: Some(serde_json::from_value(monitor(&monitor_phases)).expect("a monitor report")),
        env: env(),
        ..RunResult::of(target, "http", (Model::Open, config(None)), measurement)
    }
}

/// A plain `perfbase http` run: open model, 300/s for 10 s, with a hostile-looking target to
/// exercise escaping.
pub fn http_run() -> RunResult {
    let mut rng = Rng(42);
    let mut rec = open_phase(&mut rng, 300.0, 520.0, 10, 60.0);
    rec.record(
        &Outcome::error(Class::Connect, "connection refused <b>(os error 111)</b>"),
        Duration::from_millis(1),
        Duration::from_millis(1),
        Duration::from_millis(9_500),
    );
    rec.finish();
    let target = "http://127.0.0.1:8080/search?q=<script>alert(1)</script>&token=[redacted]";
    let model = (Model::Open, config(Some(300.0)));
    RunResult {
        started_at: "2026-03-02T11:00:00Z".into(),
        env: env(),
        ..RunResult::of(target, "http", model, measure(&rec, 300.0, 10))
    }
}
