//! pgbench's closing block, in its words, so a database run's figures can be set side by side
//! with a pgbench run's.

use super::SqlTarget;
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
