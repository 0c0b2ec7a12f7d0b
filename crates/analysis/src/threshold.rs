//! What a threshold is — a metric (perfbase's own or a script's), an operator and a limit —
//! and its verdict against a [`Measurement`]. threshold_parse.rs reads them from the text users
//! write in plans and on the CLI (`p99 < 200ms`, `error_rate < 1%`, `rps > 100`).

use perfbase_core::metric::{MetricKind, MetricResult};
use perfbase_core::result::Measurement;
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

// A verdict is part of the result's `study` section, so it lives in the interface crate;
// re-exported here.
pub use perfbase_core::study::Verdict;

/// Every metric name a threshold accepts, for error messages and docs.
pub const METRICS: &str = "min, mean, p50, p75, p90, p95, p99, p999, max (latency), error_rate, \
     success_ratio, rps, checks (a journey's check pass rate), outage_s (the longest stretch \
     without a successful operation), recovery_s (the longest time from a failure to the next \
     success); or k6's p(95), avg, med, http_req_failed, http_reqs; \
     or a script's metric as NAME STAT, e.g. 'my_trend p(95) < 200'";

/// A latency statistic, read from [`perfbase_core::result::LatencyMs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    Min,
    Mean,
    P50,
    P75,
    P90,
    P95,
    P99,
    P999,
    Max,
}

impl Stat {
    /// Every statistic, in the order of [`METRICS`].
    pub const ALL: [Stat; 9] = [
        Stat::Min,
        Stat::Mean,
        Stat::P50,
        Stat::P75,
        Stat::P90,
        Stat::P95,
        Stat::P99,
        Stat::P999,
        Stat::Max,
    ];

    /// The name as written in thresholds and in the result schema.
    pub fn name(self) -> &'static str {
        match self {
            Stat::Min => "min",
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P75 => "p75",
            Stat::P90 => "p90",
            Stat::P95 => "p95",
            Stat::P99 => "p99",
            Stat::P999 => "p999",
            Stat::Max => "max",
        }
    }
}

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// A response-time statistic, in milliseconds.
    LatencyMs(Stat),
    /// Share of operations that failed, 0..1 (1 − success_ratio).
    ErrorRate,
    /// Share of operations that succeeded, 0..1.
    SuccessRatio,
    /// Completed operations per second.
    Rps,
    /// Share of a journey's checks that passed, 0..1 (every check of every step together;
    /// undefined without checks, so it never passes on none).
    Checks,
    /// The longest stretch without a successful operation, seconds.
    OutageS,
    /// The longest time from a failure to the first success after it, seconds (to the end of
    /// the phase when none came).
    RecoveryS,
    /// A statistic of a script's own metric, named in [`Threshold::of`].
    Custom(CustomStat),
}

impl Metric {
    /// Parses a metric name (case-insensitive); `p99.9` is accepted for `p999`.
    pub fn from_name(name: &str) -> Option<Metric> {
        let lower = name.to_ascii_lowercase();
        let name = if lower == "p99.9" { "p999" } else { &lower };
        if let Some(stat) = Stat::ALL.into_iter().find(|s| s.name() == name) {
            return Some(Metric::LatencyMs(stat));
        }
        match name {
            "error_rate" => Some(Metric::ErrorRate),
            "success_ratio" => Some(Metric::SuccessRatio),
            "rps" => Some(Metric::Rps),
            "checks" => Some(Metric::Checks),
            "outage_s" => Some(Metric::OutageS),
            "recovery_s" => Some(Metric::RecoveryS),
            _ => None,
        }
    }

