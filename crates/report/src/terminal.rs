//! The terminal summary, laid out so a wrk user finds requests, rate, transfer, status codes,
//! errors and latency percentiles where they expect them.

use crate::study_text::{availability_line, counts, findings, offered, stream_line};
use crate::table::text::{Column, Layout};
use crate::table::{Cell, Table};
use crate::{bytes, status_text, thousands, thousands_f};
use perfbase_analysis::study::{Ranking, ScenarioStudy, Study};
use perfbase_core::result::{
    Endpoint, ErrorSampleOut, LatencyMs, LoadConfig, Measurement, Model, OpenModelStats, RunResult,
};
use std::fmt::Write;

/// The width of the label column that starts a run summary's lines (`Requests`, `Endpoints`).
const LABEL: usize = 13;

fn ms(v: f64) -> String {
    if v.is_nan() {
        // Nothing completed: there is no latency to show.
        "—".into()
    } else if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn latency_block(out: &mut String, title: &str, l: &LatencyMs) {
    if !l.is_defined() {
        let _ = writeln!(out, "  {title:<13} —  (no operation completed)");
        return;
    }
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

/// One line per endpoint of a mix: requests, success, percentiles and status counts, under the
/// `Endpoints` label in the run summary's label column.
fn endpoints_block(out: &mut String, endpoints: &[Endpoint]) {
    if endpoints.is_empty() {
        return;
    }
    let rows = endpoints
        .iter()
        .map(|e| {
            vec![
                Cell::from(""),
                Cell::code(e.name.as_str()),
                thousands(e.requests).into(),
                format!("{:.2}%", e.success_ratio * 100.0).into(),
                ms(e.latency_ms.p50).into(),
                ms(e.latency_ms.p95).into(),
                ms(e.latency_ms.p99).into(),
                ms(e.latency_ms.max).into(),
                status_text(&e.status).into(),
            ]
        })
        .collect();
    let head = [
        "Endpoints",
        "",
        "requests",
        "success",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "status",
    ];
    let mut columns = vec![
        Column::fixed(LABEL),
        // A long path is cut, not allowed to push every figure off to the right.
        Column::fit().at_least(8).cut_with_ellipsis(40),
        Column::fixed(10),
    ];
    columns.extend([Column::fixed(8); 5]);
    columns.push(Column::fixed(0).gap("  "));
    Table::new(&head, rows, 2)
        .words_in(&[8])
        .text(&Layout::new("  ", columns), false, out);
}

/// A journey's iterations and checks, each table under its label in the summary's label
/// column (a step column when a scenario has several steps).
fn journey_blocks(out: &mut String, rows: &[crate::journey_tables::JourneyRow], step_col: bool) {
    let tables = [
        (
            "Iterations",
            crate::journey_tables::iterations(step_col, rows),
        ),
        ("Groups", crate::journey_tables::groups(step_col, rows)),
        ("Checks", crate::journey_tables::checks(step_col, rows)),
        ("Metrics", crate::journey_tables::metrics(step_col, rows)),
    ];
    for (label, table) in tables {
        let Some(table) = table else { continue };
        let _ = write!(out, "  {label:<LABEL$}");
        let mut text = String::new();
        table.text(&Layout::fitted(table.head.len()), false, &mut text);
        for (i, line) in text.lines().enumerate() {
            let pad = if i == 0 {
                String::new()
            } else {
                format!("  {:<LABEL$}", "")
            };
            let _ = writeln!(out, "{pad}{line}");
        }
    }
}

/// The consumer side of a stream run: messages consumed, their rate, what was left, and the
/// end-to-end latency (send stamp to receipt).
pub fn render_consumed(m: &Measurement, consumers: u64, unconsumed: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {:<13} {} in {:.2}s, {} msg/s, by {consumers} consumer{}; {} not consumed",
        "Consumed",
        thousands(m.requests.saturating_sub(m.errors.values().sum::<u64>())),
        m.duration_s,
        thousands_f(m.rps),
        if consumers == 1 { "" } else { "s" },
        thousands(unconsumed)
    );
    if !m.errors.is_empty() {
        let errors: Vec<String> = m
            .errors
            .iter()
            .map(|(k, v)| format!("{k} {}", thousands(*v)))
            .collect();
        let _ = writeln!(out, "  {:<13} {}", "Consumer errs", errors.join(", "));
    }
    latency_block(&mut out, "End to end ms", &m.latency_ms);
    error_sample_lines(&mut out, &m.error_samples, 3);
    out
}

/// HTTP/2 runs: how many sessions (streams) share a connection.
fn streams_per_connection(c: &LoadConfig) -> Option<u64> {
    c.protocol.get("streams_per_connection")?.as_u64()
}

/// Renders the summary of a run.
pub fn render(r: &RunResult) -> String {
    let m = &r.measurement;
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(r));
    if r.interrupted {
        let _ = writeln!(out, "  INTERRUPTED: partial result");
    }
    crate::stop_lines(&mut out, r);
    volume_lines(&mut out, m);
    error_lines(&mut out, m);
    if let Some(o) = &m.open_model {
        rate_lines(&mut out, o);
    }
    latency_lines(&mut out, m);
    endpoints_block(&mut out, &m.endpoints);
    journey_blocks(&mut out, &crate::journey_tables::run_journeys(m), false);
    if m.aborted_in_flight > 0 {
        let _ = writeln!(
            out,
            "  {:<13} {} requests in flight at the cut-off were abandoned (not counted above)",
            "Aborted",
            thousands(m.aborted_in_flight)
        );
    }
    error_sample_lines(&mut out, &m.error_samples, 5);
    out
}

