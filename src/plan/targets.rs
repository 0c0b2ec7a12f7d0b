//! `[targets]`: each target's URL, checked by its protocol's driver, and its HTTP settings.

use super::context::Ctx;
use super::file::{self, PlanFile};
use super::model::PlanError;
use perfbase_drivers::http::HttpVersion;
use std::collections::BTreeMap;
use url::Url;

/// A target as the workloads use it: as written, its protocol, its URL with `${ENV}`
/// expanded, and that URL parsed (HTTP and SQL targets).
pub(super) type TargetInfo<'r> = (&'r file::TargetDef, Family, String, Option<Url>);

/// Every target of the plan, by name.
pub(super) fn targets<'r>(
    cx: &Ctx<'_>,
    raw: &'r PlanFile,
) -> Result<BTreeMap<String, TargetInfo<'r>>, PlanError> {
    let mut targets = BTreeMap::new();
    for (name, t) in &raw.targets {
        let field = format!("targets.{name}.url");
        let url_text = cx.url(&t.url, &field)?;
        let scheme = url_text.split("://").next().unwrap_or_default();
        let Some(mut family) = Family::of(scheme).filter(|_| url_text.contains("://")) else {
            return Err(cx.err(
                &t.url,
                &field,
                format!(
                    "'{}': use an http://, https://, grpc://, grpcs://, ws://, wss://, postgres://, mysql://, \
                     redis://, redis+cluster://, amqp://, nats://, mqtt:// or mongodb:// URL",
                    perfbase_core::redact::url(t.url.get_ref())
                ),
            ));
        };
        if let Some(p) = &t.protocol {
            // The protocols above HTTP, on an http:// or https:// URL (gRPC's is also its
            // own scheme, grpc:// or grpcs://).
            family = match (family, p.get_ref().as_str()) {
                (Family::Http, "vault") => Family::Vault,
                (Family::Http, "grpc") => Family::Grpc,
                (Family::Http, "ws") => Family::Ws,
                _ => {
                    return Err(cx.err(
                        p,
                        format!("targets.{name}.protocol"),
                        "the protocols above HTTP are \"vault\" (HashiCorp Vault or OpenBao), \
                         \"grpc\" and \"ws\" (WebSocket), on an http:// or https:// URL",
                    ))
                }
            };
        }
        if let (feature, false) = family.feature() {
            return Err(cx.err(
                &t.url,
                &field,
                format!(
                    "this perfbase was built without the `{feature}` feature; build it with \
                     `cargo build --features {feature}` (all protocols are in the default build)"
                ),
            ));
        }
        let url = checked_url(cx, (t, &field), family, &url_text)?;
        fields_fit(cx, (name, t), family)?;
        targets.insert(name.clone(), (t, family, url_text, url));
    }
    Ok(targets)
}

/// Each protocol's driver checks its URL now, so a bad one is an error at the target's line;
/// HTTP, SQL and Vault URLs are parsed here (a cluster URL lists several host:port pairs,
/// which is no URL to the url crate).
fn checked_url(
    cx: &Ctx<'_>,
    (t, field): (&file::TargetDef, &str),
    family: Family,
    url_text: &str,
) -> Result<Option<Url>, PlanError> {
    let bad = |e: &dyn std::fmt::Display| cx.err(&t.url, field, e.to_string());
    match family {
        Family::Redis => built!("redis", {
            let probe = perfbase_drivers::redis::RedisOptions {
                keyspace: 1,
                value_size: 1,
                pipeline: 1,
            };
            let ping = perfbase_drivers::redis::RedisOp::Ping;
            perfbase_drivers::redis::RedisDriver::new(url_text, ping, probe)
                .map_err(|e| bad(&e))?;
        }),
        Family::Amqp => built!("amqp", {
            perfbase_drivers::amqp::AmqpDriver::new(url_text, Default::default())
                .map_err(|e| bad(&e))?;
        }),
        Family::Nats => built!("nats", {
            perfbase_drivers::nats::NatsDriver::new(url_text, Default::default())
                .map_err(|e| bad(&e))?;
        }),
        Family::Mqtt => built!("mqtt", {
            perfbase_drivers::mqtt::MqttDriver::new(url_text, Default::default())
                .map_err(|e| bad(&e))?;
        }),
        Family::Mongo => built!("mongo", {
            use perfbase_drivers::mongo::{MongoDriver, MongoOp};
            MongoDriver::new(url_text, MongoOp::FindOne, Default::default())
                .map_err(|e| bad(&e))?;
        }),
        Family::Grpc => {
            // The method and its schema are the workload's; the URL alone is checked here.
            let url = Url::parse(url_text).map_err(|e| bad(&e))?;
            if url.host_str().is_none() || url.port().is_none() || !matches!(url.path(), "" | "/") {
                return Err(bad(
                    &"a gRPC target is grpc://host:port or grpcs://host:port (the \
                                  method goes in the workload's `call`)",
                ));
            }
        }
        Family::Http | Family::Sql | Family::Vault | Family::Ws => {
            return Url::parse(url_text).map(Some).map_err(|e| {
                let shown = perfbase_core::redact::url(t.url.get_ref());
                bad(&format!("invalid URL '{shown}': {e}"))
            });
        }
    }
    Ok(None)
}

