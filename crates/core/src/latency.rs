//! Latency figures in milliseconds, summarised from an HDR histogram of microseconds: the
//! `latency` object of the result schema.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency statistics in milliseconds. When nothing completed there is no latency: every
/// figure is NaN, written `null` in JSON (through [`crate::nan`]) and "—" in reports, never a
/// 0 that would read as the fastest run ever.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    #[serde(with = "crate::nan::f64")]
    pub min: f64,
    #[serde(with = "crate::nan::f64")]
    pub mean: f64,
    #[serde(with = "crate::nan::f64")]
    pub stdev: f64,
    #[serde(with = "crate::nan::f64")]
    pub p50: f64,
    #[serde(with = "crate::nan::f64")]
    pub p75: f64,
    #[serde(with = "crate::nan::f64")]
    pub p90: f64,
    #[serde(with = "crate::nan::f64")]
    pub p95: f64,
    #[serde(with = "crate::nan::f64")]
    pub p99: f64,
    #[serde(with = "crate::nan::f64")]
    pub p999: f64,
    #[serde(with = "crate::nan::f64")]
    pub max: f64,
}

impl LatencyMs {
    /// The figures of a histogram that holds nothing: all undefined.
    pub const NONE: LatencyMs = LatencyMs {
        min: f64::NAN,
        mean: f64::NAN,
        stdev: f64::NAN,
        p50: f64::NAN,
        p75: f64::NAN,
        p90: f64::NAN,
        p95: f64::NAN,
        p99: f64::NAN,
        p999: f64::NAN,
        max: f64::NAN,
    };

    /// [`LatencyMs::NONE`], for serde's `default` of a field added later.
    pub fn none() -> LatencyMs {
        LatencyMs::NONE
    }

    /// Whether there are figures at all (something completed).
    pub fn is_defined(&self) -> bool {
        !self.max.is_nan()
    }

    /// Summarises a µs histogram. Percentiles are HDR's "highest equivalent value" at the
    /// quantile, the convention of wrk and HdrHistogram itself.
    pub fn from_histogram(h: &Histogram<u64>) -> LatencyMs {
        if h.is_empty() {
            return LatencyMs::NONE;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        LatencyMs {
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            stdev: h.stdev() / 1000.0,
            p50: ms(h.value_at_quantile(0.50)),
            p75: ms(h.value_at_quantile(0.75)),
            p90: ms(h.value_at_quantile(0.90)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        }
    }
}
