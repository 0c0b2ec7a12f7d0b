//! HashiCorp Vault and OpenBao over their HTTP API, on the HTTP driver's connections: the same
//! client, TLS, keep-alive and connect/TLS/waiting/receiving timings as `perfbase http`.
//!
//! **Operations** ([`VaultOp`]) are the table people publish for a Vault service: transit
//! `encrypt`, `decrypt`, `sign`, `verify`; KV v2 `kv-read`, `kv-write`, `kv-list`; PKI
//! `pki-issue`; `token-create`; `health` and `seal-status`. Each op's request (its JSON body
//! included) is built once, before the load; `decrypt` and `verify` send a ciphertext and a
//! signature that [`VaultDriver::prepare`] asks the server for once, so every op is one
//! request that Vault answers 200 when it works.
//!
//! **Mounts and names**: transit at `transit/` with the keys `perfbase-<key type>`, KV v2 at
//! `secret/` (the dev server's), PKI at `pki/` with the role `perfbase`; [`init`] makes
//! whatever is missing (`--init`).
//!
//! **Errors**: a 4xx or 5xx keeps the start of its body, and [`describe_error`] turns Vault's
//! `{"errors": [...]}` (or a health answer's `sealed`/`standby`) into the error sample's
//! message, named by kind: `permission denied (403): …`, `bad request (400): …`,
//! `rate limited (429): …`, `sealed or standby (503): Vault is sealed`. Counts stay by class
//! (`http_4xx`, `http_5xx`) and status.
//!
//! **Secrets**: the token travels in `X-Vault-Token`, which every report redacts as it does
//! any header named like a token; it is never in the options shown. Plaintexts, ciphertexts
//! and signatures live only in the prepared request bytes; results show the payload's size.

mod init;
mod ops;

pub use init::{init, server_version};
pub use ops::{VaultOp, VaultOptions, ENCRYPTION_KEY_TYPES, SIGNING_KEY_TYPES};

use crate::http::fetch::{Fetched, Fetcher};
use crate::http::{HttpDriver, HttpOptions, HttpSession, Target};
use perfbase_core::{redact, Class, Driver, Outcome};
use std::sync::{Arc, OnceLock};
use thiserror::Error;
use url::Url;

/// Why a Vault workload cannot run.
#[derive(Debug, Error)]
pub enum VaultError {
    /// Not an http:// or https:// URL.
    #[error("'{0}': use the server's http:// or https:// address, e.g. http://127.0.0.1:8200")]
    Url(String),
    /// An option out of range (a key type Vault's transit engine has not).
    #[error("{0}")]
    Option(String),
    /// The HTTP layer refused the address or the TLS settings.
    #[error(transparent)]
    Http(#[from] crate::http::HttpError),
    /// No token: it comes from the environment or a file, never from a flag.
    #[error("no Vault token: set VAULT_TOKEN, or give --token-file FILE")]
    NoToken,
    /// The server could not be asked.
    #[error("{0}")]
    Unreachable(String),
    /// The server answered a set-up request with an error.
    #[error("{what}: {message}")]
    Server { what: String, message: String },
    /// What the operation needs is not on the server.
    #[error("{0}; make it with --init (a plan: init = true)")]
    Missing(String),
}

/// A Vault token; shown only as `[redacted]`.
#[derive(Clone)]
pub struct Token(Arc<str>);

impl Token {
    /// A token read from the environment or a file (surrounding whitespace dropped); none
    /// when it is empty.
    pub fn new(text: &str) -> Option<Token> {
        let t = text.trim();
        // Remembered, so a server that echoes it back never gets it into a sample.
        perfbase_core::redact::remember(t);
        (!t.is_empty()).then(|| Token(t.into()))
    }