/// A target's settings that apply to Vault only, or to HTTP (and Vault) only, are errors on
/// any other.
fn fields_fit(
    cx: &Ctx<'_>,
    (name, t): (&str, &file::TargetDef),
    family: Family,
) -> Result<(), PlanError> {
    if family != Family::Vault {
        let vault_only = [
            ("token_env", t.token_env.is_some()),
            ("token_file", t.token_file.is_some()),
        ];
        if let Some((f, _)) = vault_only.iter().find(|(_, set)| *set) {
            return Err(cx.err(
                &t.url,
                format!("targets.{name}.{f}"),
                "applies to Vault targets only (protocol = \"vault\")",
            ));
        }
    }
    if !matches!(family, Family::Http | Family::Vault) {
        // gRPC runs on HTTP/2 connections: their TLS trust and streams per connection apply.
        let grpc_too = |f: &str| {
            (family == Family::Grpc && matches!(f, "insecure" | "cacert" | "streams"))
                || (family == Family::Ws && matches!(f, "insecure" | "cacert"))
        };
        let http_only = [
            ("keepalive", t.keepalive.is_some()),
            ("insecure", t.insecure.is_some()),
            ("cacert", t.cacert.is_some()),
            ("http2", t.http2.is_some()),
            ("streams", t.streams.is_some()),
        ];
        if let Some((f, _)) = http_only.iter().find(|(f, set)| *set && !grpc_too(f)) {
            return Err(cx.err(
                &t.url,
                format!("targets.{name}.{f}"),
                "applies to http:// and https:// targets only",
            ));
        }
    }
    Ok(())
}

/// The kind of protocol a target speaks, from its URL's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    Http,
    /// grpc:// (h2c) or grpcs:// (TLS).
    Grpc,
    /// ws:// or wss:// (or http(s):// with `protocol = "ws"`).
    Ws,
    Sql,
    Redis,
    Amqp,
    Nats,
    Mqtt,
    Mongo,
    /// An http(s):// target with `protocol = "vault"`.
    Vault,
}

impl Family {
    pub fn of(scheme: &str) -> Option<Family> {
        Some(match scheme {
            "http" | "https" => Family::Http,
            "grpc" | "grpcs" => Family::Grpc,
            "ws" | "wss" => Family::Ws,
            "postgres" | "postgresql" | "mysql" | "mariadb" => Family::Sql,
            "redis" | "redis+cluster" => Family::Redis,
            "amqp" => Family::Amqp,
            "nats" => Family::Nats,
            "mqtt" => Family::Mqtt,
            "mongodb" => Family::Mongo,
            _ => return None,
        })
    }

    /// The cargo feature that builds the protocol in, and whether this binary has it.
    pub fn feature(self) -> (&'static str, bool) {
        match self {
            Family::Http => ("http", cfg!(feature = "http")),
            Family::Grpc => ("grpc", cfg!(feature = "grpc")),
            Family::Ws => ("ws", cfg!(feature = "ws")),
            Family::Sql => ("sql", cfg!(feature = "sql")),
            Family::Redis => ("redis", cfg!(feature = "redis")),
            Family::Amqp => ("amqp", cfg!(feature = "amqp")),
            Family::Nats => ("nats", cfg!(feature = "nats")),
            Family::Mqtt => ("mqtt", cfg!(feature = "mqtt")),
            Family::Mongo => ("mongo", cfg!(feature = "mongo")),
            Family::Vault => ("vault", cfg!(feature = "vault")),
        }
    }

    /// The targets a workload field is for, in words.
    pub fn describe(families: &[Family]) -> String {
        let names: Vec<&str> = families
            .iter()
            .map(|f| match f {
                Family::Http => "http(s)://",
                Family::Grpc => "grpc(s)://",
                Family::Ws => "ws(s)://",
                Family::Sql => "postgres:// and mysql://",
                Family::Redis => "redis://",
                Family::Amqp => "amqp://",
                Family::Nats => "nats://",
                Family::Mqtt => "mqtt://",
                Family::Mongo => "mongodb://",
                Family::Vault => "Vault (protocol = \"vault\")",
            })
            .collect();
        names.join(", ")
    }
}

/// A target's HTTP version: `http2 = true` with `streams` per connection (1 by default).
pub(super) fn http_version(
    cx: &Ctx,
    tdef: &file::TargetDef,
    target: &str,
) -> Result<HttpVersion, PlanError> {
    let field = |f: &str| format!("targets.{target}.{f}");
    let http2 = tdef.http2.as_ref().is_some_and(|b| *b.get_ref());
    match (&tdef.streams, http2) {
        (Some(s), false) => Err(cx.err(
            s,
            field("streams"),
            "applies to HTTP/2 only: add http2 = true",
        )),
        (_, true) if tdef.keepalive == Some(false) => Err(cx.err(
            tdef.http2.as_ref().expect("set"),
            field("http2"),
            "HTTP/2 keeps its connections: remove keepalive = false",
        )),
        (streams, true) => Ok(HttpVersion::Http2 {
            streams: match streams {
                Some(s) => cx.positive(s, &field("streams"))? as usize,
                None => 1,
            },
        }),
        (None, false) => Ok(HttpVersion::Http1),
    }
}

/// How an https:// target is trusted, as its plan table says (`insecure`, `cacert` relative to
/// the plan): one reading for request mixes, journeys and Vault.
pub(super) fn tls_of(cx: &Ctx, tdef: &file::TargetDef) -> perfbase_drivers::http::TlsOptions {
    perfbase_drivers::http::TlsOptions {
        insecure: tdef.insecure.unwrap_or(false),
        ca_file: tdef.cacert.as_ref().map(|c| cx.base.join(c.get_ref())),
    }
}
