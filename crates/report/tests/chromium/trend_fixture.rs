//! A trend to render and export: two series of a plan over 12 stored runs.

/// A trend of two series over 12 runs: p99 with a change point at run 8 and the environment
/// changed at run 11, throughput flat but for a burst at run 5.
pub fn trend_fixture() -> perfbase_core::trend::Trend {
    use perfbase_core::trend::*;
    let series = |metric: &str,
                  better: Better,
                  values: [f64; 12],
                  change: Option<usize>,
                  burst: Option<usize>| {
        let points: Vec<Point> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| Point {
                run: i as i64 + 1,
                at: format!("2026-11-{:02}T02:00:00Z", i + 1).into(),
                value: v,
                repetitions: vec![v * 0.99, v * 1.01],
                labels: std::sync::Arc::new(
                    [("GIT_COMMIT".to_string(), format!("c{i:03}<&>"))].into(),
                ),
            })
            .collect();
        Series {
            name: format!("nightly / db / insert / {metric}"),
            plan: "nightly".into(),
            scenario: "db".into(),
            step: "insert".into(),
            metric: metric.into(),
            unit: if better == Better::Lower { "ms" } else { "/s" }.into(),
            better,
            change_points: change
                .map(|i| ChangePoint {
                    index: i,
                    run: i as i64 + 1,
                    kind: "level".into(),
                    before: values[0],
                    after: values[11],
                    change: values[11] / values[0] - 1.0,
                    p: 1e-5,
                    direction: "worse".into(),
                    environment: None,
                })
                .into_iter()
                .collect(),
            segment: Segment {
                from: change.unwrap_or(0),
                runs: 12 - change.unwrap_or(0),
                mean: values[11],
                stdev: 0.1,
            },
            environment_changes: vec![EnvironmentChange {
                index: 10,
                from: "cpu A × 2 cores".into(),
                to: "cpu B × 4 cores".into(),
            }],
            bursts: burst
                .map(|i| Burst {
                    index: i,
                    run: i as i64 + 1,
                    runs: 1,
                    value: values[i],
                    change: values[i] / values[0] - 1.0,
                })
                .into_iter()
                .collect(),
            noise: Some(Noise {
                autocorrelation: 0.05,
                assumed: 0.0,
                effective_runs: 12.0,
            }),
            compute_us: 3.0,
            points,
        }
    };
    Trend {
        schema: TREND_SCHEMA.into(),
        max_p: 0.001,
        min_change: 0.01,
        series: vec![
            series(
                "p99",
                Better::Lower,
                [
                    20.0, 20.5, 19.8, 20.1, 20.3, 19.9, 20.2, 24.0, 24.3, 23.8, 24.1, 24.2,
                ],
                Some(7),
                None,
            ),
            series(
                "rps",
                Better::Higher,
                [
                    900.0, 905.0, 898.0, 902.0, 2700.0, 901.0, 903.0, 900.0, 897.0, 904.0, 900.0,
                    901.0,
                ],
                None,
                Some(4),
            ),
        ],
        check: None,
    }
}
