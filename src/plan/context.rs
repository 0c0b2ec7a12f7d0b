//! Where a plan's errors point: the file, the line of a value's span and the field; and the
//! shared readers of durations, counts, thresholds and `${ENV}` values.

use super::file::S;
use super::model::{PlanError, Workload};
use perfbase_analysis::{parse_threshold, Threshold};
use perfbase_core::units::parse_duration;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The longest duration a plan may give (a step, warm-up, cool-down, timeout): 7 days.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);
/// The most repetitions of a scenario.
pub const MAX_REPETITIONS: u64 = 10_000;
/// The most requests a step or check may be bounded by: 10^12.
pub const MAX_REQUESTS: u64 = 1_000_000_000_000;

pub(super) struct Ctx<'a> {
    pub text: &'a str,
    pub file: String,
    pub base: PathBuf,
}

impl Ctx<'_> {
    pub fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    pub fn err<T>(
        &self,
        span: &S<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> PlanError {
        PlanError {
            file: self.file.clone(),
            line: self.line(span.span().start),
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn err_at(
        &self,
        line: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> PlanError {
        PlanError {
            file: self.file.clone(),
            line,
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn duration(&self, s: &S<String>, field: &str) -> Result<Duration, PlanError> {
        parse_duration(s.get_ref()).map_err(|e| self.err(s, field, e.to_string()))
    }

    pub fn positive_duration(&self, s: &S<String>, field: &str) -> Result<Duration, PlanError> {
        let d = self.duration(s, field)?;
        if d.is_zero() {
            return Err(self.err(s, field, "must be longer than zero"));
        }
        if d > MAX_DURATION {
            return Err(self.err(s, field, "is longer than 7 days, the longest a plan's step, warm-up, cool-down or timeout may be"));
        }
        Ok(d)
    }

    /// A count of at least 1 and at most `max` (`what` names the limit in the error).
    pub fn count(&self, s: &S<i64>, field: &str, max: u64, what: &str) -> Result<u64, PlanError> {
        let n = self.positive(s, field)?;
        if n > max {
            return Err(self.err(s, field, format!("{n} is more than {max}, the most {what}")));
        }
        Ok(n)
    }

    /// A finite number within `range` (`what` says the range in words).
    pub fn number(
        &self,
        s: &S<f64>,
        field: &str,
        range: std::ops::RangeInclusive<f64>,
        what: &str,
    ) -> Result<f64, PlanError> {
        let v = *s.get_ref();
        if v.is_finite() && range.contains(&v) {
            Ok(v)
        } else {
            Err(self.err(s, field, format!("{v} is out of range: {what}")))
        }
    }

    pub fn positive(&self, s: &S<i64>, field: &str) -> Result<u64, PlanError> {
        match *s.get_ref() {
            n if n >= 1 => Ok(n as u64),
            n => Err(self.err(s, field, format!("must be at least 1, not {n}"))),
        }
    }

    pub fn threshold(&self, s: &S<String>, field: &str) -> Result<Threshold, PlanError> {
        parse_threshold(s.get_ref()).map_err(|e| self.err(s, field, e.to_string()))
    }

    /// A name that reports, the terminal and the store show: no control characters (an ESC
    /// could retitle or clear a terminal, a newline split a table row).
    pub fn name(&self, s: &S<String>, field: &str) -> Result<(), PlanError> {
        // Not expanded, and not to be: a variable's value (a key, a host) would show in every
        // report. Refused rather than sent literally, as it used to be.
        if s.get_ref().contains("${") {
            return Err(self.err(
                s,
                field,
                "holds '${': environment variables are not expanded in names, which every \
                 report and the store show; write the name itself",
            ));
        }
        match s.get_ref().chars().find(|c| c.is_control()) {
            Some(c) => Err(self.err(
                s,
                field,
                format!(
                    "holds the control character {}: a name is shown on terminals and in \
                     reports, so write it in printable characters",
                    perfbase_core::redact::printable(&c.to_string())
                ),
            )),
            None => Ok(()),
        }
    }

    /// Expands `${ENV_VAR}` from the environment (secrets stay out of the plan file).
    pub fn env(&self, s: &S<String>, field: &str) -> Result<String, PlanError> {
        self.expand(s, field, |_| true)
    }

    /// A target URL with its `${ENV}`s substituted so none can change where the load goes
    /// (see [`super::url_vars`]).
    pub fn url(&self, s: &S<String>, field: &str) -> Result<String, PlanError> {
        super::url_vars::expand_url(s.get_ref(), |name| std::env::var(name).ok())
            .map_err(|e| self.err(s, field, e))
    }

    /// A target URL as results and reports show it: a variable that holds a URL (`${BASE}` =
    /// `http://10.0.0.5:8080`) says where the target is and is expanded, its password then
    /// redacted; any other variable may hold a key or token and stays `${NAME}`.
    pub fn shown_url(&self, s: &S<String>, field: &str) -> Result<String, PlanError> {
        let shown = self.expand(s, field, |value| value.contains("://"))?;
        Ok(perfbase_core::redact::url(&shown))
    }

    /// Expands the `${NAME}`s whose value `keep` accepts; the others stay as written.
    pub fn expand(
        &self,
        s: &S<String>,
        field: &str,
        keep: impl Fn(&str) -> bool,
    ) -> Result<String, PlanError> {
        let mut out = String::new();
        let mut rest = s.get_ref().as_str();
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let end = after.find('}').ok_or_else(|| {
                self.err(
                    s,
                    field,
                    "unclosed '${' (write ${NAME} for an environment variable)",
                )
            })?;
            let name = &after[..end];
            let value = std::env::var(name).map_err(|_| {
                self.err(
                    s,
                    field,
                    format!("environment variable {name} is not set (export it before the run)"),
                )
            })?;
            if keep(&value) {
                out.push_str(&value);
            } else {
                out.push_str(&rest[i..i + 2 + end + 1]);
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

impl Ctx<'_> {
    /// A reference to a workload by name, or an error listing the workloads there are.
    pub fn workload_ref(
        &self,
        workloads: &BTreeMap<String, Workload>,
        s: &S<String>,
        field: String,
    ) -> Result<String, PlanError> {
        if workloads.contains_key(s.get_ref()) {
            return Ok(s.get_ref().clone());
        }
        let known: Vec<&str> = workloads.keys().map(|k| k.as_str()).collect();
        Err(self.err(
            s,
            field,
            format!(
                "no workload named '{}' (workloads: {})",
                s.get_ref(),
                known.join(", ")
            ),
        ))
    }
}

/// The TOML parser's message, with the ones that name Rust types said for a plan's writer.
pub(super) fn toml_message(message: &str) -> String {
    let message = message.trim();
    if message.contains("as i128, expected i64") || message.contains("as i128, expected u64") {
        return "the number is too large (at most 9223372036854775807)".into();
    }
    if message == "duplicate key" {
        return "duplicate key: this key is already set in this table".into();
    }
    message.to_string()
}

/// The field a TOML error is at, as `[section].key` from the text around `at` (the
/// deserializer's own error does not name it), or `toml` when there is none.
pub(super) fn toml_field(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"'))
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let section = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(['[', ']']).trim());
    match (section, key) {
        (Some(s), Some(k)) => format!("{s}.{k}"),
        (None, Some(k)) => k.to_string(),
        (_, None) if line.trim().starts_with('[') && line.trim().ends_with(']') => {
            line.trim().to_string()
        }
        _ => "toml".to_string(),
    }
}
