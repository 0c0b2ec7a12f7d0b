//! What a matrix's figures say, like for like: which member failed its thresholds first and
//! why (the errors by class, the server's own words, the app's CPU), where each member's knee
//! is, and every pair that differs in one label only (driver A against driver B on the same
//! server) compared at their highest common load.

use super::super::signif;
use super::{load_words, rps, target, usage, Matrix, Member, Row};
use crate::study_text::ms;
use crate::thousands;
use perfbase_analysis::versus::versus_step;

pub(super) fn observations(
    input: &super::PageInput<'_>,
    m: &Matrix,
    rows: &[Row<'_>],
) -> Vec<String> {
    let mut out = Vec::new();
    failures(input, m, rows, &mut out);
    ranked(rows, &mut out);
    knees(m, rows, &mut out);
    pairs(input, m, rows, &mut out);
    out
}

fn rows_of<'r, 'a>(rows: &'r [Row<'a>], member: &Member) -> Vec<&'r Row<'a>> {
    rows.iter()
        .filter(|r| r.member.scenario == member.scenario)
        .collect()
}

/// Why a step failed: its errors by class with the most frequent message the server gave,
/// the app's CPU against the machine's cores, and the app's exit if it exited.
fn why(input: &super::PageInput<'_>, row: &Row<'_>) -> String {
    let mut parts = Vec::new();
    let classes = row.error_classes();
    let mut samples: Vec<(String, u64)> = Vec::new();
    for s in row.phases.iter().flat_map(|p| &p.measurement.error_samples) {
        match samples.iter_mut().find(|(m, _)| *m == s.message) {
            Some(m) => m.1 += s.count,
            None => samples.push((s.message.clone(), s.count)),
        }
    }
    if !classes.is_empty() {
        let listed: Vec<String> = classes
            .iter()
            .take(3)
            .map(|(c, n)| format!("{} × {c}", thousands(*n)))
            .collect();
        parts.push(format!("errors {}", listed.join(", ")));
    }
    samples.sort_by_key(|s| std::cmp::Reverse(s.1));
    if let Some((message, _)) = samples.first() {
        let short: String = message.chars().take(90).collect();
        let cut = if short.len() < message.len() {
            "…"
        } else {
            ""
        };
        parts.push(format!("mostly “{short}{cut}”"));
    }
    if let Some((cpu, _)) = usage(input, row) {
        let cores = input.result.monitor.as_ref().map_or(1, |m| m.cores.max(1));
        parts.push(format!(
            "the app at {cpu:.0} % CPU of the machine's {} %",
            cores * 100
        ));
    }
    let exited = row
        .member
        .app
        .as_deref()
        .and_then(|a| target(input, a))
        .and_then(|t| t.exited_at_s);
    if let Some(t) = exited {
        parts.push(format!("its process exited {t:.1} s into the run"));
    }
    parts.join("; ")
}

/// Who failed the thresholds first (by load), why; and who passed every step.
fn failures(input: &super::PageInput<'_>, m: &Matrix, rows: &[Row<'_>], out: &mut Vec<String>) {
    let mut first: Vec<&Row<'_>> = Vec::new();
    let mut passed: Vec<String> = Vec::new();
    for member in &m.members {
        let mine = rows_of(rows, member);
        match mine.iter().find(|r| !r.failed.is_empty()) {
            Some(r) => first.push(r),
            None if mine.iter().any(|r| r.judged) => {
                let top = mine.last().map(|r| r.load()).unwrap_or_default();
                passed.push(format!("{} (up to {top})", member.title()));
            }
            None => {}
        }
    }
    first.sort_by(|a, b| a.step.offered.amount().total_cmp(&b.step.offered.amount()));
    for (i, r) in first.iter().enumerate() {
        let lead = if i == 0 {
            "First to fail its thresholds"
        } else {
            "Failed"
        };
        out.push(format!(
            "{lead}: {} at {} — {}; {}.",
            r.member.title(),
            r.load(),
            r.failed.join("; "),
            why(input, r)
        ));
    }
    if !passed.is_empty() {
        out.push(format!("Passed every step: {}.", passed.join(", ")));
    }
}

