//! Words and numbers shared by the terminal and Markdown renderings of a study.

use perfbase_analysis::study::{ScenarioStudy, Study};
use perfbase_analysis::sweep::Offered;

/// `20/s` or `c=8`.
pub fn offered(o: &Offered) -> String {
    match o {
        Offered::Rate(r) if r.fract() == 0.0 => format!("{r:.0}/s"),
        Offered::Rate(r) => format!("{r:.2}/s"),
        Offered::Concurrency(c) => format!("c={c}"),
    }
}

/// A sweep row's latency column heads, as every report prints them: avg and min as the
/// VU-ladder studies report them, then the percentiles and max.
pub const LATENCY_HEADS: [&str; 7] = [
    "avg ms", "min ms", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "max ms",
];

/// A sweep row's latency cells, in the order of [`LATENCY_HEADS`].
pub fn latency_cells(row: &perfbase_analysis::sweep::StepRow) -> [String; 7] {
    [
        row.mean_ms,
        row.min_ms,
        row.p50_ms,
        row.p90_ms,
        row.p95_ms,
        row.p99_ms,
        row.max_ms,
    ]
    .map(ms)
}

/// Latency in ms with sensible precision.
pub fn ms(v: f64) -> String {
    if v.is_nan() {
        "—".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Status counts as `120 × 200, 10 × 429`.
pub fn counts(m: &std::collections::BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{} × {k}", crate::thousands(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per finding of a scenario: knee, operating point, thresholds.
pub fn findings(s: &ScenarioStudy, study: &Study) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(k) = &s.knee {
        match (k.last_good, k.first_bad) {
            (_, None) => out.push(format!(
                "no knee: every step kept up (highest step {})",
                s.steps
                    .last()
                    .map(|r| offered(&r.offered))
                    .unwrap_or_default()
            )),
            (Some(g), Some(b)) => out.push(format!(
                "knee: last good step {}, first bad step {} ({})",
                offered(&s.steps[g].offered),
                offered(&s.steps[b].offered),
                k.reason.clone().unwrap_or_default()
            )),
            (None, Some(b)) => out.push(format!(
                "knee: already at the first step {} ({})",
                offered(&s.steps[b].offered),
                k.reason.clone().unwrap_or_default()
            )),
        }
    }
    for row in &s.steps {
        if let Some(why) = &row.invalid {
            out.push(format!(
                "step {} is invalid: it {why}; its figures are not those of the load it names",
                row.name
            ));
        }
    }
    if s.kind.ends_with("ladder") && !study.slo.is_empty() {
        match &s.operating_point {
            Some(op) => out.push(format!(
                "operating point under the SLO ({}): {}{}",
                study.slo.join(", "),
                offered(&op.offered),
                op.headroom
                    .map(|h| if h <= 0.0 {
                        ", at the knee itself: no headroom".to_string()
                    } else {
                        format!(", headroom {:.0} % to the knee", h * 100.0)
                    })
                    .unwrap_or_default()
            )),
            None => out.push(format!("no step meets the SLO ({})", study.slo.join(", "))),
        }
    }
    if let Some(r) = s.repetition_stats.iter().find(|_| s.repetitions > 1) {
        out.push(format!(
            "stability over {} runs ({}): rps mean {:.1} (sd {:.2}); p99 mean {} ms, variance {:.3}, 95 % CI {}–{} ms",
            r.runs,
            r.step,
            r.rps.mean,
            r.rps.stdev,
            ms(r.p99_ms.mean),
            r.p99_ms.variance,
            ms(r.p99_ms.ci95.0),
            ms(r.p99_ms.ci95.1)
        ));
    }
    let failed: Vec<&str> = s
        .thresholds
        .iter()
        .filter(|t| !t.verdict.passed)
        .map(|t| t.verdict.threshold.as_str())
        .collect();
    if !s.thresholds.is_empty() {
        if failed.is_empty() {
            out.push(format!("thresholds: all {} passed", s.thresholds.len()));
        } else {
            out.push(format!(
                "thresholds: {} of {} FAILED ({})",
                failed.len(),
                s.thresholds.len(),
                failed.join("; ")
            ));
        }
    }
    out
}
