//! The result's `availability` block: what a client saw while the service was out. Built from
//! a finished recorder's [`Availability`]; the reports, the page and the thresholds
//! (`recovery_s`, `outage_s`) read it.

use crate::availability::{Availability, Gap};
use crate::outcome::Class;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The most outages a result lists (the longest).
pub const MAX_OUTAGES: usize = 10;
/// A quiet stretch at the very end of a phase counts as an outage from this long on, even
/// without a failure (operations that hung until they were cut off).
const QUIET_END: Duration = Duration::from_secs(1);

/// Availability over time of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AvailabilityOut {
    /// The longest stretch with no successful operation, seconds: between two successes, from
    /// the first failure to the first success, or to the end when none came back.
    pub outage_s: f64,
    /// When that stretch began, seconds on the run's clock.
    pub outage_at_s: f64,
    /// The longest time from a failure to the first success after it, seconds, over the
    /// outages (0 when nothing failed); to the end of the phase when none came back.
    pub recovery_s: f64,
    /// Whether every outage ended with a success before the phase did.
    pub recovered: bool,
    /// How many outages there were (stretches without success in which something failed).
    pub outages_total: u64,
    /// The longest outages, longest first (at most [`MAX_OUTAGES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<Outage>,
    /// Stretches shorter than this were not tracked, ms.
    pub resolution_ms: f64,
}

/// One stretch without success in which operations failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// The last success before it (or the first failure, at the start), seconds on the run's
    /// clock.
    pub from_s: f64,
    /// The first success after it; absent when none came before the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_s: Option<f64>,
    pub length_s: f64,
    /// The first failure in it (to 10 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure_s: Option<f64>,
    /// From the first failure to the first success after it (to the end when none came).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<f64>,
    /// Failures in it, by class.
    pub errors: BTreeMap<String, u64>,
    /// The latencies of the first successes after it, ms, in the order they completed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_successes_ms: Vec<f64>,
}

impl Outage {
    /// Failures in it, all classes.
    pub fn failures(&self) -> u64 {
        self.errors.values().sum()
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// One piece of a stretch, clipped to a covered span: [from, to), its failures, and whether it
/// ran to the span's end without a success (`to` is then the span's end, not a success).
struct Piece<'a> {
    gap: &'a Gap,
    from: Duration,
    to: Duration,
    open_end: bool,
    failures: crate::availability::Failures,
}

fn outage(p: &Piece<'_>) -> Outage {
    let first = p.failures.first().map(|f| f.max(p.from));
    let by = p.failures.by_class();
    Outage {
        from_s: secs(p.from),
        to_s: (!p.open_end).then(|| secs(p.to)),
        length_s: secs(p.to.saturating_sub(p.from)),
        first_failure_s: first.map(secs),
        recovery_s: first.map(|f| secs(p.to.saturating_sub(f))),
        errors: Class::ALL
            .into_iter()
            .filter(|c| by[c.index()] > 0)
            .map(|c| (c.name().to_string(), by[c.index()]))
            .collect(),
        first_successes_ms: if p.open_end {
            Vec::new()
        } else {
            p.gap.after.iter().map(|s| s.1 as f64 / 1000.0).collect()
        },
    }
}

/// The stretches cut to the covered time (`end` closes it when no phase said): a stretch
/// across two phases is two pieces, one at the end of the first and one at the start of the
/// next, since nothing was measured between them.
fn pieces(a: &Availability, end: Duration) -> Vec<(Piece<'_>, bool)> {
    let fallback = [(Duration::ZERO, end)];
    let covered = if a.covered().is_empty() {
        &fallback[..]
    } else {
        a.covered()
    };
    let mut out = Vec::new();
    for g in a.stretches() {
        for &(c0, c1) in covered {
            let to = g.to.unwrap_or(Duration::MAX);
            if to <= c0 || g.from >= c1 {
                // Outside this span; a success at the very start of a span still closes a
                // leading piece of length zero, which is nothing.
                continue;
            }
            let (from, until) = (g.from.max(c0), to.min(c1));
            let leading = g.from <= c0;
            let open_end = to > c1;
            // An open piece keeps the failures up to its span's end (and its last bucket:
            // an operation cut off at the end completes just after it).
            let upto = if open_end {
                until + Duration::from_millis(10)
            } else {
                until
            };
            let failures = g.failures.within(from, Some(upto));
            let piece = Piece {
                gap: g,
                // Before the first success of a span, an outage starts at its first failure.
                from: if leading {
                    failures.first().map_or(from, |f| f.max(from))
                } else {
                    from
                },
                to: until,
                open_end,
                failures,
            };
            // The wait for a span's first success is no outage unless something failed in
            // it; a quiet end of a span is, from a second on (operations that hung).
            let counts = if leading {
                !piece.failures.is_empty()
            } else if open_end {
                !piece.failures.is_empty() || until.saturating_sub(from) >= QUIET_END
            } else {
                until.saturating_sub(from) >= a.floor()
            };
            if counts {
                out.push((piece, open_end));
            }
        }
    }
    out
}

impl AvailabilityOut {
    /// Whether anything was out: an outage, or a second or more without a success.
    pub fn was_out(&self) -> bool {
        self.outages_total > 0 || self.outage_s >= 1.0
    }

