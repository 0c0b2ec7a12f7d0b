//! The operations: what each sends, and what it needs from the server first.

use super::{Client, VaultError};
use base64::Engine as _;
use serde_json::{json, Value};

/// Transit key types that encrypt (and so decrypt).
pub const ENCRYPTION_KEY_TYPES: [&str; 6] = [
    "aes128-gcm96",
    "aes256-gcm96",
    "chacha20-poly1305",
    "rsa-2048",
    "rsa-3072",
    "rsa-4096",
];
/// Transit key types that sign (and so verify).
pub const SIGNING_KEY_TYPES: [&str; 7] = [
    "ecdsa-p256",
    "ecdsa-p384",
    "ecdsa-p521",
    "ed25519",
    "rsa-2048",
    "rsa-3072",
    "rsa-4096",
];

crate::operations! {
    /// One operation of the suite, in the order it runs (a KV write before its reads).
    pub enum VaultOp {
        Encrypt = "encrypt",
        Decrypt = "decrypt",
        Sign = "sign",
        Verify = "verify",
        KvWrite = "kv-write",
        KvRead = "kv-read",
        KvList = "kv-list",
        PkiIssue = "pki-issue",
        TokenCreate = "token-create",
        Health = "health",
        SealStatus = "seal-status",
    }
}

/// What the operations send and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultOptions {
    /// The transit key type of encrypt and decrypt.
    pub key_type: String,
    /// The transit key type of sign and verify.
    pub sign_key_type: String,
    /// Bytes of plaintext encrypted, of input signed, and of the value a KV write stores.
    pub payload_size: usize,
    /// The KV v2 secret read and written, under `secret/`; kv-list lists its folder.
    pub kv_path: String,
    /// The PKI role pki-issue issues from.
    pub pki_role: String,
}

impl Default for VaultOptions {
    fn default() -> Self {
        VaultOptions {
            key_type: "aes256-gcm96".into(),
            sign_key_type: "ecdsa-p256".into(),
            // vault-benchmark's transit tests default to 128 bytes of payload.
            payload_size: 128,
            kv_path: "perfbase/bench".into(),
            pki_role: "perfbase".into(),
        }
    }
}

/// Where the mounts are (the dev server's KV v2 is at `secret/`).
pub(crate) const TRANSIT: &str = "transit";
pub(crate) const KV: &str = "secret";
pub(crate) const PKI: &str = "pki";
/// The common name pki-issue asks for.
const COMMON_NAME: &str = "load.perfbase.test";

impl VaultOptions {
    /// The options' own checks (key types, paths), with no server asked.
    pub fn check(&self) -> Result<(), VaultError> {
        if !ENCRYPTION_KEY_TYPES.contains(&self.key_type.as_str()) {
            return Err(VaultError::Option(format!(
                "key type '{}' does not encrypt; use one of {}",
                self.key_type,
                ENCRYPTION_KEY_TYPES.join(", ")
            )));
        }
        if !SIGNING_KEY_TYPES.contains(&self.sign_key_type.as_str()) {
            return Err(VaultError::Option(format!(
                "sign key type '{}' does not sign; use one of {}",
                self.sign_key_type,
                SIGNING_KEY_TYPES.join(", ")
            )));
        }
        let path_ok = |p: &str| {
            !p.is_empty()
                && !p.starts_with('/')
                && !p.ends_with('/')
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
                && !p.split('/').any(|s| s.is_empty() || s == "." || s == "..")
        };
        if !path_ok(&self.kv_path) {
            return Err(VaultError::Option(format!(
                "KV path '{}': use names of letters, digits, '-', '_' and '.' joined by '/', \
                 e.g. perfbase/bench",
                self.kv_path
            )));
        }
        if !path_ok(&self.pki_role) || self.pki_role.contains('/') {
            return Err(VaultError::Option(format!(
                "PKI role '{}': use one name of letters, digits, '-', '_' and '.'",
                self.pki_role
            )));
        }
        Ok(())
    }

    /// The transit key that encrypts.
    pub(crate) fn encryption_key(&self) -> String {
        format!("perfbase-{}", self.key_type)
    }

    /// The transit key that signs.
    pub(crate) fn signing_key(&self) -> String {
        format!("perfbase-{}", self.sign_key_type)
    }

