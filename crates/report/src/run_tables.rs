//! The tables of a measurement that both markup reports show, Markdown and HTML: the summary,
//! the latency percentiles, the per-endpoint figures of a mix and the error samples. Their
//! content is decided here once (`crate::table` draws them), so the two reports cannot drift
//! apart in columns, units or wording.

use crate::study_text::{counts, ms};
use crate::table::{Cell, Table};
use crate::{bytes, thousands, thousands_f};
use perfbase_core::result::{Endpoint, Env, LatencyMs, Measurement};
use perfbase_core::timing::HttpTiming;
use std::collections::BTreeMap;

/// The machine that measured: CPU, cores, memory, OS, kernel and perfbase's version.
pub fn environment(e: &Env) -> Table {
    Table::new(
        &["CPU", "cores", "memory", "OS", "kernel", "perfbase"],
        vec![vec![
            e.cpu_model.as_str().into(),
            e.cores.to_string().into(),
            bytes(e.memory_bytes).into(),
            e.os.as_str().into(),
            e.kernel.as_str().into(),
            e.tool_version.as_str().into(),
        ]],
        1,
    )
    .words_in(&[3, 4, 5])
    .class("env")
}

/// requests, duration, rate, success, bytes, status codes and error classes.
pub fn summary(m: &Measurement) -> Table {
    let or_none = |m: &BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            counts(m)
        }
    };
    Table::new(
        &[
            "requests",
            "duration s",
            "req/s",
            "success",
            "read",
            "written",
            "status codes",
            "errors",
        ],
        vec![vec![
            thousands(m.requests).into(),
            format!("{:.2}", m.duration_s).into(),
            thousands_f(m.rps).into(),
            Cell::success(m.success_ratio),
            bytes(m.bytes_read).into(),
            bytes(m.bytes_written).into(),
            or_none(&status_names(&m.status)).into(),
            or_none(&m.errors).into(),
        ]],
        0,
    )
    .words_in(&[6, 7])
}

/// Latency percentiles in ms: response time, service time (open model) and the HTTP phases.
pub fn latency(m: &Measurement) -> Table {
    // Every operation failed (a refused port, a dead service): its times are how fast it
    // failed, never the service's response time, and say so.
    let name = if m.requests > 0 && m.success_ratio == 0.0 {
        "time to failure (every operation failed)"
    } else {
        "response time"
    };
    let mut rows = vec![latency_row(name, &m.latency_ms)];
    if let Some(s) = &m.service_time_ms {
        rows.push(latency_row("service time", s));
    }
    if let Some(t) = &m.http_timing {
        rows.extend(timing_parts(t).into_iter().map(|(n, l)| latency_row(n, l)));
    }
    if let Some(st) = &m.stream {
        for (name, l) in [
            ("first message", &st.first_ms),
            ("gap between messages", &st.gap_ms),
            ("mean gap per stream", &st.stream_gap_ms),
            ("stream total", &st.total_ms),
        ] {
            if l.is_defined() {
                rows.push(latency_row(name, l));
            }
        }
    }
    Table::new(
        &[
            "latency, ms",
            "min",
            "mean",
            "stdev",
            "p50",
            "p75",
            "p90",
            "p95",
            "p99",
            "p99.9",
            "max",
        ],
        rows,
        1,
    )
}

fn latency_row(name: &str, l: &LatencyMs) -> Vec<Cell> {
    let mut row = vec![Cell::from(name)];
    row.extend(
        [
            l.min, l.mean, l.stdev, l.p50, l.p75, l.p90, l.p95, l.p99, l.p999, l.max,
        ]
        .map(|v| Cell::from(ms(v))),
    );
    row
}

/// HTTP/1.1's parts of a request's time that some request had, named for a latency table.
pub fn timing_parts(t: &HttpTiming) -> Vec<(&'static str, &LatencyMs)> {
    [
        ("connect", &t.connect_ms),
        ("TLS handshake", &t.tls_ms),
        ("waiting (to first byte)", &t.waiting_ms),
        ("receiving", &t.receiving_ms),
    ]
    .into_iter()
    .filter(|(_, l)| !l.p50.is_nan())
    .collect()
}

/// One row per endpoint of a mix (per step with `step_col`): its requests and their share of
/// the step's, success, percentiles and status codes.
pub fn endpoints<E: AsRef<[Endpoint]>>(step_col: bool, rows: &[(String, E)]) -> Table {
    let mut head = vec![
        "endpoint",
        "requests",
        "share",
        "success",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "status codes",
    ];
    if step_col {
        head.insert(0, "step");
    }
    let mut cells = Vec::new();
    for (step, endpoints) in rows {
        let endpoints = endpoints.as_ref();
        let total: u64 = endpoints.iter().map(|e| e.requests).sum();
        for e in endpoints.iter() {
            let mut row = Vec::new();
            if step_col {
                row.push(Cell::from(step.as_str()));
            }
            let share = if total > 0 {
                e.requests as f64 * 100.0 / total as f64
            } else {
                0.0
            };
            row.extend([
                Cell::code(e.name.as_str()),
                thousands(e.requests).into(),
                format!("{share:.1} %").into(),
                Cell::success(e.success_ratio),
                ms(e.latency_ms.p50).into(),
                ms(e.latency_ms.p95).into(),
                ms(e.latency_ms.p99).into(),
                ms(e.latency_ms.max).into(),
                counts(&status_names(&e.status)).into(),
            ]);
            cells.push(row);
        }
    }
    let last = head.len() - 1;
    let first_figure = if step_col { 2 } else { 1 };
    Table::new(&head, cells, first_figure)
        .words_in(&[last])
        .class("endpoints")
}

/// A sample message of each error class, with its count.
pub fn error_samples(m: &Measurement) -> Table {
    let rows = m
        .error_samples
        .iter()
        .map(|s| {
            vec![
                Cell::from(s.class.as_str()),
                Cell::code(s.message.as_str()),
                thousands(s.count).into(),
            ]
        })
        .collect();
    Table::new(&["error class", "message", "count"], rows, 2)
}

/// Status codes by name: code 0 counts operations that got none.
pub fn status_names(m: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut named: BTreeMap<String, u64> = BTreeMap::new();
    for (code, n) in m {
        let key = if code == "0" {
            "no status".to_string()
        } else {
            code.clone()
        };
        *named.entry(key).or_default() += n;
    }
    named
}