    /// The block of a finished recorder; `end` closes the covered time when no phase gave it.
    pub fn of(a: &Availability, end: Duration) -> AvailabilityOut {
        let mut outages: Vec<Outage> = Vec::new();
        let (mut longest, mut at) = (0.0f64, 0.0f64);
        for (p, open_end) in pieces(a, end) {
            let o = outage(&p);
            if o.length_s > longest {
                (longest, at) = (o.length_s, o.from_s);
            }
            if o.failures() > 0 || open_end {
                outages.push(o);
            }
        }
        Self::from_outages(outages, longest, at, a.floor())
    }

    fn from_outages(mut outages: Vec<Outage>, longest: f64, at: f64, floor: Duration) -> Self {
        let recovery_s = outages
            .iter()
            .filter_map(|o| o.recovery_s)
            .fold(0.0, f64::max);
        let recovered = outages.iter().all(|o| o.to_s.is_some());
        let outages_total = outages.len() as u64;
        outages.sort_by(|a, b| b.length_s.total_cmp(&a.length_s));
        outages.truncate(MAX_OUTAGES);
        AvailabilityOut {
            outage_s: longest,
            outage_at_s: at,
            recovery_s,
            recovered,
            outages_total,
            outages,
            resolution_ms: floor.as_secs_f64() * 1000.0,
        }
    }

    /// Measurements one after another (phases, suite operations): every outage of each.
    pub fn sequential<'a>(parts: impl IntoIterator<Item = &'a AvailabilityOut>) -> Option<Self> {
        let parts: Vec<&AvailabilityOut> = parts.into_iter().collect();
        let longest = parts
            .iter()
            .max_by(|a, b| a.outage_s.total_cmp(&b.outage_s))?;
        let mut merged = Self::from_outages(
            parts.iter().flat_map(|p| p.outages.clone()).collect(),
            longest.outage_s,
            longest.outage_at_s,
            Duration::ZERO,
        );
        merged.outages_total = parts.iter().map(|p| p.outages_total).sum();
        merged.recovered = parts.iter().all(|p| p.recovered);
        merged.resolution_ms = parts.iter().map(|p| p.resolution_ms).fold(0.0, f64::max);
        Some(merged)
    }

    /// Measurements side by side (agents): the service was out only where every part saw an
    /// outage, so the outages are the intersections of the parts' listed ones (each with the
    /// failures of all parts in it). A lower bound: an agent's quiet stretch without a
    /// failure is not listed, and only each part's longest outages are.
    pub fn concurrent(parts: &[&AvailabilityOut]) -> Option<Self> {
        let (first, rest) = parts.split_first()?;
        let mut outages = first.outages.clone();
        for p in rest {
            outages = outages
                .iter()
                .flat_map(|a| p.outages.iter().filter_map(move |b| intersect(a, b)))
                .collect();
        }
        let longest = outages
            .iter()
            .max_by(|a, b| a.length_s.total_cmp(&b.length_s));
        let (l, at) = longest.map_or((0.0, 0.0), |o| (o.length_s, o.from_s));
        let mut merged = Self::from_outages(outages, l, at, Duration::ZERO);
        merged.resolution_ms = parts.iter().map(|p| p.resolution_ms).fold(0.0, f64::max);
        Some(merged)
    }
}

