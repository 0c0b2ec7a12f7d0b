//! One row per step of a rate or concurrency ladder: what was offered, what came back, and the
//! latency shape — the input of [`crate::knee::find_knee`] and [`crate::slo::operating_point`].

use perfbase_core::result::{decode_histogram, Measurement};

pub(crate) use perfbase_core::study::fmt_amount;
// The row and offered-load types live in the interface crate, as part of the result's `study`
// section; they are re-exported here, where they were first defined.
pub use perfbase_core::study::{Offered, StepRow};

/// Builds the row of one step from its measurement.
///
/// The `under_ms` shares are counted from the step's response-time HDR histogram
/// (`m.histogram.response`, µs), as the count of values below `bucket × 1000` µs over the total.
/// HDR resolution caveat: the histogram keeps 3 significant digits, so values are only known to
/// within their equivalence range (≤ 1/1024 of the value; exact below 2.048 ms). A value in the
/// same range as `bucket × 1000 − 1` µs counts as below the bucket, so a share may include
/// operations up to ~0.1 % slower than the bucket edge (never for edges where a range starts,
/// e.g. any whole-millisecond bucket up to 16 ms).
pub fn step_row(name: &str, offered: Offered, m: &Measurement, buckets_ms: &[f64]) -> StepRow {
    let hist = decode_histogram(&m.histogram.response).ok();
    let under_ms = buckets_ms
        .iter()
        .map(|&bucket| {
            let share = match &hist {
                Some(h) if !h.is_empty() => {
                    let limit_us = bucket * 1000.0;
                    let below = if limit_us.is_nan() || limit_us <= 0.0 {
                        0
                    } else if limit_us < 1.0 {
                        // Values are whole µs: only 0 µs records are below a sub-µs edge.
                        h.count_between(0, 0)
                    } else {
                        // Values < limit: the ranges from 0 up to the one holding ⌈limit⌉ − 1.
                        // Limits past the histogram's top are clamped by count_between.
                        let last_below = (limit_us.ceil() as u64).saturating_sub(1);
                        h.count_between(0, last_below)
                    };
                    below as f64 / h.len() as f64
                }
                _ => f64::NAN,
            };
            (bucket, share)
        })
        .collect();
    let l = &m.latency_ms;
    StepRow {
        name: name.to_string(),
        offered,
        // In the unit the load was offered in: a journey's rate is of iterations, not of
        // the several requests each makes, so a knee compares like with like.
        achieved_rps: m.iterations.as_ref().map_or(m.rps, |i| i.rate),
        success_ratio: m.success_ratio,
        mean_ms: l.mean,
        min_ms: l.min,
        p50_ms: l.p50,
        p90_ms: l.p90,
        p95_ms: l.p95,
        p99_ms: l.p99,
        max_ms: l.max,
        under_ms,
        invalid: fell_short(m),
        p99_thirds_ms: p99_thirds(&m.timeline),
        availability: m.availability.clone().filter(|a| a.was_out()),
    }
}

/// An open-model step whose sending fell more than 1 % short of its rate did not apply the
/// load it names: why, in words.
fn fell_short(m: &Measurement) -> Option<String> {
    let o = m.open_model.as_ref()?;
    (o.requested_rate > 0.0 && o.achieved_rate < 0.99 * o.requested_rate).then(|| {
        format!(
            "started {:.1}/s of the {}/s asked ({:.1} % short: {} unsent, {} late)",
            o.achieved_rate,
            fmt_amount(o.requested_rate),
            (1.0 - o.achieved_rate / o.requested_rate) * 100.0,
            o.unsent,
            o.late
        )
    })
}

/// The median per-second p99 of the first, middle and last third of a timeline's seconds
/// that saw completions; None with fewer than 3 such seconds.
fn p99_thirds(timeline: &[perfbase_core::timeline::TimelinePoint]) -> Option<[f64; 3]> {
    let p99: Vec<f64> = timeline
        .iter()
        .filter(|p| p.requests > 0)
        .map(|p| p.p99_ms)
        .collect();
    let n = p99.len();
    if n < 3 {
        return None;
    }
    let median = |part: &[f64]| {
        let mut v = part.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let third = n / 3;
    Some([
        median(&p99[..third]),
        median(&p99[third..n - third]),
        median(&p99[n - third..]),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::measurement;

    #[test]
    fn a_journeys_achieved_rate_is_of_iterations_the_unit_its_load_is_offered_in() {
        // 100 requests over 4 s are 25 requests/s, but 5 journeys of 4 steps a second.
        let mut m = measurement(&[(1_000, 100)], &[], 4.0);
        let row = |m: &Measurement| step_row("rate=5/s", Offered::Rate(5.0), m, &[]).achieved_rps;
        assert_eq!(row(&m), 25.0);
        m.iterations = Some(perfbase_core::result::Iterations {
            count: 20,
            ok: 20,
            failed: 0,
            rate: 5.0,
            duration_ms: perfbase_core::result::LatencyMs::NONE,
            histogram: String::new(),
        });
        assert_eq!(row(&m), 5.0);
    }

    #[test]
    fn row_copies_the_measurement_and_counts_buckets() {
        // 50 at 1 ms, 30 at 5 ms, 15 at 20 ms, 5 failures at 250 ms; 100 ops over 4 s.
        let m = measurement(
            &[(1_000, 50), (5_000, 30), (20_000, 15)],
            &[(250_000, 5)],
            4.0,
        );
        let row = step_row(
            "rate=25/s",
            Offered::Rate(25.0),
            &m,
            &[1.0, 1.001, 5.0, 10.0, 20.0, 100.0, 1000.0, 1e9],
        );
        assert_eq!(row.name, "rate=25/s");
        assert_eq!(row.offered, Offered::Rate(25.0));
        assert_eq!(row.achieved_rps, 25.0);
        assert_eq!(row.success_ratio, 0.95);
        assert!((row.p50_ms - 1.0).abs() < 0.01);
        assert!((row.p90_ms - 20.0).abs() < 0.05);
        assert!((row.p99_ms - 250.0).abs() < 0.5);
        assert!((row.max_ms - 250.0).abs() < 0.5);
        let shares: Vec<f64> = row.under_ms.iter().map(|&(_, s)| s).collect();
        // "< 1 ms" excludes the values at exactly 1 ms; "< 1.001 ms" includes them.
        assert_eq!(shares, vec![0.0, 0.5, 0.5, 0.8, 0.8, 0.95, 1.0, 1.0]);
        assert_eq!(row.under_ms[2].0, 5.0);
    }

    #[test]
    fn degenerate_buckets_and_empty_steps() {
        let m = measurement(&[(0, 2), (10, 2)], &[], 1.0);
        let row = step_row(
            "s",
            Offered::Concurrency(4),
            &m,
            &[0.0, -1.0, 0.0005, 0.011],
        );
        let shares: Vec<f64> = row.under_ms.iter().map(|&(_, s)| s).collect();
        assert_eq!(shares, vec![0.0, 0.0, 0.5, 1.0]);

        let empty = measurement(&[], &[], 1.0);
        let row = step_row("s", Offered::Rate(1.0), &empty, &[10.0]);
        assert!(row.under_ms[0].1.is_nan());

        let mut broken = measurement(&[(1_000, 1)], &[], 1.0);
        broken.histogram.response = "not a histogram".into();
        assert!(
            step_row("s", Offered::Rate(1.0), &broken, &[10.0]).under_ms[0]
                .1
                .is_nan()
        );
    }
}