    /// The KV folder kv-list lists (the secret's parent; the mount's root for a top-level one).
    fn kv_folder(&self) -> &str {
        self.kv_path.rsplit_once('/').map_or("", |(dir, _)| dir)
    }

    /// The payload, base64: fixed bytes of the asked size (a pattern, not a secret).
    pub(crate) fn payload(&self) -> String {
        let bytes: Vec<u8> = (0..self.payload_size)
            .map(|i| (crate::workload::mix64(i as u64) & 0xff) as u8)
            .collect();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// The KV data a write stores: the payload as one field.
    pub(crate) fn kv_data(&self) -> Value {
        json!({ "data": { "value": self.payload() } })
    }
}

/// What a request carries that only the server can make.
#[derive(Default)]
pub(crate) struct Material {
    ciphertext: Option<String>,
    signature: Option<String>,
}

/// Asks the server for what op's request needs, checking on the way that its key, secret or
/// role is there.
pub(crate) async fn material(
    client: &Client,
    op: VaultOp,
    o: &VaultOptions,
) -> Result<Material, VaultError> {
    let mut m = Material::default();
    match op {
        VaultOp::Encrypt => transit_key_there(client, o.encryption_key()).await?,
        VaultOp::Decrypt => {
            transit_key_there(client, o.encryption_key()).await?;
            m.ciphertext = Some(ciphertext_of_payload(client, o).await?);
        }
        VaultOp::Sign => transit_key_there(client, o.signing_key()).await?,
        VaultOp::Verify => {
            transit_key_there(client, o.signing_key()).await?;
            m.signature = Some(signature_of_payload(client, o).await?);
        }
        VaultOp::KvRead | VaultOp::KvList => {
            there(
                client,
                &format!("{KV}/data/{}", o.kv_path),
                || format!("no KV secret at {KV}/{}", o.kv_path),
                || format!("reading {KV}/{}", o.kv_path),
            )
            .await?
        }
        VaultOp::PkiIssue => {
            there(
                client,
                &format!("{PKI}/roles/{}", o.pki_role),
                || format!("no PKI role '{}' at {PKI}/", o.pki_role),
                || format!("reading PKI role '{}'", o.pki_role),
            )
            .await?
        }
        VaultOp::KvWrite | VaultOp::TokenCreate | VaultOp::Health | VaultOp::SealStatus => {}
    }
    Ok(m)
}

/// Checks that transit key `key` exists (Vault answers a missing key with 404 or 400).
async fn transit_key_there(client: &Client, key: String) -> Result<(), VaultError> {
    let f = client
        .call("GET", &format!("{TRANSIT}/keys/{key}"), None)
        .await?;
    match f.status {
        200 => Ok(()),
        404 | 400 => Err(VaultError::Missing(format!("no transit key '{key}'"))),
        s => Err(VaultError::Server {
            what: format!("reading transit key '{key}'"),
            message: super::describe_error(s, &f.body),
        }),
    }
}

/// Checks that `path` exists: [`VaultError::Missing`] with `missing()` on a 404, a server
/// error while `what()` on any other status but 200.
async fn there(
    client: &Client,
    path: &str,
    missing: impl FnOnce() -> String,
    what: impl FnOnce() -> String,
) -> Result<(), VaultError> {
    let f = client.call("GET", path, None).await?;
    match f.status {
        200 => Ok(()),
        404 => Err(VaultError::Missing(missing())),
        s => Err(VaultError::Server {
            what: what(),
            message: super::describe_error(s, &f.body),
        }),
    }
}

/// The payload encrypted with the encryption key: what decrypt sends.
async fn ciphertext_of_payload(client: &Client, o: &VaultOptions) -> Result<String, VaultError> {
    let v = client
        .expect(
            "encrypting the payload decrypts will send",
            "POST",
            &format!("{TRANSIT}/encrypt/{}", o.encryption_key()),
            Some(&json!({ "plaintext": o.payload() })),
        )
        .await?;
    field(&v, "ciphertext")
}

/// The payload's signature by the signing key: what verify sends.
async fn signature_of_payload(client: &Client, o: &VaultOptions) -> Result<String, VaultError> {
    let v = client
        .expect(
            "signing the input verifies will send",
            "POST",
            &format!("{TRANSIT}/sign/{}", o.signing_key()),
            Some(&json!({ "input": o.payload() })),
        )
        .await?;
    field(&v, "signature")
}

/// A string field of a response's `data`.
fn field(v: &Value, name: &str) -> Result<String, VaultError> {
    v.pointer(&format!("/data/{name}"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| VaultError::Server {
            what: format!("the server's answer has no data.{name}"),
            message: "unexpected answer".into(),
        })
}

/// The method, path under `/v1/` (with its query) and JSON body of op's request.
pub(crate) fn request(
    op: VaultOp,
    o: &VaultOptions,
    m: &Material,
) -> (&'static str, String, Option<Value>) {
    let none = String::new();
    match op {
        VaultOp::Encrypt => (
            "POST",
            format!("{TRANSIT}/encrypt/{}", o.encryption_key()),
            Some(json!({ "plaintext": o.payload() })),
        ),
        VaultOp::Decrypt => (
            "POST",
            format!("{TRANSIT}/decrypt/{}", o.encryption_key()),
            Some(json!({ "ciphertext": m.ciphertext.as_ref().unwrap_or(&none) })),
        ),
        VaultOp::Sign => (
            "POST",
            format!("{TRANSIT}/sign/{}", o.signing_key()),
            Some(json!({ "input": o.payload() })),
        ),
        VaultOp::Verify => (
            "POST",
            format!("{TRANSIT}/verify/{}", o.signing_key()),
            Some(json!({
                "input": o.payload(),
                "signature": m.signature.as_ref().unwrap_or(&none),
            })),
        ),
        VaultOp::KvRead => ("GET", format!("{KV}/data/{}", o.kv_path), None),
        VaultOp::KvWrite => (
            "POST",
            format!("{KV}/data/{}", o.kv_path),
            Some(o.kv_data()),
        ),
        // GET with list=true rather than the LIST method: the same answer, and every HTTP
        // tool (vegeta's targets included) can send it.
        VaultOp::KvList => (
            "GET",
            format!("{KV}/metadata/{}?list=true", o.kv_folder()),
            None,
        ),
        VaultOp::PkiIssue => (
            "POST",
            format!("{PKI}/issue/{}", o.pki_role),
            Some(json!({ "common_name": COMMON_NAME, "ttl": "1h" })),
        ),
        // Tokens that cannot be renewed and expire within the hour, so a long run's tokens
        // do not outlive the test server's day.
        VaultOp::TokenCreate => (
            "POST",
            "auth/token/create".into(),
            Some(json!({ "policies": ["default"], "ttl": "1h", "renewable": false })),
        ),
        VaultOp::Health => ("GET", "sys/health".into(), None),
        VaultOp::SealStatus => ("GET", "sys/seal-status".into(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Operation;

    #[test]
    fn every_op_has_a_name_and_a_request_under_its_mount() {
        let o = VaultOptions::default();
        let m = Material {
            ciphertext: Some("vault:v1:abc".into()),
            signature: Some("vault:v1:sig".into()),
        };
        for &op in VaultOp::ALL {
            assert_eq!(VaultOp::from_name(op.name()), Some(op));
            let (method, path, body) = request(op, &o, &m);
            assert!(method == "GET" || body.is_some(), "{op:?}");
            assert!(!path.starts_with('/'), "{path}");
        }
        let (_, list, _) = request(VaultOp::KvList, &o, &m);
        assert_eq!(list, "secret/metadata/perfbase?list=true");
        let (_, _, dec) = request(VaultOp::Decrypt, &o, &m);
        assert_eq!(dec.unwrap()["ciphertext"], "vault:v1:abc");
    }

    #[test]
    fn the_payload_has_the_asked_size() {
        let o = VaultOptions {
            payload_size: 100,
            ..VaultOptions::default()
        };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(o.payload())
            .unwrap();
        assert_eq!(raw.len(), 100);
    }

    #[test]
    fn paths_that_would_leave_the_mount_are_refused() {
        for bad in ["", "/a", "a/", "a//b", "a/../b", "a b", "a?b"] {
            let o = VaultOptions {
                kv_path: bad.into(),
                ..VaultOptions::default()
            };
            assert!(o.check().is_err(), "{bad}");
        }
        assert!(VaultOptions::default().check().is_ok());
    }
}