    /// The name as written in thresholds.
    pub fn name(self) -> &'static str {
        match self {
            Metric::LatencyMs(s) => s.name(),
            Metric::ErrorRate => "error_rate",
            Metric::SuccessRatio => "success_ratio",
            Metric::Rps => "rps",
            Metric::Checks => "checks",
            Metric::OutageS => "outage_s",
            Metric::RecoveryS => "recovery_s",
            Metric::Custom(c) => c.name(),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The comparison a threshold demands of the actual value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// The operator as written: `<`, `<=`, `>`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    /// Whether `actual op limit` holds. NaN never passes.
    pub fn holds(self, actual: f64, limit: f64) -> bool {
        match self {
            Op::Lt => actual < limit,
            Op::Le => actual <= limit,
            Op::Gt => actual > limit,
            Op::Ge => actual >= limit,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// Every statistic a script metric's threshold accepts, for error messages and docs.
pub const STATS: &str = "count, rate, value, min, max, avg (mean), med (p50), and for trends \
     p(50), p(75), p(90), p(95), p(99), p(99.9)";

/// Which figure of a script metric a threshold judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CustomStat {
    /// A counter's sum (k6's `count`); for other kinds, how many values were added.
    Count,
    /// A counter's sum per second; a rate's share of true values.
    Rate,
    /// A gauge's last value, a counter's sum, a rate's share, a trend's mean.
    Value,
    /// A trend's statistic; `min` and `max` of any kind.
    Stat(Stat),
}

impl CustomStat {
    pub(crate) fn from_name(name: &str) -> Option<CustomStat> {
        let lower = name.to_ascii_lowercase();
        Some(match lower.as_str() {
            "count" => CustomStat::Count,
            "rate" => CustomStat::Rate,
            "value" => CustomStat::Value,
            "avg" => CustomStat::Stat(Stat::Mean),
            "med" => CustomStat::Stat(Stat::P50),
            _ => {
                let own = match lower.strip_prefix("p(").and_then(|r| r.strip_suffix(')')) {
                    Some(n) => format!("p{}", n.trim().replace('.', "")),
                    None => lower,
                };
                match Metric::from_name(&own)? {
                    Metric::LatencyMs(stat) => CustomStat::Stat(stat),
                    _ => return None,
                }
            }
        })
    }

    /// The statistic's name as the result schema writes it.
    pub fn name(self) -> &'static str {
        match self {
            CustomStat::Count => "count",
            CustomStat::Rate => "rate",
            CustomStat::Value => "value",
            CustomStat::Stat(s) => s.name(),
        }
    }

    /// The figure of `m` this statistic names; NaN where its kind has none.
    pub fn of(self, m: &MetricResult) -> f64 {
        let trend = m.values.as_ref();
        match self {
            CustomStat::Count if m.kind == MetricKind::Counter => m.sum,
            CustomStat::Count => m.samples as f64,
            CustomStat::Rate => m.rate,
            CustomStat::Value => m.value,
            CustomStat::Stat(Stat::Min) => m.min,
            CustomStat::Stat(Stat::Max) => m.max,
            CustomStat::Stat(Stat::Mean) if m.samples > 0 => m.sum / m.samples as f64,
            CustomStat::Stat(Stat::Mean) => f64::NAN,
            CustomStat::Stat(stat) => trend.map_or(f64::NAN, |v| match stat {
                Stat::P50 => v.p50,
                Stat::P75 => v.p75,
                Stat::P90 => v.p90,
                Stat::P95 => v.p95,
                Stat::P99 => v.p99,
                Stat::P999 => v.p999,
                Stat::Min | Stat::Max | Stat::Mean => f64::NAN,
            }),
        }
    }
}

/// One parsed threshold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    pub metric: Metric,
    pub op: Op,
    /// The limit: milliseconds for latency, 0..1 for ratios (a `%` is divided by 100),
    /// operations per second for `rps`.
    pub value: f64,
    /// The threshold as the user wrote it (trimmed), for messages and reports.
    pub text: String,
    /// The script metric a [`Metric::Custom`] threshold judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
}

/// A threshold that does not parse. Every message names the accepted metrics and forms.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ThresholdError {
    /// Not of the shape `METRIC OP VALUE`.
    #[error("invalid threshold '{0}': write METRIC OP VALUE, e.g. 'p99 < 200ms', 'error_rate < 1%', 'rps > 100'; metrics: {METRICS}; operators: <, <=, >, >=")]
    Syntax(String),
    /// The metric name is not one of [`METRICS`].
    #[error("invalid threshold '{text}': unknown metric '{metric}'; use one of {METRICS}")]
    UnknownMetric { text: String, metric: String },
    /// The operator is not one of `<`, `<=`, `>`, `>=`.
    #[error("invalid threshold '{text}': unknown operator '{op}'; use one of <, <=, >, >= (e.g. 'p99 < 200ms')")]
    Operator { text: String, op: String },
    /// A script metric's statistic that perfbase does not know.
    #[error("invalid threshold '{text}': unknown statistic '{stat}' of the script metric '{metric}'; use one of {}", STATS)]
    UnknownStat {
        text: String,
        metric: String,
        stat: String,
    },
    /// The value does not fit the metric; `expected` describes the accepted forms.
    #[error("invalid threshold '{text}': '{value}' is not a valid {metric} limit; {expected}")]
    Value {
        text: String,
        metric: String,
        value: String,
        expected: &'static str,
    },
}

