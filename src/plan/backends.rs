//! The workload fields of non-HTTP targets: databases, Redis, brokers and Vault.

use super::context::Ctx;
use super::file::{self, S};
use super::model::*;
use super::targets::Family;
use crate::backend::{AmqpTarget, BrokerTarget, MongoTarget, StreamSide, TokenSource, VaultTarget};
use perfbase_drivers::workload::{Corpus, Template};
use std::sync::Arc;

/// The mode and message options of a workload on an amqp://, nats:// or mqtt:// target, and
/// what reports call it.
pub(super) fn broker_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    family: Family,
    url: &str,
) -> Result<(Backend, String), PlanError> {
    use perfbase_drivers::{amqp, mqtt, nats};
    let size = |default: usize| match &w.size {
        Some(v) => cx.positive(v, &format!("{field}.size")).map(|n| n as usize),
        None => Ok(default),
    };
    let pick = |v: &Option<S<String>>, name: &str, choices: &[&str], default: &str| {
        let Some(v) = v else {
            return Ok(default.to_string());
        };
        let text = v.get_ref().to_ascii_lowercase();
        if choices.contains(&text.as_str()) {
            Ok(text)
        } else {
            Err(cx.err(
                v,
                format!("{field}.{name}"),
                format!("'{}': use one of {}", v.get_ref(), choices.join(", ")),
            ))
        }
    };
    let flag = |v: &Option<S<bool>>| v.as_ref().is_some_and(|b| *b.get_ref());
    let url = url.to_string();
    Ok(match family {
        Family::Amqp => {
            let mode = pick(
                &w.mode,
                "mode",
                &["roundtrip", "publish", "stream"],
                "roundtrip",
            )?;
            let ack = pick(&w.ack, "ack", &["none", "auto", "manual"], "manual")?;
            let stream = if mode == "stream" {
                Some(StreamSide {
                    consumers: match &w.consumers {
                        Some(c) => cx.positive(c, &format!("{field}.consumers"))?,
                        None => 1,
                    },
                    drain: match &w.drain {
                        Some(d) => cx.duration(d, &format!("{field}.drain"))?,
                        None => std::time::Duration::from_secs(2),
                    },
                })
            } else {
                if let Some(c) = &w.consumers {
                    return Err(cx.err(
                        c,
                        format!("{field}.consumers"),
                        "only with mode = \"stream\"",
                    ));
                }
                if let Some(d) = &w.drain {
                    return Err(cx.err(d, format!("{field}.drain"), "only with mode = \"stream\""));
                }
                None
            };
            let options = amqp::AmqpOptions {
                mode: match mode.as_str() {
                    "publish" => amqp::AmqpMode::Publish,
                    "stream" => amqp::AmqpMode::Stream,
                    _ => amqp::AmqpMode::RoundTrip,
                },
                message_size: size(1024)?,
                persistent: flag(&w.persistent),
                confirms: flag(&w.confirms),
                ack: match ack.as_str() {
                    "none" => amqp::AckMode::None,
                    "auto" => amqp::AckMode::Auto,
                    _ => amqp::AckMode::Manual,
                },
                pipeline: match &w.pipeline {
                    Some(v) => cx.positive(v, &format!("{field}.pipeline"))? as usize,
                    None => 1,
                },
                max_lag: match &w.max_lag {
                    Some(v) if mode == "stream" => {
                        Some(cx.positive(v, &format!("{field}.max_lag"))?)
                    }
                    Some(v) => {
                        return Err(cx.err(
                            v,
                            format!("{field}.max_lag"),
                            "only with mode = \"stream\"",
                        ))
                    }
                    None => None,
                },
                // The stream's publishers and consumers meet on one queue of this run.
                queue: stream.as_ref().map(|_| {
                    format!(
                        "perfbase-{}-{}",
                        std::process::id(),
                        field.trim_start_matches("workloads.")
                    )
                }),
            };
            amqp::AmqpDriver::new(&url, options.clone())
                .map_err(|e| cx.err(&w.target, field, e.to_string()))?;
            let what = match &stream {
                Some(s) => format!(
                    "stream, {} consumer{}",
                    s.consumers,
                    if s.consumers == 1 { "" } else { "s" }
                ),
                None => mode,
            };
            (
                Backend::Amqp(AmqpTarget {
                    url,
                    options,
                    stream,
                }),
                what,
            )
        }
        Family::Nats => {
            let mode = pick(
                &w.mode,
                "mode",
                &["pubsub", "request", "jetstream"],
                "pubsub",
            )?;
            let options = nats::NatsOptions {
                mode: match mode.as_str() {
                    "request" => nats::NatsMode::Request,
                    "jetstream" => nats::NatsMode::JetStream,
                    _ => nats::NatsMode::PubSub,
                },
                message_size: size(128)?,
            };
            nats::NatsDriver::new(&url, options)
                .map_err(|e| cx.err(&w.target, field, e.to_string()))?;
            (Backend::Nats(BrokerTarget { url, options }), mode)
        }
        _ => {
            let qos = match &w.qos {
                Some(q) if matches!(*q.get_ref(), 0 | 1) => *q.get_ref() as u8,
                Some(q) => return Err(cx.err(q, format!("{field}.qos"), "use 0 or 1")),
                None => 0,
            };
            let options = mqtt::MqttOptions {
                qos,
                message_size: size(128)?,
            };
            mqtt::MqttDriver::new(&url, options)
                .map_err(|e| cx.err(&w.target, field, e.to_string()))?;
            (
                Backend::Mqtt(BrokerTarget { url, options }),
                format!("qos {qos}"),
            )
        }
    })
}

