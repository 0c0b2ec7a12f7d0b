//! `perfbase redis`, `amqp`, `nats` and `mqtt`: caches and brokers with the same engine,
//! statistics and reports. Each picks its driver here; the load itself is `load::execute`.

use crate::cli::{AckArg, AmqpArgs, AmqpModeArg, MqttArgs, NatsArgs, NatsModeArg, RedisArgs};
use crate::exit::{bad_input, AppError, Exit};
use crate::load::{LoadShape, Presentation};
use crate::records::StoreOptions;
use perfbase_core::redact;
use std::collections::BTreeMap;
use std::sync::Arc;

fn check_url(url: &str, schemes: &[&str], command: &str) -> Result<(), AppError> {
    if schemes.iter().any(|s| url.starts_with(&format!("{s}://"))) {
        Ok(())
    } else {
        Err(bad_input(format!(
            "URL '{}': perfbase {command} takes a {} URL",
            redact::url(url),
            schemes
                .iter()
                .map(|s| format!("{s}://"))
                .collect::<Vec<_>>()
                .join(" or ")
        )))
    }
}

fn json_check(load: &crate::cli::LoadArgs) -> Result<(), AppError> {
    match &load.json {
        Some(j) => crate::app::check_output_path(j, "--json"),
        None => Ok(()),
    }
}

/// Saves, prints and decides the exit code of one run.
fn done(
    store: &StoreOptions,
    protocol: &str,
    result: &perfbase_core::result::RunResult,
    load: &crate::cli::LoadArgs,
) -> Result<Exit, AppError> {
    crate::records::save(store, protocol, result, &Default::default());
    crate::load::finish(result, load.json.as_deref())
}

/// One run of a broker's driver with one connection by default: execute, save, print.
fn run_one<D: perfbase_core::Driver>(
    driver: Arc<D>,
    url: &str,
    protocol: &'static str,
    settings: BTreeMap<String, serde_json::Value>,
    load: &crate::cli::LoadArgs,
    store: &StoreOptions,
) -> Result<Exit, AppError> {
    let p = Presentation::from_args(load, redact::url(url), protocol, settings);
    let result = crate::load::execute(
        driver,
        &LoadShape::from_args(load, 1, crate::load::BACKEND_MAX_INFLIGHT),
        &p,
        crate::interrupt::install(),
    )?;
    done(store, protocol, &result, load)
}

pub fn redis(a: RedisArgs, store: &StoreOptions) -> Result<Exit, AppError> {
    use perfbase_drivers::redis::{prefill, RedisDriver, RedisOp, RedisOptions};
    check_url(&a.url, &["redis", "redis+cluster"], "redis")?;
    json_check(&a.load)?;
    let options = RedisOptions {
        keyspace: a.keyspace.max(1),
        value_size: a.value_size,
        pipeline: a.pipeline as usize,
    };
    let ops: Vec<RedisOp> = if a.workload == "suite" {
        RedisOp::ALL.to_vec()
    } else {
        vec![RedisOp::from_name(&a.workload).ok_or_else(|| {
            bad_input(format!(
                "--workload '{}': use suite, ping, set, get, get-miss, del, incr, lpush, rpush, lpop, rpop, sadd, zadd or hset",
                a.workload
            ))
        })?]
    };
    if a.prefill {
        let n = crate::load::block_on_local(prefill(&a.url, &options))?
            .map_err(|e| bad_input(e.to_string()))?;
        errln!(
            "perfbase: prefilled {} keys of {} bytes",
            perfbase_report::thousands(n),
            a.value_size
        );
    }
    let label = redact::url(&a.url);
    let shape = LoadShape::from_args(&a.load, 50, crate::load::BACKEND_MAX_INFLIGHT);
    let interrupt = crate::interrupt::install();
    let mut redirects = (0u64, 0u64);
    let mut per_node: BTreeMap<String, u64> = BTreeMap::new();
    let mut run = |op: RedisOp| -> Result<perfbase_core::result::RunResult, AppError> {
        let driver = Arc::new(
            RedisDriver::new(&a.url, op, options.clone()).map_err(|e| bad_input(e.to_string()))?,
        );
        let mut settings = BTreeMap::new();
        settings.insert("workload".into(), op.name().into());
        settings.insert("keyspace".into(), options.keyspace.into());
        settings.insert("value_size".into(), options.value_size.into());
        settings.insert("pipeline".into(), options.pipeline.into());
        let p = Presentation::from_args(&a.load, label.clone(), "redis", settings);
        if driver.is_cluster() {
            // Per-node figures need the slot map first. A cluster that does not answer now
            // is left to the run, which counts its connect errors.
            let _ = crate::load::block_on_local(driver.map_nodes())?;
        }
        let mut r = crate::load::execute(driver.clone(), &shape, &p, interrupt.clone())?;
        let (m, k) = driver.redirects();
        redirects = (redirects.0 + m, redirects.1 + k);
        if driver.is_cluster() {
            // Per-node and cluster-wide figures: replies per node, redirects followed.
            let nodes: serde_json::Map<String, serde_json::Value> = driver
                .per_node()
                .into_iter()
                .map(|(a, n)| (a.to_string(), n.into()))
                .collect();
            for (addr, n) in &nodes {
                *per_node.entry(addr.clone()).or_insert(0) += n.as_u64().unwrap_or(0);
            }
            r.config
                .protocol
                .insert("cluster_nodes".into(), nodes.into());
            r.config.protocol.insert(
                "redirects".into(),
                serde_json::json!({ "moved": m, "ask": k }),
            );
        }
        Ok(r)
    };
    let exit = if ops.len() == 1 {
        let result = run(ops[0])?;
        done(store, "redis", &result, &a.load)?
    } else {
        let names: Vec<&'static str> = ops.iter().map(|o| o.name()).collect();
        let Some(result) = crate::load::suite(&names, |name| {
            run(RedisOp::from_name(name).expect("names come from RedisOp::ALL"))
        })?
        else {
            return Ok(Exit::Success);
        };
        if let Some(j) = &a.load.json {
            perfbase_report::json::write_atomic(j, &result)
                .map_err(|e| bad_input(format!("--json {}: {e}", j.display())))?;
        }
        crate::records::save(store, "redis", &result, &Default::default());
        crate::load::print_suite(
            &result,
            &format!(
                "perfbase redis suite on {label} (pipeline {})",
                options.pipeline
            ),
        );
        crate::load::suite_exit(&result)
    };
    if a.url.starts_with("redis+cluster://") {
        outln!(
            "  cluster redirects followed: MOVED {}, ASK {}",
            redirects.0,
            redirects.1
        );
        let nodes: Vec<String> = per_node
            .iter()
            .map(|(a, n)| format!("{a} {}", perfbase_report::thousands(*n)))
            .collect();
        outln!("  replies per node: {}", nodes.join(", "));
    }
    Ok(exit)
}

