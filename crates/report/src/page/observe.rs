//! Observations worded from the figures, as an engineer writing the page would put them, each
//! comparing like with like and carrying its significance: the pairs the plan declared
//! comparable (`[[versus]]`), the implementations at each API endpoint, how a concurrency
//! ladder scaled from its first step to its last, a suite's fastest and slowest operation,
//! and failures. They are ranked by importance — failures first (always kept), then resolved
//! differences by size, then scaling and spreads, then what the runs could not resolve — and
//! at most [`MAX`] are kept, so the list stays one a reader finishes.

use super::{api, precision, signif, PageInput};
use crate::study_text::{ms, offered};
use crate::thousands_f;
use perfbase_analysis::versus::welch::welch;
use perfbase_core::study::{ScenarioStudy, Versus};

/// The most observations the page lists.
pub(crate) const MAX: usize = 12;

/// One observation and where it ranks.
struct Obs {
    /// 0 failures, 1 resolved differences, 2 scaling and spreads, 3 unresolved differences.
    tier: u8,
    /// Within a tier, larger first (a difference's size in percent, a ratio's logarithm).
    weight: f64,
    text: String,
}

/// The observations, most important first; one line saying so when none stands out.
pub(super) fn observations(input: &PageInput<'_>) -> Vec<String> {
    let mut all = Vec::new();
    failures(input, &mut all);
    for v in &input.study.versus {
        versus(input, v, &mut all);
    }
    api_pairs(input, &mut all);
    for s in &input.study.scenarios {
        ladder(input, s, &mut all);
        suite(input, s, &mut all);
    }
    // Stable: equal ranks keep the order of the plan.
    all.sort_by(|a, b| a.tier.cmp(&b.tier).then(b.weight.total_cmp(&a.weight)));
    let mut out: Vec<String> = all.into_iter().take(MAX).map(|o| o.text).collect();
    if out.is_empty() {
        out.push("No observation stands out: every scenario ran without failures.".into());
    }
    out
}

fn scenario<'a>(input: &'a PageInput<'_>, name: &str) -> Option<&'a ScenarioStudy> {
    input.study.scenarios.iter().find(|s| s.name == name)
}

/// The precision mark of `step` of the scenario named `name`; a single-step scenario's step
/// goes by the scenario's name in a versus.
fn mark(input: &PageInput<'_>, name: &str, step: &str) -> String {
    let Some(s) = scenario(input, name) else {
        return String::new();
    };
    let step = match s.steps.iter().find(|r| r.name == step) {
        Some(r) => r.name.as_str(),
        None if s.steps.len() == 1 => s.steps[0].name.as_str(),
        None => return String::new(),
    };
    precision::sentence_mark(s, step)
}

fn failures(input: &PageInput<'_>, out: &mut Vec<Obs>) {
    for s in &input.study.scenarios {
        for r in s.steps.iter().filter(|r| r.success_ratio < 1.0) {
            let at = if s.steps.len() > 1 {
                format!("{} {}", s.name, r.name)
            } else {
                s.name.clone()
            };
            out.push(Obs {
                tier: 0,
                weight: 1.0 - r.success_ratio,
                text: format!(
                    "{at}: {:.2} % of operations failed",
                    (1.0 - r.success_ratio) * 100.0
                ),
            });
        }
    }
    for c in input.study.checks.iter().filter(|c| !c.passed) {
        out.push(Obs {
            tier: 0,
            weight: f64::INFINITY,
            text: format!(
                "check {} failed: the status counts differ from those expected",
                c.name
            ),
        });
    }
}

/// A versus step's mean latency, A against B.
fn versus(input: &PageInput<'_>, v: &Versus, out: &mut Vec<Obs>) {
    for step in &v.steps {
        let Some(mean) = step.stats.iter().find(|s| s.stat == "mean") else {
            continue;
        };
        // A single step goes by a scenario's own name: nothing to add.
        let at = if step.step == v.a || step.step == v.b || step.step == v.name {
            String::new()
        } else {
            format!(" at {}", step.step)
        };
        let marks = mark(input, &v.a, &step.step) + &mark(input, &v.b, &step.step);
        out.push(difference(&v.a_label, &v.b_label, &at, mean, marks));
    }
}

fn difference(
    a: &str,
    b: &str,
    at: &str,
    mean: &perfbase_core::study::VersusStat,
    marks: String,
) -> Obs {
    let resolved = signif::resolved(mean);
    Obs {
        tier: if resolved { 1 } else { 3 },
        weight: mean.delta_pct.map_or(0.0, f64::abs),
        text: signif::sentence(a, b, at, mean) + &marks,
    }
}