/// The Redis command of a workload on a redis:// target, with its keyspace, value size,
/// pipeline and prefill.
pub(super) fn redis_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<RedisTarget, PlanError> {
    use perfbase_drivers::redis::{RedisOp, RedisOptions};
    let names = || {
        RedisOp::ALL
            .iter()
            .map(|o| o.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let op = match &w.command {
        Some(c) => RedisOp::from_name(c.get_ref()).ok_or_else(|| {
            cx.err(
                c,
                format!("{field}.command"),
                format!(
                    "unknown Redis command '{}'; use one of {}",
                    c.get_ref(),
                    names()
                ),
            )
        })?,
        None => {
            return Err(cx.err(
                &w.target,
                format!("{field}.command"),
                format!("a Redis workload needs `command`: one of {}", names()),
            ))
        }
    };
    let int = |v: &Option<S<i64>>, f: &str, default: u64| match v {
        Some(v) => cx.positive(v, &format!("{field}.{f}")),
        None => Ok(default),
    };
    Ok(RedisTarget {
        url: url.to_string(),
        op,
        options: RedisOptions {
            keyspace: int(&w.keyspace, "keyspace", 100_000)?,
            value_size: int(&w.value_size, "value_size", 3)? as usize,
            pipeline: int(&w.pipeline, "pipeline", 1)? as usize,
        },
        prefill: w.prefill.as_ref().is_some_and(|p| *p.get_ref()),
    })
}

/// The operation a workload's `command` names (`suite` is expanded before this), or an error
/// at its line listing the `names` of `product`'s operations.
fn command<O>(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    product: &str,
    from_name: impl Fn(&str) -> Option<O>,
    names: &str,
) -> Result<O, PlanError> {
    match &w.command {
        Some(c) => from_name(c.get_ref()).ok_or_else(|| {
            cx.err(
                c,
                format!("{field}.command"),
                format!(
                    "unknown {product} operation '{}'; use suite or one of {names}",
                    c.get_ref()
                ),
            )
        }),
        None => Err(cx.err(
            &w.target,
            format!("{field}.command"),
            format!("a {product} workload needs `command`: suite or one of {names}"),
        )),
    }
}

/// The operation of a workload on a mongodb:// target, with its keyspace and `init`.
pub(super) fn mongo_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<MongoTarget, PlanError> {
    use perfbase_drivers::mongo::{DocumentTemplate, MongoOp, MongoOptions};
    let op = command(
        cx,
        field,
        w,
        "MongoDB",
        MongoOp::from_name,
        &MongoOp::names(),
    )?;
    let defaults = MongoOptions::default();
    let keyspace = match &w.keyspace {
        Some(v) => cx.positive(v, &format!("{field}.keyspace"))?,
        None => defaults.keyspace,
    };
    let document = match &w.document {
        Some(d) if op != MongoOp::InsertOne => {
            return Err(cx.err(
                d,
                format!("{field}.document"),
                format!("is what insert-one inserts; {} inserts none", op.name()),
            ))
        }
        Some(d) => Some(
            DocumentTemplate::parse(d.get_ref())
                .map_err(|e| cx.err(d, format!("{field}.document"), e))?,
        ),
        None => None,
    };
    Ok(MongoTarget {
        url: url.to_string(),
        op,
        options: MongoOptions {
            keyspace,
            document,
            ..defaults
        },
        init: w.init.as_ref().is_some_and(|p| *p.get_ref()),
    })
}

pub(super) fn sql_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    corpora: &[Arc<Corpus>],
) -> Result<perfbase_drivers::sql::SqlWorkload, PlanError> {
    use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
    let scale = match &w.scale {
        Some(s) => cx.positive(s, &format!("{field}.scale"))? as u32,
        None => 1,
    };
    match (&w.sql, &w.builtin) {
        (Some(sql), None) => {
            let params = w
                .params
                .iter()
                .map(|p| Template::parse(p.get_ref(), corpora).map_err(|e| cx.err(p, format!("{field}.params"), e)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(SqlWorkload::Custom {
                sql: sql.get_ref().clone(),
                params,
                corpora: corpora.to_vec(),
            })
        }
        (None, Some(b)) => match b.get_ref().as_str() {
            "tpcb" => Ok(SqlWorkload::TpcB { scale }),
            "tpcb-function" => Ok(SqlWorkload::TpcBFunction { scale }),
            "select-only" => Ok(SqlWorkload::TpcBSelect { scale }),
            other => SuiteOp::from_name(other).map(SqlWorkload::Suite).ok_or_else(|| {
                cx.err(b, format!("{field}.builtin"), format!("'{other}': use tpcb, tpcb-function, select-only, insert, select-pk, scan, update, delete, transaction or join"))
            }),
        },
        (Some(sql), Some(_)) => Err(cx.err(sql, field, "give either sql or builtin, not both")),
        (None, None) => Err(cx.err(&w.target, field, "a database workload needs sql = \"…\" (with params) or builtin = \"tpcb\"")),
    }
}

/// The operation of a workload on a Vault target (`protocol = "vault"`), with its options,
/// the target's token source and HTTP settings, and `init`.
pub(super) fn vault_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    (tdef, target): (&file::TargetDef, &str),
    url: &str,
    http: perfbase_drivers::http::HttpOptions,
) -> Result<VaultTarget, PlanError> {
    use perfbase_drivers::vault::{VaultOp, VaultOptions};
    let op = command(cx, field, w, "Vault", VaultOp::from_name, &VaultOp::names())?;
    let d = VaultOptions::default();
    let text = |v: &Option<S<String>>, default: String| {
        v.as_ref().map_or(default, |s| s.get_ref().clone())
    };
    let options = VaultOptions {
        key_type: text(&w.key_type, d.key_type.clone()),
        sign_key_type: text(&w.sign_key_type, d.sign_key_type.clone()),
        payload_size: match &w.size {
            Some(v) => cx.positive(v, &format!("{field}.size"))? as usize,
            None => d.payload_size,
        },
        kv_path: text(&w.kv_path, d.kv_path.clone()),
        pki_role: text(&w.pki_role, d.pki_role.clone()),
    };
    if let Err(e) = options.check() {
        // The field the message is about, at its line.
        let (span, name) = [
            (&w.key_type, "key_type"),
            (&w.sign_key_type, "sign_key_type"),
            (&w.kv_path, "kv_path"),
            (&w.pki_role, "pki_role"),
        ]
        .into_iter()
        .find(|(v, _)| {
            v.as_ref()
                .is_some_and(|v| e.to_string().contains(v.get_ref().as_str()))
        })
        .map_or((&w.target, "command"), |(v, n)| {
            (v.as_ref().expect("found set"), n)
        });
        return Err(cx.err(span, format!("{field}.{name}"), e.to_string()));
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
    Ok(VaultTarget {
        url: url.to_string(),
        token,
        op,
        options,
        http,
        init: w.init.as_ref().is_some_and(|p| *p.get_ref()),
    })
}
