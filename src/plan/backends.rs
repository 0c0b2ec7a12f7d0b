//! The workload fields of non-HTTP targets: databases, Redis, brokers and Vault.

#[cfg(any(
    feature = "sql",
    feature = "redis",
    feature = "amqp",
    feature = "nats",
    feature = "mqtt",
    feature = "mongo",
    feature = "vault"
))]
use super::{
    context::Ctx,
    file::{self, S},
    model::*,
};
#[cfg(any(feature = "amqp", feature = "nats", feature = "sql"))]
use crate::backend::options;
#[cfg(feature = "nats")]
use crate::backend::options::NatsModeName;
#[cfg(feature = "amqp")]
use crate::backend::options::{AckName, AmqpModeName};
#[cfg(feature = "mongo")]
use crate::backend::MongoTarget;
#[cfg(feature = "mqtt")]
use crate::backend::MqttTarget;
#[cfg(feature = "nats")]
use crate::backend::NatsTarget;
#[cfg(feature = "amqp")]
use crate::backend::{AmqpTarget, StreamSide};
#[cfg(feature = "vault")]
use crate::backend::{TokenSource, VaultTarget};
#[cfg(feature = "sql")]
use perfbase_drivers::workload::{Corpus, Template};
#[cfg(any(feature = "redis", feature = "mongo", feature = "vault"))]
use perfbase_drivers::Operation;
#[cfg(feature = "sql")]
use std::sync::Arc;

/// `v` read as one of `T`'s names (a flag's `ValueEnum`, so flags and plans share their
/// choices and their error), or `default` when the field is absent.
#[cfg(any(feature = "amqp", feature = "nats"))]
fn pick<T: clap::ValueEnum + Copy>(
    cx: &Ctx<'_>,
    field: &str,
    v: &Option<S<String>>,
    default: T,
) -> Result<T, PlanError> {
    match v {
        None => Ok(default),
        Some(v) => options::choose(v.get_ref(), |_| true).map_err(|e| cx.err(v, field, e)),
    }
}

/// A message size field, or the protocol's `default`.
#[cfg(any(feature = "amqp", feature = "nats", feature = "mqtt"))]
fn size(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    default: usize,
) -> Result<usize, PlanError> {
    match &w.size {
        Some(v) => cx.positive(v, &format!("{field}.size")).map(|n| n as usize),
        None => Ok(default),
    }
}

/// An error at `v`'s line when it is set outside stream mode.
#[cfg(feature = "amqp")]
fn stream_only<T>(
    cx: &Ctx<'_>,
    field: &str,
    name: &str,
    v: &Option<S<T>>,
) -> Result<(), PlanError> {
    match v {
        Some(v) => Err(cx.err(v, format!("{field}.{name}"), "only with mode = \"stream\"")),
        None => Ok(()),
    }
}

