//! The MySQL driver's errors and connection target: the URL read once, shown without its
//! password.

use mysql_async::{Conn, Opts, OptsBuilder};
use std::time::Duration;
use thiserror::Error;

/// Why a MySQL driver could not be built, or a schema not be initialised. Each variant says
/// what to do about it; none contains the password.
#[derive(Debug, Error)]
pub enum MyError {
    /// The URL does not parse: write it as `mysql://user:password@host:port/database`
    /// (`mariadb://` is accepted too).
    #[error("'{url}': {reason}; use mysql://user:password@host:port/database")]
    Url { url: String, reason: String },
    /// The workload cannot run on MySQL. Only TPC-B as one stored-function call is refused:
    /// stored functions are written differently in MySQL and MariaDB (another language, other
    /// rules on what a function may do), so PostgreSQL's `pgbench_tx` has no faithful
    /// counterpart and the workload is not offered; run the plain TPC-B workload instead,
    /// which sends the same five statements in one transaction.
    #[error("{0}")]
    Unsupported(String),
    /// A setting out of range (a scale of 0): use a value the message names.
    #[error("{0}")]
    Invalid(String),
    /// No connection could be made: start the server (`scripts/services.sh up mariadb`) or
    /// fix the host and port.
    #[error("cannot connect to {target}: {reason}; is the server running (scripts/services.sh up mariadb)?")]
    Connect { target: String, reason: String },
    /// The server refused the login or the database (1045 access denied, 1049 unknown
    /// database): fix the user, password or database in the URL, or the user's grants.
    #[error("{target}: MySQL {code} ({state}): {message}; check the user, password and database in the URL")]
    Login {
        target: String,
        code: u16,
        state: String,
        message: String,
    },
    /// A statement failed on the server: the message has the server's code and text (1142
    /// means the user lacks a privilege on the database, 1050 a table in the way).
    #[error("{context}: MySQL {code} ({state}): {message}")]
    Server {
        context: String,
        code: u16,
        state: String,
        message: String,
    },
    /// The connection broke half-way (server restarted, connection killed): run it again.
    #[error("{context}: {reason}; the connection was lost, run it again")]
    Lost { context: String, reason: String },
}

/// What [`init_tpcb`] did: rows inserted (branches, tellers and accounts) and the time taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitReport {
    pub rows: u64,
    pub elapsed: Duration,
}

/// Rows per multi-row INSERT when filling tables (about 150 kB of SQL, well under the default
/// 16 MB `max_allowed_packet`).
pub(super) const BATCH_ROWS: i64 = 5_000;

/// Server codes after which the connection is gone even though the server answered.
pub(super) const CONNECTION_GONE: [u16; 4] = [
    1053, // ER_SERVER_SHUTDOWN
    1152, // ER_ABORTING_CONNECTION
    1927, // ER_CONNECTION_KILLED (MariaDB)
    4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
];

/// The connection options without the password (the URL's text is never shown as given).
pub(super) struct Target {
    pub(super) opts: Opts,
    /// `host:port/database`, for messages.
    pub(super) shown: String,
    /// The password, kept only to scrub it from any message that might echo it.
    pub(super) password: Option<String>,
    /// The user, host and database names, for [`Target::scrub`].
    pub(super) names: String,
}

impl Target {
    pub(super) fn parse(raw: &str) -> Result<Target, MyError> {
        let redacted = perfbase_core::redact::url(raw);
        let bad = |reason: String| MyError::Url {
            url: redacted.clone(),
            reason,
        };
        let mut url = url::Url::parse(raw).map_err(|e| bad(e.to_string()))?;
        match url.scheme() {
            "mysql" => {}
            "mariadb" => url
                .set_scheme("mysql")
                .map_err(|()| bad("cannot use this URL as mysql://".into()))?,
            other => return Err(bad(format!("unsupported scheme '{other}'"))),
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("the URL has no host".into()))?
            .to_string();
        let password = url.password().map(percent_decode);
        url.set_password(None)
            .map_err(|()| bad("the URL cannot carry a password".into()))?;
        let prefer_socket_given = url.query_pairs().any(|(k, _)| k == "prefer_socket");
        let opts = Opts::from_url(url.as_str()).map_err(|e| bad(e.to_string()))?;
        let shown = format!(
            "{host}:{}/{}",
            opts.tcp_port(),
            opts.db_name().unwrap_or_default()
        );
        let names = format!("{} {shown}", opts.user().unwrap_or_default());
        let mut builder = OptsBuilder::from_opts(opts).pass(password.clone());
        if !prefer_socket_given {
            builder = builder.prefer_socket(false);
        }
        Ok(Target {
            opts: builder.into(),
            shown,
            password,
            names,
        })
    }

    /// `text` with the password replaced, should a server or library ever echo it. Passwords
    /// shorter than 3 characters, and passwords that are part of the user, host or database
    /// name (shown anyway), are left alone: replacing them would garble the text.
    pub(super) fn scrub(&self, text: String) -> String {
        match &self.password {
            Some(p) if p.len() >= 3 && text.contains(p.as_str()) && !self.names.contains(p) => {
                perfbase_core::redact::scrub(&text, &[p.as_str()])
            }
            _ => text,
        }
    }

    pub(super) async fn connect(&self) -> Result<Conn, MyError> {
        Conn::new(self.opts.clone()).await.map_err(|e| match e {
            mysql_async::Error::Server(s) => MyError::Login {
                target: self.shown.clone(),
                code: s.code,
                state: s.state,
                message: self.scrub(s.message),
            },
            e => MyError::Connect {
                target: self.shown.clone(),
                reason: self.scrub(io_text(&e)),
            },
        })
    }

    /// A failed setup statement as an error naming `context`.
    pub(super) fn setup_error(&self, context: &str, e: mysql_async::Error) -> MyError {
        match e {
            mysql_async::Error::Server(s) => MyError::Server {
                context: context.to_string(),
                code: s.code,
                state: s.state,
                message: self.scrub(s.message),
            },
            e => MyError::Lost {
                context: context.to_string(),
                reason: self.scrub(io_text(&e)),
            },
        }
    }
}

/// An error's text, for I/O errors the operating system's words alone (mysql_async wraps them
/// as "Input/output error: Input/output error: Connection refused").
pub(super) fn io_text(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Io(mysql_async::IoError::Io(io)) => io.to_string(),
        e => e.to_string(),
    }
}

/// A password as MySQL gets it: percent-decoded by the drivers' one rule; bytes that are not
/// UTF-8 are kept as replacement characters (the server then refuses the login, and says so).
pub(super) fn percent_decode(s: &str) -> String {
    String::from_utf8_lossy(&crate::userinfo::percent_decode_bytes(s)).into_owned()
}

/// The first words of a statement, to name it in messages.
pub(super) fn first_words(sql: &str) -> &str {
    let end = sql
        .char_indices()
        .filter(|(_, c)| *c == '(')
        .map(|(i, _)| i)
        .next()
        .unwrap_or(sql.len())
        .min(60);
    let mut end = end;
    while !sql.is_char_boundary(end) {
        end -= 1;
    }
    sql[..end].trim_end()
}
