//! The per-second timeline: requests, errors, p50 and p99 for every second of a phase.
//!
//! Each worker keeps the current second in a small histogram (2 significant digits) and, when
//! a completion falls into a later second, serialises the finished one (HDR V2, a few hundred
//! bytes) so long runs stay small. Merging workers deserialises and adds, so the merged
//! per-second percentiles are exact at that precision.

use crate::histogram::new_histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

const SIGFIG: u8 = 2;

/// One second of the run as reports show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// The second [s, s+1) of the run's clock, which starts with its first measured phase:
    /// the phases of a plan follow one another on it.
    pub second: u32,
    pub requests: u64,
    pub errors: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// How much of the second the phase (or run) covered, 0..1: less than 1 at its first and
    /// last second. A rate per second is `requests / span_s`.
    #[serde(default = "whole_second")]
    pub span_s: f64,
}

fn whole_second() -> f64 {
    1.0
}

impl TimelinePoint {
    /// Completions per second of the time this second was covered.
    pub fn rate(&self) -> f64 {
        if self.span_s > 0.0 {
            self.requests as f64 / self.span_s
        } else {
            self.requests as f64
        }
    }
}

#[derive(Debug, Clone)]
struct Closed {
    second: u32,
    requests: u64,
    errors: u64,
    histogram: Vec<u8>,
}

/// The timeline of one worker or of a merged phase.
#[derive(Debug, Clone)]
pub struct Timeline {
    current: Option<u32>,
    requests: u64,
    errors: u64,
    histogram: Histogram<u64>,
    closed: Vec<Closed>,
    /// The time covered on the run's clock, [from, to): set for a finished phase, joined
    /// when phases merge. Unset, every second counts whole, from second 0.
    span: Option<(Duration, Duration)>,
}

impl Default for Timeline {
    fn default() -> Self {
        Self::new()
    }
}

fn new_small() -> Histogram<u64> {
    new_histogram(SIGFIG)
}

fn encode(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    // Serialising into a Vec cannot fail on I/O; an encoding error would only come from a
    // histogram with impossible counts, and then the second is kept without percentiles.
    let _ = V2Serializer::new().serialize(h, &mut out);
    out
}

fn decode(bytes: &[u8]) -> Histogram<u64> {
    let mut slice = bytes;
    Deserializer::new()
        .deserialize(&mut slice)
        .unwrap_or_else(|_| new_small())
}

impl Timeline {
    pub fn new() -> Timeline {
        Timeline {
            current: None,
            requests: 0,
            errors: 0,
            histogram: new_small(),
            closed: Vec::new(),
            span: None,
        }
    }

    /// Sets the time this timeline covers on the run's clock (a phase's start and end).
    pub fn set_span(&mut self, from: Duration, to: Duration) {
        self.span = Some((from, to.max(from)));
    }

    /// The time covered on the run's clock, [from, to), once set.
    pub fn span(&self) -> Option<(Duration, Duration)> {
        self.span
    }

    /// How much of second `s` the covered time holds (1 without a span).
    fn covered(&self, s: u32) -> f64 {
        let Some((from, to)) = self.span else {
            return 1.0;
        };
        let (a, b) = (f64::from(s), f64::from(s) + 1.0);
        (b.min(to.as_secs_f64()) - a.max(from.as_secs_f64())).clamp(0.0, 1.0)
    }

    /// Counts a completion at `at` since the phase start.
    #[inline]
    pub fn record(&mut self, at: Duration, latency_us: u64, error: bool) {
        self.record_n(at, latency_us, 1, error as u64);
    }

    /// Counts `n` completions with one latency, `errors` of them failed.
    #[inline]
    pub fn record_n(&mut self, at: Duration, latency_us: u64, n: u64, errors: u64) {
        self.count_n(at, n, errors);
        self.histogram.saturating_record_n(latency_us, n);
    }

    /// Counts `n` operations (`errors` of them failed) completed `at` that have no latency.
    pub fn count_n(&mut self, at: Duration, n: u64, errors: u64) {
        let second = at.as_secs() as u32;
        if self.current != Some(second) {
            self.roll(second);
        }
        self.requests += n;
        self.errors += errors;
    }

    fn roll(&mut self, second: u32) {
        self.flush();
        self.current = Some(second);
    }

    /// Closes the current second.
    pub fn flush(&mut self) {
        if let Some(second) = self.current.take() {
            if self.requests > 0 {
                self.push_closed(Closed {
                    second,
                    requests: self.requests,
                    errors: self.errors,
                    histogram: encode(&self.histogram),
                });
            }
            self.requests = 0;
            self.errors = 0;
            self.histogram.reset();
        }
    }

