//! A Vault (or OpenBao) workload: where its token comes from, its driver, its `--init`.

use super::setup::block_on_local;
use crate::exit::{bad_input, AppError};
use perfbase_drivers::http::HttpOptions;
use perfbase_drivers::vault::{self, Token, VaultDriver};
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
        match self {
            TokenSource::Env(name) => std::env::var(name)
                .ok()
                .and_then(|t| Token::new(&t))
                .ok_or_else(|| {
                    format!("no Vault token: {name} is not set (or give the token in a file)")
                }),
            TokenSource::File(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
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
    pub fn driver(&self) -> Result<VaultDriver, String> {
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
    pub fn init(&self) -> Result<(), AppError> {
        let token = self.token.read().map_err(bad_input)?;
        let made = block_on_local(vault::init(&self.url, &token, &self.options, &self.http))?
            .map_err(|e| bad_input(e.to_string()))?;
        errln!("perfbase: made or kept {made}");
        Ok(())
    }

    /// The settings a result's `config.protocol` shows (no token, no payload).
    pub fn settings(&self) -> BTreeMap<String, Value> {
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
