//! `perfbase vault`: Vault's (or OpenBao's) operation table, or one operation.

use super::command::{check_url, op_jobs, pick_ops};
use super::LoadArgs;
use crate::backend::vault::{TokenSource, VaultTarget};
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::http::{HttpOptions, HttpVersion};
use perfbase_drivers::vault::{VaultOp, VaultOptions};
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  VAULT_TOKEN=... perfbase vault http://127.0.0.1:8200 --init -w suite -d 5s
  perfbase vault https://127.0.0.1:8200 --token-file ~/.vault-token -w encrypt -c 64 -d 10s
  perfbase vault http://127.0.0.1:8200 -w sign --sign-key-type ed25519 -r 2k -d 30s

The token comes from VAULT_TOKEN or --token-file, never from a flag, and no output shows it.
The operations use transit/ (keys perfbase-<key type>), KV v2 at secret/ and PKI at pki/
(role perfbase); --init makes whatever of them is missing.")]
pub struct VaultArgs {
    /// The server's address: http://host:port or https://host:port (Vault or OpenBao)
    pub url: String,

    /// suite (every operation in turn) or one of: encrypt, decrypt, sign, verify, kv-write,
    /// kv-read, kv-list, pki-issue, token-create, health, seal-status
    #[arg(short = 'w', long, default_value = "suite")]
    pub workload: String,

    /// Read the token from this file instead of VAULT_TOKEN
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// The transit key type of encrypt and decrypt: aes128-gcm96, aes256-gcm96,
    /// chacha20-poly1305, rsa-2048, rsa-3072 or rsa-4096
    #[arg(long, default_value = "aes256-gcm96")]
    pub key_type: String,

    /// The transit key type of sign and verify: ecdsa-p256, ecdsa-p384, ecdsa-p521, ed25519,
    /// rsa-2048, rsa-3072 or rsa-4096
    #[arg(long, default_value = "ecdsa-p256")]
    pub sign_key_type: String,

    /// Bytes of plaintext encrypted, of input signed, and of the value a KV write stores
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub payload_size: u64,

    /// The KV v2 secret under secret/ that kv-read reads and kv-write writes; kv-list lists
    /// its folder
    #[arg(long, default_value = "perfbase/bench")]
    pub kv_path: String,

    /// The PKI role pki-issue issues certificates from (EC P-256, 1 h)
    #[arg(long, default_value = "perfbase")]
    pub pki_role: String,

    /// Make the mounts, transit keys, KV secret and PKI role first (kept when there)
    #[arg(long)]
    pub init: bool,

    /// Open a new TCP connection for every request
    #[arg(long, conflicts_with = "http2")]
    pub no_keepalive: bool,

    /// Speak HTTP/2 (Vault offers it over TLS)
    #[arg(long)]
    pub http2: bool,

    #[command(flatten)]
    pub tls: super::TlsArgs,

    #[command(flatten)]
    pub load: LoadArgs,
}

impl VaultArgs {
    /// One scenario per operation asked for (the suite: every one in turn).
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
        check_url(&self.url, &["http", "https"], "vault")?;
        self.load.check_json()?;
        let options = VaultOptions {
            key_type: self.key_type.clone(),
            sign_key_type: self.sign_key_type.clone(),
            payload_size: self.payload_size as usize,
            kv_path: self.kv_path.clone(),
            pki_role: self.pki_role.clone(),
        };
        let http = HttpOptions {
            keepalive: !self.no_keepalive,
            tls: self.tls.options(),
            version: if self.http2 {
                HttpVersion::Http2 { streams: 1 }
            } else {
                HttpVersion::Http1
            },
            ..HttpOptions::default()
        };
        // A bad key type or path is an input error now, before any operation.
        options.check().map_err(|e| bad_input(e.to_string()))?;
        let token = match &self.token_file {
            Some(f) => TokenSource::File(f.clone()),
            None => TokenSource::Env("VAULT_TOKEN".into()),
        };
        let ops = pick_ops::<VaultOp>(&self.workload)?;
        let label = redact::url(&self.url);
        let jobs = op_jobs(&ops, &label, |i, op| {
            Backend::Vault(VaultTarget {
                url: self.url.clone(),
                token: token.clone(),
                op: *op,
                options: options.clone(),
                http: http.clone(),
                // Once, before the first operation.
                init: self.init && i == 0,
            })
        });
        let title = (ops.len() > 1).then(|| self.load.suite_title("vault", &label, ops.len()));
        Ok((
            self.load.plan("vault", jobs, 1),
            self.load.options("vault", title, store),
        ))
    }
}

/// `perfbase vault`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load HashiCorp Vault or OpenBao: transit, KV v2, PKI, tokens and health, as a suite or
    /// one operation.
    Vault(Box<VaultArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Vault(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