    fn push_closed(&mut self, c: Closed) {
        // Completions are timed by one monotonic clock, so seconds arrive in order per worker;
        // a second seen again (merge) is added into the existing entry.
        match self.closed.binary_search_by_key(&c.second, |x| x.second) {
            Ok(i) => {
                let e = &mut self.closed[i];
                e.requests += c.requests;
                e.errors += c.errors;
                let mut h = decode(&e.histogram);
                let _ = h.add(decode(&c.histogram));
                e.histogram = encode(&h);
            }
            Err(i) => self.closed.insert(i, c),
        }
    }

    /// Adds another (flushed) timeline into this one; the covered time becomes the span of
    /// both (phases of a run follow one another, so the gaps between them are milliseconds).
    pub fn merge(&mut self, other: &Timeline) {
        self.flush();
        for c in &other.closed {
            self.push_closed(c.clone());
        }
        self.span = match (self.span, other.span) {
            (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
            (a, b) => a.or(b),
        };
    }

    /// Each recorded second's latency histogram (µs, 2 significant digits) with where it
    /// starts on the run's clock and how long the phase covered it (both in seconds): the
    /// intervals of an HdrHistogram log. A phase's first second starts when the phase did.
    pub fn intervals(&self) -> Vec<(f64, f64, Histogram<u64>)> {
        let from = self.span.map_or(0.0, |(f, _)| f.as_secs_f64());
        self.closed
            .iter()
            .map(|c| {
                let start = f64::from(c.second).max(from);
                (start, self.covered(c.second), decode(&c.histogram))
            })
            .collect()
    }

    /// The seconds recorded so far, from the first second covered (0 without a span), with
    /// empty seconds in between filled with zeros.
    pub fn points(&self) -> Vec<TimelinePoint> {
        let mut out = Vec::new();
        let mut next = self.span.map_or(0, |(from, _)| from.as_secs() as u32);
        for c in &self.closed {
            while next < c.second {
                out.push(TimelinePoint {
                    second: next,
                    requests: 0,
                    errors: 0,
                    p50_ms: 0.0,
                    p99_ms: 0.0,
                    span_s: self.covered(next),
                });
                next += 1;
            }
            let h = decode(&c.histogram);
            out.push(TimelinePoint {
                second: c.second,
                requests: c.requests,
                errors: c.errors,
                p50_ms: h.value_at_quantile(0.5) as f64 / 1000.0,
                p99_ms: h.value_at_quantile(0.99) as f64 / 1000.0,
                // A completion just past the covered time (rounding) still has a second.
                span_s: self.covered(c.second).max(1e-3),
            });
            next = c.second + 1;
        }
        out
    }

    /// The most recent closed second, for live progress.
    pub fn last(&self) -> Option<TimelinePoint> {
        let c = self.closed.last()?;
        let h = decode(&c.histogram);
        Some(TimelinePoint {
            second: c.second,
            requests: c.requests,
            errors: c.errors,
            p50_ms: h.value_at_quantile(0.5) as f64 / 1000.0,
            p99_ms: h.value_at_quantile(0.99) as f64 / 1000.0,
            span_s: self.covered(c.second),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_filled_and_percentiles_kept() {
        let mut t = Timeline::new();
        for i in 0..100u64 {
            t.record(Duration::from_millis(10), 1000 + i, false);
        }
        t.record(Duration::from_millis(3200), 50_000, true);
        t.flush();
        let p = t.points();
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].requests, 100);
        assert!((p[0].p50_ms - 1.05).abs() < 0.02, "{}", p[0].p50_ms);
        assert_eq!(p[1].requests, 0);
        assert_eq!(p[3].errors, 1);
        assert!((p[3].p99_ms - 50.0).abs() < 0.6);
        assert!(p.iter().all(|p| p.span_s == 1.0));
    }

    /// Issue 13: two 1.5 s phases at 100/s in a 3 s run are seconds 0–1.5 and 1.5–3 of the
    /// run (they were both 0–1.5: [(0, 150), (1, 75)]), and a partial second's rate divides
    /// by its real length.
    #[test]
    fn phases_line_up_on_the_run_clock() {
        let phase = |from_ms: u64| {
            let mut t = Timeline::new();
            for i in 0..150u64 {
                t.record(Duration::from_millis(from_ms + i * 10), 1000, false);
            }
            t.flush();
            t.set_span(
                Duration::from_millis(from_ms),
                Duration::from_millis(from_ms + 1500),
            );
            t
        };
        let mut run = phase(0);
        run.merge(&phase(1500));
        let p = run.points();
        let counts: Vec<(u32, u64)> = p.iter().map(|p| (p.second, p.requests)).collect();
        assert_eq!(counts, [(0, 100), (1, 100), (2, 100)]);
        assert!(p.iter().all(|p| (p.rate() - 100.0).abs() < 1e-9));
        // The second phase alone: its first second is half covered, 50 in 0.5 s is 100/s.
        let second = phase(1500).points();
        assert_eq!((second[0].second, second[0].requests), (1, 50));
        assert!((second[0].span_s - 0.5).abs() < 1e-9);
        assert!((second[0].rate() - 100.0).abs() < 1e-9);
    }
}
