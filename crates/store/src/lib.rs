//! perfbase-store: the results database. Every run perfbase measures can be saved here, with
//! labels (service, version, env, free tags), and named baselines point at runs, so a
//! baseline such as "v1.0 on 2025-10-29: p95 60 ms" is kept for years and compared against.
//!
//! A store is a SQLite file by default (e.g. `.perfbase/results.db`, WAL mode, parent folders
//! created) or a PostgreSQL database given as a `postgres://` / `postgresql://` URL, so a
//! team can share one history. Both hold the same versioned schema ([`schema`]); opening a
//! store applies the pending migrations, so a store written by an older perfbase opens in a
//! newer one, and a newer store is refused rather than misread. Saving a run is one
//! transaction: a crash or Ctrl-C never leaves half a run. The full `perfbase.result/v1` JSON
//! (histograms included) is stored, so a run reads back exactly; summary columns serve
//! listings.
//!
//! This crate must not depend on the engine, the drivers or the reports: only on
//! perfbase-core (the result types), serde, serde_json, thiserror and the database crates
//! (rusqlite, postgres). The CLI wires it to the rest.

mod database;
mod error;
mod points;
pub mod schema;
mod store;

#[cfg(test)]
mod tests;

pub use error::{Cause, StoreError};
pub use schema::SCHEMA_VERSION;
pub use store::{BrowsedRun, LiveRun, PlanRow, RunPage, RunQuery};
pub use store::{Pruned, Store, Trend, TrendKey, TrendPoint, TrendQuery, TrendRun};

use perfbase_core::result::RunResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// A run's number in its store; assigned in save order, never reused.
pub type RunId = i64;

/// Labels of a run: `service`, `version`, `env` and any free tags, as key → value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Labels(pub BTreeMap<String, String>);

impl Labels {
    /// No labels.
    pub fn new() -> Labels {
        Labels::default()
    }

    /// These labels plus `key=value` (replacing an earlier value of `key`).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Labels {
        self.0.insert(key.into(), value.into());
        self
    }

    /// Labels from `KEY=VALUE` texts, as given on a command line; a later key wins.
    pub fn from_pairs<S: AsRef<str>>(pairs: &[S]) -> Result<Labels, LabelError> {
        let mut out = Labels::new();
        for p in pairs {
            let (k, v) = parse_label(p.as_ref())?;
            out.0.insert(k, v);
        }
        Ok(out)
    }
}

/// A label text that is not `KEY=VALUE` with a usable key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid label '{0}': write KEY=VALUE, e.g. service=api, version=1.4.2 or env=ci (the key \
     must be non-empty and contain no '=', ',' or spaces)"
)]
pub struct LabelError(pub String);

/// Whether `key` can be a label key: non-empty, without `=`, `,` or whitespace, so it can
/// also be written in `latest:KEY=VALUE,...`.
pub fn valid_label_key(key: &str) -> bool {
    !key.is_empty()
        && !key
            .chars()
            .any(|c| c == '=' || c == ',' || c.is_whitespace() || c.is_control())
}

/// Parses one `KEY=VALUE` (surrounding spaces trimmed; the value may be empty).
pub fn parse_label(text: &str) -> Result<(String, String), LabelError> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| LabelError(text.to_string()))?;
    let (k, v) = (k.trim(), v.trim());
    if !valid_label_key(k) {
        return Err(LabelError(text.to_string()));
    }
    Ok((k.to_string(), v.to_string()))
}

/// One stored run as listed: the summary columns, without the full result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: RunId,
    /// When the run was saved, RFC 3339 UTC.
    pub saved_at: String,
    /// The result's `started_at`.
    pub started_at: String,
    /// What produced it: `http`, `plan` or `demo`.
    pub kind: String,
    /// The result's target, secrets already redacted.
    pub target: String,
    /// `open` or `closed`.
    pub model: String,
    pub requests: u64,
    pub rps: f64,
    pub success_ratio: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub interrupted: bool,
    pub labels: BTreeMap<String, String>,
}

/// One stored run in full: its summary and the exact result that was saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    pub summary: RunSummary,
    pub result: RunResult,
}

/// Which run: `42`, `latest`, or `latest:service=api,env=ci` (the newest run having every
/// one of those labels).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    Id(RunId),
    Latest,
    LatestWith(Vec<(String, String)>),
}

