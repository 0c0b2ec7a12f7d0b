//! The words a comparison's verdicts use: how many runs the sides had, how far B moved, and
//! whether the runs resolved it — one wording for run-against-run comparisons (the
//! changelog, `perfbase compare`) and for a plan's A vs B.

use crate::compare::{p_text, pct_text};
use crate::comparison::{key_metric, MetricComparison};

/// "with 4 runs", "with 4 and 6 runs", "with one run a side", "with one run of A": what the
/// two sides had to resolve a difference with.
pub(crate) fn runs_text(na: usize, nb: usize, b_label: &str) -> String {
    match (na, nb) {
        (1, 1) => "with one run a side".into(),
        (1, _) => "with one run of A".into(),
        (_, 1) => format!("with one run of {b_label}"),
        _ if na == nb => format!("with {na} runs"),
        _ => format!("with {na} and {nb} runs"),
    }
}

/// A move as the verdicts give it: "+3.1 %" against A, or in points for a metric that is 0 in
/// A (an error rate from none).
pub(crate) fn move_text(delta: f64, delta_pct: Option<f64>) -> String {
    match delta_pct {
        Some(p) => pct_text(p * 100.0),
        None => format!("{} pp", pct_text(delta * 100.0).trim_end_matches(" %")),
    }
}

/// One metric's verdict: which way B moved, with the p-value when a test was made; or that the
/// runs did not resolve it, with the move and the p-value.
pub(crate) fn wording(
    metric: &str,
    better: bool,
    worse: bool,
    (na, nb): (usize, usize),
    delta: f64,
    delta_pct: Option<f64>,
    p_value: Option<f64>,
) -> String {
    let (good, bad) = match metric {
        "rps" => ("B has higher throughput", "B has lower throughput"),
        "error_rate" => ("B has fewer errors", "B has more errors"),
        _ => ("B is faster", "B is slower"),
    };
    let moved = if better {
        good
    } else if worse {
        bad
    } else {
        let p = p_value
            .map(|p| format!(", {}", p_text(p)))
            .unwrap_or_default();
        return format!(
            "not resolved {} ({}{p})",
            runs_text(na, nb, "B"),
            move_text(delta, delta_pct)
        );
    };
    match p_value {
        Some(p) => format!("{moved} ({})", p_text(p)),
        None => moved.into(),
    }
}

/// An entry no key metric of which moved: "not resolved with 4 runs", with the key metric
/// that came closest — the smallest p-value where a test was made, else the largest move —
/// so the reader sees how far from resolved it was ("(p99 +3.1 %, p = 0.21)").
pub(crate) fn unresolved(metrics: &[MetricComparison], na: usize, nb: usize) -> String {
    let keys = metrics
        .iter()
        .filter(|m| key_metric(m) && m.delta.is_finite());
    let closest = if na >= 2 && nb >= 2 {
        keys.filter(|m| m.p_value.is_some_and(|p| p.is_finite()))
            .min_by(|x, y| x.p_value.unwrap().total_cmp(&y.p_value.unwrap()))
    } else {
        keys.filter(|m| m.delta_pct.is_some_and(|p| p.is_finite()))
            // The first of equal moves, in METRICS order (throughput first).
            .min_by(|x, y| {
                let size = |m: &MetricComparison| m.delta_pct.unwrap_or(0.0).abs();
                size(y).total_cmp(&size(x))
            })
    };
    let runs = runs_text(na, nb, "B");
    match closest {
        Some(m) => {
            let name = m.metric.strip_suffix("_ms").unwrap_or(&m.metric);
            let p = m
                .p_value
                .map(|p| format!(", {}", p_text(p)))
                .unwrap_or_default();
            format!(
                "not resolved {runs} ({name} {}{p})",
                move_text(m.delta, m.delta_pct)
            )
        }
        None => format!("not resolved {runs}"),
    }
}