    /// Whether the token holds a line break or another control character: it cannot be
    /// sent in a header (the usual cause is a file of two lines).
    pub fn is_malformed(&self) -> bool {
        self.0.bytes().any(crate::http::unsafe_in_header)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token([redacted])")
    }
}

/// The header that carries the token.
pub const TOKEN_HEADER: &str = "X-Vault-Token";

/// A Vault client for set-up and checks (not measured): one request at a time.
pub(crate) struct Client {
    fetcher: Fetcher,
    token: Token,
}

impl Client {
    pub(crate) fn new(base: &Url, token: &Token, http: &HttpOptions) -> Result<Client, VaultError> {
        Ok(Client {
            fetcher: Fetcher::new(base, &http.tls)?,
            token: token.clone(),
        })
    }

    /// `method /v1/path` with a JSON body (or none); the status and body, or why no answer
    /// came.
    pub(crate) async fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Fetched, VaultError> {
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let mut headers = vec![(TOKEN_HEADER, self.token.expose())];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        self.fetcher
            .send(method, &format!("/v1/{path}"), &headers, bytes)
            .await
            .map_err(|e| VaultError::Unreachable(redact::text(&e)))
    }

    /// Like [`call`](Client::call), but anything other than 2xx is an error naming `what`;
    /// the answer's JSON (null for an empty body).
    pub(crate) async fn expect(
        &self,
        what: &str,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<serde_json::Value, VaultError> {
        let f = self.call(method, path, body).await?;
        if !(200..300).contains(&f.status) {
            return Err(VaultError::Server {
                what: what.to_string(),
                message: describe_error(f.status, &f.body),
            });
        }
        Ok(serde_json::from_slice(&f.body).unwrap_or(serde_json::Value::Null))
    }
}

/// The kind of a Vault error status, in words.
fn kind_of(status: u16) -> &'static str {
    match status {
        400 => "bad request",
        403 => "permission denied",
        404 => "not found",
        405 => "unsupported operation",
        412 => "not yet replicated",
        429 => "rate limited",
        472 | 473 => "standby",
        500 => "internal error",
        501 => "not initialized",
        502 => "upstream error",
        503 => "sealed or standby",
        s if s < 500 => "client error",
        _ => "server error",
    }
}

/// The most an error message keeps of Vault's own text.
const MESSAGE_CHARS: usize = 200;

/// The error sample's message for a Vault error answer: its kind, status and Vault's own
/// message (`{"errors": [...]}` joined; a health answer's state), on one line, redacted.
pub fn describe_error(status: u16, body: &[u8]) -> String {
    let kind = kind_of(status);
    let said = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(v) => match v.get("errors").and_then(|e| e.as_array()) {
            Some(errors) => errors
                .iter()
                .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join("; "),
            // sys/health answers its state with its status.
            None if v.get("sealed").and_then(|s| s.as_bool()) == Some(true) => "sealed".into(),
            None if v.get("standby").and_then(|s| s.as_bool()) == Some(true) => "standby".into(),
            None => String::new(),
        },
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    // Vault's messages span lines ("1 error occurred:\n\t* permission denied\n\n").
    let mut one_line = said.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > MESSAGE_CHARS {
        one_line = one_line.chars().take(MESSAGE_CHARS).collect::<String>() + "…";
    }
    if one_line.is_empty() {
        format!("{kind} ({status})")
    } else {
        redact::text(&format!("{kind} ({status}): {one_line}"))
    }
}

/// One Vault operation, run on the HTTP driver once [`prepare`](VaultDriver::prepare) has
/// built its request.
pub struct VaultDriver {
    base: Url,
    token: Token,
    op: VaultOp,
    options: VaultOptions,
    http: HttpOptions,
    /// The request's driver, built by `prepare`.
    ready: OnceLock<HttpDriver>,
}

impl VaultDriver {
    /// Checks the URL and options; nothing is sent yet.
    pub fn new(
        url: &str,
        token: Token,
        op: VaultOp,
        options: VaultOptions,
        mut http: HttpOptions,
    ) -> Result<VaultDriver, VaultError> {
        let base = Url::parse(url).map_err(|_| VaultError::Url(redact::url(url)))?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(VaultError::Url(redact::url(url)));
        }
        options.check()?;
        // Resolves the host and builds the TLS client now, so a bad one fails before load.
        Fetcher::new(&base, &http.tls)?;
        http.describe_error = Some(describe_error);
        // Every answer of Vault's API is a 2xx; a standby that cannot forward (no active
        // node yet, in a failover) redirects instead, and that served nothing.
        http.redirect_fails = true;
        Ok(VaultDriver {
            base,
            token,
            op,
            options,
            http,
            ready: OnceLock::new(),
        })
    }