fn intersect(a: &Outage, b: &Outage) -> Option<Outage> {
    let end = |o: &Outage| o.to_s.unwrap_or(f64::INFINITY);
    let from = a.from_s.max(b.from_s);
    let to = end(a).min(end(b));
    if to <= from {
        return None;
    }
    let mut errors = a.errors.clone();
    for (k, v) in &b.errors {
        *errors.entry(k.clone()).or_default() += v;
    }
    let first_failure_s = match (a.first_failure_s, b.first_failure_s) {
        (Some(x), Some(y)) => Some(x.min(y).max(from)),
        (x, y) => x.or(y),
    };
    let to_s = to.is_finite().then_some(to);
    let length_s = if to.is_finite() {
        to - from
    } else {
        a.length_s.min(b.length_s)
    };
    let after = if to_s == a.to_s { a } else { b };
    Some(Outage {
        from_s: from,
        to_s,
        length_s,
        first_failure_s,
        recovery_s: first_failure_s.map(|f| (from + length_s - f).max(0.0)),
        errors,
        first_successes_ms: after.first_successes_ms.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn an_outage_gives_its_length_recovery_errors_and_first_successes() {
        let mut a = Availability::new();
        for t in (0..2000).step_by(10) {
            a.record(ms(t), 1, 0, Class::Ok, 2000);
        }
        for t in (2100..5000).step_by(100) {
            a.record(ms(t), 0, 1, Class::Connect, 0);
        }
        for t in (5200..6000).step_by(10) {
            a.record(ms(t), 1, 0, Class::Ok, 40_000);
        }
        let out = AvailabilityOut::of(&a, ms(6000));
        assert_eq!(out.outages_total, 1);
        let o = &out.outages[0];
        assert!((o.length_s - 3.21).abs() < 1e-9, "{o:?}");
        assert!((out.outage_s - 3.21).abs() < 1e-9);
        assert!((out.recovery_s - 3.1).abs() < 1e-9, "{}", out.recovery_s);
        assert!(out.recovered);
        assert_eq!(o.errors["connect"], 29);
        assert_eq!(o.first_successes_ms.first(), Some(&40.0));
        // A healthy run: a stretch of 10 ms is no outage, and the wait for the first success
        // neither.
        let mut h = Availability::new();
        for t in (100..2000).step_by(10) {
            h.record(ms(t), 1, 0, Class::Ok, 100);
        }
        let out = AvailabilityOut::of(&h, ms(2000));
        assert_eq!(
            (out.outage_s, out.recovery_s, out.outages_total),
            (0.0, 0.0, 0)
        );
    }

    /// Interleaved repetitions: a step's runs 0–2 s and 5–7 s, other scenarios between. The
    /// 3 s between them measured nothing and is no outage; a failing end of the first run is.
    #[test]
    fn the_time_between_two_runs_of_a_step_is_no_outage() {
        let run = |from: u64, fail_from: Option<u64>| {
            let mut a = Availability::new();
            for t in (from..from + 2000).step_by(10) {
                match fail_from {
                    Some(f) if t >= f => a.record(ms(t), 0, 1, Class::Http5xx, 100),
                    _ => a.record(ms(t), 1, 0, Class::Ok, 100),
                }
            }
            a.cover(ms(from), ms(from + 2000));
            a
        };
        let mut m = run(0, None);
        m.merge(&run(5000, None));
        let out = AvailabilityOut::of(&m, ms(7000));
        assert_eq!((out.outage_s, out.outages_total), (0.0, 0), "{out:?}");
        let mut m = run(0, Some(1500));
        m.merge(&run(5000, None));
        let out = AvailabilityOut::of(&m, ms(7000));
        assert_eq!(out.outages_total, 1, "{out:?}");
        let o = &out.outages[0];
        // From the last success (1.49 s) to the end of the first run, not to 5 s.
        assert!((o.length_s - 0.51).abs() < 1e-9, "{o:?}");
        assert_eq!((o.to_s, o.errors["http_5xx"]), (None, 50));
        assert!(!out.recovered);
    }

    #[test]
    fn a_service_that_never_came_back_is_not_recovered() {
        let mut a = Availability::new();
        a.record(ms(100), 1, 0, Class::Ok, 100);
        for t in (1000..3000).step_by(100) {
            a.record(ms(t), 0, 1, Class::Timeout, 0);
        }
        let out = AvailabilityOut::of(&a, ms(4000));
        assert!(!out.recovered);
        assert!((out.outage_s - 3.9).abs() < 1e-9);
        assert!((out.recovery_s - 3.0).abs() < 1e-9);
    }
}
