//! Thresholds as users write them in plans and on the CLI — `p99 < 200ms`, `error_rate < 1%`,
//! `rps > 100`, k6's `p(95)<200`, and on a script's own metrics `NAME STAT OP VALUE`
//! (`my_trend p(95) < 200`, `logins count >= 100`, `cache_hit rate > 0.9`, or with k6's colon,
//! `my_trend:p(95)<200`) — read into a [`Threshold`].

use crate::threshold::{CustomStat, Metric, Op, Threshold, ThresholdError};
use perfbase_core::metric::reserved;
use perfbase_core::units::{parse_duration, parse_rate};

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

const LATENCY_FORMS: &str =
    "use a duration such as 200ms, 0.5s, 1s or 750us (a bare number means milliseconds)";
const RATIO_FORMS: &str = "use a ratio between 0 and 1 such as 0.01, or a percentage such as 1%";
const CUSTOM_FORMS: &str =
    "use a number in the metric's own unit such as 200, 0.95 or -3, a percentage such as 95%, or a duration such as 200ms";
const SECONDS_FORMS: &str =
    "use a duration such as 10s, 1.5s or 500ms (a bare number means seconds)";
const RPS_FORMS: &str =
    "use a non-negative number of operations per second such as 100, 2.5k or 300/s";

/// Parses `METRIC OP VALUE`, with or without spaces: `p99 < 200ms`, `p95<=0.5s`,
/// `error_rate < 0.01`, `error_rate < 1%`, `rps > 100`, `success_ratio >= 0.99`,
/// `mean < 50ms`, `max < 1s`.
///
/// Latency limits go through [`parse_duration`] and are stored in ms; a bare number is taken as
/// milliseconds (not seconds, as elsewhere), since that is how latency SLOs are usually quoted.
/// Ratio limits accept `%`. `rps` accepts a plain number or a rate such as `2.5k` or `300/s`.
pub fn parse_threshold(s: &str) -> Result<Threshold, ThresholdError> {
    let shown = s.trim();
    if let Some(custom) = custom(shown) {
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
fn judged(text: &str, metric: Metric, rest: &str) -> Result<Threshold, ThresholdError> {
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

/// `text` as a threshold on a script metric, or None when it does not start with a name that
/// could be one (then it is one of perfbase's own metrics, or not a threshold at all).
fn custom(text: &str) -> Option<Result<Threshold, ThresholdError>> {
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
    use crate::threshold::*;

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

#[cfg(test)]
mod custom_tests {
    use super::parse_threshold;
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
