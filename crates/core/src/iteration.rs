//! A journey's figures in a result: its iterations (k6's `iterations` and
//! `iteration_duration`) and its named checks (k6's `checks`), built from a recorder and
//! merged exactly, like every other measured block.

use crate::histogram::{decode_histogram, encode_histogram};
use crate::latency::LatencyMs;
use crate::recorder::{new_histogram, CheckCount, GroupStats, IterationStats, SIGFIG};
use serde::{Deserialize, Serialize};

/// The iterations of a journey workload: each op is one pass through its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iterations {
    /// Iterations that ended (every step answered, or one failed and ended it).
    pub count: u64,
    /// Iterations whose every step succeeded (status, checks and captures).
    pub ok: u64,
    /// Iterations with a failed step.
    pub failed: u64,
    /// Iterations per second of the measurement's duration.
    pub rate: f64,
    /// From each iteration's intended start (open model) or first send (closed model) to its
    /// last response, think times included.
    pub duration_ms: LatencyMs,
    /// The duration histogram, encoded as the response histogram is.
    pub histogram: String,
}

impl Iterations {
    /// The figures of `stats` over `secs` seconds.
    pub fn from_stats(stats: &IterationStats, secs: f64) -> Iterations {
        let count = stats.count();
        Iterations {
            count,
            ok: stats.ok,
            failed: stats.failed,
            rate: per_second(count, secs),
            duration_ms: LatencyMs::from_histogram(&stats.duration),
            histogram: encode_histogram(&stats.duration),
        }
    }

    /// Iterations of several measurements added up exactly (histograms decoded and added),
    /// their rate over `secs`; none when no part had iterations.
    pub fn merge(parts: &[&Iterations], secs: f64) -> Option<Iterations> {
        if parts.is_empty() {
            return None;
        }
        let mut h = new_histogram(SIGFIG);
        let (mut ok, mut failed) = (0, 0);
        for p in parts {
            if let Ok(d) = decode_histogram(&p.histogram) {
                let _ = h.add(&d);
            }
            ok += p.ok;
            failed += p.failed;
        }
        let stats = IterationStats {
            duration: h,
            ok,
            failed,
        };
        Some(Iterations::from_stats(&stats, secs))
    }
}

fn per_second(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// One group of journey steps (k6's `group`): how long each pass through it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    pub name: String,
    pub count: u64,
    pub duration_ms: LatencyMs,
    pub histogram: String,
}

impl GroupResult {
    pub fn from_stats(g: &GroupStats) -> GroupResult {
        GroupResult {
            name: g.name.clone(),
            count: g.duration.len(),
            duration_ms: LatencyMs::from_histogram(&g.duration),
            histogram: encode_histogram(&g.duration),
        }
    }

    /// Groups of several measurements added up by name (histograms decoded and added).
    pub fn merge<'a>(parts: impl IntoIterator<Item = &'a GroupResult>) -> Vec<GroupResult> {
        let mut out: Vec<GroupStats> = Vec::new();
        for g in parts {
            let i = match out.iter().position(|m| m.name == g.name) {
                Some(i) => i,
                None => {
                    out.push(GroupStats {
                        name: g.name.clone(),
                        duration: new_histogram(SIGFIG),
                    });
                    out.len() - 1
                }
            };
            if let Ok(h) = decode_histogram(&g.histogram) {
                let _ = out[i].duration.add(&h);
            }
        }
        out.iter().map(GroupResult::from_stats).collect()
    }
}

/// One named check over a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    pub passed: u64,
    pub failed: u64,
}

impl CheckResult {
    pub fn from_count(c: &CheckCount) -> CheckResult {
        CheckResult {
            name: c.name.clone(),
            passed: c.passed,
            failed: c.failed,
        }
    }

    /// Checks of several measurements added up by name, in order of first appearance.
    pub fn merge<'a>(parts: impl IntoIterator<Item = &'a CheckResult>) -> Vec<CheckResult> {
        let mut out: Vec<CheckResult> = Vec::new();
        for c in parts {
            match out.iter_mut().find(|m| m.name == c.name) {
                Some(m) => {
                    m.passed += c.passed;
                    m.failed += c.failed;
                }
                None => out.push(c.clone()),
            }
        }
        out
    }

    /// The share of passes of every check together, 0..1; NaN when no check ran (a
    /// threshold on it then has nothing to judge).
    pub fn pass_ratio(checks: &[CheckResult]) -> f64 {
        let passed: u64 = checks.iter().map(|c| c.passed).sum();
        let all: u64 = checks.iter().map(|c| c.passed + c.failed).sum();
        if all == 0 {
            f64::NAN
        } else {
            passed as f64 / all as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(durations_ms: &[u64], failed: u64) -> IterationStats {
        let mut duration = new_histogram(SIGFIG);
        for d in durations_ms {
            duration.saturating_record(d * 1000);
        }
        IterationStats {
            duration,
            ok: durations_ms.len() as u64 - failed,
            failed,
        }
    }

    #[test]
    fn iterations_merge_exactly_and_take_the_rate_over_the_whole() {
        let a = Iterations::from_stats(&stats(&[10, 20], 0), 1.0);
        let b = Iterations::from_stats(&stats(&[30, 40], 1), 1.0);
        let both = Iterations::from_stats(&stats(&[10, 20, 30, 40], 1), 4.0);
        let merged = Iterations::merge(&[&a, &b], 4.0).expect("two parts");
        assert_eq!(merged, both);
        assert_eq!((merged.count, merged.ok, merged.failed), (4, 3, 1));
        assert_eq!(merged.rate, 1.0);
        assert!(Iterations::merge(&[], 1.0).is_none());
    }

    #[test]
    fn checks_add_up_by_name_and_the_ratio_covers_all_of_them() {
        let c = |name: &str, passed, failed| CheckResult {
            name: name.into(),
            passed,
            failed,
        };
        let merged = CheckResult::merge(&[c("a", 9, 1), c("b", 5, 0), c("a", 9, 1)]);
        assert_eq!(merged, [c("a", 18, 2), c("b", 5, 0)]);
        assert_eq!(CheckResult::pass_ratio(&merged), 23.0 / 25.0);
        assert!(CheckResult::pass_ratio(&[]).is_nan());
    }
}
