//! Observations worded from the figures, as a person writing the page would put them: how far
//! apart a ranking's ends are, where p99 doubles on a concurrency ladder, where a ladder
//! saturates, the fastest and slowest operation of a suite, failures, run-to-run spread, and
//! what each service cost idle and under load.

use super::PageInput;
use crate::study_text::{ms, offered};
use crate::{bytes, thousands_f};
use perfbase_analysis::comparison::RankRow;
use perfbase_analysis::study::{Ranking, ScenarioStudy};
use perfbase_monitor::TargetReport;

/// Every observation, in page order; one line saying so when none stands out.
pub(super) fn observations(input: &PageInput<'_>) -> Vec<String> {
    let mut out: Vec<String> = input.study.rankings.iter().filter_map(ranking).collect();
    for s in &input.study.scenarios {
        scenario(&mut out, s);
    }
    for c in input.study.checks.iter().filter(|c| !c.passed) {
        out.push(format!(
            "check {} failed: the counts differ from those expected",
            c.name
        ));
    }
    if let Some(m) = &input.result.monitor {
        out.extend(
            m.targets
                .iter()
                .filter(|t| t.kind != "self")
                .filter_map(cost),
        );
    }
    if out.is_empty() {
        out.push("No observation stands out: every scenario ran without failures.".into());
    }
    out
}

/// How far apart a ranking's first and last entries are; nothing for fewer than two, or
/// when the figure to divide by is not positive.
fn ranking(k: &Ranking) -> Option<String> {
    let (first, last) = (k.rows.first()?, k.rows.last()?);
    if k.rows.len() < 2 {
        return None;
    }
    if k.by == "throughput" {
        throughput_gap(k, first, last)
    } else {
        latency_gap(k, first, last)
    }
}

fn throughput_gap(k: &Ranking, first: &RankRow, last: &RankRow) -> Option<String> {
    // Nothing served (or no figure) at the far end: no ratio to speak of.
    let served = last.rps > 0.0;
    let ratio = first.rps / last.rps;
    served.then(|| {
        if close(ratio) {
            format!(
                "{}: {} and {} serve about the same throughput ({}/s and {}/s)",
                k.name,
                first.label,
                last.label,
                thousands_f(first.rps),
                thousands_f(last.rps)
            )
        } else {
            format!(
                "{}: {} serves {ratio:.1}× the throughput of {} ({}/s vs {}/s)",
                k.name,
                first.label,
                last.label,
                thousands_f(first.rps),
                thousands_f(last.rps)
            )
        }
    })
}

/// The gap in the latency the ranking is by: p50, p99 or (otherwise) the mean.
fn latency_gap(k: &Ranking, first: &RankRow, last: &RankRow) -> Option<String> {
    let pick = |r: &RankRow| match k.by.as_str() {
        "p50" => r.p50_ms,
        "p99" => r.p99_ms,
        _ => r.mean_ms,
    };
    let measured = pick(first) > 0.0;
    let ratio = pick(last) / pick(first);
    measured.then(|| {
        if close(ratio) {
            format!(
                "{}: {} and {} have about the same {} latency ({} ms and {} ms)",
                k.name,
                first.label,
                last.label,
                k.by,
                ms(pick(first)),
                ms(pick(last))
            )
        } else {
            format!(
                "{}: {} takes {ratio:.1}× the {} latency of {} ({} ms vs {} ms)",
                k.name,
                last.label,
                k.by,
                first.label,
                ms(pick(last)),
                ms(pick(first))
            )
        }
    })
}

/// What a service cost: its idle CPU and memory against its busiest phase's CPU and its
/// peak memory under load. Nothing without an idle baseline or a phase under load.
fn cost(t: &TargetReport) -> Option<String> {
    let idle = t.phases.iter().find(|p| p.name == "idle")?;
    let busiest = t
        .phases
        .iter()
        .filter(|p| p.name != "idle")
        .max_by(|a, b| a.cpu_pct.mean.total_cmp(&b.cpu_pct.mean))?;
    let rss_max = t
        .phases
        .iter()
        .filter(|p| p.name != "idle")
        .map(|p| p.rss_bytes.max)
        .fold(f64::NAN, f64::max);
    Some(format!(
        "{}: CPU {:.1} % idle, up to {:.1} % of a core in {}; RSS {} idle, {} at most under load",
        t.label,
        idle.cpu_pct.mean,
        busiest.cpu_pct.mean,
        busiest.name,
        bytes(idle.rss_bytes.mean.max(0.0) as u64),
        bytes(rss_max.max(0.0) as u64)
    ))
}

/// Within 5 %: "about the same".
fn close(ratio: f64) -> bool {
    (0.95..=1.05).contains(&ratio)
}

fn scenario(out: &mut Vec<String>, s: &ScenarioStudy) {
    let name = &s.name;
    if s.kind == "concurrency ladder" && s.steps.len() > 1 {
        let base = &s.steps[0];
        match s.steps.iter().find(|r| r.p99_ms >= 2.0 * base.p99_ms) {
            Some(r) => out.push(format!(
                "{name}: p99 doubles at {} ({} ms at {} → {} ms)",
                offered(&r.offered),
                ms(base.p99_ms),
                offered(&base.offered),
                ms(r.p99_ms)
            )),
            None => out.push(format!(
                "{name}: p99 stays within twice that of {} up to {}",
                offered(&base.offered),
                s.steps
                    .last()
                    .map(|r| offered(&r.offered))
                    .unwrap_or_default()
            )),
        }
    }
    if let Some(k) = &s.knee {
        if let Some(b) = k.first_bad {
            out.push(format!(
                "{name}: saturates at {} ({})",
                offered(&s.steps[b].offered),
                k.reason.clone().unwrap_or_default()
            ));
        }
    }
    if s.kind == "suite" && s.steps.len() > 1 {
        let fastest = s
            .steps
            .iter()
            .max_by(|a, b| a.achieved_rps.total_cmp(&b.achieved_rps));
        let slowest = s
            .steps
            .iter()
            .min_by(|a, b| a.achieved_rps.total_cmp(&b.achieved_rps));
        if let (Some(f), Some(w)) = (fastest, slowest) {
            if w.achieved_rps > 0.0 {
                out.push(format!(
                    "{name}: fastest operation {} ({}/s), slowest {} ({}/s): {:.1}× apart",
                    f.name,
                    thousands_f(f.achieved_rps),
                    w.name,
                    thousands_f(w.achieved_rps),
                    f.achieved_rps / w.achieved_rps
                ));
            }
        }
    }
    for r in s.steps.iter().filter(|r| r.success_ratio < 1.0) {
        let at = if s.steps.len() > 1 {
            format!("{name} {}", r.name)
        } else {
            name.clone()
        };
        out.push(format!(
            "{at}: {:.2} % of operations failed",
            (1.0 - r.success_ratio) * 100.0
        ));
    }
    for r in &s.repetition_stats {
        let cv = r.rps.stdev / r.rps.mean;
        if r.runs >= 2 && cv.is_finite() {
            out.push(format!(
                "{name} {}: throughput varied by {:.1} % (coefficient of variation) over {} runs",
                r.step,
                cv * 100.0,
                r.runs
            ));
        }
    }
}
