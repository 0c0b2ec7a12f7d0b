//! The workload fields of a Vault or OpenBao target (`protocol = "vault"` on an http(s):// URL):
//! an operation or the suite, its options, and `init`; the token source and HTTP settings are
//! the target's.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use super::http_target::{http_version, tls_of};
use crate::backend::vault::{TokenSource, VaultTarget};
use crate::backend::Backend;
use perfbase_drivers::http::HttpOptions;
use perfbase_drivers::vault::{VaultOp, VaultOptions};
use perfbase_drivers::Operation;
use serde::Deserialize;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// The operation (encrypt, kv-read, …) or `suite`…
    command: Option<S<String>>,
    /// …the suite's operations, in order (default: all)…
    operations: Option<S<Vec<String>>>,
    /// …payload bytes…
    size: Option<S<i64>>,
    /// …the transit key types of encrypt/decrypt and of sign/verify…
    key_type: Option<S<String>>,
    sign_key_type: Option<S<String>>,
    /// …the KV v2 secret read and written (under secret/), and the PKI role…
    kv_path: Option<S<String>>,
    pki_role: Option<S<String>>,
    /// …after the engines, keys and secrets are set up.
    init: Option<S<bool>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[
        "keepalive",
        "insecure",
        "cacert",
        "http2",
        "streams",
        "token_env",
        "token_file",
    ];

    fn url(url_text: &str, shown: &str) -> Result<Option<Url>, String> {
        fields::parsed(url_text, shown)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let all = fields::op_names::<VaultOp>();
        let ops = (&self.command, &self.operations, all.as_slice());
        let set = |f: &mut Fields, op| f.command = Some(op);
        fields::one_or_suite(at, &self, ops, set, |f| {
            let target = f.target(at)?;
            let what = target.op.name().to_string();
            Ok((Backend::Vault(target), what))
        })
    }
}

impl Fields {
    fn target(&self, at: &At<'_>) -> Result<VaultTarget, PlanError> {
        let (cx, tdef) = (at.cx, at.target.0);
        let target = at.target_field.get_ref();
        let op: VaultOp = fields::command(at, &self.command, "Vault", true)?;
        let d = VaultOptions::default();
        let options = VaultOptions {
            key_type: fields::text_or(&self.key_type, &d.key_type),
            sign_key_type: fields::text_or(&self.sign_key_type, &d.sign_key_type),
            payload_size: fields::positive_or(cx, &at.f("size"), &self.size, d.payload_size as u64)?
                as usize,
            kv_path: fields::text_or(&self.kv_path, &d.kv_path),
            pki_role: fields::text_or(&self.pki_role, &d.pki_role),
        };
        if let Err(e) = options.check() {
            return Err(self.options_error(at, &e.to_string()));
        }
        let token = match (&tdef.token_env, &tdef.token_file) {
            (Some(e), Some(_)) => {
                return Err(cx.err(
                    e,
                    format!("targets.{target}.token_env"),
                    "give the token one way: token_env or token_file",
                ))
            }
            (Some(e), None) => TokenSource::Env(e.get_ref().clone()),
            (None, Some(f)) => TokenSource::File(cx.base.join(f.get_ref())),
            (None, None) => TokenSource::Env("VAULT_TOKEN".into()),
        };
        let http = HttpOptions {
            version: http_version(cx, tdef, target)?,
            keepalive: tdef.keepalive.unwrap_or(true),
            tls: tls_of(cx, tdef),
            ..HttpOptions::default()
        };
        Ok(VaultTarget {
            url: at.url().to_string(),
            token,
            op,
            options,
            http,
            init: fields::flag(&self.init),
        })
    }

    /// The options' error at the line of the field it is about.
    fn options_error(&self, at: &At<'_>, e: &str) -> PlanError {
        let named = [
            (&self.key_type, "key_type"),
            (&self.sign_key_type, "sign_key_type"),
            (&self.kv_path, "kv_path"),
            (&self.pki_role, "pki_role"),
        ]
        .into_iter()
        .find_map(|(v, n)| v.as_ref().filter(|v| e.contains(v.get_ref().as_str())).map(|v| (v, n)));
        match named {
            Some((v, n)) => at.cx.err(v, at.f(n), e),
            None => at.err(at.f("command"), e),
        }
    }
}
