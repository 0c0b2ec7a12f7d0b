//! Terminal output shared by runs and the commands that read stored runs: the monitor's
//! table, and a suite's table of operations.

use perfbase_core::result::RunResult;

/// The monitor's table (services watched) or its warnings (perfbase alone).
pub fn print_monitor(result: &RunResult) {
    if let Some(report) = &result.monitor {
        out!(
            "{}",
            crate::monitoring::render(report, report.targets.len() > 1)
        );
    }
}

/// The suite table: one row per operation, then each operation's error samples.
pub fn print_suite(result: &RunResult, title: &str) {
    outln!("{title}");
    let w = result
        .phases
        .iter()
        .map(|p| p.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(12);
    outln!(
        "  {:<w$} {:>10} {:>12} {:>9} {:>9} {:>9} {:>8}",
        "operation",
        "ops",
        "ops/s",
        "avg ms",
        "p95 ms",
        "p99 ms",
        "errors"
    );
    // An operation that completed nothing has no latency.
    let ms = |v: f64| {
        if v.is_nan() {
            "—".to_string()
        } else {
            format!("{v:.3}")
        }
    };
    for p in &result.phases {
        let m = &p.measurement;
        outln!(
            "  {:<w$} {:>10} {:>12} {:>9} {:>9} {:>9} {:>8}",
            p.name,
            perfbase_report::thousands(m.requests),
            perfbase_report::thousands_f(m.rps),
            ms(m.latency_ms.mean),
            ms(m.latency_ms.p95),
            ms(m.latency_ms.p99),
            perfbase_report::thousands(m.errors.values().sum::<u64>())
        );
    }
    for p in &result.phases {
        for e in &p.measurement.error_samples {
            outln!("  {}: {} ×{}: {}", p.name, e.class, e.count, e.message);
        }
    }
    print_monitor(result);
}
