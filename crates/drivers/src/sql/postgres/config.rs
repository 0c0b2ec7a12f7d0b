//! The PostgreSQL driver's options and errors, and reading a connection string: the target
//! as messages show it (no password), and one-line error descriptions.

use std::error::Error as StdError;
use std::time::Duration;
use thiserror::Error;
use tokio_postgres::Config;

/// Options of the PostgreSQL driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgOptions {
    /// Statements in flight per connection for single-statement workloads (≥ 1; 1 = none):
    /// each `execute` then runs this many ops at once, see the module docs.
    pub pipeline: usize,
}

impl Default for PgOptions {
    fn default() -> PgOptions {
        PgOptions { pipeline: 1 }
    }
}

/// Why the PostgreSQL driver or a setup step could not do its work. Messages never contain
/// the password.
#[derive(Debug, Error)]
pub enum PgError {
    /// The connection URL does not parse: use `postgres://user:password@host:port/database`
    /// (or libpq's `host=… user=… dbname=…` form).
    #[error("'{url}' is not a usable PostgreSQL URL ({reason}); use postgres://user:password@host:port/database")]
    Url { url: String, reason: String },
    /// No connection: the server is not running or not reachable, or it refused the login
    /// (wrong user or password: SQLSTATE 28P01, missing database: 3D000).
    #[error("cannot connect to {target}: {reason}; check that the server is running and that the user, password and database are right")]
    Connect { target: String, reason: String },
    /// A setup step (creating or filling tables, creating the function) failed: the message
    /// names the step and carries the server's SQLSTATE; the user needs the rights it asks for.
    #[error("{step} failed on {target}: {reason}")]
    Setup {
        target: String,
        step: String,
        reason: String,
    },
    /// A combination this driver does not support; the message says what to use instead.
    #[error("{0}")]
    Unsupported(String),
}

/// What [`init_tpcb`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitReport {
    /// Rows loaded (accounts, tellers and branches).
    pub rows: u64,
    /// Wall time of the whole initialisation.
    pub elapsed: Duration,
}

/// `url` without its password, for messages: a URL or libpq's `key=value` form, both through
/// [`perfbase_core::redact`].
pub fn redacted(url: &str) -> String {
    if url.contains("://") {
        return perfbase_core::redact::url(url);
    }
    perfbase_core::redact::conninfo(url)
}

/// The connection target as `postgres://user@host:port/database`, from the parsed config.
pub(super) fn describe_target(config: &Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => match config.get_hostaddrs().first() {
            Some(a) => a.to_string(),
            None => "localhost".to_string(),
        },
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

pub(super) fn parse_config(url: &str) -> Result<Config, PgError> {
    let mut config: Config = url.parse().map_err(|e| PgError::Url {
        url: redacted(url),
        reason: describe(&e),
    })?;
    if config.get_user().is_none() {
        return Err(PgError::Url {
            url: redacted(url),
            reason: "no user name".into(),
        });
    }
    if config.get_application_name().is_none() {
        config.application_name("perfbase");
    }
    Ok(config)
}

/// A one-line description of an error: `SQLSTATE code: message` for the server's errors,
/// the error and its cause otherwise.
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("SQLSTATE {}: {}", db.code().code(), db.message());
    }
    match e.source() {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}