/// The run's first line: what was loaded, how, and for how long.
fn headline(r: &RunResult) -> String {
    use perfbase_core::redact::printable;
    let c = &r.config;
    format!(
        "perfbase {} {} — {}, {} thread{}, {}{}",
        printable(&r.protocol),
        printable(&r.target),
        load_shape(r),
        c.threads,
        if c.threads == 1 { "" } else { "s" },
        run_bound(c),
        if c.warmup_s > 0.0 {
            format!(" after {}s warm-up", c.warmup_s)
        } else {
            String::new()
        }
    )
}

/// The load model in words: connections (or HTTP/2 streams) for the closed model, the rate
/// and in-flight cap for the open one.
fn load_shape(r: &RunResult) -> String {
    let c = &r.config;
    match r.model {
        Model::Closed => {
            let n = c.connections.unwrap_or_default();
            match streams_per_connection(c) {
                Some(m) if m > 1 => format!(
                    "closed model, {n} streams on {} HTTP/2 connections",
                    n.div_ceil(m)
                ),
                Some(_) => format!("closed model, {n} HTTP/2 connections"),
                None => format!("closed model, {n} connections"),
            }
        }
        Model::Open => format!(
            "open model, {}/s, at most {} in flight",
            c.rate.map(|v| format!("{v}")).unwrap_or_default(),
            c.max_inflight.unwrap_or_default()
        ),
    }
}

/// What ends the run: a duration, a request count, or whichever comes first.
fn run_bound(c: &LoadConfig) -> String {
    match (c.duration_s, c.count) {
        (Some(d), Some(n)) => format!("{d}s or {} requests", thousands(n)),
        (Some(d), None) => format!("{d}s"),
        (None, Some(n)) => format!("{} requests", thousands(n)),
        (None, None) => String::new(),
    }
}

/// Requests and their rate, bytes moved, the success share and the status codes.
fn volume_lines(out: &mut String, m: &Measurement) {
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
    // Protocols without status codes (SQL, Redis, brokers) record every reply as status 0:
    // a line saying "none: N" would only repeat the request count.
    if m.status.is_empty() || m.status.keys().any(|k| k != "0") {
        let _ = writeln!(out, "  {:<13} {}", "Status", status_text(&m.status));
    }
}

/// The error classes and their counts, then wrk's socket-errors line when it applies.
fn error_lines(out: &mut String, m: &Measurement) {
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
    if let Some(line) = socket_errors(&m.errors) {
        let _ = writeln!(out, "  {:<13} {line}", "Socket errors");
    }
}

/// The open model's rate asked for and achieved, with a warning when it fell short.
fn rate_lines(out: &mut String, o: &OpenModelStats) {
    let _ = writeln!(
        out,
        "  {:<13} requested {}/s, achieved {}/s; late {}, unsent {}",
        "Rate",
        thousands_f(o.requested_rate),
        thousands_f(o.achieved_rate),
        thousands(o.late),
        thousands(o.unsent)
    );
    if o.achieved_rate < 0.99 * o.requested_rate {
        // Said plainly: a rate that was not sent is not the rate the figures are for.
        let _ = writeln!(
            out,
            "  {:<13} fell short: {:.1} % of the requested rate was sent; the figures are for \
             {}/s (raise --max-inflight, or the server is saturated)",
            "Warning",
            100.0 * o.achieved_rate / o.requested_rate,
            thousands_f(o.achieved_rate)
        );
    }
}