    pub fn op(&self) -> VaultOp {
        self.op
    }

    /// Checks that what the op uses is on the server (a transit key, the KV secret, the PKI
    /// role), asks for what its request must carry (the ciphertext a decrypt sends, the
    /// signature a verify checks), and builds the request once.
    pub async fn prepare(&self) -> Result<(), VaultError> {
        if self.ready.get().is_some() {
            return Ok(());
        }
        let client = Client::new(&self.base, &self.token, &self.http)?;
        let material = ops::material(&client, self.op, &self.options).await?;
        let (method, path, body) = ops::request(self.op, &self.options, &material);
        let mut url = self.base.clone();
        let prefix = url.path().trim_end_matches('/').to_string();
        let (p, query) = path.split_once('?').unwrap_or((&path, ""));
        url.set_path(&format!("{prefix}/v1/{p}"));
        url.set_query((!query.is_empty()).then_some(query));
        let mut headers = vec![(TOKEN_HEADER.to_string(), self.token.expose().to_string())];
        if body.is_some() {
            headers.push(("Content-Type".into(), "application/json".into()));
        }
        let target = Target {
            method: method.to_string(),
            url,
            headers,
            body: body
                .map(|b| b.to_string().into_bytes())
                .unwrap_or_default()
                .into(),
        };
        let driver = HttpDriver::new(&[target], &self.http)?;
        let _ = self.ready.set(driver);
        Ok(())
    }
}

impl Driver for VaultDriver {
    type Session = HttpSession;

    async fn open(&self, worker: usize) -> Result<HttpSession, Outcome> {
        match self.ready.get() {
            Some(d) => d.open(worker).await,
            None => Err(Outcome::error(
                Class::ServerError,
                "the Vault request was not prepared before the run",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vault_errors_become_one_line_messages_by_kind() {
        let denied = br#"{"errors":["1 error occurred:\n\t* permission denied\n\n"]}"#;
        assert_eq!(
            describe_error(403, denied),
            "permission denied (403): 1 error occurred: * permission denied"
        );
        assert_eq!(
            describe_error(503, br#"{"errors":["Vault is sealed"]}"#),
            "sealed or standby (503): Vault is sealed"
        );
        let health = br#"{"initialized":true,"sealed":true,"standby":true}"#;
        assert_eq!(
            describe_error(503, health),
            "sealed or standby (503): sealed"
        );
        assert_eq!(describe_error(429, b"{}"), "rate limited (429)");
        assert_eq!(
            describe_error(502, b"bad gateway"),
            "upstream error (502): bad gateway"
        );
        let long = format!(r#"{{"errors":["{}"]}}"#, "x".repeat(500));
        assert!(describe_error(400, long.as_bytes()).chars().count() < 240);
    }

    #[test]
    fn a_token_never_prints() {
        let t = Token::new(" s.secret \n").unwrap();
        assert_eq!(t.expose(), "s.secret");
        assert!(!format!("{t:?}").contains("secret"));
        assert!(Token::new("  ").is_none());
    }

    #[test]
    fn urls_and_key_types_are_checked_before_any_request() {
        let t = Token::new("x").unwrap();
        let bad = VaultDriver::new(
            "vault://127.0.0.1:1",
            t.clone(),
            VaultOp::Health,
            VaultOptions::default(),
            HttpOptions::default(),
        );
        assert!(matches!(bad, Err(VaultError::Url(_))));
        let key = VaultDriver::new(
            "http://127.0.0.1:1",
            t,
            VaultOp::Encrypt,
            VaultOptions {
                key_type: "ed25519".into(),
                ..VaultOptions::default()
            },
            HttpOptions::default(),
        );
        let msg = key.err().unwrap().to_string();
        assert!(
            msg.contains("ed25519") && msg.contains("aes256-gcm96"),
            "{msg}"
        );
    }
}
