//! Rankings: several targets or scenarios side by side, best first, by throughput or by a
//! latency figure.

use perfbase_core::result::Measurement;

pub use perfbase_core::study::RankRow;

/// What a ranking orders by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankBy {
    /// Highest throughput first, ties broken by mean latency.
    Throughput,
    /// Lowest latency first, ties broken by throughput.
    P50,
    P99,
    Mean,
}

impl RankBy {
    pub const NAMES: &'static str = "throughput, p50, p99, mean";

    pub fn from_name(name: &str) -> Option<RankBy> {
        Some(match name {
            "throughput" | "rps" => RankBy::Throughput,
            "p50" => RankBy::P50,
            "p99" => RankBy::P99,
            "mean" | "avg" => RankBy::Mean,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            RankBy::Throughput => "throughput",
            RankBy::P50 => "p50",
            RankBy::P99 => "p99",
            RankBy::Mean => "mean",
        }
    }
}

/// Ranks targets by throughput (highest first), ties broken by mean latency.
pub fn rank(entries: &[(String, &Measurement)]) -> Vec<RankRow> {
    rank_by(entries, RankBy::Throughput)
}

/// Ranks entries by `by`, best first. An entry that completed nothing (NaN latency) ranks
/// last whatever the order.
pub fn rank_by(entries: &[(String, &Measurement)], by: RankBy) -> Vec<RankRow> {
    let mut rows: Vec<RankRow> = entries
        .iter()
        .map(|(label, m)| RankRow {
            rank: 0,
            label: label.clone(),
            rps: m.rps,
            mean_ms: m.latency_ms.mean,
            p50_ms: m.latency_ms.p50,
            p99_ms: m.latency_ms.p99,
            success_ratio: m.success_ratio,
        })
        .collect();
    let latency = |r: &RankRow| match by {
        RankBy::P50 => r.p50_ms,
        RankBy::P99 => r.p99_ms,
        _ => r.mean_ms,
    };
    // NaN sorts last: replace it by +∞ for latency, −∞ for throughput.
    let low = |v: f64| if v.is_nan() { f64::INFINITY } else { v };
    let high = |v: f64| if v.is_nan() { f64::NEG_INFINITY } else { v };
    rows.sort_by(|x, y| match by {
        RankBy::Throughput => high(y.rps)
            .total_cmp(&high(x.rps))
            .then(low(x.mean_ms).total_cmp(&low(y.mean_ms))),
        _ => low(latency(x))
            .total_cmp(&low(latency(y)))
            .then(high(y.rps).total_cmp(&high(x.rps))),
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_core::{Outcome, Recorder};
    use std::time::Duration;

    /// `n` requests of `latency_ms` each over one second.
    fn run(latency_ms: f64, n: u64) -> Measurement {
        let mut r = Recorder::new(false);
        for i in 0..n {
            r.record(
                &Outcome::http(200, 1, 1),
                perfbase_core::units::saturating_secs(latency_ms / 1000.0),
                Duration::ZERO,
                Duration::from_millis(i),
            );
        }
        r.finish();
        Measurement::from_recorder(&r, Duration::from_secs(1), None)
    }

    #[test]
    fn ranking_by_throughput() {
        let go = run(5.0, 320);
        let py = run(8.0, 245);
        let node = run(9.0, 230);
        let rows = rank(&[
            ("Python".into(), &py),
            ("Go".into(), &go),
            ("Node".into(), &node),
        ]);
        let order: Vec<(&str, usize)> = rows.iter().map(|r| (r.label.as_str(), r.rank)).collect();
        assert_eq!(order, vec![("Go", 1), ("Python", 2), ("Node", 3)]);
        // By latency the order is the speed of answers, not their count.
        let empty = run(1.0, 0);
        let rows = rank_by(
            &[
                ("Python".into(), &py),
                ("nothing".into(), &empty),
                ("Go".into(), &go),
                ("Node".into(), &node),
            ],
            RankBy::Mean,
        );
        let order: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(order[..3], ["Go", "Python", "Node"], "{rows:?}");
        assert_eq!(order[3], "nothing");
    }
}
