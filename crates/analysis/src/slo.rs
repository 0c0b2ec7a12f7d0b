//! What load can the service hold within its SLO? The operating point of a ladder: the highest
//! offered load at which it, and every lighter step, met every SLO threshold.

use crate::knee::{Knee, KneeRule};
use crate::sweep::StepRow;
use crate::threshold::Threshold;
use perfbase_core::result::Measurement;

// Part of the result's `study` section, so it lives in the interface crate; re-exported here.
pub use perfbase_core::study::OperatingPoint;

/// The operating point under the default [`KneeRule`]'s error limit (at most 1 % errors).
/// See [`operating_point_with`].
pub fn operating_point(
    rows: &[StepRow],
    measurements: &[&Measurement],
    slo: &[Threshold],
    knee: &Knee,
) -> Option<OperatingPoint> {
    operating_point_with(rows, measurements, slo, knee, &KneeRule::default())
}

/// The highest-offered step such that it and every step offering less meet all `slo`
/// thresholds and have an error ratio (1 − success ratio) no higher than
/// `rule.max_error_ratio`.
///
/// `measurements[i]` is the measurement of `rows[i]`; steps are ranked by offered load
/// (rate or concurrency), whatever order they are given in. Returns None when the lightest step
/// already fails, when there are no rows, or when `rows` and `measurements` differ in length.
/// `headroom` is measured against `knee` (from [`crate::knee::find_knee`] over the same rows).
pub fn operating_point_with(
    rows: &[StepRow],
    measurements: &[&Measurement],
    slo: &[Threshold],
    knee: &Knee,
    rule: &KneeRule,
) -> Option<OperatingPoint> {
    if rows.len() != measurements.len() {
        return None;
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    // Stable sort: equal offers keep ladder order.
    order.sort_by(|&a, &b| {
        rows[a]
            .offered
            .amount()
            .total_cmp(&rows[b].offered.amount())
    });
    let meets = |i: usize| {
        let m = measurements[i];
        1.0 - m.success_ratio <= rule.max_error_ratio && slo.iter().all(|t| t.check(m).passed)
    };
    let index = order.into_iter().take_while(|&i| meets(i)).last()?;
    let offered = rows[index].offered;
    let headroom = knee
        .first_bad
        .and_then(|k| rows.get(k))
        .map(|k| k.offered.amount())
        .filter(|_| offered.amount() > 0.0)
        // Headroom as a relative margin: knee load / operating load − 1.
        .map(|knee_load| knee_load / offered.amount() - 1.0);
    Some(OperatingPoint {
        index,
        offered,
        headroom,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{measurement, step};
    use crate::knee::find_knee;
    use crate::sweep::{step_row, Offered};
    use crate::threshold_parse::parse_threshold;

    /// A rate ladder 10..80/s against a capacity of 40/s, p99 rising with load.
    fn ladder() -> (Vec<StepRow>, Vec<Measurement>) {
        let p99 = [8u64, 9, 11, 15, 120, 240, 400, 600];
        let ms: Vec<Measurement> = (1..=8u64)
            .map(|k| step((10 * k).min(40), 2, p99[k as usize - 1]))
            .collect();
        let rows = ms
            .iter()
            .enumerate()
            .map(|(i, m)| {
                step_row(
                    &format!("s{i}"),
                    Offered::Rate(10.0 * (i + 1) as f64),
                    m,
                    &[],
                )
            })
            .collect();
        (rows, ms)
    }

    fn slo(list: &[&str]) -> Vec<Threshold> {
        list.iter().map(|s| parse_threshold(s).unwrap()).collect()
    }

    #[test]
    fn picks_the_highest_step_within_the_slo() {
        let (rows, ms) = ladder();
        let refs: Vec<&Measurement> = ms.iter().collect();
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!(knee.first_bad, Some(4));

        // p99 < 20ms holds up to 40/s; the knee is at 50/s: 50/40 − 1 = 25 % headroom.
        let op = operating_point(&rows, &refs, &slo(&["p99 < 20ms"]), &knee).unwrap();
        assert_eq!(op.index, 3);
        assert_eq!(op.offered, Offered::Rate(40.0));
        assert!((op.headroom.unwrap() - 0.25).abs() < 1e-12, "{op:?}");

        // A tighter SLO stops at 30/s (p99 11 ms < 12 ms): 50/30 − 1 = 66.7 %.
        let op = operating_point(
            &rows,
            &refs,
            &slo(&["p99 < 12ms", "error_rate < 1%"]),
            &knee,
        )
        .unwrap();
        assert_eq!(op.index, 2);
        assert!((op.headroom.unwrap() - 2.0 / 3.0).abs() < 1e-12, "{op:?}");

        // A loose SLO admits steps past the knee: negative headroom says so.
        let op = operating_point(&rows, &refs, &slo(&["p99 < 300ms"]), &knee).unwrap();
        assert_eq!(op.index, 5);
        assert!((op.headroom.unwrap() - (50.0 / 60.0 - 1.0)).abs() < 1e-12);

        // Nothing meets it.
        assert_eq!(
            operating_point(&rows, &refs, &slo(&["p99 < 5ms"]), &knee),
            None
        );

        // No knee: no headroom figure.
        let op = operating_point(&rows, &refs, &slo(&["p99 < 20ms"]), &Knee::default()).unwrap();
        assert_eq!((op.index, op.headroom), (3, None));
    }

    #[test]
    fn every_lighter_step_must_pass() {
        let (rows, mut ms) = ladder();
        // A latency spike at 20/s breaks the run of passing steps even though 30/s and 40/s
        // are fine again.
        ms[1] = step(20, 2, 50);
        let refs: Vec<&Measurement> = ms.iter().collect();
        let op = operating_point(&rows, &refs, &slo(&["p99 < 20ms"]), &Knee::default()).unwrap();
        assert_eq!(op.index, 0);

        // Errors above the knee rule's limit also stop the walk, even with no SLO given.
        let (rows, mut ms) = ladder();
        ms[2] = measurement(&[(2_000, 290)], &[(2_000, 10)], 10.0);
        let refs: Vec<&Measurement> = ms.iter().collect();
        let op = operating_point(&rows, &refs, &[], &Knee::default()).unwrap();
        assert_eq!(op.index, 1);
        let loose = KneeRule {
            max_error_ratio: 0.05,
            ..KneeRule::default()
        };
        let op = operating_point_with(&rows, &refs, &[], &Knee::default(), &loose).unwrap();
        assert_eq!(op.index, 7);
    }

    #[test]
    fn order_of_rows_does_not_matter_and_mismatches_are_rejected() {
        let (mut rows, mut ms) = ladder();
        rows.reverse();
        ms.reverse();
        let refs: Vec<&Measurement> = ms.iter().collect();
        let knee = Knee {
            last_good: Some(4),
            first_bad: Some(3),
            reason: None,
        };
        let op = operating_point(&rows, &refs, &slo(&["p99 < 20ms"]), &knee).unwrap();
        assert_eq!(op.index, 4);
        assert_eq!(op.offered, Offered::Rate(40.0));
        assert!((op.headroom.unwrap() - 0.25).abs() < 1e-12);

        assert_eq!(operating_point(&rows, &refs[1..], &[], &knee), None);
        assert_eq!(operating_point(&[], &[], &[], &Knee::default()), None);
    }
}