impl ThresholdError {
    /// The same error quoting `text`, the threshold as the user wrote it.
    pub(crate) fn quoting(self, shown: &str) -> ThresholdError {
        let shown = shown.to_string();
        match self {
            ThresholdError::Syntax(_) => ThresholdError::Syntax(shown),
            ThresholdError::UnknownMetric { metric, .. } => ThresholdError::UnknownMetric {
                text: shown,
                metric,
            },
            ThresholdError::Operator { op, .. } => ThresholdError::Operator { text: shown, op },
            ThresholdError::UnknownStat { metric, stat, .. } => ThresholdError::UnknownStat {
                text: shown,
                metric,
                stat,
            },
            ThresholdError::Value {
                metric,
                value,
                expected,
                ..
            } => ThresholdError::Value {
                text: shown,
                metric,
                value,
                expected,
            },
        }
    }
}

impl Threshold {
    /// The measured value this threshold compares, in its unit: latency in ms (NaN when the
    /// measurement completed no operations, so latency SLOs never pass on no data),
    /// `error_rate` = 1 − success_ratio, `success_ratio`, or `rps` (completed per second).
    pub fn value_of(&self, m: &Measurement) -> f64 {
        let l = &m.latency_ms;
        match self.metric {
            Metric::LatencyMs(_) if m.requests == 0 => f64::NAN,
            Metric::LatencyMs(stat) => match stat {
                Stat::Min => l.min,
                Stat::Mean => l.mean,
                Stat::P50 => l.p50,
                Stat::P75 => l.p75,
                Stat::P90 => l.p90,
                Stat::P95 => l.p95,
                Stat::P99 => l.p99,
                Stat::P999 => l.p999,
                Stat::Max => l.max,
            },
            Metric::ErrorRate => 1.0 - m.success_ratio,
            Metric::SuccessRatio => m.success_ratio,
            Metric::Rps => m.rps,
            Metric::Checks => perfbase_core::result::CheckResult::pass_ratio(&m.checks),
            // A result written before availability was kept has nothing to judge: never passes.
            Metric::OutageS => m.availability.as_ref().map_or(f64::NAN, |a| a.outage_s),
            Metric::RecoveryS => m.availability.as_ref().map_or(f64::NAN, |a| a.recovery_s),
            // A metric the measurement does not have matched nothing: it never passes.
            Metric::Custom(stat) => m
                .metrics
                .iter()
                .find(|c| Some(&c.name) == self.of.as_ref())
                .map_or(f64::NAN, |c| stat.of(c)),
        }
    }

    /// Checks the threshold against a measurement.
    pub fn check(&self, m: &Measurement) -> Verdict {
        let actual = self.value_of(m);
        Verdict {
            threshold: self.text.clone(),
            actual,
            passed: self.op.holds(actual, self.value),
        }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