/// Response (or plain) latency, service time, the coordinated-omission warning and where
/// HTTP/1.1 requests' time went.
fn latency_lines(out: &mut String, m: &Measurement) {
    let title = if m.service_time_ms.is_some() {
        "Response ms"
    } else {
        "Latency ms"
    };
    latency_block(out, title, &m.latency_ms);
    if let Some(s) = &m.service_time_ms {
        latency_block(out, "Service ms", s);
    }
    if let Some(co) = m.coordinated_omission.as_ref().filter(|c| c.suspected) {
        // The closed model cannot see what a stall did to the requests it never sent.
        let _ = writeln!(
            out,
            "  {:<13} stalls hid latency (coordinated omission): p99 {} ms measured, ~{} ms \
             estimated had each connection kept its {} ms pace (an estimate); measure it with \
             -r RATE, the open model",
            "Warning",
            ms(m.latency_ms.p99),
            ms(co.latency_ms.p99),
            ms(co.expected_interval_ms)
        );
    }
    if let Some(t) = &m.http_timing {
        let _ = writeln!(out, "  {:<13} {}", "Timing ms", timing_line(t));
    }
    if let Some(st) = &m.stream {
        let _ = writeln!(out, "  {:<13} {}", "Stream", stream_line(st));
    }
    if let Some(line) = m.availability.as_ref().and_then(availability_line) {
        let _ = writeln!(out, "  {:<13} {line}", "Availability");
    }
}

/// One line per error sample worth showing (see [`samples_to_show`]).
fn error_sample_lines(out: &mut String, samples: &[ErrorSampleOut], at_most: usize) {
    for s in samples_to_show(samples, at_most) {
        let _ = writeln!(
            out,
            "  {:<13} {} ×{}: {}",
            "Error sample",
            s.class,
            thousands(s.count),
            // A result read from a file or an older store may still hold raw escapes.
            perfbase_core::redact::printable(&s.message)
        );
    }
}

/// A command's `--threshold` verdicts, one line each (a suite's per operation), failures red.
pub fn render_verdicts(study: &Study, color: bool) -> String {
    let mut out = String::new();
    for s in &study.scenarios {
        for t in &s.thresholds {
            let v = &t.verdict;
            let line = format!(
                "  {:<13} {}{}: {} — {}",
                "Threshold",
                v.threshold,
                if study.scenarios.len() > 1 {
                    format!(" ({})", t.phase)
                } else {
                    String::new()
                },
                crate::study_text::threshold_value(&v.threshold, v.actual)
                    .unwrap_or_else(|| "nothing measured".into()),
                if v.passed { "pass" } else { "FAIL" }
            );
            let _ = writeln!(out, "{}", in_red_if(!v.passed, color, line));
        }
    }
    out
}

/// wrk's one line, where its users look for it: `connect N, read N, write N, timeout N`, only
/// when one of them happened (wrk prints it only then too).
fn socket_errors(errors: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    let kinds = ["connect", "read", "write", "timeout"];
    let count = |k: &str| errors.get(k).copied().unwrap_or(0);
    if kinds.iter().all(|k| count(k) == 0) {
        return None;
    }
    let parts: Vec<String> = kinds
        .iter()
        .map(|k| format!("{k} {}", thousands(count(k))))
        .collect();
    Some(parts.join(", "))
}

