//! What can go wrong with a results store. Every message says what to do about it, and none
//! carries a password: locations are redacted and database messages are scrubbed of the
//! connection's secrets before they become an error.

use std::fmt;

/// Why a store could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached, created or migrated.
    #[error("cannot open results store {location}: {source}")]
    Open {
        /// The location, password redacted.
        location: String,
        /// What the database said, scrubbed of secrets, and what to check.
        source: Cause,
    },
    /// The store's schema is newer than this perfbase understands.
    #[error(
        "results store has schema version {found}, written by a newer perfbase (this one \
         supports up to {supported}); upgrade perfbase"
    )]
    NewerSchema { found: u32, supported: u32 },
    /// No run matches the reference (an id, `latest` or `latest:KEY=VALUE,...`).
    #[error("no run {0}; see `perfbase history`")]
    NotFound(String),
    /// No baseline of that name.
    #[error("no baseline '{0}'; set one with `perfbase baseline set {0} RUN`")]
    NoBaseline(String),
    /// Stored data does not read back (edited by hand, or damaged).
    #[error(
        "results store is damaged: {0}; restore it from a backup or start a new one with \
         another --store location"
    )]
    Corrupt(String),
    /// A value cannot be stored (a name or a result the store refuses).
    #[error("cannot store this: {0}")]
    Invalid(String),
    /// The database failed an operation (connection lost, disk full, locked, ...).
    #[error("results store error: {0}; check the disk or the PostgreSQL server, then retry")]
    Db(String),
}

/// The database's own explanation of an [`StoreError::Open`] failure, already scrubbed of
/// passwords (the original error is not kept, since its chain may carry the URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause(pub String);

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Cause {}

/// An error and its whole `source()` chain as one line, `outer: inner: ...`.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = s.source();
    }
    out
}

/// `text` with every secret replaced by `[redacted]`.
pub(crate) fn scrub(text: &str, secrets: &[String]) -> String {
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    perfbase_core::redact::scrub(text, &secrets)
}
