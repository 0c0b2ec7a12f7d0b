//! Where does a service saturate? The knee of a rate or concurrency ladder: the first step at
//! which throughput stops following the offered load, latency blows up, or errors appear.

use crate::sweep::{fmt_amount, Offered, StepRow};

// The knee and its rule are part of the result's `study` section, so they live in the
// interface crate; re-exported here.
pub use perfbase_core::study::{Knee, KneeRule};

/// Finds the knee of a ladder: the first step where the service stops keeping up.
///
/// Rows must be in ladder order, lowest load first. A step is **bad** when any of these holds
/// (the numbers are the [`KneeRule`] defaults):
///
/// 1. *Throughput, rate steps*: achieved throughput is below `min_throughput_ratio` × the
///    offered rate (achieved < 95 % of offered).
/// 2. *Throughput, concurrency steps other than the first*: achieved throughput gained less
///    than `min_gain` over the previous step's (achieved < 1.05 × the previous step's achieved).
/// 3. *Latency, every step other than the first*: p99 is above `p99_factor` × the first
///    step's p99 (p99 > 3 × the lowest-load p99). Not applied when the first step's p99 is 0.
/// 4. *Errors, every step*: the error ratio, 1 − success ratio, is above `max_error_ratio`
///    (more than 1 % of operations failed).
/// 5. *Latency trend, every step*: the median per-second p99 climbs from the step's first
///    third through its middle third to its last, ending above `trend_factor` × the first
///    third's and at least 1 ms higher: a queue still growing, as at 1.01 × capacity, where
///    a short step's totals still look good.
/// 6. *Validity*: an open-model step that started more than 1 % fewer operations than its
///    rate asked for ([`StepRow::invalid`]) did not apply its load.
///
/// The knee is the first bad step that the step after it **confirms** by being bad too: a
/// single noisy step (a concurrency step that gained 1.2 % before the next gained 77 %) is
/// passed over, and its reasons are kept in the knee's `reason` as a dip. A bad last step
/// has nothing after it and is the knee as it is. `first_bad` is the knee's index, `reason`
/// lists every rule it broke; `last_good` is the step just before it (None if the very
/// first step is the knee). If no step is a confirmed bad step, no knee was found and all
/// three fields are None: the ladder did not reach saturation.
pub fn find_knee(rows: &[StepRow], rule: &KneeRule) -> Knee {
    let base_p99 = rows.first().map(|r| r.p99_ms).unwrap_or(0.0);
    let bad = |i: usize| {
        let prev = i.checked_sub(1).and_then(|p| rows.get(p));
        bad_reasons(&rows[i], prev, i == 0, base_p99, rule)
    };
    let mut dips = Vec::new();
    for i in 0..rows.len() {
        let reasons = bad(i);
        if reasons.is_empty() {
            continue;
        }
        if i + 1 < rows.len() && bad(i + 1).is_empty() {
            dips.push(format!("{} ({})", rows[i].name, reasons.join("; ")));
            continue;
        }
        let mut reason = reasons.join("; ");
        if !dips.is_empty() {
            reason.push_str(&format!(
                "; passed over as not confirmed by the next step: {}",
                dips.join(", ")
            ));
        }
        return Knee {
            last_good: i.checked_sub(1),
            first_bad: Some(i),
            reason: Some(reason),
        };
    }
    Knee::default()
}

