//! The pacer: a pure function from an operation's number to its intended start time, relative
//! to the phase start. The open model sends op *n* at `start + offset(n)` whatever the
//! responses do, and measures its response time from that instant, so a stalled server
//! cannot hide behind a client that waited for it (coordinated omission).

use std::time::Duration;

/// When operations should start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacer {
    /// `rate` operations per second, evenly spaced: op n at n / rate.
    Constant { rate: f64 },
    /// The rate moves linearly from `from` to `to` over `over`, then stays at `to`.
    Ramp { from: f64, to: f64, over: Duration },
}

impl Pacer {
    /// A constant rate (operations per second, > 0).
    pub fn constant(rate: f64) -> Pacer {
        Pacer::Constant { rate }
    }

    /// The intended start of op `n` since the phase start.
    pub fn offset(&self, n: u64) -> Duration {
        perfbase_core::units::saturating_secs(self.offset_secs(n).max(0.0))
    }

    fn offset_secs(&self, n: u64) -> f64 {
        let n = n as f64;
        match *self {
            Pacer::Constant { rate } => n / rate,
            Pacer::Ramp { from, to, over } => {
                // Ops started by time t: N(t) = from·t + (to − from)·t² / (2·D) for t ≤ D.
                // Op n starts at the t where N(t) = n: solve a·t² + b·t − n = 0.
                let d = over.as_secs_f64();
                let total = (from + to) / 2.0 * d; // N(D)
                if n >= total || d == 0.0 {
                    return d + (n - total) / to;
                }
                let a = (to - from) / (2.0 * d);
                let b = from;
                if a.abs() < 1e-12 {
                    return n / b;
                }
                // Numerically stable root: t = 2n / (b + sqrt(b² + 4an)).
                let disc = (b * b + 4.0 * a * n).max(0.0);
                2.0 * n / (b + disc.sqrt())
            }
        }
    }

    /// How many ops start strictly before `t` (the inverse of [`Pacer::offset`]).
    pub fn ops_before(&self, t: Duration) -> u64 {
        let t = t.as_secs_f64();
        let n = match *self {
            Pacer::Constant { rate } => rate * t,
            Pacer::Ramp { from, to, over } => {
                let d = over.as_secs_f64();
                if t <= d {
                    from * t + (to - from) * t * t / (2.0 * d)
                } else {
                    (from + to) / 2.0 * d + (t - d) * to
                }
            }
        };
        // op k starts at offset(k); those with offset(k) < t are k < n (rounded up).
        let mut k = n.ceil().max(0.0) as u64;
        // Correct floating-point edges so the result agrees exactly with offset().
        while k > 0 && self.offset(k - 1) >= perfbase_core::units::saturating_secs(t) {
            k -= 1;
        }
        while self.offset(k) < perfbase_core::units::saturating_secs(t) {
            k += 1;
        }
        k
    }

    /// The rate at the end of the schedule (used to close the send window).
    pub fn final_rate(&self) -> f64 {
        match *self {
            Pacer::Constant { rate } => rate,
            Pacer::Ramp { to, .. } => to,
        }
    }

    /// The rate the schedule asks for on average over its ramp: what a phase on it requested
    /// (a ramp from 100/s to 300/s requests 200/s, not 300/s).
    pub fn mean_rate(&self) -> f64 {
        match *self {
            Pacer::Constant { rate } => rate,
            Pacer::Ramp { from, to, .. } => (from + to) / 2.0,
        }
    }

    /// Whether the rates are positive and finite (a ramp may start at 0).
    pub fn is_valid(&self) -> bool {
        match *self {
            Pacer::Constant { rate } => rate.is_finite() && rate > 0.0,
            Pacer::Ramp { from, to, .. } => {
                from.is_finite() && to.is_finite() && from >= 0.0 && to > 0.0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn constant_rate_spacing() {
        let p = Pacer::constant(200.0);
        assert_eq!(p.offset(0), Duration::ZERO);
        assert_eq!(p.offset(200), Duration::from_secs(1));
        assert_eq!(p.ops_before(Duration::from_secs(2)), 400);
    }

    #[test]
    fn ramp_counts_the_area_under_the_rate() {
        let p = Pacer::Ramp {
            from: 0.0,
            to: 100.0,
            over: Duration::from_secs(10),
        };
        // Area of the triangle: 500 ops in the first 10 s, then 100/s.
        assert_eq!(p.ops_before(Duration::from_secs(10)), 500);
        assert_eq!(p.ops_before(Duration::from_secs(11)), 600);
        assert!((p.offset(500).as_secs_f64() - 10.0).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn offsets_never_go_backwards(rate in 0.1f64..1e6, n in 0u64..10_000_000) {
            let p = Pacer::constant(rate);
            prop_assert!(p.offset(n) <= p.offset(n + 1));
        }

        #[test]
        fn constant_count_matches_rate_times_duration(rate in 1u32..100_000, secs in 1u64..100) {
            let p = Pacer::constant(rate as f64);
            prop_assert_eq!(p.ops_before(Duration::from_secs(secs)), rate as u64 * secs);
        }

        #[test]
        fn ramp_is_monotone_and_inverse(from in 0.0f64..5000.0, to in 1.0f64..5000.0, over_ms in 1u64..60_000, n in 0u64..200_000) {
            let p = Pacer::Ramp { from, to, over: Duration::from_millis(over_ms) };
            prop_assert!(p.offset(n) <= p.offset(n + 1));
            // ops_before(offset(n)) counts exactly the ops strictly before op n's start.
            let k = p.ops_before(p.offset(n));
            prop_assert!(k <= n);
            prop_assert!(p.offset(k) == p.offset(n));
        }
    }
}
