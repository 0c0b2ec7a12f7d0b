//! The figures saved for trends, read back by selection, and pruning that spares baselines.

use super::*;
use crate::TrendQuery;
use std::time::{Duration, SystemTime};

fn check_trend_reads_what_was_saved(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let mut ids = Vec::new();
    for seed in [1, 2, 3, 4] {
        let mut r = sample_result(seed, false);
        r.env.source.insert("GIT_COMMIT".into(), format!("c{seed}"));
        ids.push(s.save("plan", &r, &labels_a()).unwrap());
    }
    let q = TrendQuery {
        plan: Some("checkout".into()),
        metrics: vec!["p99".into(), "rps".into()],
        ..TrendQuery::default()
    };
    let t = s.trend(&q).unwrap();
    let (runs, points) = (&t.runs, &t.points);
    // Run 2 was interrupted: a partial run is no point of a trend.
    assert_eq!(
        runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![ids[0], ids[2], ids[3]]
    );
    assert_eq!(runs[0].source["GIT_COMMIT"], "c1");
    assert!(
        runs[0].env.contains("Test CPU @ 3.0GHz × 8 cores"),
        "{}",
        runs[0].env
    );
    assert_eq!(points.len(), 6);
    let first = sample_result(1, false);
    let p99 = points
        .iter()
        .find(|p| p.run == ids[0] && t.keys[p.key].metric == "p99")
        .unwrap();
    let key = &t.keys[p99.key];
    assert_eq!((key.scenario.as_str(), key.step.as_str()), ("ramp", "0"));
    // Each series is numbered once, whatever the number of its runs.
    assert_eq!(t.keys.len(), 2);
    assert_eq!(p99.value, first.phases[0].measurement.latency_ms.p99);
    // Selections that match nothing.
    let none = TrendQuery {
        plan: Some("other".into()),
        ..TrendQuery::default()
    };
    assert!(s.trend(&none).unwrap().runs.is_empty());
    // From a run on: the newest runs of a long history, without reading the rest.
    let newest = TrendQuery {
        from_run: Some(ids[2]),
        ..q.clone()
    };
    let t = s.trend(&newest).unwrap();
    assert_eq!(
        t.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![ids[2], ids[3]]
    );
    assert!(t.points.iter().all(|p| p.run >= ids[2]));
    let labelled = TrendQuery {
        labels: filter(&[("service", "nope")]),
        ..TrendQuery::default()
    };
    assert!(s.trend(&labelled).unwrap().points.is_empty());
    // An agent's segment is saved but is no point of a trend: its merged run is.
    let mut segment = sample_result(5, false);
    segment.segment = Some("0/3".into());
    let id = s.save("plan", &segment, &labels_a()).unwrap();
    let runs = s.trend(&q).unwrap().runs;
    assert!(!runs.iter().any(|r| r.id == id));
}

fn check_prune_spares_baselines(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let saved: Vec<RunId> = (0..5)
        .map(|i| {
            s.save("plan", &sample_result(i, false), &labels_a())
                .unwrap()
        })
        .collect();
    s.set_baseline("release", saved[0]).unwrap();
    let now = SystemTime::now();
    // Everything is younger than a day: keep-days alone keeps all.
    let kept = s.prune(Some(1), None, now).unwrap();
    assert_eq!((kept.deleted, kept.kept), (0, 5));
    let pruned = s.prune(None, Some(2), now).unwrap();
    assert_eq!(
        (pruned.deleted, pruned.kept, pruned.kept_for_baselines),
        (2, 3, 1)
    );
    let left = ids(&s.history(&[], 0).unwrap());
    assert_eq!(left, vec![saved[4], saved[3], saved[0]]);
    assert_eq!(count(&mut s, "run_env"), 3);
    // A day from now, keep-days 0 with keep-last 1 leaves the newest and the baseline.
    let later = now + Duration::from_secs(86_400);
    let pruned = s.prune(Some(0), Some(1), later).unwrap();
    assert_eq!(pruned.deleted, 1);
    assert_eq!(s.baseline("release").unwrap().summary.id, saved[0]);
}

#[test]
fn sqlite_trend_reads_what_was_saved() {
    let (_dir, loc) = sqlite_location();
    check_trend_reads_what_was_saved(&loc);
}

#[test]
fn sqlite_prune_spares_baselines() {
    let (_dir, loc) = sqlite_location();
    check_prune_spares_baselines(&loc);
}

#[test]
fn postgres_trend_reads_what_was_saved() {
    on_postgres(check_trend_reads_what_was_saved);
}

#[test]
fn postgres_prune_spares_baselines() {
    on_postgres(check_prune_spares_baselines);
}
