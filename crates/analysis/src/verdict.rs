//! The words a comparison's verdicts use: how many runs the sides had, how far B moved, and
//! whether the runs resolved it — one wording for run-against-run comparisons (the
//! changelog, `perfbase compare`) and for a plan's A vs B.

use crate::versus::welch::{p_text, pct_text};

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