/// Renders a plan run's findings for the terminal; `color` marks failures in red.
pub fn render_study(r: &RunResult, study: &Study, color: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "perfbase study {} ({} phases, {} requests){}",
        study.plan,
        r.phases.len(),
        thousands(r.measurement.requests),
        if r.interrupted {
            " — INTERRUPTED, partial results"
        } else {
            ""
        }
    );
    crate::stop_lines(&mut out, r);
    summary_table(&mut out, r, study, color);
    for s in &study.scenarios {
        scenario_block(&mut out, r, s, study, color);
    }
    for k in &study.rankings {
        ranking_block(&mut out, k);
    }
    for v in &study.versus {
        for step in &v.steps {
            let _ = writeln!(out, "\n{} — {}", v.name, step.step);
            for line in crate::study_text::versus_lines(v, step) {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    for c in &study.checks {
        let line = format!(
            "check {}: expected {}; got {} — {}",
            c.name,
            counts(&c.expect),
            counts(&c.actual),
            if c.passed { "pass" } else { "FAIL" }
        );
        let _ = writeln!(out, "\n{}", in_red_if(!c.passed, color, line));
    }
    out
}

/// A failure's line, red on a colour terminal so it stands out among the passes.
fn in_red_if(failed: bool, color: bool, line: String) -> String {
    if failed && color {
        format!("\x1b[31m{line}\x1b[0m")
    } else {
        line
    }
}

/// One row per scenario and check, each with its own figures and verdict: the markup reports'
/// summary table, a failed row red.
fn summary_table(out: &mut String, r: &RunResult, study: &Study, color: bool) {
    let mut columns = vec![
        Column::fit().at_least(8).cut(40),
        Column::fixed(18),
        Column::fixed(5),
        Column::fixed(10),
    ];
    columns.extend([Column::fixed(12); 4]);
    columns.push(Column::fixed(0).gap("  "));
    out.push('\n');
    crate::study_tables::summary(r, study).text(&Layout::new("  ", columns), color, out);
}

/// A scenario: its title, its sweep table, each step's endpoints and its findings.
fn scenario_block(out: &mut String, r: &RunResult, s: &ScenarioStudy, study: &Study, color: bool) {
    let _ = writeln!(
        out,
        "\n{} — {} on {}{}",
        perfbase_core::redact::printable(&s.name),
        perfbase_core::redact::printable(&s.kind),
        perfbase_core::redact::printable(&s.target),
        if s.repetitions > 1 {
            format!(", {} repetitions", s.repetitions)
        } else {
            String::new()
        }
    );
    sweep_table(out, s);
    // A mix: each step's endpoints, so a ladder shows which request saturates first.
    let per_step = crate::scenario_endpoints(r, s);
    for (step, endpoints) in &per_step {
        if per_step.len() > 1 {
            let _ = writeln!(out, "  {step}:");
        }
        endpoints_block(out, endpoints);
    }
    let steps: Vec<String> = s.steps.iter().map(|row| row.name.clone()).collect();
    let journeys = crate::journey_tables::scenario_journeys(r, &s.name, &steps);
    journey_blocks(out, &journeys, journeys.len() > 1);
    for f in findings(s, study) {
        let _ = writeln!(
            out,
            "{}",
            in_red_if(f.contains("FAILED"), color, format!("  {f}"))
        );
    }
}

/// A row per step: offered and achieved load, success, latency, the share under each bucket,
/// and marks for the knee, the operating point and invalid steps. Not the markup reports' sweep
/// table: the terminal's is narrower (`<50ms`, `99.50%`) and marks a step after its row.
fn sweep_table(out: &mut String, s: &ScenarioStudy) {
    // The share of requests under each latency bucket, as in the Markdown sweep table.
    let buckets: Vec<String> = s
        .steps
        .first()
        .map(|row| {
            row.under_ms
                .iter()
                .map(|(b, _)| format!("<{b}ms"))
                .collect()
        })
        .unwrap_or_default();
    let mut head = vec!["step", "offered", "achieved/s", "success"];
    head.extend(crate::study_text::LATENCY_HEADS);
    head.extend(buckets.iter().map(String::as_str));
    head.push("");
    let rows = s
        .steps
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut cells: Vec<Cell> = vec![
                row.name.as_str().into(),
                offered(&row.offered).into(),
                thousands_f(row.achieved_rps).into(),
                format!("{:.2}%", row.success_ratio * 100.0).into(),
            ];
            cells.extend(crate::study_text::latency_cells(row).map(Cell::from));
            cells.extend(
                row.under_ms
                    .iter()
                    .map(|(_, share)| Cell::from(format!("{:.1}%", share * 100.0))),
            );
            let invalid = row.invalid.as_ref().map(|_| "(invalid)");
            let marks: Vec<&str> = step_mark(s, i).into_iter().chain(invalid).collect();
            cells.push(marks.join(" ").into());
            cells
        })
        .collect();
    let mut columns = vec![
        Column::fixed(16).cut(16),
        Column::fixed(10),
        Column::fixed(11),
        Column::fixed(8),
    ];
    columns.extend([Column::fixed(8); 7]);
    columns.extend(buckets.iter().map(|_| Column::fixed(7)));
    // The marks close the row; a row without one ends at its last figure.
    columns.push(Column::fixed(0));
    let layout = Layout::new("  ", columns).trimmed();
    let last = head.len() - 1;
    Table::new(&head, rows, 1)
        .words_in(&[last])
        .text(&layout, false, out);
}

