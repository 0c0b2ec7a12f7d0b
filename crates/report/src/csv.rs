//! CSV of a run's phases (one row per measured phase; a single ad-hoc run is one row), for
//! spreadsheets and CI systems.

use perfbase_core::result::{Measurement, RunResult};
use std::fmt::Write;

const HEADER: &str = "run,phase,scenario,step,repetition,model,offered_rate,offered_connections,requests,duration_s,rps,success_ratio,errors,bytes_read,min_ms,mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms";

/// Quotes a field when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn row(
    out: &mut String,
    run: &str,
    phase: &str,
    scenario: Option<&str>,
    step: Option<u32>,
    rep: Option<u32>,
    model: &str,
    rate: Option<f64>,
    conns: Option<u64>,
    m: &Measurement,
) {
    let l = &m.latency_ms;
    let _ = writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{:.6},{:.3},{:.6},{},{},{},{},{},{},{},{},{},{}",
        field(run),
        field(phase),
        field(scenario.unwrap_or("")),
        opt(step),
        opt(rep),
        model,
        opt(rate),
        opt(conns),
        m.requests,
        m.duration_s,
        m.rps,
        m.success_ratio,
        m.errors.values().sum::<u64>(),
        m.bytes_read,
        num(l.min),
        num(l.mean),
        num(l.p50),
        num(l.p90),
        num(l.p95),
        num(l.p99),
        num(l.p999),
        num(l.max)
    );
}

/// The CSV of several runs, labelled by `labels` (run ids or file names).
pub fn render(runs: &[(String, &RunResult)]) -> String {
    let mut out = format!("{HEADER}\n");
    for (label, r) in runs {
        if r.phases.is_empty() {
            row(
                &mut out,
                label,
                "run",
                None,
                None,
                None,
                r.model.name(),
                r.config.rate,
                r.config.connections,
                &r.measurement,
            );
        }
        for p in &r.phases {
            row(
                &mut out,
                label,
                &p.name,
                p.scenario.as_deref(),
                p.step,
                p.repetition,
                p.model.name(),
                p.offered_rate,
                p.offered_connections,
                &p.measurement,
            );
        }
    }
    out
}

/// A latency figure, or an empty field when it is undefined (nothing completed).
fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting() {
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(super::field("plain"), "plain");
    }
}
