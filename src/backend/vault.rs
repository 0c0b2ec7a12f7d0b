//! A Vault (or OpenBao) workload over HTTP: where its token comes from, its driver, its
//! `--init`, what it needs from the server before the load.

use super::protocol::{ask_version, Extras, Target, Ran, RunArgs, DEFAULT_MAX_INFLIGHT};
use super::setup::block_on_local;
use crate::exit::{bad_input, AppError};
use perfbase_drivers::http::HttpOptions;
use perfbase_drivers::vault::{self, Token, VaultDriver};
use perfbase_drivers::Operation;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where the token is read, when the driver is built: never a flag's or a plan's literal
/// value, so it stays out of shell history, plan files and results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable (VAULT_TOKEN by default).
    Env(String),
    /// A file holding the token (`--token-file`, a plan's `token_file`).
    File(PathBuf),
}

impl TokenSource {
    /// The token, or what to do to give one.
    pub fn read(&self) -> Result<Token, String> {
        let token = self.read_any()?;
        if token.is_malformed() {
            return Err(format!(
                "the Vault token from {} holds a line break or another control character \
                 inside it, so it cannot be sent in a header (the token is not shown); keep \
                 the token alone on one line",
                self.origin()
            ));
        }
        Ok(token)
    }

    /// Where the token comes from, in words.
    fn origin(&self) -> String {
        match self {
            TokenSource::Env(name) => name.clone(),
            TokenSource::File(path) => format!("the file {}", path.display()),
        }
    }

    fn read_any(&self) -> Result<Token, String> {
        match self {
            TokenSource::Env(name) => std::env::var(name)
                .ok()
                .and_then(|t| Token::new(&t))
                .ok_or_else(|| {
                    format!("no Vault token: {name} is not set (or give the token in a file)")
                }),
            TokenSource::File(path) => {
                let text = perfbase_drivers::input::read_text(path).map_err(|e| {
                    format!("cannot read the Vault token file {}: {e}", path.display())
                })?;
                Token::new(&text)
                    .ok_or_else(|| format!("the Vault token file {} is empty", path.display()))
            }
        }
    }
}

/// A workload against Vault's HTTP API.
#[derive(Debug, Clone)]
pub struct VaultTarget {
    /// The server's address (http:// or https://).
    pub url: String,
    pub token: TokenSource,
    pub op: vault::VaultOp,
    pub options: vault::VaultOptions,
    /// Keep-alive, TLS trust, HTTP/2: as for any HTTP target.
    pub http: HttpOptions,
    /// Make the mounts, keys, secret and role first (`--init`).
    pub init: bool,
}

impl VaultTarget {
    fn driver(&self) -> Result<VaultDriver, String> {
        VaultDriver::new(
            &self.url,
            self.token.read()?,
            self.op,
            self.options.clone(),
            self.http.clone(),
        )
        .map_err(|e| e.to_string())
    }

    /// `--init`: what was made, said on stderr.
    fn init(&self) -> Result<(), AppError> {
        let token = self.token.read().map_err(bad_input)?;
        let made = block_on_local(vault::init(&self.url, &token, &self.options, &self.http))?
            .map_err(|e| bad_input(e.to_string()))?;
        errln!("perfbase: made or kept {made}");
        Ok(())
    }
}

impl Target for VaultTarget {
    fn name(&self) -> &'static str {
        "vault"
    }

    fn service_kind(&self) -> &'static str {
        "Vault"
    }

    /// vault-benchmark's 10 workers.
    fn default_connections(&self) -> u64 {
        10
    }

    /// An HTTP server: as many requests in flight as HTTP's cap.
    fn default_max_inflight(&self) -> u64 {
        DEFAULT_MAX_INFLIGHT
    }

    fn skip_setup(&mut self) {
        self.init = false;
    }

    fn validate(&self) -> Result<(), String> {
        self.driver().map(drop)
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        if self.init {
            self.init().map_err(|e| args.bad("--init: ", e))?;
        }
        args.drive(self.driver())
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    fn server_version(&self) -> Result<String, String> {
        ask_version(vault::server_version(&self.url, &self.http))
    }

    /// The settings a result's `config.protocol` shows (no token, no payload).
    fn settings(&self) -> BTreeMap<String, Value> {
        let o = &self.options;
        let mut m = BTreeMap::new();
        m.insert("workload".into(), self.op.name().into());
        use vault::VaultOp::*;
        match self.op {
            Encrypt | Decrypt => {
                m.insert("key_type".into(), o.key_type.clone().into());
                m.insert("payload_size".into(), o.payload_size.into());
            }
            Sign | Verify => {
                m.insert("key_type".into(), o.sign_key_type.clone().into());
                m.insert("payload_size".into(), o.payload_size.into());
            }
            KvRead | KvWrite | KvList => {
                m.insert("kv_path".into(), o.kv_path.clone().into());
                m.insert("payload_size".into(), o.payload_size.into());
            }
            PkiIssue => {
                m.insert("pki_role".into(), o.pki_role.clone().into());
            }
            TokenCreate | Health | SealStatus => {}
        }
        m.insert("keepalive".into(), self.http.keepalive.into());
        if let perfbase_drivers::http::HttpVersion::Http2 { streams } = self.http.version {
            m.insert("version".into(), "HTTP/2".into());
            m.insert("streams_per_connection".into(), streams.into());
        }
        m
    }
}

impl Extras for VaultDriver {
    /// The op's key, secret or role is on the server (else: run with --init), and its request
    /// is built, with the ciphertext or signature it sends asked for once.
    fn before(&self) -> Result<(), AppError> {
        block_on_local(self.prepare())?.map_err(|e| bad_input(e.to_string()))
    }
}
