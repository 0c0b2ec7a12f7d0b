//! Units as people type them: durations (`250ms`, `2s`, `1m30s`), rates (`2000`, `2k`, `500/s`,
//! `120/m`) and counts (`60000`, `60k`, `1M`). Parsing is strict and every error says what
//! form is expected.

use std::time::Duration;
use thiserror::Error;

/// A value that does not parse; the message names the accepted forms.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    /// Use a number followed by a unit: `250ms`, `2s`, `1m30s`, `1h`; a bare number means seconds.
    #[error("invalid duration '{0}': use a number with a unit such as 500us, 250ms, 2s, 1.5s, 1m30s or 1h")]
    Duration(String),
    /// Use a positive number of operations per second, optionally with k/M and /s, /m or /h.
    #[error("invalid rate '{0}': use a positive number of requests per second such as 200, 2k, 500/s or 120/m")]
    Rate(String),
    /// Use a rate this side of [`MAX_RATE`]: no load generator paces faster, and beyond it
    /// the schedule's arithmetic loses meaning.
    #[error("rate '{0}' is above the 100M/s that perfbase can pace; use a lower rate")]
    RateTooHigh(String),
    /// Use a rate this side of [`MIN_RATE`]: one request every 1,000 s is the slowest
    /// schedule perfbase paces (slower ones put the next request past any run's end, and far
    /// enough their times overflow).
    #[error("rate '{0}' is below 0.001/s (one request every 16 min 40 s), the slowest perfbase paces; use a higher rate, or -n for a count")]
    RateTooLow(String),
    /// Use a whole number, optionally with k or M.
    #[error("invalid count '{0}': use a whole number such as 1000, 60k or 1M")]
    Count(String),
}

/// A number as an error shows it: a TOML float such as 1e308 or 1e-20 arrives written out in
/// full, so only its start.
fn shown(input: &str) -> String {
    let start: String = input.chars().take(16).collect();
    let cut = if start.len() < input.len() { "…" } else { "" };
    format!("{start}{cut}")
}

/// Splits "1.5k/s" into ("1.5", "k/s").
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

fn parse_decimal(num: &str) -> Option<f64> {
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return None;
    }
    num.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parses a duration: a sequence of `<number><unit>` with units h, m, s, ms, us/µs, ns;
/// a bare number means seconds.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let err = || UnitError::Duration(input.to_string());
    let s = input.trim();
    if s.is_empty() {
        return Err(err());
    }
    if let Some(v) = parse_decimal(s) {
        return Duration::try_from_secs_f64(v).map_err(|_| err());
    }
    let mut rest = s;
    let mut total = 0f64;
    while !rest.is_empty() {
        let (num, tail) = split_number(rest);
        let value = parse_decimal(num).ok_or_else(err)?;
        let unit_len = tail
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map(|(i, _)| i)
            .unwrap_or(tail.len());
        let (unit, after) = tail.split_at(unit_len);
        let scale = match unit {
            "h" => 3600.0,
            "m" | "min" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(err()),
        };
        total += value * scale;
        rest = after;
    }
    Duration::try_from_secs_f64(total).map_err(|_| err())
}

/// The highest rate a schedule may ask for, in operations per second.
pub const MAX_RATE: f64 = 1e8;

/// The slowest rate perfbase paces, requests per second: one every 1,000 s.
pub const MIN_RATE: f64 = 1e-3;

/// Seconds as a [`Duration`], never a panic: NaN and negatives are zero, and what is too long
/// for a `Duration` is its maximum (`Duration::from_secs_f64` panics on all three).
pub fn saturating_secs(secs: f64) -> Duration {
    if secs > 0.0 {
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
    } else {
        Duration::ZERO
    }
}

