//! A script's own metrics (k6's `Counter`, `Gauge`, `Rate` and `Trend`): the samples a step
//! carries in its [`Outcome`](crate::Outcome), what a recorder keeps of them, and their block
//! in a result, merged exactly like every other measured block.
//!
//! A trend keeps an HDR histogram of its values in thousandths (3 significant digits, from 0
//! to 3.6 million), so its percentiles add up exactly across workers and agents as latency's
//! do; its count, sum, minimum and maximum are kept exactly beside it.

use crate::histogram::{decode_histogram, encode_histogram, new_histogram, HIGHEST_US, SIGFIG};
use crate::latency::LatencyMs;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The most metrics a run keeps apart; a script that declares more is told so.
pub const MAX_METRICS: usize = 64;

/// Names that thresholds read as perfbase's or k6's own figures, never a script metric's.
pub const RESERVED: [&str; 21] = [
    "min",
    "mean",
    "p50",
    "p75",
    "p90",
    "p95",
    "p99",
    "p999",
    "max",
    "error_rate",
    "success_ratio",
    "rps",
    "checks",
    "avg",
    "med",
    "p",
    "http_req_failed",
    "http_reqs",
    "http_req_duration",
    "iterations",
    "iteration_duration",
];

/// Whether `name` is one of [`RESERVED`] (in any case).
pub fn reserved(name: &str) -> bool {
    RESERVED.contains(&name.to_ascii_lowercase().as_str())
}

/// What kind of figure a metric is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Values added up (k6's `count` is their sum, `rate` the sum per second).
    Counter,
    /// The last value set, with the lowest and highest.
    Gauge,
    /// The share of values that were true (non-zero).
    Rate,
    /// Every value kept: percentiles, mean, minimum and maximum.
    Trend,
}

impl MetricKind {
    /// The name as a script and the result write it.
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Rate => "rate",
            MetricKind::Trend => "trend",
        }
    }
}

/// One value a script added to its metric `metric` (an index into the driver's
/// [`metrics`](crate::Driver::metrics)).
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub metric: u16,
    pub value: f64,
}

/// The values a step added, in order. Allocated only by a step that added one.
#[derive(Debug, Clone, Default)]
pub struct Samples(pub Vec<Sample>);

// Equal when the same values went to the same metrics, bit for bit (NaN is refused before it
// gets here), so an outcome stays comparable as a whole.
impl PartialEq for Samples {
    fn eq(&self, other: &Samples) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| a.metric == b.metric && a.value.to_bits() == b.value.to_bits())
    }
}
impl Eq for Samples {}

/// A trend's value as the histogram keeps it: thousandths, clamped to its range (a negative
/// value counts as 0 in the percentiles; minimum, mean and maximum keep it exactly).
fn thousandths(v: f64) -> u64 {
    (v * 1000.0).round().clamp(0.0, HIGHEST_US as f64) as u64
}

/// The value of `low..=high` with the fewest significant digits (thousandths).
fn roundest(low: u64, high: u64) -> u64 {
    let mut step = 1_000_000_000_000;
    while step > 1 {
        let r = low.div_ceil(step) * step;
        if r <= high {
            return r;
        }
        step /= 10;
    }
    low
}

/// One metric's figures on one worker (or merged).
#[derive(Debug, Clone)]
pub struct MetricStats {
    pub name: String,
    pub kind: MetricKind,
    /// Values added.
    pub samples: u64,
    pub sum: f64,
    /// Values that were not 0 (a rate's trues).
    pub nonzero: u64,
    pub min: f64,
    pub max: f64,
    /// A gauge's last value and when it was set on the run's clock.
    pub last: f64,
    pub last_at: Duration,
    /// A trend's values, in thousandths.
    pub values: Option<Box<Histogram<u64>>>,
}

impl MetricStats {
    pub fn new(name: &str, kind: MetricKind) -> MetricStats {
        MetricStats {
            name: name.to_string(),
            kind,
            samples: 0,
            sum: 0.0,
            nonzero: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            last: f64::NAN,
            last_at: Duration::ZERO,
            values: (kind == MetricKind::Trend).then(|| Box::new(new_histogram(SIGFIG))),
        }
    }

    /// Adds `value`, set at `at` on the run's clock.
    pub fn add(&mut self, value: f64, at: Duration) {
        self.samples += 1;
        self.sum += value;
        self.nonzero += u64::from(value != 0.0);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        if at >= self.last_at || self.last.is_nan() {
            self.last = value;
            self.last_at = at;
        }
        if let Some(h) = self.values.as_mut() {
            h.saturating_record(thousandths(value));
        }
    }

    /// Adds `other`'s values (the same metric on another worker).
    pub fn merge(&mut self, other: &MetricStats) {
        self.samples += other.samples;
        self.sum += other.sum;
        self.nonzero += other.nonzero;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if !other.last.is_nan() && (self.last.is_nan() || other.last_at > self.last_at) {
            self.last = other.last;
            self.last_at = other.last_at;
        }
        if let (Some(a), Some(b)) = (self.values.as_mut(), other.values.as_ref()) {
            let _ = a.add(&**b);
        }
    }
}

