//! Test fixtures: real [`Measurement`]s built through the core [`Recorder`], so their
//! histograms and percentiles are exactly what a run would produce.

use perfbase_core::result::Measurement;
use perfbase_core::{Class, Outcome, Recorder};
use std::time::Duration;

/// A measurement of `ok` successes and `err` failures, each given as (latency µs, count),
/// over `secs` seconds of wall time (closed model).
pub(crate) fn measurement(ok: &[(u64, u64)], err: &[(u64, u64)], secs: f64) -> Measurement {
    let mut rec = Recorder::new(false);
    let mut at = Duration::ZERO;
    for (outcome, groups) in [
        (Outcome::http(200, 100, 50), ok),
        (Outcome::error(Class::Timeout, "timed out"), err),
    ] {
        for &(us, count) in groups {
            for _ in 0..count {
                rec.record(&outcome, Duration::from_micros(us), Duration::ZERO, at);
                at += Duration::from_micros(1);
            }
        }
    }
    rec.finish();
    Measurement::from_recorder(&rec, Duration::from_secs_f64(secs), None)
}

/// A step of `achieved` completed operations per second over 10 s, all successful: 98 % of
/// them at `fast_ms` and 2 % at `p99_ms`, so p50 ≈ `fast_ms` and p99 ≈ `p99_ms`.
pub(crate) fn step(achieved: u64, fast_ms: u64, p99_ms: u64) -> Measurement {
    let n = achieved * 10;
    let slow = (n / 50).max(1);
    measurement(
        &[(fast_ms * 1000, n - slow), (p99_ms * 1000, slow)],
        &[],
        10.0,
    )
}
