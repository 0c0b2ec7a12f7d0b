use super::*;
use perfbase_analysis::knee::{find_knee, KneeRule};
use perfbase_analysis::sweep::step_row;
use perfbase_core::result::{LoadConfig, PhaseResult};
use perfbase_core::{Outcome, Recorder};
use std::time::Duration;

/// `n` operations at `ms` milliseconds (plus a little spread) over `secs` seconds.
fn measurement(n: u64, ms: u64, secs: u64) -> Measurement {
    let mut rec = Recorder::new(false);
    for i in 0..n {
        rec.record(
            &Outcome::http(200, 100, 50),
            Duration::from_micros(ms * 1000 + (i % 10) * 100),
            Duration::ZERO,
            Duration::from_millis(i * secs * 1000 / n.max(1)),
        );
    }
    rec.finish();
    Measurement::from_recorder(&rec, Duration::from_secs(secs), None)
}

fn run(measurement: Measurement, phases: Vec<PhaseResult>, study: Option<Study>) -> RunResult {
    let config = LoadConfig {
        threads: 1,
        connections: Some(8),
        rate: None,
        max_inflight: None,
        duration_s: Some(2.0),
        count: None,
        warmup_s: 0.0,
        timeout_s: 1.0,
        pacing_granularity_s: None,
        protocol: BTreeMap::new(),
    };
    let model = (Model::Closed, config);
    RunResult {
        started_at: "2026-01-01T00:00:00Z".into(),
        phases,
        study,
        ..RunResult::of("http://localhost/", "http", model, measurement)
    }
}

fn charts(html: &str, kind: &str) -> usize {
    html.matches(&format!(r#"data-chart="{kind}""#)).count()
}

#[test]
fn concurrency_ladder_draws_linear_scaling() {
    // Throughput 100/s per connection up to 400/s.
    let steps: Vec<_> = [1u64, 2, 4, 8]
        .iter()
        .map(|&c| {
            let thr = (100 * c).min(400);
            let m = measurement(thr * 2, 10 * c * 100 / thr, 2);
            step_row(&format!("c={c}"), Offered::Concurrency(c), &m, &[])
        })
        .collect();
    let knee = find_knee(&steps, &KneeRule::default());
    assert_eq!(knee.first_bad, Some(3));
    let study = Study {
        plan: "vu".into(),
        scale: 1.0,
        slo: vec!["p99 < 40ms".into(), "error_rate < 1%".into()],
        knee_rule: KneeRule::default(),
        scenarios: vec![ScenarioStudy {
            name: "vus".into(),
            kind: "concurrency ladder".into(),
            workload: "w".into(),
            target: "t".into(),
            repetitions: 1,
            steps,
            knee: Some(knee),
            operating_point: None,
            repetition_stats: Vec::new(),
            precision_target: None,
            thresholds: Vec::new(),
            passed: true,
        }],
        checks: Vec::new(),
        passed: true,
        rankings: Vec::new(),
        versus: Vec::new(),
        interleaved: Vec::new(),
        noise: None,
    };
    let r = run(measurement(100, 5, 2), Vec::new(), Some(study));
    let html = render(&[r]);
    assert_eq!(html.matches(r#"class="chart""#).count(), 4);
    assert_eq!(charts(&html, "latency-vs-rate"), 1);
    assert_eq!(charts(&html, "achieved-vs-offered"), 1);
    assert!(html.contains("linear scaling from the first step"));
    assert!(html.contains("offered load, concurrent connections"));
    assert!(html.contains(">knee c=8<"));
    assert!(html.contains(">SLO p99 &lt; 40ms<"));
    assert!(
        !html.contains("SLO error_rate"),
        "only latency SLOs are lines"
    );
}

#[test]
fn repetitions_without_a_study_still_get_a_box_plot() {
    let phase = |rep: u32, ms: u64| PhaseResult {
        name: format!("steady #{rep}"),
        model: Model::Closed,
        scenario: Some("steady".into()),
        step: Some(0),
        repetition: Some(rep),
        offered_rate: None,
        offered_connections: Some(8),
        missing_segments: Vec::new(),
        faults: Vec::new(),
        measurement: measurement(40, ms, 1),
    };
    let r = run(
        measurement(120, 3, 3),
        vec![phase(1, 2), phase(2, 3), phase(3, 2)],
        None,
    );
    let html = render(&[r]);
    assert_eq!(charts(&html, "boxplot"), 1);
    assert!(html.contains(">Repetitions<"));
    assert_eq!(
        html.matches("<rect x=").count(),
        3,
        "one box per repetition"
    );
    // One repetition only: no box plot.
    let r = run(measurement(40, 3, 1), vec![phase(1, 2)], None);
    assert_eq!(charts(&render(&[r]), "boxplot"), 0);
}

#[test]
fn nines_for_grows_with_the_run() {
    assert_eq!(nines_for(0), 4);
    assert_eq!(nines_for(1_000), 4);
    assert_eq!(nines_for(150_000), 6);
    assert_eq!(nines_for(u64::MAX), MAX_NINES);
    assert_eq!(pct_label(0.999), "p99.9");
    assert_eq!(pct_label(0.5), "p50");
}

#[test]
fn study_with_null_figures_reads_back_as_nan_and_renders() {
    let v = serde_json::json!({
        "plan": "p", "scale": 1.0, "slo": [],
        "knee_rule": {"min_throughput_ratio": 0.95, "p99_factor": 3.0, "max_error_ratio": 0.01, "min_gain": 0.05},
        "scenarios": [{
            "name": "s", "kind": "constant", "workload": "w", "target": "t", "repetitions": 1,
            "steps": [{"name": "a", "offered": {"rate": 10.0}, "achieved_rps": 0.0, "success_ratio": 1.0,
                       "p50_ms": 0.0, "p90_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0,
                       "under_ms": [[10.0, null]]}],
            "repetition_stats": [],
            "thresholds": [{"phase": "a", "threshold": "p99 < 5ms", "actual": null, "passed": false}],
            "passed": false
        }],
        "checks": [], "passed": false
    });
    let s: Study = serde_json::from_value(v).expect("parses");
    assert!(s.scenarios[0].steps[0].under_ms[0].1.is_nan());
    assert!(s.scenarios[0].thresholds[0].verdict.actual.is_nan());
    assert!(serde_json::from_value::<Study>(serde_json::json!({"plan": 1})).is_err());
    // A whole result with such a study reads back, and every renderer shows the study.
    let r = run(measurement(50, 2, 1), Vec::new(), Some(s));
    let back: RunResult =
        serde_json::from_str(&serde_json::to_string(&r).unwrap()).expect("reads back");
    let study = back.study.as_ref().expect("the study is kept");
    assert!(study.scenarios[0].thresholds[0].verdict.actual.is_nan());
    assert!(render(std::slice::from_ref(&back)).contains("Findings"));
    assert!(crate::markdown::render_any(&back).contains("# Performance study: p"));
    assert!(crate::junit::render(&[("r".into(), &back)]).contains("p99 &lt; 5ms"));
}
