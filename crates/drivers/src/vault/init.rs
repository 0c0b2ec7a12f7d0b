//! `--init`: the mounts, keys, secret and role the operations use; and the server's version.

use super::ops::{KV, PKI, TRANSIT};
use super::{Client, Token, VaultError, VaultOptions};
use crate::http::HttpOptions;
use serde_json::{json, Value};
use url::Url;

/// Makes what the suite needs, keeping what is there: the transit, KV v2 and PKI mounts, the
/// two transit keys, the KV secret (written once more), a root CA when the PKI mount has
/// none, and the role. Returns what it did, in words.
pub async fn init(
    url: &str,
    token: &Token,
    options: &VaultOptions,
    http: &HttpOptions,
) -> Result<String, VaultError> {
    options.check()?;
    let base = Url::parse(url).map_err(|_| VaultError::Url(perfbase_core::redact::url(url)))?;
    let client = Client::new(&base, token, http)?;
    let mut made = Vec::new();
    mount_missing(&client, &mut made).await?;
    make_transit_keys(&client, options, &mut made).await?;
    write_kv_secret(&client, options, &mut made).await?;
    make_root_ca_if_none(&client, &mut made).await?;
    make_pki_role(&client, options, &mut made).await?;
    Ok(made.join(", "))
}

/// Mounts the transit, KV v2 and PKI engines that are not mounted yet.
async fn mount_missing(client: &Client, made: &mut Vec<String>) -> Result<(), VaultError> {
    let mounts = client
        .expect("listing the mounts", "GET", "sys/mounts", None)
        .await?;
    let mounted = |path: &str| {
        let key = format!("{path}/");
        mounts
            .get(&key)
            .or_else(|| mounts.pointer(&format!("/data/{key}")))
            .is_some()
    };
    let wanted = [
        (TRANSIT, json!({ "type": "transit" })),
        (KV, json!({ "type": "kv", "options": { "version": "2" } })),
        (
            PKI,
            json!({ "type": "pki", "config": { "max_lease_ttl": "87600h" } }),
        ),
    ];
    for (path, spec) in &wanted {
        if !mounted(path) {
            client
                .expect(
                    &format!("mounting {path}/"),
                    "POST",
                    &format!("sys/mounts/{path}"),
                    Some(spec),
                )
                .await?;
            made.push(format!("mount {path}/"));
        }
    }
    Ok(())
}

/// Makes the transit keys that encrypt and sign.
async fn make_transit_keys(
    client: &Client,
    options: &VaultOptions,
    made: &mut Vec<String>,
) -> Result<(), VaultError> {
    for (key, kind) in [
        (options.encryption_key(), &options.key_type),
        (options.signing_key(), &options.sign_key_type),
    ] {
        client
            .expect(
                &format!("making transit key '{key}'"),
                "POST",
                &format!("{TRANSIT}/keys/{key}"),
                Some(&json!({ "type": kind })),
            )
            .await?;
        made.push(format!("transit key {key}"));
    }
    Ok(())
}

/// Writes the KV secret the reads read.
async fn write_kv_secret(
    client: &Client,
    options: &VaultOptions,
    made: &mut Vec<String>,
) -> Result<(), VaultError> {
    client
        .expect(
            &format!("writing {KV}/{}", options.kv_path),
            "POST",
            &format!("{KV}/data/{}", options.kv_path),
            Some(&options.kv_data()),
        )
        .await?;
    made.push(format!("secret {KV}/{}", options.kv_path));
    Ok(())
}

/// Makes the PKI mount's root CA, unless it has one.
async fn make_root_ca_if_none(client: &Client, made: &mut Vec<String>) -> Result<(), VaultError> {
    let ca = client.call("GET", &format!("{PKI}/cert/ca"), None).await?;
    let has_ca = ca.status == 200
        && serde_json::from_slice::<Value>(&ca.body)
            .ok()
            .and_then(|v| {
                v.pointer("/data/certificate")
                    .and_then(Value::as_str)
                    .map(|c| !c.is_empty())
            })
            .unwrap_or(false);
    if !has_ca {
        client
            .expect(
                "making the PKI root CA",
                "POST",
                &format!("{PKI}/root/generate/internal"),
                Some(&json!({ "common_name": "perfbase.test", "ttl": "87600h" })),
            )
            .await?;
        made.push("PKI root CA perfbase.test".into());
    }
    Ok(())
}

/// Makes the PKI role pki-issue issues from.
async fn make_pki_role(
    client: &Client,
    options: &VaultOptions,
    made: &mut Vec<String>,
) -> Result<(), VaultError> {
    client
        .expect(
            &format!("making PKI role '{}'", options.pki_role),
            "POST",
            &format!("{PKI}/roles/{}", options.pki_role),
            Some(&json!({
                "allow_any_name": true,
                "key_type": "ec",
                "key_bits": 256,
                "ttl": "1h",
            })),
        )
        .await?;
    made.push(format!("PKI role {}", options.pki_role));
    Ok(())
}

/// The server's product and version, from `sys/seal-status` (which needs no token): OpenBao
/// reports versions from 2 on, Vault below that (OpenBao forked Vault 1.14 and began again at
/// 2.0).
pub async fn server_version(url: &str, http: &HttpOptions) -> Result<String, VaultError> {
    let base = Url::parse(url).map_err(|_| VaultError::Url(perfbase_core::redact::url(url)))?;
    let client = Client::new(&base, &Token("-".into()), http)?;
    let status = client
        .expect("reading the seal status", "GET", "sys/seal-status", None)
        .await?;
    let version = status
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    let product = if major >= 2 { "OpenBao" } else { "Vault" };
    Ok(format!("{product} {version}"))
}
