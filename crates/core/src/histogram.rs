//! The latency histograms' common range: microseconds from 1 µs to one hour. The recorder's
//! histograms (3 significant digits) and the timeline's per-second ones (2) share it, so
//! either can be built here without one depending on the other.

use hdrhistogram::Histogram;

/// Latencies are recorded in microseconds: loopback round trips are tens of µs, and the
/// range below reaches one hour, longer than any timeout perfbase accepts.
pub const UNIT_PER_S: u64 = 1_000_000;
/// The highest latency kept exactly (1 h in µs); longer ones are clamped to it.
pub const HIGHEST_US: u64 = 3_600 * UNIT_PER_S;
/// Significant digits kept by the main histograms.
pub const SIGFIG: u8 = 3;

/// A new, empty latency histogram with perfbase's range and precision.
pub fn new_histogram(sigfig: u8) -> Histogram<u64> {
    // Valid constant bounds (1 ≤ low, high ≥ 2·low, sigfig ≤ 5): construction cannot fail.
    Histogram::new_with_bounds(1, HIGHEST_US, sigfig).expect("constant histogram bounds are valid")
}
