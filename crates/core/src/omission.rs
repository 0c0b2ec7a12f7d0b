//! The closed model's blind spot: a wrk-style estimate of what coordinated omission hid,
//! carried beside a closed phase's measured figures (`Measurement::coordinated_omission`).

use crate::latency::LatencyMs;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The closed model's blind spot, estimated. A closed-model connection sends its next
/// request only when the last one answered, so while the server stalls it sends nothing, and
/// the requests a user would have sent meanwhile are never timed (coordinated omission). As
/// wrk does, each response slower than the expected interval (the connection's own pace: the
/// mean response time) stands for the requests that would have been sent every interval during it, each
/// waiting for the rest: values `v − i, v − 2i, …` are added to a copy of the histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoEstimate {
    /// The interval each connection is assumed to keep: the mean response time, ms.
    pub expected_interval_ms: f64,
    /// The corrected figures: an estimate, not a measurement. Only the open model (`-r`)
    /// measures what users see during a stall.
    pub latency_ms: LatencyMs,
    /// The run shows the signature of coordinated omission: the corrected p99 is at least
    /// twice the measured one and [`SUSPECT_MS`] more. Reports then warn and name `-r`.
    pub suspected: bool,
}

/// Most synthetic values added for one recorded value: past this the estimate steps by
/// several intervals at once (each step weighted as the intervals it stands for), so a
/// 10 s timeout at a 50 µs pace costs 10,000 records, not 200,000.
const MAX_CORRECTION_STEPS: u64 = 10_000;

/// How much higher the corrected p99 must be, besides twice as high, to call a run
/// suspect: scheduler hiccups of a few ms on a busy machine, at a 50 µs pace, lift the
/// corrected p99 by a millisecond or two (measured on the steady reference service); the
/// stalls this is for cost tens to hundreds.
pub const SUSPECT_MS: f64 = 10.0;

impl CoEstimate {
    /// The estimate for a closed-model response histogram (µs); None when it is empty.
    pub fn of(response: &Histogram<u64>) -> Option<CoEstimate> {
        if response.is_empty() {
            return None;
        }
        let interval = (response.mean().round() as u64).max(1);
        let mut corrected = response.clone();
        for v in response.iter_recorded() {
            let (value, count) = (v.value_iterated_to(), v.count_at_value());
            let steps = value / interval;
            if steps < 2 {
                continue;
            }
            let stride = steps.div_ceil(MAX_CORRECTION_STEPS).max(1);
            let mut missed = value.saturating_sub(interval * stride);
            while missed >= interval {
                corrected.saturating_record_n(missed, count.saturating_mul(stride));
                missed = missed.saturating_sub(interval * stride);
            }
        }
        let raw = LatencyMs::from_histogram(response);
        let latency_ms = LatencyMs::from_histogram(&corrected);
        Some(CoEstimate {
            expected_interval_ms: interval as f64 / 1000.0,
            suspected: latency_ms.p99 >= 2.0 * raw.p99 && latency_ms.p99 - raw.p99 >= SUSPECT_MS,
            latency_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::{new_histogram, SIGFIG};

    #[test]
    fn a_closed_run_over_stalls_is_suspected_and_a_steady_one_is_not() {
        // 10,000 requests of 0.2 ms and, in 5 stalls, 20 connections each waiting 200 ms:
        // raw p99 stays 0.2 ms, while a user sending every 0.2 ms would have waited up to
        // 200 ms a thousand times per stalled request.
        let mut h = new_histogram(SIGFIG);
        h.saturating_record_n(200, 10_000);
        h.saturating_record_n(200_000, 100);
        let e = CoEstimate::of(&h).unwrap();
        assert_eq!(e.expected_interval_ms, 2.178, "the mean pace");
        assert!(e.suspected);
        assert!(LatencyMs::from_histogram(&h).p99 < 1.0);
        assert!((e.latency_ms.p99 - 198.0).abs() < 4.0, "{:?}", e.latency_ms);
        // A steady server with a few 10 ms hiccups: no suspicion.
        let mut h = new_histogram(SIGFIG);
        h.saturating_record_n(200, 50_000);
        h.saturating_record_n(10_000, 5);
        let e = CoEstimate::of(&h).unwrap();
        assert!(!e.suspected, "{e:?}");
        // The hiccups of a busy machine at a 54 µs pace (the steady reference service under a
        // full test suite): p99.9 7 ms, max 8.9 ms; not suspect.
        let mut h = new_histogram(SIGFIG);
        h.saturating_record_n(54, 30_000);
        h.saturating_record_n(7_000, 30);
        h.saturating_record_n(8_900, 3);
        assert!(!CoEstimate::of(&h).unwrap().suspected);
        // A 1 h value is bounded work, not billions of records.
        let mut h = new_histogram(SIGFIG);
        h.saturating_record_n(1, 1000);
        h.saturating_record(3_600_000_000);
        assert!(CoEstimate::of(&h).unwrap().suspected);
        assert!(CoEstimate::of(&new_histogram(SIGFIG)).is_none());
    }
}
