//! Thresholds on a script's own metrics: `NAME STAT OP VALUE` (`my_trend p(95) < 200`,
//! `logins count >= 100`, `cache_hit rate > 0.9`, `queue_depth value < 50`), or with k6's
//! colon, `my_trend:p(95)<200`.

use crate::threshold::{judged, Metric, Stat, Threshold, ThresholdError};
use perfbase_core::metric::{reserved, MetricKind, MetricResult};
use serde::{Deserialize, Serialize};

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
    fn from_name(name: &str) -> Option<CustomStat> {
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

/// `text` as a threshold on a script metric, or None when it does not start with a name that
/// could be one (then it is one of perfbase's own metrics, or not a threshold at all).
pub(crate) fn parse(text: &str) -> Option<Result<Threshold, ThresholdError>> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (name, rest) = text.split_at(end);
    let starts_well = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if !starts_well || Metric::from_name(name).is_some() || reserved(name) {
        return None;
    }
    let rest = match rest.strip_prefix(':') {
        Some(r) => r.trim_start(),
        None if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        None => return None,
    };
    let stat_end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '=' | '!'))
        .unwrap_or(rest.len());
    let (stat_text, tail) = rest.split_at(stat_end);
    // `name < 5`: a metric name without a statistic, which the usual parse names.
    if stat_text.is_empty() {
        return None;
    }
    let Some(stat) = CustomStat::from_name(stat_text) else {
        return Some(Err(ThresholdError::UnknownStat {
            text: text.to_string(),
            metric: name.to_string(),
            stat: stat_text.to_string(),
        }));
    };
    Some(
        judged(text, Metric::Custom(stat), tail.trim_start()).map(|t| Threshold {
            of: Some(name.to_string()),
            ..t
        }),
    )
}

#[cfg(test)]
mod tests {
    use crate::threshold::parse_threshold;
    use perfbase_core::metric::{MetricKind, MetricResult, MetricStats};
    use std::time::Duration;

    fn measured(kind: MetricKind, name: &str, values: &[f64]) -> MetricResult {
        let mut s = MetricStats::new(name, kind);
        for v in values {
            s.add(*v, Duration::ZERO);
        }
        MetricResult::from_stats(&s, 2.0)
    }

    #[test]
    fn each_form_reads_and_judges_its_figure() {
        let trend = measured(MetricKind::Trend, "waiting", &[10.0, 20.0, 30.0, 40.0]);
        let counter = measured(MetricKind::Counter, "logins", &[1.0, 1.0, 3.0]);
        let rate = measured(MetricKind::Rate, "hit", &[1.0, 0.0, 1.0, 1.0]);
        let gauge = measured(MetricKind::Gauge, "depth", &[4.0, -2.0]);
        let cases: [(&str, &MetricResult, f64); 11] = [
            ("waiting p(95) < 200", &trend, 40.0),
            ("waiting:p(50)<=20.1", &trend, 20.0),
            ("waiting avg < 1s", &trend, 25.0),
            ("waiting med < 100", &trend, 20.0),
            ("waiting count >= 4", &trend, 4.0),
            ("logins count >= 5", &counter, 5.0),
            ("logins rate > 2", &counter, 2.5),
            ("hit rate > 70%", &rate, 0.75),
            ("depth value < 0", &gauge, -2.0),
            ("depth max <= 4", &gauge, 4.0),
            ("depth min > -3", &gauge, -2.0),
        ];
        let mut m = crate::fixtures::measurement(&[], &[], 1.0);
        for (text, metric, actual) in cases {
            let t = parse_threshold(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            m.metrics = vec![metric.clone()];
            let v = t.check(&m);
            // Percentiles are a histogram's: within 0.1 %.
            assert!(
                (v.actual - actual).abs() <= actual.abs() * 1e-3,
                "{text}: {}",
                v.actual
            );
            assert!(v.passed, "{text}");
            assert_eq!(v.threshold, text);
        }
        // A metric the run does not have matched nothing, and fails.
        m.metrics.clear();
        let v = parse_threshold("waiting p(95) < 200").unwrap().check(&m);
        assert!(v.actual.is_nan() && !v.passed);
    }

    #[test]
    fn every_name_a_threshold_reads_as_its_own_is_reserved() {
        for stat in crate::threshold::Stat::ALL {
            assert!(
                perfbase_core::metric::reserved(stat.name()),
                "{}",
                stat.name()
            );
        }
        for name in ["error_rate", "success_ratio", "rps", "checks", "avg", "med"] {
            assert!(perfbase_core::metric::reserved(name), "{name}");
        }
    }

    #[test]
    fn a_wrong_statistic_or_limit_is_named() {
        let e = parse_threshold("waiting p(97) < 200")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown statistic 'p(97)'") && e.contains("'waiting'"),
            "{e}"
        );
        let e = parse_threshold("waiting p95 < fast")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'fast' is not a valid p95 limit"), "{e}");
        // A built-in metric is still read as one; an unknown bare name is named as before.
        assert!(parse_threshold("p99 < 200ms").unwrap().of.is_none());
        let e = parse_threshold("latency < 5").unwrap_err().to_string();
        assert!(e.contains("unknown metric 'latency'"), "{e}");
    }
}