/// The mode and message options of a workload on an amqp:// target, and what reports call it.
#[cfg(feature = "amqp")]
pub(super) fn amqp_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<(Backend, String), PlanError> {
    use perfbase_drivers::amqp;
    let mode = pick(
        cx,
        &format!("{field}.mode"),
        &w.mode,
        AmqpModeName::Roundtrip,
    )?;
    let ack = pick(cx, &format!("{field}.ack"), &w.ack, AckName::Manual)?;
    let streaming = mode == AmqpModeName::Stream;
    let stream = if streaming {
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
        stream_only(cx, field, "consumers", &w.consumers)?;
        stream_only(cx, field, "drain", &w.drain)?;
        stream_only(cx, field, "max_lag", &w.max_lag)?;
        None
    };
    let options = amqp::AmqpOptions {
        mode: mode.mode(),
        message_size: size(cx, field, w, 1024)?,
        persistent: w.persistent.as_ref().is_some_and(|b| *b.get_ref()),
        confirms: w.confirms.as_ref().is_some_and(|b| *b.get_ref()),
        ack: ack.mode(),
        pipeline: match &w.pipeline {
            Some(v) => cx.positive(v, &format!("{field}.pipeline"))? as usize,
            None => 1,
        },
        max_lag: match &w.max_lag {
            Some(v) => Some(cx.positive(v, &format!("{field}.max_lag"))?),
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
    amqp::AmqpDriver::new(url, options.clone())
        .map_err(|e| cx.err(&w.target, field, e.to_string()))?;
    let what = match &stream {
        Some(s) => format!(
            "stream, {} consumer{}",
            s.consumers,
            if s.consumers == 1 { "" } else { "s" }
        ),
        None => options::name_of(mode),
    };
    let url = url.to_string();
    Ok((
        Backend::Amqp(AmqpTarget {
            url,
            options,
            stream,
        }),
        what,
    ))
}

/// The mode and message size of a workload on a nats:// target, and what reports call it.
#[cfg(feature = "nats")]
pub(super) fn nats_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<(Backend, String), PlanError> {
    use perfbase_drivers::nats;
    let mode = pick(cx, &format!("{field}.mode"), &w.mode, NatsModeName::Pubsub)?;
    let options = nats::NatsOptions {
        mode: mode.mode(),
        message_size: size(cx, field, w, 128)?,
    };
    nats::NatsDriver::new(url, options).map_err(|e| cx.err(&w.target, field, e.to_string()))?;
    let url = url.to_string();
    Ok((
        Backend::Nats(NatsTarget { url, options }),
        options::name_of(mode),
    ))
}

/// The QoS and message size of a workload on an mqtt:// target, and what reports call it.
#[cfg(feature = "mqtt")]
pub(super) fn mqtt_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<(Backend, String), PlanError> {
    use perfbase_drivers::mqtt;
    let qos = match &w.qos {
        Some(q) if matches!(*q.get_ref(), 0 | 1) => *q.get_ref() as u8,
        Some(q) => return Err(cx.err(q, format!("{field}.qos"), "use 0 or 1")),
        None => 0,
    };
    let options = mqtt::MqttOptions {
        qos,
        message_size: size(cx, field, w, 128)?,
    };
    mqtt::MqttDriver::new(url, options).map_err(|e| cx.err(&w.target, field, e.to_string()))?;
    let url = url.to_string();
    Ok((
        Backend::Mqtt(MqttTarget { url, options }),
        format!("qos {qos}"),
    ))
}

/// The Redis command of a workload on a redis:// target, with its keyspace, value size,
/// pipeline and prefill.
#[cfg(feature = "redis")]
pub(super) fn redis_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<RedisTarget, PlanError> {
    use perfbase_drivers::redis::{RedisOp, RedisOptions};
    let names = RedisOp::names;
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
#[cfg(any(feature = "mongo", feature = "vault"))]
fn command<O: Operation>(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    product: &str,
) -> Result<O, PlanError> {
    let names = O::names();
    match &w.command {
        Some(c) => O::from_name(c.get_ref()).ok_or_else(|| {
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
#[cfg(feature = "mongo")]
pub(super) fn mongo_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<MongoTarget, PlanError> {
    use perfbase_drivers::mongo::{DocumentTemplate, MongoOp, MongoOptions};
    let op: MongoOp = command(cx, field, w, "MongoDB")?;
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
        set_up: false,
    })
}

#[cfg(feature = "sql")]
pub(super) fn sql_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    corpora: &[Arc<Corpus>],
) -> Result<perfbase_drivers::sql::SqlWorkload, PlanError> {
    use perfbase_drivers::sql::SqlWorkload;
    let scale = match &w.scale {
        Some(s) => cx.positive(s, &format!("{field}.scale"))? as u32,
        None => 1,
    };
    match (&w.sql, &w.builtin) {
        (Some(sql), None) => {
            let params = w
                .params
                .iter()
                .map(|p| {
                    Template::parse(p.get_ref(), corpora)
                        .map_err(|e| cx.err(p, format!("{field}.params"), e))
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(SqlWorkload::Custom {
                sql: sql.get_ref().clone(),
                params,
                corpora: corpora.to_vec(),
            })
        }
        (None, Some(b)) => options::sql_workload(b.get_ref(), scale).ok_or_else(|| {
            let names = options::sql_workload_names();
            cx.err(
                b,
                format!("{field}.builtin"),
                format!("'{}': use {names}", b.get_ref()),
            )
        }),
        (Some(sql), Some(_)) => Err(cx.err(sql, field, "give either sql or builtin, not both")),
        (None, None) => Err(cx.err(
            &w.target,
            field,
            "a database workload needs sql = \"…\" (with params) or builtin = \"tpcb\"",
        )),
    }
}

/// The operation of a workload on a Vault target (`protocol = "vault"`), with its options,
/// the target's token source and HTTP settings, and `init`.
#[cfg(feature = "vault")]
pub(super) fn vault_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    (tdef, target): (&file::TargetDef, &str),
    url: &str,
    http: perfbase_drivers::http::HttpOptions,
) -> Result<VaultTarget, PlanError> {
    use perfbase_drivers::vault::{VaultOp, VaultOptions};
    let op: VaultOp = command(cx, field, w, "Vault")?;
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
