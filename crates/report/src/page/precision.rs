//! The "±" column: how precisely a row's repeated runs pin its figures down, said so that a
//! reader cannot take more from it than the runs measured. The share is the wider side of
//! the distribution-free 95 % interval of the median run (`Summary::precision`), worst of the
//! row's key figures (`RepetitionStats::precision`: throughput, mean and p99 latency). Those
//! intervals are order statistics of the runs, so a bound never leaves the runs' range; the
//! cell still never states a share that, read as symmetric, would reach below zero.

use perfbase_core::study::{RepetitionStats, ScenarioStudy, MIN_RUNS_FOR_INTERVAL};

/// What a row's ± cell says, and whether it is marked for missing the plan's target.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Precision {
    pub text: String,
    /// The share alone ("±18 %"), for sentences.
    pub share: String,
    /// The row had an interval and it was wider than the scenario's `precision` target.
    pub missed: bool,
}

/// The mark of a figure that missed its precision target, in cells and in sentences.
pub(crate) const MISSED: &str = "⚠";

/// A share in percent with the digits it deserves: 3.1, 18.
pub(crate) fn pct(share: f64) -> String {
    let p = share * 100.0;
    if p < 10.0 {
        format!("{p:.1}")
    } else {
        format!("{p:.0}")
    }
}

/// A target as the plan wrote it: 5, 2.5.
pub(crate) fn target_pct(share: f64) -> String {
    perfbase_core::study::fmt_amount(share * 100.0)
}

/// The repetition statistics of `step` in `s`, when it was repeated.
pub(crate) fn stats_of<'s>(s: &'s ScenarioStudy, step: &str) -> Option<&'s RepetitionStats> {
    s.repetition_stats.iter().find(|r| r.step == step)
}

/// The ± cell of one step of `s`.
pub(crate) fn cell(s: &ScenarioStudy, step: &str) -> Precision {
    let runs = stats_of(s, step).map_or(s.repetitions as usize, |r| r.runs);
    let few = || Precision {
        text: format!("— ({runs} run{})", if runs == 1 { "" } else { "s" }),
        share: String::new(),
        missed: false,
    };
    let Some(r) = stats_of(s, step) else {
        return few();
    };
    let Some(share) = r.precision().filter(|_| r.runs >= MIN_RUNS_FOR_INTERVAL) else {
        return few();
    };
    let bare = symmetric_or_sides(r, share);
    let missed = s.precision_target.is_some_and(|t| share > t);
    let text = match s.precision_target {
        Some(t) if missed => format!("{MISSED} {bare} (target {} %)", target_pct(t)),
        _ => bare.clone(),
    };
    Precision {
        text,
        share: bare,
        missed,
    }
}

/// "±3.1 %", or each side of the worst figure's interval when ± would claim more than it
/// has: a share of 100 % or more read both ways reaches below zero, which no run measured.
fn symmetric_or_sides(r: &RepetitionStats, share: f64) -> String {
    if share < 1.0 {
        return format!("±{} %", pct(share));
    }
    // The figure whose interval is widest, told by its two sides.
    let worst = [&r.rps, &r.mean_ms, &r.p99_ms]
        .into_iter()
        .filter(|s| s.precision().is_some())
        .max_by(|a, b| {
            let (pa, pb) = (a.precision().unwrap_or(0.0), b.precision().unwrap_or(0.0));
            pa.total_cmp(&pb)
        });
    match worst {
        Some(s) => {
            let m = s.median.abs();
            format!(
                "−{} % / +{} %",
                pct((s.median - s.ci95.0) / m),
                pct((s.ci95.1 - s.median) / m)
            )
        }
        None => format!("±{} %", pct(share)),
    }
}

/// How many of the rows with repetition statistics met their scenario's target, out of how
/// many had one; None when no scenario set a target.
pub(crate) fn met_share<'s>(
    scenarios: impl Iterator<Item = &'s ScenarioStudy>,
) -> Option<(usize, usize, f64)> {
    let (mut met, mut all, mut target) = (0, 0, None::<f64>);
    for s in scenarios {
        let Some(t) = s.precision_target else {
            continue;
        };
        target = Some(target.map_or(t, |was: f64| was.max(t)));
        for row in &s.steps {
            all += 1;
            if stats_of(s, &row.name).is_some_and(|r| r.met(t)) {
                met += 1;
            }
        }
    }
    target.map(|t| (met, all, t))
}

/// The mark a sentence carries for a figure of `s`'s `step` that missed its target: "" when
/// it met it (or none was set), else " (⚠ ±18 %, target 5 %)".
pub(crate) fn sentence_mark(s: &ScenarioStudy, step: &str) -> String {
    let c = cell(s, step);
    match s.precision_target {
        Some(t) if c.missed => format!(" ({MISSED} {}, target {} %)", c.share, target_pct(t)),
        _ => String::new(),
    }
}