pub fn amqp(a: AmqpArgs, store: &StoreOptions) -> Result<Exit, AppError> {
    use perfbase_drivers::amqp::{AckMode, AmqpDriver, AmqpMode, AmqpOptions};
    check_url(&a.url, &["amqp"], "amqp")?;
    json_check(&a.load)?;
    let options = AmqpOptions {
        mode: match a.mode {
            AmqpModeArg::Roundtrip => AmqpMode::RoundTrip,
            AmqpModeArg::Publish => AmqpMode::Publish,
            AmqpModeArg::Stream => AmqpMode::Stream,
        },
        message_size: a.size,
        persistent: a.persistent,
        confirms: a.confirms,
        ack: match a.ack {
            AckArg::None => AckMode::None,
            AckArg::Auto => AckMode::Auto,
            AckArg::Manual => AckMode::Manual,
        },
        queue: None,
    };
    if a.mode == AmqpModeArg::Stream {
        return amqp_stream(&a, options, store);
    }
    let driver = Arc::new(AmqpDriver::new(&a.url, options).map_err(|e| bad_input(e.to_string()))?);
    let mut settings = BTreeMap::new();
    settings.insert("mode".into(), format!("{:?}", a.mode).to_lowercase().into());
    settings.insert("message_size".into(), a.size.into());
    settings.insert("persistent".into(), a.persistent.into());
    settings.insert("confirms".into(), a.confirms.into());
    settings.insert("ack".into(), format!("{:?}", a.ack).to_lowercase().into());
    run_one(driver, &a.url, "amqp", settings, &a.load, store)
}