/// The implementations at each endpoint, unless the plan's own versus already compares them.
fn api_pairs(input: &PageInput<'_>, out: &mut Vec<Obs>) {
    for p in api::pairs(input) {
        let declared = input.study.versus.iter().any(|v| {
            (v.a == p.a.scenario && v.b == p.b.scenario)
                || (v.a == p.b.scenario && v.b == p.a.scenario)
        });
        let Some(mean) = p.versus.stats.iter().find(|s| s.stat == "mean") else {
            continue;
        };
        if declared {
            continue;
        }
        let at = format!(" on {} at {}", p.endpoint, p.load);
        let marks = mark(input, &p.a.scenario, "") + &mark(input, &p.b.scenario, "");
        out.push(difference(
            &p.a.implementation,
            &p.b.implementation,
            &at,
            mean,
            marks,
        ));
    }
}

/// The significance of a throughput change between two steps' runs, in words.
fn rps_significance(input: &PageInput<'_>, s: &ScenarioStudy, i: usize, j: usize) -> String {
    let a = signif::rps_of(input.result, &s.name, i as u32);
    let b = signif::rps_of(input.result, &s.name, j as u32);
    // A result whose phases do not name their scenario still knows how often each step ran.
    let n = |v: &[f64], k: usize| {
        if v.is_empty() {
            precision::stats_of(s, &s.steps[k].name).map_or(s.repetitions as usize, |r| r.runs)
        } else {
            v.len()
        }
    };
    let runs = signif::runs_text(n(&a, i), n(&b, j));
    match welch(&a, &b) {
        Some(w) => format!("{}, {runs}", signif::p_text(w.p_value)),
        None => format!("{runs}: too few to test"),
    }
}

/// How a concurrency ladder scaled from its first step to its last, and where it saturated.
fn ladder(input: &PageInput<'_>, s: &ScenarioStudy, out: &mut Vec<Obs>) {
    if s.kind == "rate ladder" {
        if let Some(b) = s.knee.as_ref().and_then(|k| k.first_bad) {
            // Where an open-model ladder stopped keeping up: the same scenario's own steps.
            out.push(Obs {
                tier: 2,
                weight: 0.0,
                text: format!(
                    "{}: saturates at {} ({}){}",
                    s.name,
                    offered(&s.steps[b].offered),
                    s.knee
                        .as_ref()
                        .and_then(|k| k.reason.clone())
                        .unwrap_or_default(),
                    precision::sentence_mark(s, &s.steps[b].name)
                ),
            });
        }
    }
    if s.kind != "concurrency ladder" || s.steps.len() < 2 {
        return;
    }
    let last = s.steps.len() - 1;
    let (first, end) = (&s.steps[0], &s.steps[last]);
    if !(first.achieved_rps > 0.0 && end.achieved_rps > 0.0) {
        return;
    }
    let gain = end.achieved_rps / first.achieved_rps;
    let mut text = format!(
        "{}: from {} to {} throughput {} {:.1}× ({}/s → {}/s; {}) while p99 went from {} ms to {} ms",
        s.name,
        offered(&first.offered),
        offered(&end.offered),
        if gain >= 1.0 { "rose" } else { "fell" },
        if gain >= 1.0 { gain } else { 1.0 / gain },
        thousands_f(first.achieved_rps),
        thousands_f(end.achieved_rps),
        rps_significance(input, s, 0, last),
        ms(first.p99_ms),
        ms(end.p99_ms)
    );
    if let Some(b) = s.knee.as_ref().and_then(|k| k.first_bad) {
        text += &format!("; it saturates at {}", offered(&s.steps[b].offered));
    }
    text += &precision::sentence_mark(s, &first.name);
    text += &precision::sentence_mark(s, &end.name);
    out.push(Obs {
        tier: 2,
        weight: gain.ln().abs(),
        text,
    });
}

/// A suite's fastest and slowest operation by throughput.
fn suite(input: &PageInput<'_>, s: &ScenarioStudy, out: &mut Vec<Obs>) {
    if s.kind != "suite" || s.steps.len() < 2 {
        return;
    }
    let by_rps = |a: &&perfbase_core::study::StepRow, b: &&perfbase_core::study::StepRow| {
        a.achieved_rps.total_cmp(&b.achieved_rps)
    };
    let (Some(fast), Some(slow)) = (s.steps.iter().max_by(by_rps), s.steps.iter().min_by(by_rps))
    else {
        return;
    };
    // A NaN or zero throughput has no ratio.
    if slow.achieved_rps.is_nan() || slow.achieved_rps <= 0.0 || fast.name == slow.name {
        return;
    }
    let index = |name: &str| s.steps.iter().position(|r| r.name == name).unwrap_or(0);
    let ratio = fast.achieved_rps / slow.achieved_rps;
    out.push(Obs {
        tier: 2,
        weight: ratio.ln(),
        text: format!(
            "{}: {} runs {ratio:.1}× the throughput of {} ({}/s vs {}/s, mean {} ms vs {} ms; {}){}{}",
            s.name,
            fast.name,
            slow.name,
            thousands_f(fast.achieved_rps),
            thousands_f(slow.achieved_rps),
            ms(fast.mean_ms),
            ms(slow.mean_ms),
            rps_significance(input, s, index(&fast.name), index(&slow.name)),
            precision::sentence_mark(s, &fast.name),
            precision::sentence_mark(s, &slow.name),
        ),
    });
}
