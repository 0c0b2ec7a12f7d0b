//! Thresholds as users write them in plans and on the CLI — `p99 < 200ms`,
//! `error_rate < 1%`, `rps > 100` — and their verdicts against a [`Measurement`].

use perfbase_core::result::Measurement;
use perfbase_core::units::{parse_duration, parse_rate};
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

/// A threshold in k6's words rewritten in perfbase's: `p(95)<200` → `p95<200`, `p(99.9)` →
/// `p999`, `avg` → `mean`, `med` → `p50`, `http_req_failed` (and its `:rate`) → `error_rate`,
/// `http_reqs:rate` → `rps`; a leading `http_req_duration:` (k6's metric key) is dropped.
/// Text in perfbase's own words comes back unchanged.
fn from_k6(text: &str) -> String {
    let t = text.trim();
    let t = t
        .strip_prefix("http_req_duration:")
        .unwrap_or(t)
        .trim_start();
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    if let Some(r) = rest.strip_prefix("http_req_failed") {
        out.push_str("error_rate");
        rest = r.strip_prefix(":rate").unwrap_or(r);
    } else if let Some(r) = rest.strip_prefix("http_reqs") {
        out.push_str("rps");
        rest = r.strip_prefix(":rate").unwrap_or(r);
    } else if let Some(r) = rest.strip_prefix("p(") {
        match r.split_once(')') {
            Some((n, after)) => {
                out.push('p');
                out.push_str(&n.trim().replace('.', ""));
                rest = after;
            }
            None => return text.to_string(),
        }
    } else {
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = match &rest[..name_end] {
            "avg" => "mean",
            "med" => "p50",
            other => other,
        };
        out.push_str(name);
        rest = &rest[name_end..];
    }
    out.push_str(rest);
    out
}

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
    #[error("invalid threshold '{text}': unknown statistic '{stat}' of the script metric '{metric}'; use one of {}", crate::threshold_custom::STATS)]
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
    fn quoting(self, shown: &str) -> ThresholdError {
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

const LATENCY_FORMS: &str =
    "use a duration such as 200ms, 0.5s, 1s or 750us (a bare number means milliseconds)";
const RATIO_FORMS: &str = "use a ratio between 0 and 1 such as 0.01, or a percentage such as 1%";
const CUSTOM_FORMS: &str =
    "use a number in the metric's own unit such as 200, 0.95 or -3, a percentage such as 95%, or a duration such as 200ms";
const SECONDS_FORMS: &str =
    "use a duration such as 10s, 1.5s or 500ms (a bare number means seconds)";
const RPS_FORMS: &str =
    "use a non-negative number of operations per second such as 100, 2.5k or 300/s";

pub use crate::threshold_custom::CustomStat;

/// Parses `METRIC OP VALUE`, with or without spaces: `p99 < 200ms`, `p95<=0.5s`,
/// `error_rate < 0.01`, `error_rate < 1%`, `rps > 100`, `success_ratio >= 0.99`,
/// `mean < 50ms`, `max < 1s`.
///
/// Latency limits go through [`parse_duration`] and are stored in ms; a bare number is taken as
/// milliseconds (not seconds, as elsewhere), since that is how latency SLOs are usually quoted.
/// Ratio limits accept `%`. `rps` accepts a plain number or a rate such as `2.5k` or `300/s`.
pub fn parse_threshold(s: &str) -> Result<Threshold, ThresholdError> {
    let shown = s.trim();
    if let Some(custom) = crate::threshold_custom::parse(shown) {
        return custom;
    }
    let mut parsed = parse_own(&from_k6(shown)).map_err(|e| e.quoting(shown))?;
    // Messages and reports quote it as the user wrote it.
    parsed.text = shown.to_string();
    Ok(parsed)
}

/// [`parse_threshold`] of text in perfbase's own words.
fn parse_own(s: &str) -> Result<Threshold, ThresholdError> {
    let text = s.trim();
    let syntax = || ThresholdError::Syntax(text.to_string());
    let name_end = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(name_end);
    if name.is_empty() {
        return Err(syntax());
    }
    let rest = rest.trim_start();
    if rest.is_empty() {
        return Err(syntax());
    }
    let metric = Metric::from_name(name).ok_or_else(|| ThresholdError::UnknownMetric {
        text: text.to_string(),
        metric: name.to_string(),
    })?;
    judged(text, metric, rest)
}

/// A threshold on `metric` whose operator and limit are `rest`; `text` is the whole.
pub(crate) fn judged(text: &str, metric: Metric, rest: &str) -> Result<Threshold, ThresholdError> {
    let syntax = || ThresholdError::Syntax(text.to_string());
    let op_end = rest
        .char_indices()
        .find(|(_, c)| !matches!(c, '<' | '>' | '=' | '!'))
        .map(|(i, _)| i)
        .unwrap_or(rest.len());
    let (op_text, value_text) = rest.split_at(op_end);
    let op = match op_text {
        "<" => Op::Lt,
        "<=" => Op::Le,
        ">" => Op::Gt,
        ">=" => Op::Ge,
        "" => return Err(syntax()),
        other => {
            return Err(ThresholdError::Operator {
                text: text.to_string(),
                op: other.to_string(),
            })
        }
    };
    let value_text = value_text.trim();
    if value_text.is_empty() {
        return Err(syntax());
    }
    let value = parse_value(metric, value_text).ok_or_else(|| ThresholdError::Value {
        text: text.to_string(),
        metric: metric.name().to_string(),
        value: value_text.to_string(),
        expected: match metric {
            Metric::LatencyMs(_) => LATENCY_FORMS,
            Metric::ErrorRate | Metric::SuccessRatio | Metric::Checks => RATIO_FORMS,
            Metric::Rps => RPS_FORMS,
            Metric::OutageS | Metric::RecoveryS => SECONDS_FORMS,
            Metric::Custom(_) => CUSTOM_FORMS,
        },
    })?;
    Ok(Threshold {
        metric,
        op,
        value,
        text: text.to_string(),
        of: None,
    })
}

/// A plain non-negative decimal (`12`, `0.5`), as `parse_duration` would read it.
fn plain_number(s: &str) -> Option<f64> {
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn parse_value(metric: Metric, s: &str) -> Option<f64> {
    match metric {
        Metric::LatencyMs(_) => match plain_number(s) {
            Some(ms) => Some(ms),
            None => parse_duration(s).ok().map(|d| d.as_secs_f64() * 1000.0),
        },
        Metric::ErrorRate | Metric::SuccessRatio | Metric::Checks => {
            let ratio = match s.strip_suffix('%') {
                Some(pct) => plain_number(pct.trim_end())? / 100.0,
                None => plain_number(s)?,
            };
            (0.0..=1.0).contains(&ratio).then_some(ratio)
        }
        // Seconds, as the metric's name says: `recovery_s < 10`, or a duration, `< 500ms`.
        Metric::OutageS | Metric::RecoveryS => {
            plain_number(s).or_else(|| parse_duration(s).ok().map(|d| d.as_secs_f64()))
        }
        // A plain number (0 allowed), else a rate as elsewhere: 2.5k, 300/s, 120/m.
        Metric::Rps => plain_number(s).or_else(|| parse_rate(s).ok()),
        // In the metric's own unit, which may be below 0 (a gauge); `%` and durations (in
        // ms, the unit of k6's time trends) are read too.
        Metric::Custom(_) => {
            let (sign, digits) = match s.strip_prefix('-') {
                Some(d) => (-1.0, d.trim_start()),
                None => (1.0, s),
            };
            let v = match digits.strip_suffix('%') {
                Some(pct) => plain_number(pct.trim_end())? / 100.0,
                None => plain_number(digits).or_else(|| {
                    parse_duration(digits)
                        .ok()
                        .map(|d| d.as_secs_f64() * 1000.0)
                })?,
            };
            Some(sign * v)
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

#[cfg(test)]
mod tests {
    #[test]
    fn k6_forms_read_as_perfbase_thresholds_and_keep_their_text() {
        let same = |k6: &str, ours: &str| {
            let a = parse_threshold(k6).unwrap_or_else(|e| panic!("{k6}: {e}"));
            let b = parse_threshold(ours).unwrap();
            assert_eq!((a.metric, a.op, a.value), (b.metric, b.op, b.value), "{k6}");
            assert_eq!(a.text, k6.trim());
        };
        same("p(95)<200", "p95 < 200ms");
        same("p(99.9) <= 1000", "p999 <= 1s");
        same("p(50)<10", "p50<10ms");
        same("avg<50", "mean < 50ms");
        same("med<20", "p50 < 20ms");
        same("max<1000", "max < 1s");
        same("http_req_failed<0.01", "error_rate < 1%");
        same("http_req_failed:rate<0.01", "error_rate < 0.01");
        same("http_reqs:rate>100", "rps > 100");
        same("http_req_duration:p(99)<300", "p99 < 300ms");
        // A percentile perfbase does not keep is named, with the text as written.
        let e = parse_threshold("p(97)<200").unwrap_err().to_string();
        assert!(
            e.contains("'p(97)<200'") && e.contains("unknown metric 'p97'"),
            "{e}"
        );
        let e = parse_threshold("p(95)<fast").unwrap_err().to_string();
        assert!(e.starts_with("invalid threshold 'p(95)<fast'"), "{e}");
    }

    use super::*;
    use crate::fixtures::measurement;

    fn parsed(s: &str) -> (Metric, Op, f64) {
        let t = parse_threshold(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        (t.metric, t.op, t.value)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn parses_every_documented_form() {
        use Metric::*;
        let cases: &[(&str, Metric, Op, f64)] = &[
            ("p99 < 200ms", LatencyMs(Stat::P99), Op::Lt, 200.0),
            ("p95 <= 0.5s", LatencyMs(Stat::P95), Op::Le, 500.0),
            ("error_rate < 0.01", ErrorRate, Op::Lt, 0.01),
            ("error_rate < 1%", ErrorRate, Op::Lt, 0.01),
            ("rps > 100", Rps, Op::Gt, 100.0),
            ("success_ratio >= 0.99", SuccessRatio, Op::Ge, 0.99),
            ("mean < 50ms", LatencyMs(Stat::Mean), Op::Lt, 50.0),
            ("max < 1s", LatencyMs(Stat::Max), Op::Lt, 1000.0),
            ("p50 < 10ms", LatencyMs(Stat::P50), Op::Lt, 10.0),
            ("p75 < 20ms", LatencyMs(Stat::P75), Op::Lt, 20.0),
            ("p90 < 30ms", LatencyMs(Stat::P90), Op::Lt, 30.0),
            ("p999 < 2s", LatencyMs(Stat::P999), Op::Lt, 2000.0),
            ("min > 0.1ms", LatencyMs(Stat::Min), Op::Gt, 0.1),
            // Variations: no spaces, extra spaces, bare ms, µs, compound durations, p99.9.
            ("p99<200ms", LatencyMs(Stat::P99), Op::Lt, 200.0),
            ("  p99   <=   250  ", LatencyMs(Stat::P99), Op::Le, 250.0),
            ("p90 < 750us", LatencyMs(Stat::P90), Op::Lt, 0.75),
            ("max < 1m30s", LatencyMs(Stat::Max), Op::Lt, 90_000.0),
            ("p99.9 < 1s", LatencyMs(Stat::P999), Op::Lt, 1000.0),
            ("P99 < 1s", LatencyMs(Stat::P99), Op::Lt, 1000.0),
            ("success_ratio >= 99.5%", SuccessRatio, Op::Ge, 0.995),
            ("rps >= 2.5k", Rps, Op::Ge, 2500.0),
            ("rps > 300/s", Rps, Op::Gt, 300.0),
        ];
        for &(s, metric, op, value) in cases {
            let (m, o, v) = parsed(s);
            assert_eq!((m, o), (metric, op), "{s}");
            assert!(close(v, value), "{s}: {v} vs {value}");
        }
        assert_eq!(
            parse_threshold("  p99 < 200ms ").unwrap().text,
            "p99 < 200ms"
        );
    }

    #[test]
    fn rejects_bad_thresholds_with_helpful_messages() {
        let e = parse_threshold("p98 < 1s").unwrap_err();
        assert!(matches!(e, ThresholdError::UnknownMetric { ref metric, .. } if metric == "p98"));
        assert!(e.to_string().contains("p999") && e.to_string().contains("error_rate"));

        let e = parse_threshold("p99 << 1").unwrap_err();
        assert!(matches!(e, ThresholdError::Operator { ref op, .. } if op == "<<"));
        assert!(e.to_string().contains("<="));

        let e = parse_threshold("rps > fast").unwrap_err();
        assert!(matches!(e, ThresholdError::Value { ref value, .. } if value == "fast"));
        assert!(e.to_string().contains("operations per second"));

        for bad in [
            "",
            "p99",
            "p99 <",
            "< 200ms",
            "p99 200ms",
            "p99 = 200ms",
            "p99 == 200ms",
            "p99 < -5ms",
            "p99 < 10parsecs",
            "error_rate < 2",
            "error_rate < 150%",
            "error_rate < 10ms",
            "success_ratio > -0.1",
            "rps > 10ms",
            "rps > -3",
        ] {
            let e = parse_threshold(bad);
            assert!(e.is_err(), "{bad} parsed as {e:?}");
        }
        let msg = parse_threshold("p99 200ms").unwrap_err().to_string();
        assert!(
            msg.contains("METRIC OP VALUE") && msg.contains("success_ratio"),
            "{msg}"
        );
    }

    #[test]
    fn verdicts_against_a_measurement() {
        // 90 ok at 5 ms, 10 failures at 100 ms over 10 s: rps 10, success 0.9.
        let m = measurement(&[(5_000, 90)], &[(100_000, 10)], 10.0);
        let check = |s: &str| parse_threshold(s).unwrap().check(&m);

        let v = check("p50 < 10ms");
        assert!(v.passed && (v.actual - 5.0).abs() < 0.01, "{v:?}");
        assert_eq!(v.threshold, "p50 < 10ms");
        assert!(!check("p99 < 50ms").passed);
        assert!(check("max <= 0.2s").passed);
        let v = check("error_rate < 5%");
        assert!(!v.passed && (v.actual - 0.1).abs() < 1e-12);
        assert!(check("error_rate <= 0.1").passed);
        assert!(check("success_ratio >= 0.9").passed);
        assert!(!check("success_ratio > 0.9").passed);
        let v = check("rps >= 10");
        assert!(v.passed && (v.actual - 10.0).abs() < 1e-12);
        assert!(!check("rps > 10").passed);

        // No completed operations: latency SLOs cannot pass on no data.
        let empty = measurement(&[], &[], 1.0);
        let v = parse_threshold("p99 < 1s").unwrap().check(&empty);
        assert!(v.actual.is_nan() && !v.passed);
        // Nor does an error-rate gate: a run that did nothing did not succeed (success 0).
        assert!(
            !parse_threshold("error_rate < 1%")
                .unwrap()
                .check(&empty)
                .passed
        );
    }
}