/// `--mode stream`: consumers on a shared queue, started before the publishers and drained
/// after them; the result has a phase for each side.
fn amqp_stream(
    a: &AmqpArgs,
    mut options: perfbase_drivers::amqp::AmqpOptions,
    store: &StoreOptions,
) -> Result<Exit, AppError> {
    use perfbase_core::result::{Measurement, PhaseResult};
    use perfbase_drivers::amqp::{AmqpDriver, ConsumerGroup, ConsumerSettings};
    if a.load.warmup.is_some() {
        return Err(bad_input(
            "--warmup: not with --mode stream (the consumers would count the warm-up's \
             messages); leave it out",
        ));
    }
    let queue = format!("perfbase-{}-stream", std::process::id());
    options.queue = Some(queue.clone());
    let driver =
        Arc::new(AmqpDriver::new(&a.url, options.clone()).map_err(|e| bad_input(e.to_string()))?);
    let interrupt = crate::interrupt::install();
    let group = ConsumerGroup::start(
        &a.url,
        queue.clone(),
        ConsumerSettings {
            consumers: a.consumers as usize,
            ack: options.ack,
            persistent: options.persistent,
            drain: a.drain,
            interrupt: interrupt.clone(),
        },
    )
    .map_err(|e| AppError::Unusable(e.to_string()))?;
    let mut settings = BTreeMap::new();
    settings.insert("mode".into(), "stream".into());
    settings.insert("message_size".into(), a.size.into());
    settings.insert("persistent".into(), a.persistent.into());
    settings.insert("confirms".into(), a.confirms.into());
    settings.insert("ack".into(), format!("{:?}", a.ack).to_lowercase().into());
    settings.insert("consumers".into(), a.consumers.into());
    settings.insert("queue".into(), queue.into());
    let p = Presentation::from_args(&a.load, redact::url(&a.url), "amqp", settings);
    let shape = LoadShape::from_args(&a.load, 1, crate::load::BACKEND_MAX_INFLIGHT);
    let run = crate::load::execute(driver, &shape, &p, interrupt);
    let published = run.as_ref().map_or(0, |r| {
        r.measurement.requests - r.measurement.errors.values().sum::<u64>()
    });
    // Drain: wait for what is still queued (or the drain time without a message).
    let consumed = group.finish(published);
    let mut result = run?;
    let consume = Measurement::from_recorder(&consumed.recorder, consumed.elapsed, None);
    let unconsumed = published.saturating_sub(consumed.received);
    result
        .config
        .protocol
        .insert("published".into(), published.into());
    result
        .config
        .protocol
        .insert("unconsumed".into(), unconsumed.into());
    let phase = |name: &str, m: &Measurement| PhaseResult {
        name: name.into(),
        model: result.model,
        scenario: Some("stream".into()),
        step: None,
        repetition: None,
        offered_rate: result.config.rate,
        offered_connections: result.config.connections,
        measurement: m.clone(),
    };
    result.phases = vec![
        phase("publish", &result.measurement),
        phase("consume", &consume),
    ];
    crate::records::save(store, "amqp", &result, &Default::default());
    let exit = crate::load::finish(&result, a.load.json.as_deref())?;
    out!(
        "{}",
        perfbase_report::terminal::render_consumed(&consume, a.consumers, unconsumed)
    );
    if unconsumed > 0 {
        errln!(
            "perfbase: {} published messages were not consumed within --drain {:?} of the \
             last one: the consumers did not keep up",
            perfbase_report::thousands(unconsumed),
            a.drain
        );
    }
    Ok(exit)
}

pub fn nats(a: NatsArgs, store: &StoreOptions) -> Result<Exit, AppError> {
    use perfbase_drivers::nats::{NatsDriver, NatsMode, NatsOptions};
    check_url(&a.url, &["nats"], "nats")?;
    json_check(&a.load)?;
    let options = NatsOptions {
        mode: match a.mode {
            NatsModeArg::Pubsub => NatsMode::PubSub,
            NatsModeArg::Request => NatsMode::Request,
            NatsModeArg::Jetstream => NatsMode::JetStream,
        },
        message_size: a.size,
    };
    let driver = Arc::new(NatsDriver::new(&a.url, options).map_err(|e| bad_input(e.to_string()))?);
    let mut settings = BTreeMap::new();
    settings.insert("mode".into(), format!("{:?}", a.mode).to_lowercase().into());
    settings.insert("message_size".into(), a.size.into());
    let result = run_one(driver.clone(), &a.url, "nats", settings, &a.load, store);
    if options.mode == NatsMode::JetStream {
        remove_stream(&driver);
    }
    result
}

/// Deletes a JetStream driver's stream, perfbase's scratch space (up to 1 GiB on the server's
/// disk), once a run is over, measured or not. Failing to is worth a warning, not a
/// different exit.
pub(crate) fn remove_stream(driver: &perfbase_drivers::nats::NatsDriver) {
    let deleted = crate::load::block_on_local(driver.delete_stream())
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
    if let Err(e) = deleted {
        errln!(
            "perfbase: warning: could not delete JetStream stream {}: {e}",
            driver.stream_name()
        );
    }
}

pub fn mqtt(a: MqttArgs, store: &StoreOptions) -> Result<Exit, AppError> {
    use perfbase_drivers::mqtt::{MqttDriver, MqttOptions};
    check_url(&a.url, &["mqtt"], "mqtt")?;
    json_check(&a.load)?;
    let options = MqttOptions {
        qos: a.qos,
        message_size: a.size,
    };
    let driver = Arc::new(MqttDriver::new(&a.url, options).map_err(|e| bad_input(e.to_string()))?);
    let mut settings = BTreeMap::new();
    settings.insert("qos".into(), a.qos.into());
    settings.insert("message_size".into(), a.size.into());
    run_one(driver, &a.url, "mqtt", settings, &a.load, store)
}