/// A recorder's script metrics, in the driver's order: what its steps set, merged by name.
#[derive(Debug, Clone, Default)]
pub struct MetricSet(Vec<MetricStats>);

impl MetricSet {
    /// Appends the definitions of `defs` past those it has (at most [`MAX_METRICS`]).
    pub fn grow(&mut self, defs: &[(String, MetricKind)]) {
        let known = self.0.len();
        self.0.extend(
            defs.iter()
                .take(MAX_METRICS)
                .skip(known)
                .map(|(n, k)| MetricStats::new(n, *k)),
        );
    }

    /// Adds a step's values, set at `at` on the run's clock; a value of a metric it does not
    /// know is dropped.
    pub fn add(&mut self, samples: &Samples, at: Duration) {
        for s in &samples.0 {
            if let Some(m) = self.0.get_mut(s.metric as usize) {
                m.add(s.value, at);
            }
        }
    }

    /// Adds `other`'s figures by name.
    pub fn merge(&mut self, other: &MetricSet) {
        merge_all(&mut self.0, &other.0);
    }

    /// Each metric's figures.
    pub fn stats(&self) -> &[MetricStats] {
        &self.0
    }
}

/// Adds every stats of `other` into `into` by name (a name not there yet is appended, up to
/// [`MAX_METRICS`]).
fn merge_all(into: &mut Vec<MetricStats>, other: &[MetricStats]) {
    for m in other {
        match into
            .iter()
            .position(|s| s.name == m.name && s.kind == m.kind)
        {
            Some(i) => into[i].merge(m),
            None if into.len() < MAX_METRICS => into.push(m.clone()),
            None => {}
        }
    }
}

/// One metric in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricResult {
    pub name: String,
    pub kind: MetricKind,
    /// Values added.
    pub samples: u64,
    /// Their sum: a counter's count.
    pub sum: f64,
    /// A counter: its sum per second. A rate: the share of values that were not 0 (0..1).
    /// NaN (`null`) for a rate with no value.
    #[serde(with = "crate::nan::f64")]
    pub rate: f64,
    /// A rate: how many values were not 0.
    pub trues: u64,
    #[serde(with = "crate::nan::f64")]
    pub min: f64,
    #[serde(with = "crate::nan::f64")]
    pub max: f64,
    /// A gauge: its last value; a trend: its mean; a counter: its sum; a rate: its share.
    #[serde(with = "crate::nan::f64")]
    pub value: f64,
    /// A gauge: when its last value was set, in seconds on the run's clock (which value is
    /// last when agents' gauges merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_at_s: Option<f64>,
    /// A trend: its statistics in its own unit (the `latency` object's fields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<LatencyMs>,
    /// A trend: its histogram of thousandths, encoded as the response histogram is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

impl MetricResult {
    /// The figures of `s` over `secs` seconds.
    pub fn from_stats(s: &MetricStats, secs: f64) -> MetricResult {
        let none = s.samples == 0;
        let share = if none {
            f64::NAN
        } else {
            s.nonzero as f64 / s.samples as f64
        };
        let (rate, value) = match s.kind {
            MetricKind::Counter => (if secs > 0.0 { s.sum / secs } else { 0.0 }, s.sum),
            MetricKind::Rate => (share, share),
            MetricKind::Gauge => (f64::NAN, s.last),
            MetricKind::Trend if none => (f64::NAN, f64::NAN),
            MetricKind::Trend => (f64::NAN, s.sum / s.samples as f64),
        };
        MetricResult {
            name: s.name.clone(),
            kind: s.kind,
            samples: s.samples,
            sum: s.sum,
            rate,
            trues: s.nonzero,
            min: if none { f64::NAN } else { s.min },
            max: if none { f64::NAN } else { s.max },
            value,
            last_at_s: (s.kind == MetricKind::Gauge && !none).then_some(s.last_at.as_secs_f64()),
            values: s.values.as_deref().map(|h| {
                // Thousandths read as µs give the values in their own unit; the exact
                // extremes and mean replace the histogram's rounded ones.
                // Percentiles are the histogram's, within 0.1 %: the roundest value of the
                // bucket (every value in it is as true), so that round values (counts, sizes,
                // whole ms) read as themselves; never past the extremes.
                let mut v = LatencyMs::from_histogram(h);
                if !none {
                    (v.min, v.max, v.mean) = (s.min, s.max, s.sum / s.samples as f64);
                    let at = |q: f64| {
                        let v = h.value_at_quantile(q);
                        let r = roundest(h.lowest_equivalent(v), h.highest_equivalent(v));
                        (r as f64 / 1000.0).clamp(s.min, s.max)
                    };
                    (v.p50, v.p75, v.p90) = (at(0.5), at(0.75), at(0.9));
                    (v.p95, v.p99, v.p999) = (at(0.95), at(0.99), at(0.999));
                }
                v
            }),
            histogram: s.values.as_deref().map(encode_histogram),
        }
    }

