//! The TLS trust flags every command over TLS shares (`perfbase http`, `vault`, `grpc`).

use clap::Args;
use perfbase_drivers::http::TlsOptions;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct TlsArgs {
    /// TLS (https://, grpcs://): accept any server certificate (self-signed, expired, other
    /// name)
    #[arg(short = 'k', long)]
    pub insecure: bool,

    /// TLS (https://, grpcs://): also trust the PEM certificates in this file (besides the
    /// system's roots)
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,
}

impl TlsArgs {
    /// The driver's TLS options.
    pub fn options(&self) -> TlsOptions {
        TlsOptions {
            insecure: self.insecure,
            ca_file: self.cacert.clone(),
        }
    }

    /// Whether either flag was given.
    pub fn given(&self) -> bool {
        self.insecure || self.cacert.is_some()
    }
}
