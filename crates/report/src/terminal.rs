//! The terminal summary, laid out so a wrk user finds requests, rate, transfer, status codes,
//! errors and latency percentiles where they expect them.

use crate::{bytes, thousands, thousands_f};
use perfbase_core::result::{LatencyMs, Model, RunResult};
use std::fmt::Write;

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn latency_block(out: &mut String, title: &str, l: &LatencyMs) {
    let _ = writeln!(
        out,
        "  {title:<13} min {}  mean {}  stdev {}  max {}",
        ms(l.min),
        ms(l.mean),
        ms(l.stdev),
        ms(l.max)
    );
    let _ = writeln!(
        out,
        "  {:<13} p50 {}  p75 {}  p90 {}  p95 {}  p99 {}  p99.9 {}",
        "",
        ms(l.p50),
        ms(l.p75),
        ms(l.p90),
        ms(l.p95),
        ms(l.p99),
        ms(l.p999)
    );
}

/// Renders the summary of a run.
pub fn render(r: &RunResult) -> String {
    let m = &r.measurement;
    let c = &r.config;
    let mut out = String::new();
    let shape = match r.model {
        Model::Closed => format!(
            "closed model, {} connections",
            c.connections.unwrap_or_default()
        ),
        Model::Open => format!(
            "open model, {}/s, at most {} in flight",
            c.rate.map(|v| format!("{v}")).unwrap_or_default(),
            c.max_inflight.unwrap_or_default()
        ),
    };
    let bound = match (c.duration_s, c.count) {
        (Some(d), Some(n)) => format!("{d}s or {} requests", thousands(n)),
        (Some(d), None) => format!("{d}s"),
        (None, Some(n)) => format!("{} requests", thousands(n)),
        (None, None) => String::new(),
    };
    let _ = writeln!(
        out,
        "perfbase {} {} — {shape}, {} thread{}, {bound}{}",
        r.protocol,
        r.target,
        c.threads,
        if c.threads == 1 { "" } else { "s" },
        if c.warmup_s > 0.0 {
            format!(" after {}s warm-up", c.warmup_s)
        } else {
            String::new()
        }
    );
    if r.interrupted {
        let _ = writeln!(out, "  INTERRUPTED: partial result");
    }
    let _ = writeln!(
        out,
        "  {:<13} {} in {:.2}s, {} req/s",
        "Requests",
        thousands(m.requests),
        m.duration_s,
        thousands_f(m.rps)
    );
    let per_s = if m.duration_s > 0.0 {
        (m.bytes_read as f64 / m.duration_s) as u64
    } else {
        0
    };
    let _ = writeln!(
        out,
        "  {:<13} read {} ({}/s), written {}",
        "Transfer",
        bytes(m.bytes_read),
        bytes(per_s),
        bytes(m.bytes_written)
    );
    let _ = writeln!(out, "  {:<13} {:.2} %", "Success", m.success_ratio * 100.0);
    let status: Vec<String> = m
        .status
        .iter()
        .map(|(k, v)| {
            if k == "0" {
                format!("none: {}", thousands(*v))
            } else {
                format!("{k}: {}", thousands(*v))
            }
        })
        .collect();
    let _ = writeln!(
        out,
        "  {:<13} {}",
        "Status",
        if status.is_empty() {
            "-".into()
        } else {
            status.join(", ")
        }
    );
    let errors: Vec<String> = m
        .errors
        .iter()
        .map(|(k, v)| format!("{k} {}", thousands(*v)))
        .collect();
    let _ = writeln!(
        out,
        "  {:<13} {}",
        "Errors",
        if errors.is_empty() {
            "none".into()
        } else {
            errors.join(", ")
        }
    );
    if let Some(o) = &m.open_model {
        let _ = writeln!(
            out,
            "  {:<13} requested {}/s, achieved {}/s; late {}, unsent {}",
            "Rate",
            thousands_f(o.requested_rate),
            thousands_f(o.achieved_rate),
            thousands(o.late),
            thousands(o.unsent)
        );
    }
    let title = if m.service_time_ms.is_some() {
        "Response ms"
    } else {
        "Latency ms"
    };
    latency_block(&mut out, title, &m.latency_ms);
    if let Some(s) = &m.service_time_ms {
        latency_block(&mut out, "Service ms", s);
    }
    if m.aborted_in_flight > 0 {
        let _ = writeln!(
            out,
            "  {:<13} {} requests in flight at the cut-off were abandoned (not counted above)",
            "Aborted",
            thousands(m.aborted_in_flight)
        );
    }
    for s in m.error_samples.iter().take(5) {
        let _ = writeln!(
            out,
            "  {:<13} {} ×{}: {}",
            "Error sample",
            s.class,
            thousands(s.count),
            s.message
        );
    }
    out
}
