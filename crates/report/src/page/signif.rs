//! How the page words a difference between two sides' repeated runs, and when it calls one
//! resolved (perfbase-analysis's verdict, in one place).

use perfbase_core::result::{PhaseResult, RunResult};
use perfbase_core::study::VersusStat;

/// Whether the runs tell the two sides apart, by the analysis's own rule.
pub(crate) fn resolved(stat: &VersusStat) -> bool {
    stat.resolved
}

/// "p < 0.001", "p = 0.043": the analysis's wording, so every report says it alike.
pub(crate) fn p_text(p: f64) -> String {
    perfbase_analysis::versus::welch::p_text(p)
}

/// "5 runs each", "3 and 5 runs".
pub(crate) fn runs_text(a: usize, b: usize) -> String {
    if a == b {
        format!("{a} run{} each", if a == 1 { "" } else { "s" })
    } else {
        format!("{a} and {b} runs")
    }
}

/// "5 runs", "4 and 5 runs": how many runs a side-by-side rests on.
pub(crate) fn runs_phrase(a: usize, b: usize) -> String {
    match (a, b) {
        (1, 1) => "1 run".into(),
        (x, y) if x == y => format!("{x} runs"),
        (x, y) => format!("{x} and {y} runs"),
    }
}

/// The significance of a comparison in parentheses' words: "p < 0.001, 5 runs each", or
/// why there is none.
pub(crate) fn significance(stat: &VersusStat) -> String {
    match stat.p_value {
        Some(p) => format!("{}, {}", p_text(p), runs_text(stat.a.n, stat.b.n)),
        None if stat.a.n < 2 || stat.b.n < 2 => {
            format!("{}: too few to test", runs_text(stat.a.n, stat.b.n))
        }
        None => format!("{}, no spread to test", runs_text(stat.a.n, stat.b.n)),
    }
}

/// One sentence comparing B's mean latency with A's `at` somewhere (" at c=1", or empty).
/// A resolved difference of half again or more is said as a ratio, a smaller one in percent;
/// an unresolved one says so with its figures.
pub(crate) fn sentence(a: &str, b: &str, at: &str, stat: &VersusStat) -> String {
    let (ma, mb) = (stat.a.mean, stat.b.mean);
    let sig = significance(stat);
    if !(ma > 0.0 && mb > 0.0) {
        return format!("{a} vs {b}{at}: no mean latency to compare ({sig})");
    }
    let d = (mb - ma) / ma * 100.0;
    if !resolved(stat) {
        let p = stat
            .p_value
            .map(|p| format!(", {}", p_text(p)))
            .unwrap_or_default();
        let n = runs_phrase(stat.a.n, stat.b.n);
        return format!("{a} vs {b}{at}: not resolved with {n} ({d:+.1} % mean latency{p})");
    }
    let ratio = mb / ma;
    let figures = format!(
        "{} ms vs {} ms",
        crate::study_text::ms(mb),
        crate::study_text::ms(ma)
    );
    if ratio >= 1.5 {
        format!(
            "{b} {} {ratio:.1}× the mean latency of {a}{at} ({figures}; {sig})",
            takes(b)
        )
    } else if ratio <= 1.0 / 1.5 {
        format!(
            "{a} {} {:.1}× the mean latency of {b}{at} ({}; {sig})",
            takes(a),
            1.0 / ratio,
            format_args!(
                "{} ms vs {} ms",
                crate::study_text::ms(ma),
                crate::study_text::ms(mb)
            )
        )
    } else if d > 0.0 {
        format!("{b} is {d:.0} % slower than {a}{at} (mean latency {figures}; {sig})")
    } else {
        format!(
            "{b} is {:.0} % faster than {a}{at} (mean latency {figures}; {sig})",
            -d
        )
    }
}

/// "take" after a plural label ("Persistent messages"), "takes" after a name ("B").
fn takes(label: &str) -> &'static str {
    let plural = label.ends_with('s') && !label.ends_with("ss");
    if plural {
        "take"
    } else {
        "takes"
    }
}

/// Each repetition's (mean, p99, max, min) latency of `scenario`'s step `step`, in
/// repetition order: the per-run figures `versus_step` compares.
pub(crate) fn runs_of(r: &RunResult, scenario: &str, step: u32) -> Vec<[f64; 4]> {
    runs_of_phases(&r.phases, scenario, step)
}

/// [`runs_of`] over a run's phases.
pub(crate) fn runs_of_phases(phases: &[PhaseResult], scenario: &str, step: u32) -> Vec<[f64; 4]> {
    let mut phases: Vec<_> = phases
        .iter()
        .filter(|p| p.scenario.as_deref() == Some(scenario) && p.step.unwrap_or(0) == step)
        .collect();
    phases.sort_by_key(|p| p.repetition.unwrap_or(0));
    phases
        .iter()
        .map(|p| {
            let l = &p.measurement.latency_ms;
            [l.mean, l.p99, l.max, l.min]
        })
        .collect()
}

/// Each repetition's throughput of `scenario`'s step `step`.
pub(crate) fn rps_of(r: &RunResult, scenario: &str, step: u32) -> Vec<f64> {
    r.phases
        .iter()
        .filter(|p| p.scenario.as_deref() == Some(scenario) && p.step.unwrap_or(0) == step)
        .map(|p| p.measurement.rps)
        .collect()
}
