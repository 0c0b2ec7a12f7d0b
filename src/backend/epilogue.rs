//! What a command prints after its result table, in the words its protocol's users know:
//! pgbench's closing block for a database run, GET misses for Redis, redirects and replies per
//! node for a Redis Cluster.

use super::{AmqpTarget, Backend, SqlTarget, StreamSide};
use perfbase_core::result::{Measurement, RunResult};
use serde_json::Value;
use std::collections::BTreeMap;

/// Prints the closing lines of a command's run of `backends` (one per scenario, with the
/// `extras` each run gave); `single` when the run was one workload rather than a suite.
pub fn epilogue(
    backends: &[&Backend],
    extras: &[BTreeMap<String, Value>],
    result: &RunResult,
    single: bool,
) {
    match backends.first() {
        Some(Backend::Sql(s)) if single => {
            let scale = result.config.protocol.get("scale").and_then(Value::as_u64);
            let load = PgbenchLoad {
                clients: result.config.connections,
                rate: result.config.rate,
                threads: result.config.threads,
                scale,
            };
            out!("{}", pgbench_block(&result.measurement, s, &load))
        }
        Some(Backend::Redis(r)) => {
            if r.url.starts_with("redis+cluster://") {
                out!("{}", cluster_lines(extras));
            }
            misses_line(extras, result, single, "GET misses (no such key");
        }
        Some(Backend::Mongo(_)) => {
            misses_line(
                extras,
                result,
                single,
                "matched no document (finds, updates, deletes",
            );
        }
        Some(Backend::Amqp(AmqpTarget {
            stream: Some(side), ..
        })) => stream_lines(result, side),
        _ => {}
    }
}

/// The consumers' side of a stream, and a warning when they did not keep up.
fn stream_lines(result: &RunResult, side: &StreamSide) {
    let Some(consume) = result.phases.iter().find(|p| p.name == "consume") else {
        return;
    };
    let unconsumed = result
        .config
        .protocol
        .get("unconsumed")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    out!(
        "{}",
        perfbase_report::terminal::render_consumed(
            &consume.measurement,
            side.consumers,
            unconsumed
        )
    );
    if unconsumed > 0 {
        errln!(
            "perfbase: {} published messages were not consumed within --drain {:?} of the \
             last one: the consumers did not keep up",
            perfbase_report::thousands(unconsumed),
            side.drain
        );
    }
}

/// How many operations found nothing (a Redis GET of a missing key, a MongoDB find, update or
/// delete that matched no document, the drivers' `misses` extra): they count as successes,
/// so the count is said here (a run against an empty keyspace reads 100 % success and 100 %
/// misses). `what` opens the line and its parenthesis.
fn misses_line(extras: &[BTreeMap<String, Value>], result: &RunResult, single: bool, what: &str) {
    let misses: u64 = extras
        .iter()
        .filter_map(|e| e.get("misses").and_then(Value::as_u64))
        .sum();
    if misses == 0 {
        return;
    }
    // In a suite they are one operation among others: the count alone is said.
    let share = if single {
        format!(
            " of {} ({:.2} %)",
            perfbase_report::thousands(result.measurement.requests),
            100.0 * misses as f64 / result.measurement.requests.max(1) as f64
        )
    } else {
        String::new()
    };
    out!(
        "  {what}, counted as successes): {}{share}\n",
        perfbase_report::thousands(misses)
    );
}

/// Redirects followed and replies per node, over every run of a Redis Cluster.
pub fn cluster_lines(extras: &[BTreeMap<String, Value>]) -> String {
    let (mut moved, mut ask) = (0, 0);
    let mut per_node: BTreeMap<String, u64> = BTreeMap::new();
    for e in extras {
        if let Some(r) = e.get("redirects") {
            moved += r["moved"].as_u64().unwrap_or(0);
            ask += r["ask"].as_u64().unwrap_or(0);
        }
        if let Some(Value::Object(nodes)) = e.get("cluster_nodes") {
            for (addr, n) in nodes {
                *per_node.entry(addr.clone()).or_insert(0) += n.as_u64().unwrap_or(0);
            }
        }
    }
    let nodes: Vec<String> = per_node
        .iter()
        .map(|(a, n)| format!("{a} {}", perfbase_report::thousands(*n)))
        .collect();
    format!(
        "  cluster redirects followed: MOVED {moved}, ASK {ask}\n  replies per node: {}\n",
        nodes.join(", ")
    )
}

/// The load a pgbench block describes.
pub struct PgbenchLoad {
    /// Closed model: sessions.
    pub clients: Option<u64>,
    /// Open model: transactions per second.
    pub rate: Option<f64>,
    pub threads: u32,
    /// The tables' TPC-B scale, when the run read it.
    pub scale: Option<u64>,
}

/// pgbench's closing block, in its words, so figures can be set side by side with a pgbench
/// run: what ran, how many transactions were processed and failed, latency and TPS (sessions
/// connect before the clock starts, so it is pgbench's "without initial connection time").
pub fn pgbench_block(m: &Measurement, s: &SqlTarget, load: &PgbenchLoad) -> String {
    let failed = m.errors.values().sum::<u64>();
    let ok = m.requests.saturating_sub(failed);
    let kind = match s.shown.as_str() {
        "tpcb" => "TPC-B (sort of), pgbench's built-in script".to_string(),
        "tpcb-function" => "TPC-B through pgbench_tx()".to_string(),
        "select-only" => "<builtin: select only>, pgbench's -S script".to_string(),
        "custom" => "custom statement".to_string(),
        other => format!("operation {other}"),
    };
    let mode = if s.pipeline > 1 {
        format!("prepared, pipeline {}", s.pipeline)
    } else {
        "prepared".into()
    };
    let shape = match (load.clients, load.rate) {
        (Some(c), _) => format!("number of clients: {c}"),
        (None, Some(rate)) => format!("rate: {rate} transactions/s (open model)"),
        _ => String::new(),
    };
    let pct = if m.requests > 0 {
        100.0 * failed as f64 / m.requests as f64
    } else {
        0.0
    };
    let mut b = String::new();
    let mut line = |text: String| b.push_str(&format!("  {text}\n"));
    line(format!("transaction type: {kind}"));
    if let Some(scale) = load.scale {
        line(format!("scaling factor: {scale}"));
    }
    line(format!("query mode: {mode}"));
    line(shape);
    line(format!("number of threads: {}", load.threads));
    line(format!("duration: {:.3} s", m.duration_s));
    line(format!("number of transactions actually processed: {ok}"));
    line(format!(
        "number of failed transactions: {failed} ({pct:.3}%)"
    ));
    line(format!(
        "latency average = {:.3} ms (p95 {:.3} ms, p99 {:.3} ms)",
        m.latency_ms.mean, m.latency_ms.p95, m.latency_ms.p99
    ));
    line(format!(
        "tps = {:.6} (without initial connection time)",
        if m.duration_s > 0.0 {
            ok as f64 / m.duration_s
        } else {
            0.0
        }
    ));
    b
}