    /// Back to what the figures were made of, to add another part to.
    fn stats(&self) -> MetricStats {
        let mut s = MetricStats::new(&self.name, self.kind);
        if self.samples == 0 {
            return s;
        }
        s.samples = self.samples;
        s.sum = self.sum;
        s.nonzero = self.trues;
        s.min = self.min;
        s.max = self.max;
        if self.kind == MetricKind::Gauge {
            s.last = self.value;
            s.last_at = Duration::from_secs_f64(self.last_at_s.unwrap_or(0.0).max(0.0));
        }
        if let (Some(h), Some(text)) = (s.values.as_mut(), self.histogram.as_deref()) {
            if let Ok(decoded) = decode_histogram(text) {
                let _ = h.add(&decoded);
            }
        }
        s
    }

    /// The metrics of several measurements added up by name, over `secs` seconds (a counter's
    /// rate is its whole sum over them).
    pub fn merge<'a>(
        parts: impl IntoIterator<Item = &'a MetricResult>,
        secs: f64,
    ) -> Vec<MetricResult> {
        let mut all: Vec<MetricStats> = Vec::new();
        for m in parts {
            merge_all(&mut all, &[m.stats()]);
        }
        all.iter()
            .map(|s| MetricResult::from_stats(s, secs))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(kind: MetricKind, values: &[f64]) -> MetricStats {
        let mut s = MetricStats::new("m", kind);
        for (i, v) in values.iter().enumerate() {
            s.add(*v, Duration::from_millis(i as u64 * 10));
        }
        s
    }

    #[test]
    fn each_kind_reports_its_figure() {
        let c = MetricResult::from_stats(&stats(MetricKind::Counter, &[1.0, 2.0, 3.0]), 2.0);
        assert_eq!((c.value, c.rate, c.samples), (6.0, 3.0, 3));
        let r = MetricResult::from_stats(&stats(MetricKind::Rate, &[1.0, 0.0, 1.0, 1.0]), 1.0);
        assert_eq!((r.value, r.trues), (0.75, 3));
        let g = MetricResult::from_stats(&stats(MetricKind::Gauge, &[5.0, 9.0, 2.0]), 1.0);
        assert_eq!((g.value, g.min, g.max), (2.0, 2.0, 9.0));
        let t = MetricResult::from_stats(&stats(MetricKind::Trend, &[10.0, 20.0, 30.5]), 1.0);
        let v = t.values.unwrap();
        assert_eq!((v.min, v.max, v.p99), (10.0, 30.5, 30.5));
        assert_eq!(v.p50, 20.0);
        assert_eq!(
            (roundest(4000, 4001), roundest(30496, 30503)),
            (4000, 30500)
        );
        assert_eq!((roundest(193, 193), roundest(0, 0)), (193, 0));
        assert!((t.value - 60.5 / 3.0).abs() < 1e-12);
        // Nothing added: no figure that could pass a threshold.
        let none = MetricResult::from_stats(&MetricStats::new("r", MetricKind::Rate), 1.0);
        assert!(none.value.is_nan() && none.min.is_nan());
    }

    #[test]
    fn parts_merge_to_the_figures_of_the_whole() {
        for kind in [
            MetricKind::Counter,
            MetricKind::Gauge,
            MetricKind::Rate,
            MetricKind::Trend,
        ] {
            let a: Vec<f64> = (0..50).map(|i| (i * 7 % 13) as f64 + 0.25).collect();
            let b: Vec<f64> = (0..70).map(|i| (i * 5 % 11) as f64).collect();
            let mut second = MetricStats::new("m", kind);
            for (i, v) in b.iter().enumerate() {
                // Later on the clock than every value of `a`: the gauge's last is b's.
                second.add(*v, Duration::from_secs(10 + i as u64));
            }
            let parts = [
                MetricResult::from_stats(&stats(kind, &a), 4.0),
                MetricResult::from_stats(&second, 4.0),
            ];
            let mut whole = stats(kind, &a);
            whole.merge(&second);
            let merged = MetricResult::merge(&parts, 4.0);
            // As JSON: a figure a kind has not (NaN) is `null` on both sides.
            let json = |m: &[MetricResult]| serde_json::to_string(m).unwrap();
            assert_eq!(
                json(&merged),
                json(&[MetricResult::from_stats(&whole, 4.0)]),
                "{kind:?}"
            );
        }
        if let [g] = &MetricResult::merge(
            &[
                MetricResult::from_stats(&stats(MetricKind::Gauge, &[1.0]), 1.0),
                MetricResult::from_stats(&stats(MetricKind::Gauge, &[7.0, 3.0]), 1.0),
            ],
            1.0,
        )[..]
        {
            assert_eq!(g.value, 3.0, "the value set last on the run's clock");
        }
    }
}
