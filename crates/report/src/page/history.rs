//! The changelog's history table: each step's p99 and throughput over the plan's stored runs
//! as sparklines, and the change points found in them (the same series and search as
//! `perfbase trend`), so a slow drift or a step shows beside the run-to-run differences.

use super::markup::Block;
use crate::table::{Cell, Table};
use crate::trend::{changes_text, figure, sparkline, SPARK_RUNS};
use perfbase_core::trend::Series;

/// The heading, a sentence and the table; nothing when no step has two runs yet.
pub(super) fn blocks(trend: &[Series]) -> Vec<Block> {
    let mut rows = Vec::new();
    let mut changes = 0;
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for s in trend.iter().filter(|s| s.points.len() > 1) {
        let place = (s.scenario.as_str(), s.step.as_str());
        if seen.contains(&place) {
            continue;
        }
        seen.push(place);
        let of = |metric: &str| {
            trend
                .iter()
                .find(|t| (t.scenario.as_str(), t.step.as_str()) == place && t.metric == metric)
        };
        let (p99, rps) = (of("p99"), of("rps"));
        let spark = |s: Option<&Series>| {
            s.map_or_else(String::new, |s| {
                let v: Vec<f64> = s.points.iter().map(|p| p.value).collect();
                format!(
                    "{} {}",
                    sparkline(&v[v.len().saturating_sub(SPARK_RUNS)..]),
                    figure(s, v[v.len() - 1])
                )
            })
        };
        let found: Vec<String> = [p99, rps]
            .into_iter()
            .flatten()
            .filter(|s| !s.change_points.is_empty())
            .map(|s| format!("{}: {}", s.metric, changes_text(s)))
            .collect();
        changes += found.len();
        rows.push(vec![
            Cell::from(s.scenario.clone()),
            s.step.clone().into(),
            s.points.len().to_string().into(),
            spark(p99).into(),
            spark(rps).into(),
            if found.is_empty() {
                "none".to_string()
            } else {
                found.join("; ")
            }
            .into(),
        ]);
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let runs = trend.iter().map(|s| s.points.len()).max().unwrap_or(0);
    vec![
        Block::Heading("History of this plan".into()),
        Block::Text(format!(
            "p99 and throughput of each step over the plan's last {runs} stored runs (the \
             newest {SPARK_RUNS} drawn), and where they changed for good: {changes} change \
             point{} by E-Divisive means, each kept at p < 0.001 (see docs/trends.md).",
            if changes == 1 { "" } else { "s" }
        )),
        Block::Table(
            Table::new(
                &[
                    "scenario",
                    "step",
                    "runs",
                    "p99",
                    "throughput",
                    "change points",
                ],
                rows,
                2,
            )
            .words_in(&[3, 4, 5]),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_core::trend::{Better, ChangePoint, Point, Segment};

    fn series(metric: &str, values: &[f64], change_at: Option<usize>) -> Series {
        Series {
            name: format!("plan / db / insert / {metric}"),
            plan: "plan".into(),
            scenario: "db".into(),
            step: "insert".into(),
            metric: metric.into(),
            unit: if metric == "rps" { "/s" } else { "ms" }.into(),
            better: if metric == "rps" {
                Better::Higher
            } else {
                Better::Lower
            },
            points: values
                .iter()
                .enumerate()
                .map(|(i, &v)| Point {
                    run: i as i64 + 1,
                    at: "".into(),
                    value: v,
                    repetitions: Vec::new(),
                    labels: Default::default(),
                })
                .collect(),
            change_points: change_at
                .map(|i| ChangePoint {
                    index: i,
                    run: i as i64 + 1,
                    kind: "level".into(),
                    before: 2.0,
                    after: 3.0,
                    change: 0.5,
                    p: 1e-6,
                    direction: "worse".into(),
                    environment: None,
                })
                .into_iter()
                .collect(),
            segment: Segment {
                from: 0,
                runs: values.len(),
                mean: 2.0,
                stdev: 0.1,
            },
            environment_changes: Vec::new(),
            bursts: Vec::new(),
            noise: None,
            compute_us: 1.0,
        }
    }

    #[test]
    fn a_row_per_step_with_both_sparklines_and_the_change_points() {
        let trend = vec![
            series("p99", &[2.0, 2.0, 2.1, 3.0, 3.0], Some(3)),
            series("rps", &[900.0, 910.0, 905.0, 700.0, 690.0], None),
        ];
        let blocks = blocks(&trend);
        assert_eq!(blocks.len(), 3);
        let Block::Table(t) = &blocks[2] else {
            panic!("{blocks:?}")
        };
        assert_eq!(t.rows.len(), 1, "one row for the step, not one per metric");
        let cells: Vec<&str> = t.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(&cells[..3], &["db", "insert", "5"]);
        assert_eq!(cells[3], "▁▁▂██ 3.00 ms");
        assert!(cells[4].ends_with("690/s"), "{}", cells[4]);
        assert_eq!(cells[5], "p99: run 4: +50.0 % worse (p < 0.001)");
        let Block::Text(intro) = &blocks[1] else {
            panic!()
        };
        assert!(intro.contains("1 change point by"), "{intro}");
        // A first run has no history to draw.
        assert!(super::blocks(&[series("p99", &[2.0], None)]).is_empty());
    }
}
