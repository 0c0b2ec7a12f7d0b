//! pgbench's closing block, in its words, so a database run's figures can be set side by side
//! with a pgbench run's.

use super::SqlTarget;
use perfbase_core::closing::{Closing, Part};
use perfbase_core::result::Measurement;

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
pub fn pgbench_block(m: &Measurement, s: &SqlTarget, load: &PgbenchLoad) -> Vec<Closing> {
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
    let tps = if m.duration_s > 0.0 {
        ok as f64 / m.duration_s
    } else {
        0.0
    };
    // pgbench's own numbers carry no thousands separators.
    let n = |v: u64| Part::Fixed(v as f64, 0);
    let ms = |v: f64| Part::Fixed(v, 3);
    let mut lines: Vec<Vec<Part>> = vec![vec![format!("transaction type: {kind}").into()]];
    if let Some(scale) = load.scale {
        lines.push(vec!["scaling factor: ".into(), n(scale)]);
    }
    lines.extend([
        vec![format!("query mode: {mode}").into()],
        vec![shape.into()],
        vec!["number of threads: ".into(), n(load.threads.into())],
        vec!["duration: ".into(), ms(m.duration_s), " s".into()],
        vec!["number of transactions actually processed: ".into(), n(ok)],
        vec![
            "number of failed transactions: ".into(),
            n(failed),
            " (".into(),
            ms(pct),
            "%)".into(),
        ],
        vec![
            "latency average = ".into(),
            ms(m.latency_ms.mean),
            " ms (p95 ".into(),
            ms(m.latency_ms.p95),
            " ms, p99 ".into(),
            ms(m.latency_ms.p99),
            " ms)".into(),
        ],
        vec![
            "tps = ".into(),
            Part::Fixed(tps, 6),
            " (without initial connection time)".into(),
        ],
    ]);
    lines.into_iter().map(Closing::Detail).collect()
}