/// Every member side by side at the highest load they all ran, by throughput: where the
/// labels share no value (each server with its own drivers) this is the only comparison
/// across them, so it is said as a ranking, not as like for like.
fn ranked(rows: &[Row<'_>], out: &mut Vec<String>) {
    let mut members: Vec<&str> = Vec::new();
    for r in rows {
        if !members.contains(&r.member.scenario.as_str()) {
            members.push(&r.member.scenario);
        }
    }
    if members.len() < 2 {
        return;
    }
    // The highest load every member ran.
    let top = rows
        .iter()
        .map(|r| r.step.offered)
        .filter(|o| {
            members.iter().all(|m| {
                rows.iter()
                    .any(|r| r.member.scenario == *m && r.step.offered == *o)
            })
        })
        .max_by(|a, b| a.amount().total_cmp(&b.amount()));
    let Some(top) = top else {
        return;
    };
    // A suite's operations at that load: ranked on the last one the first member ran there.
    let Some(last) = rows.iter().rev().find(|r| r.step.offered == top) else {
        return;
    };
    let mut at: Vec<&Row<'_>> = rows.iter().filter(|r| r.same_step(last)).collect();
    at.sort_by(|a, b| b.step.achieved_rps.total_cmp(&a.step.achieved_rps));
    let listed: Vec<String> = at
        .iter()
        .map(|r| {
            let failed = if r.failed.is_empty() { "" } else { " (failed)" };
            format!("{} {}{failed}", r.member.title(), rps(r.step.achieved_rps))
        })
        .collect();
    out.push(format!("At {}, by RPS: {}.", last.at(), listed.join(", ")));
}

/// Each member's knee, or the highest load it held without one.
fn knees(m: &Matrix, rows: &[Row<'_>], out: &mut Vec<String>) {
    for member in &m.members {
        let mine = rows_of(rows, member);
        let (Some(first), true) = (mine.first(), mine.len() > 1) else {
            continue;
        };
        // The peak of the steps that passed: a failed step's rate counts its errors too.
        let peak = mine
            .iter()
            .filter(|r| r.failed.is_empty())
            .max_by(|a, b| a.step.achieved_rps.total_cmp(&b.step.achieved_rps));
        let best = match peak {
            Some(p) => format!("peak {} RPS at {}", rps(p.step.achieved_rps), p.load()),
            None => "no step passed its thresholds".into(),
        };
        let s = first.scenario;
        match s.knee.as_ref().and_then(|k| k.first_bad.map(|b| (b, k))) {
            Some((bad, k)) => {
                let good = k
                    .last_good
                    .and_then(|g| s.steps.get(g))
                    .map_or("no step before it".into(), |g| {
                        format!("last good {}", load_words(&g.offered))
                    });
                out.push(format!(
                    "{}: knee at {} ({}); {good}, {best}.",
                    member.title(),
                    s.steps
                        .get(bad)
                        .map_or(String::new(), |r| load_words(&r.offered)),
                    k.reason.as_deref().unwrap_or("past its limits")
                ));
            }
            None => out.push(format!(
                "{}: no knee up to {}; {best}.",
                member.title(),
                mine.last().map(|r| r.load()).unwrap_or_default()
            )),
        }
    }
}

/// The one label in which `a` and `b` differ, if exactly one.
fn differs_in_one(a: &Member, b: &Member) -> Option<usize> {
    let diff: Vec<usize> = (0..a.values.len())
        .filter(|&d| a.values[d] != b.values[d])
        .collect();
    (diff.len() == 1).then(|| diff[0])
}

/// Every like-for-like pair at the highest load both ran and passed: throughput, p95 and
/// whether their runs tell the mean latencies apart.
fn pairs(input: &super::PageInput<'_>, m: &Matrix, rows: &[Row<'_>], out: &mut Vec<String>) {
    for (i, a) in m.members.iter().enumerate() {
        for b in &m.members[i + 1..] {
            let Some(d) = differs_in_one(a, b) else {
                continue;
            };
            let (ra, rb) = (rows_of(rows, a), rows_of(rows, b));
            let fixed: Vec<&str> = (0..a.values.len())
                .filter(|&k| k != d)
                .map(|k| a.values[k].as_str())
                .collect();
            let context = if fixed.is_empty() {
                String::new()
            } else {
                format!("{}: ", fixed.join(" · "))
            };
            let (va, vb) = (&a.values[d], &b.values[d]);
            // Compared where both passed: a failed step's figures are its errors' (a dead
            // server refuses fast), not the stack's.
            let common = ra.iter().rev().find_map(|x| {
                rb.iter()
                    .find(|y| y.same_step(x) && x.failed.is_empty() && y.failed.is_empty())
                    .map(|y| (*x, *y))
            });
            let Some((x, y)) = common else {
                if ra.iter().any(|x| rb.iter().any(|y| y.same_step(x))) {
                    out.push(format!(
                        "{context}{va} vs {vb}: no load at which both passed their thresholds."
                    ));
                }
                continue;
            };
            let ratio = if x.step.achieved_rps > 0.0 {
                format!(" ({vb} ×{:.2})", y.step.achieved_rps / x.step.achieved_rps)
            } else {
                String::new()
            };
            let mut text = format!(
                "{context}{va} vs {vb} at {}: {} vs {} RPS{ratio}, p95 {} vs {} ms",
                x.at(),
                rps(x.step.achieved_rps),
                rps(y.step.achieved_rps),
                ms(x.step.p95_ms),
                ms(y.step.p95_ms),
            );
            let runs_a = signif::runs_of(input.result, &a.scenario, x.index as u32);
            let runs_b = signif::runs_of(input.result, &b.scenario, y.index as u32);
            if let Some(v) = versus_step(&x.step.name, vb, runs_a, runs_b) {
                if let Some(mean) = v.stats.iter().find(|s| s.stat == "mean") {
                    text.push_str("; ");
                    text.push_str(&signif::sentence(va, vb, "", mean));
                }
            }
            out.push(format!("{text}."));
        }
    }
}