/// The arrow after a step that is the knee or the operating point (the knee wins).
fn step_mark(s: &ScenarioStudy, i: usize) -> Option<&'static str> {
    match (&s.knee, &s.operating_point) {
        (Some(k), _) if k.first_bad == Some(i) => Some("← knee"),
        (_, Some(p)) if p.index == i => Some("← operating point"),
        _ => None,
    }
}

/// A ranking: a line per scenario, best first, without a header: each figure carries its
/// unit, in columns of their own so the figures still line up.
fn ranking_block(out: &mut String, k: &Ranking) {
    let _ = writeln!(out, "\nranking {} (by {})", k.name, k.by);
    let rows = k
        .rows
        .iter()
        .map(|row| {
            vec![
                format!("{}.", row.rank).into(),
                row.label.as_str().into(),
                format!("{}/s", thousands_f(row.rps)).into(),
                "mean".into(),
                crate::study_text::ms(row.mean_ms).into(),
                "ms".into(),
                "p99".into(),
                crate::study_text::ms(row.p99_ms).into(),
                "ms".into(),
                format!("{:.2}%", row.success_ratio * 100.0).into(),
                "ok".into(),
            ]
        })
        .collect();
    let columns = vec![
        Column::fixed(3),
        Column::fixed(28).cut(28),
        Column::fixed(14),
        Column::fixed(4).gap("  "),
        Column::fixed(8),
        Column::fixed(2),
        Column::fixed(3).gap("  "),
        Column::fixed(8),
        Column::fixed(2),
        Column::fixed(8).gap("  "),
        Column::fixed(0),
    ];
    let head = [
        "rank", "scenario", "req/s", "", "mean", "", "", "p99", "", "success", "",
    ];
    Table::new(&head, rows, 0)
        .words_in(&[1, 3, 5, 6, 8, 10])
        .text(&Layout::new("  ", columns).without_header(), false, out);
}

/// The error samples to print: one of each class first (so every kind of fault shows), then
/// the others, `at_most` in all unless there are more classes than that.
fn samples_to_show(samples: &[ErrorSampleOut], at_most: usize) -> Vec<&ErrorSampleOut> {
    let mut first: Vec<&ErrorSampleOut> = Vec::new();
    let mut rest: Vec<&ErrorSampleOut> = Vec::new();
    for s in samples {
        if first.iter().any(|f| f.class == s.class) {
            rest.push(s);
        } else {
            first.push(s);
        }
    }
    let n = at_most.max(first.len());
    first.into_iter().chain(rest).take(n).collect()
}

/// Where HTTP/1.1 requests' time went, on one line: each part's p50 and p99, and how many
/// requests opened their connection.
pub fn timing_line(t: &perfbase_core::timing::HttpTiming) -> String {
    let part = |name: &str, l: &perfbase_core::latency::LatencyMs| {
        if l.p50.is_nan() {
            None
        } else {
            Some(format!("{name} {}/{}", ms(l.p50), ms(l.p99)))
        }
    };
    let parts: Vec<String> = [
        part("connect", &t.connect_ms),
        part("tls", &t.tls_ms),
        part("waiting", &t.waiting_ms),
        part("receiving", &t.receiving_ms),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!(
        "(p50/p99) {}; connections: {} new, {} reused",
        parts.join(", "),
        thousands(t.new_connections),
        thousands(t.reused_connections)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_of_error_shows_before_a_second_sample_of_one() {
        let sample = |class: &str, message: &str| ErrorSampleOut {
            class: class.into(),
            message: message.into(),
            count: 1,
        };
        let mut samples: Vec<ErrorSampleOut> = (0..6)
            .map(|i| sample("read", &format!("reset {i}")))
            .collect();
        samples.push(sample("timeout", "late"));
        let shown: Vec<&str> = samples_to_show(&samples, 5)
            .iter()
            .map(|s| s.message.as_str())
            .collect();
        assert_eq!(shown, ["reset 0", "late", "reset 1", "reset 2", "reset 3"]);
    }
}