/// A run reference that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid run '{0}': write a run id (42), latest, or latest:KEY=VALUE,... (e.g. \
     latest:service=api,env=ci); see `perfbase history` for ids"
)]
pub struct RunRefError(pub String);

impl FromStr for RunRef {
    type Err = RunRefError;

    fn from_str(s: &str) -> Result<RunRef, RunRefError> {
        let text = s.trim();
        let err = || RunRefError(s.to_string());
        if text == "latest" {
            return Ok(RunRef::Latest);
        }
        if let Some(rest) = text.strip_prefix("latest:") {
            let pairs = rest
                .split(',')
                .map(|p| parse_label(p).map_err(|_| err()))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(RunRef::LatestWith(pairs));
        }
        match text.parse::<RunId>() {
            Ok(id) if id > 0 => Ok(RunRef::Id(id)),
            _ => Err(err()),
        }
    }
}

impl fmt::Display for RunRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunRef::Id(id) => write!(f, "{id}"),
            RunRef::Latest => f.write_str("latest"),
            RunRef::LatestWith(pairs) => {
                f.write_str("latest:")?;
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{k}={v}")?;
                }
                Ok(())
            }
        }
    }
}

/// Whether a store location is a PostgreSQL database: a `postgres://` or `postgresql://` URL,
/// or a libpq connection string (`host=127.0.0.1 dbname=perf user=pb password=…`), which
/// would otherwise have named a SQLite file with the password in its name. Anything else
/// with `://` is refused, and the rest are SQLite file paths.
pub fn is_postgres_url(location: &str) -> bool {
    let lower = location.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://") || is_conninfo(location)
}

/// The libpq keywords a connection string starts with.
const CONNINFO_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "sslmode",
    "application_name",
    "connect_timeout",
    "options",
    "service",
    "target_session_attrs",
];

/// Whether `location` is a libpq `key=value` connection string: its first word is
/// `keyword=` for a libpq keyword.
fn is_conninfo(location: &str) -> bool {
    let first = location.split_whitespace().next().unwrap_or("");
    first
        .split_once('=')
        .is_some_and(|(k, _)| CONNINFO_KEYS.contains(&k.trim().to_ascii_lowercase().as_str()))
}

/// A store location fit for messages: a URL's password and secret query parameters, or a
/// connection string's `password=`, replaced by `[redacted]`; a file path unchanged.
pub fn redact_location(location: &str) -> String {
    if location.contains("://") {
        perfbase_core::redact::url(location)
    } else if is_conninfo(location) {
        perfbase_core::redact::conninfo(location)
    } else {
        location.to_string()
    }
}

/// The secrets a location carries, as written and percent-decoded: the URL's password and any
/// `password=` query parameter. Error texts are scrubbed of them. Passwords shorter than 3
/// characters are not scrubbed (replacing every such fragment would garble messages).
pub(crate) fn location_secrets(location: &str) -> Vec<String> {
    let mut raw = Vec::new();
    let (before_query, query) = match location.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (location, None),
    };
    if let Some((_, rest)) = before_query.split_once("://") {
        let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            if let Some((_, pw)) = userinfo.split_once(':') {
                raw.push(pw.to_string());
            }
        }
    }
    if is_conninfo(location) {
        // libpq's own reading of the string: quotes and escapes as the server's client sees them.
        if let Some(pw) = location.parse::<postgres::Config>().ok().and_then(|c| {
            c.get_password()
                .map(|p| String::from_utf8_lossy(p).into_owned())
        }) {
            raw.push(pw);
        }
    }
    if let Some(q) = query {
        for kv in q.split('&') {
            if let Some((k, v)) = kv.split_once('=') {
                if perfbase_core::redact::is_secret_name(k) {
                    raw.push(v.to_string());
                }
            }
        }
    }
    let mut out = Vec::new();
    for s in raw {
        let decoded = percent_decode(&s);
        for candidate in [s, decoded] {
            if candidate.chars().count() >= 3 && !out.contains(&candidate) {
                out.push(candidate);
            }
        }
    }
    // Longest first, so a secret containing another is replaced whole.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// `%XX` escapes decoded (invalid ones kept as written; invalid UTF-8 replaced).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