/// Milliseconds to 3 significant digits, the precision of the HDR histograms they come from:
/// 160, 40.0, 8.00, 0.125.
fn fmt_ms(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Every rule `row` breaks, as human-readable reasons; empty when the step is good.
fn bad_reasons(
    row: &StepRow,
    prev: Option<&StepRow>,
    first: bool,
    base_p99: f64,
    rule: &KneeRule,
) -> Vec<String> {
    let mut reasons = Vec::new();
    let achieved = row.achieved_rps;
    match (row.offered, prev) {
        (Offered::Rate(offered), _) => {
            if achieved < rule.min_throughput_ratio * offered {
                reasons.push(format!(
                    "achieved {achieved:.1}/s < {} % of offered {}/s",
                    fmt_amount(rule.min_throughput_ratio * 100.0),
                    fmt_amount(offered)
                ));
            }
        }
        (Offered::Concurrency(_), Some(prev)) => {
            let before = prev.achieved_rps;
            if achieved < (1.0 + rule.min_gain) * before {
                // before > 0 here, since achieved ≥ 0 is below a multiple of it.
                let gain = (achieved / before - 1.0) * 100.0;
                reasons.push(format!(
                    "achieved {achieved:.1}/s gained {gain:.1} % over {before:.1}/s at the previous step (< {} %)",
                    fmt_amount(rule.min_gain * 100.0)
                ));
            }
        }
        (Offered::Concurrency(_), None) => {}
    }
    if !first && base_p99 > 0.0 && row.p99_ms > rule.p99_factor * base_p99 {
        reasons.push(format!(
            "p99 {} ms > {} × the first step's p99 {} ms",
            fmt_ms(row.p99_ms),
            fmt_amount(rule.p99_factor),
            fmt_ms(base_p99)
        ));
    }
    if let Some([first, middle, last]) = row.p99_thirds_ms {
        if first < middle
            && middle < last
            && last > rule.trend_factor * first
            && last - first >= 1.0
        {
            reasons.push(format!(
                "p99 kept climbing within the step: {} → {} → {} ms by thirds",
                fmt_ms(first),
                fmt_ms(middle),
                fmt_ms(last)
            ));
        }
    }
    if let Some(why) = &row.invalid {
        reasons.push(format!("invalid step: {why}"));
    }
    let error_ratio = 1.0 - row.success_ratio;
    if error_ratio > rule.max_error_ratio {
        reasons.push(format!(
            "error ratio {} % > {} %",
            fmt_amount(error_ratio * 100.0),
            fmt_amount(rule.max_error_ratio * 100.0)
        ));
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{measurement, step};
    use crate::sweep::step_row;
    use proptest::prelude::*;

    fn rate_row(i: usize, offered: f64, achieved: u64, p99_ms: u64) -> StepRow {
        let m = step(achieved, 2, p99_ms);
        step_row(&format!("step-{i}"), Offered::Rate(offered), &m, &[10.0])
    }

    #[test]
    fn rate_ladder_past_capacity() {
        // 10..80/s against a capacity of 40/s: achieved = min(offered, 40); p99 is 8 ms up to
        // capacity and then rises as the queue grows.
        let rows: Vec<StepRow> = (1..=8u64)
            .map(|k| {
                let offered = 10 * k;
                let p99 = if offered <= 40 { 8 } else { 8 * (offered - 30) };
                rate_row(k as usize, offered as f64, offered.min(40), p99)
            })
            .collect();
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!(knee.last_good, Some(3), "{knee:?}");
        assert_eq!(rows[3].offered, Offered::Rate(40.0));
        assert_eq!(knee.first_bad, Some(4));
        let reason = knee.reason.unwrap();
        // At 50/s: achieved 40 < 47.5, and p99 160 ms > 3 × 8 ms.
        assert!(
            reason
                == "achieved 40.0/s < 95 % of offered 50/s; p99 160 ms > 3 × the first step's p99 8.00 ms",
            "{reason}"
        );
    }

    #[test]
    fn concurrency_ladder_that_plateaus() {
        // Throughput 100/s per session up to 800/s; latency by Little's law, c / throughput.
        let ladder = [1u64, 2, 4, 8, 16, 32];
        let rows: Vec<StepRow> = ladder
            .iter()
            .map(|&c| {
                let thr = (100 * c).min(800);
                let latency_ms = 1000 * c / thr;
                let m = step(thr, latency_ms, 2 * latency_ms);
                step_row(&format!("c={c}"), Offered::Concurrency(c), &m, &[])
            })
            .collect();
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!(
            (knee.last_good, knee.first_bad),
            (Some(3), Some(4)),
            "{knee:?}"
        );
        assert_eq!(
            knee.reason.as_deref(),
            Some("achieved 800.0/s gained 0.0 % over 800.0/s at the previous step (< 5 %)")
        );

        // A gentler plateau: +3.6 % is not enough.
        let thr = [100u64, 190, 340, 560, 580, 585];
        let rows: Vec<StepRow> = thr
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let m = step(t, 5, 10);
                step_row("c", Offered::Concurrency(1 << i), &m, &[])
            })
            .collect();
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!((knee.last_good, knee.first_bad), (Some(3), Some(4)));
    }

    #[test]
    fn one_noisy_step_is_not_the_knee() {
        // Issue 13: a step gained 1.2 % (noise), then the next gained 77 % (57.8k → 102k/s there).
        let thr = [200u64, 400, 571, 578, 1020, 1030, 1035];
        let rows: Vec<StepRow> = thr
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let m = step(t, 1, 2);
                step_row(
                    &format!("c={}", i + 1),
                    Offered::Concurrency(i as u64 + 1),
                    &m,
                    &[],
                )
            })
            .collect();
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!(
            (knee.last_good, knee.first_bad),
            (Some(4), Some(5)),
            "{knee:?}"
        );
        let reason = knee.reason.unwrap();
        assert!(
            reason.contains("gained 1.0 %")
                && reason.contains("passed over")
                && reason.contains("c=4 (achieved 578.0/s gained 1.2 %"),
            "{reason}"
        );
        // A bad last step has nothing to confirm it: it is the knee as it is.
        let knee = find_knee(&rows[..4], &KneeRule::default());
        assert_eq!(knee.first_bad, Some(3));
    }

    #[test]
    fn a_step_whose_p99_keeps_climbing_is_past_the_knee() {
        // At 1.01 × capacity a 3 s step still achieves its rate and its p99 is not yet 3 × the
        // first step's, but within the step p99 climbs 2 → 12 → 22 ms: the queue grows.
        let mut rows: Vec<StepRow> = (1..=3u64)
            .map(|k| rate_row(k as usize, 10.0 * k as f64, 10 * k, 8))
            .collect();
        rows[0].p99_thirds_ms = Some([8.0, 8.2, 8.1]);
        rows[1].p99_thirds_ms = Some([2.0, 12.0, 22.0]);
        rows[2].p99_thirds_ms = Some([30.0, 40.0, 50.0]);
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!(knee.first_bad, Some(1), "{knee:?}");
        assert_eq!(
            knee.reason.as_deref(),
            Some("p99 kept climbing within the step: 2.00 → 12.0 → 22.0 ms by thirds")
        );
        // Sub-millisecond wobble and a climb that comes back down are not trends.
        rows[1].p99_thirds_ms = Some([0.2, 0.5, 0.9]);
        rows[2].p99_thirds_ms = Some([8.0, 30.0, 9.0]);
        assert_eq!(find_knee(&rows, &KneeRule::default()).first_bad, None);
    }

    #[test]
    fn a_step_that_fell_short_of_its_rate_is_invalid_and_bad() {
        let mut rows: Vec<StepRow> = (1..=3u64)
            .map(|k| rate_row(k as usize, 10.0 * k as f64, 10 * k, 8))
            .collect();
        rows[2].invalid = Some("started 29.0/s of the 30/s asked".into());
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!(knee.first_bad, Some(2));
        assert_eq!(
            knee.reason.as_deref(),
            Some("invalid step: started 29.0/s of the 30/s asked")
        );
    }

    #[test]
    fn curve_that_never_saturates() {
        let rows: Vec<StepRow> = (1..=6u64)
            .map(|k| rate_row(k as usize, 10.0 * k as f64, 10 * k, 8 + k))
            .collect();
        assert_eq!(find_knee(&rows, &KneeRule::default()), Knee::default());
        assert_eq!(find_knee(&[], &KneeRule::default()), Knee::default());
    }

    #[test]
    fn latency_and_error_rules() {
        // Throughput keeps up but p99 quadruples at the third step.
        let rows = vec![
            rate_row(0, 10.0, 10, 10),
            rate_row(1, 20.0, 20, 25),
            rate_row(2, 30.0, 30, 40),
        ];
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!((knee.last_good, knee.first_bad), (Some(1), Some(2)));
        assert_eq!(
            knee.reason.as_deref(),
            Some("p99 40.0 ms > 3 × the first step's p99 10.0 ms")
        );

        // 2 % errors at the first step: the knee is the first step, nothing was good.
        let m = measurement(&[(2_000, 98)], &[(2_000, 2)], 10.0);
        let rows = vec![step_row("s", Offered::Rate(10.0), &m, &[])];
        let knee = find_knee(&rows, &KneeRule::default());
        assert_eq!((knee.last_good, knee.first_bad), (None, Some(0)));
        assert_eq!(knee.reason.as_deref(), Some("error ratio 2 % > 1 %"));

        // A looser rule accepts the same step.
        let loose = KneeRule {
            max_error_ratio: 0.05,
            ..KneeRule::default()
        };
        assert_eq!(find_knee(&rows, &loose).first_bad, None);
    }

    fn synthetic(offered: f64, achieved: f64, p99: f64) -> StepRow {
        StepRow {
            name: String::new(),
            offered: Offered::Rate(offered),
            achieved_rps: achieved,
            success_ratio: 1.0,
            mean_ms: p99 / 2.0,
            min_ms: p99 / 4.0,
            p50_ms: p99 / 2.0,
            p90_ms: p99,
            p95_ms: p99,
            p99_ms: p99,
            max_ms: p99,
            under_ms: Vec::new(),
            invalid: None,
            p99_thirds_ms: None,
            availability: None,
        }
    }

    proptest! {
        #[test]
        fn knee_is_the_first_step_past_capacity_over_095(
            capacity in 10.0f64..10_000.0,
            start in 1.0f64..5_000.0,
            steps in proptest::collection::vec(0.5f64..2_000.0, 1..20),
            base_p99 in 0.5f64..100.0,
        ) {
            let mut offered = vec![start];
            for s in &steps {
                let next = offered[offered.len() - 1] + s;
                offered.push(next);
            }
            let limit = capacity / 0.95;
            // Stay clear of exact ties with the 95 % line, where rounding decides.
            prop_assume!(offered.iter().all(|o| (o - limit).abs() > 1e-6 * limit));
            // Monotone curve: achieved follows offered up to the capacity and then stays flat;
            // p99 grows gently (< 3 × base) until the knee and steeply after it.
            let rows: Vec<StepRow> = offered
                .iter()
                .map(|&o| {
                    let load = o / capacity;
                    let p99 = if o <= limit { base_p99 * (1.0 + 0.9 * load / (1.0 + load)) } else { base_p99 * 10.0 * load };
                    synthetic(o, o.min(capacity), p99)
                })
                .collect();
            let knee = find_knee(&rows, &KneeRule::default());
            let expected = offered.iter().position(|&o| o > limit);
            prop_assert_eq!(knee.first_bad, expected);
            prop_assert_eq!(knee.last_good, expected.and_then(|i| i.checked_sub(1)));
            prop_assert_eq!(knee.reason.is_some(), expected.is_some());
        }
    }
}