/// Parses a rate in operations per second: `200`, `2k`, `1.5k/s`, `120/m`, `3600/h`.
pub fn parse_rate(input: &str) -> Result<f64, UnitError> {
    let err = || UnitError::Rate(input.to_string());
    let s = input.trim();
    let (amount, per) = match s.split_once('/') {
        Some((a, p)) => (a, p),
        None => (s, "s"),
    };
    let per_s = match per {
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    let (num, suffix) = split_number(amount);
    let mult = match suffix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        _ => return Err(err()),
    };
    let v = parse_decimal(num).ok_or_else(err)? * mult / per_s;
    if !(v > 0.0 && v.is_finite()) {
        Err(err())
    } else if v > MAX_RATE {
        Err(UnitError::RateTooHigh(shown(input)))
    } else if v < MIN_RATE {
        Err(UnitError::RateTooLow(shown(input)))
    } else {
        Ok(v)
    }
}

/// Parses a count: `1000`, `60k`, `1M`, `2.5k` (must come out whole).
pub fn parse_count(input: &str) -> Result<u64, UnitError> {
    let err = || UnitError::Count(input.to_string());
    let s = input.trim();
    let (num, suffix) = split_number(s);
    let mult = match suffix {
        "" => 1u64,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        _ => return Err(err()),
    };
    if !num.contains('.') {
        return num
            .parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(mult))
            .ok_or_else(err);
    }
    let v = parse_decimal(num).ok_or_else(err)? * mult as f64;
    if v.fract() == 0.0 && v >= 0.0 && v < u64::MAX as f64 {
        Ok(v as u64)
    } else {
        Err(err())
    }
}

/// Formats a duration the way it is parsed back: `250ms`, `2s`, `1.5s`, `90us`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0s".into()
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// `1234567` → `1,234,567`: how every count is shown, in reports and in messages alike.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn saturating_secs_never_panics() {
        assert_eq!(saturating_secs(f64::NAN), Duration::ZERO);
        assert_eq!(saturating_secs(-1.0), Duration::ZERO);
        assert_eq!(saturating_secs(1e30), Duration::MAX);
        assert_eq!(saturating_secs(f64::INFINITY), Duration::MAX);
        assert_eq!(saturating_secs(1.5), Duration::from_millis(1500));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
        for bad in ["", "s", "10x", "-1s", "1..2s", "ms10", "1s 2s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_beyond_the_ceiling_are_refused() {
        assert_eq!(parse_rate("100M").unwrap(), MAX_RATE);
        assert!(matches!(parse_rate("101M"), Err(UnitError::RateTooHigh(_))));
        let huge = format!("{}", 1e308);
        assert!(matches!(parse_rate(&huge), Err(UnitError::RateTooHigh(_))));
        assert_eq!(parse_rate("0.001").unwrap(), MIN_RATE);
        assert_eq!(parse_rate("3.6/h").unwrap(), MIN_RATE);
        assert!(matches!(
            parse_rate("0.00000000000000000001"),
            Err(UnitError::RateTooLow(_))
        ));
        assert!(matches!(parse_rate("1/h"), Err(UnitError::RateTooLow(_))));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("2000"), Ok(2000.0));
        assert_eq!(parse_rate("2k"), Ok(2000.0));
        assert_eq!(parse_rate("500/s"), Ok(500.0));
        assert_eq!(parse_rate("120/m"), Ok(2.0));
        assert_eq!(parse_rate("1.5k/s"), Ok(1500.0));
        for bad in ["", "0", "-5", "2x", "10/d", "k"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("60000"), Ok(60000));
        assert_eq!(parse_count("60k"), Ok(60000));
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert_eq!(parse_count("2.5k"), Ok(2500));
        for bad in ["", "1.5", "-3", "3x", "k"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn formatted_durations_parse_back(ns in 0u64..10_000_000_000_000) {
            let d = Duration::from_nanos(ns);
            prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }

        #[test]
        fn counts_round_trip(n in 0u64..u64::MAX / 1_000_000) {
            prop_assert_eq!(parse_count(&n.to_string()), Ok(n));
        }

        #[test]
        fn garbage_never_panics(s in "\\PC{0,12}") {
            let _ = parse_duration(&s);
            let _ = parse_rate(&s);
            let _ = parse_count(&s);
        }
    }
}
