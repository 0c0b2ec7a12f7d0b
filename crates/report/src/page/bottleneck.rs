//! The bottlenecks the monitor saw, worded for the page: a watched service that kept a core
//! busy (a single-threaded server, or one thread of it, is then the limit), perfbase itself
//! busy enough that the load generator may have been the limit, the machine's cores all but
//! used up, and the limits the run recorded in its noise section.

use super::markup::{Block, Section};
use super::PageInput;
use perfbase_core::monitor::{PhaseStats, TargetReport};

/// A phase at or above this share of a core (of all cores, for the machine) is at the limit.
const BUSY: f64 = 90.0;

/// Phases a target was loaded in: not the idle baseline, not a cool-down.
fn loaded(t: &TargetReport) -> impl Iterator<Item = &PhaseStats> {
    t.phases
        .iter()
        .filter(|p| p.name != "idle" && !p.name.ends_with("cool-down"))
}

/// Phase names with their repetitions folded: `A /health c=1 (runs #1, #3)`.
fn folded<'p>(phases: impl Iterator<Item = &'p PhaseStats>) -> String {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for p in phases {
        let (base, rep) = match p.name.rsplit_once(" #") {
            Some((b, r)) if r.chars().all(|c| c.is_ascii_digit()) => (b.to_string(), Some(r)),
            _ => (p.name.clone(), None),
        };
        let at = match groups.iter().position(|(b, _)| *b == base) {
            Some(i) => i,
            None => {
                groups.push((base, Vec::new()));
                groups.len() - 1
            }
        };
        if let Some(r) = rep {
            groups[at].1.push(format!("#{r}"));
        }
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(b, reps)| match reps.len() {
            0 => b,
            1 => format!("{b} (run {})", reps[0]),
            _ => format!("{b} (runs {})", reps.join(", ")),
        })
        .collect();
    parts.join("; ")
}

fn peak(phases: &[&PhaseStats]) -> f64 {
    phases.iter().map(|p| p.cpu_pct.mean).fold(0.0, f64::max)
}

/// The bottleneck lines, in order: services, perfbase, the machine, the recorded limits.
pub(super) fn lines(input: &PageInput<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let r = input.result;
    if let Some(m) = &r.monitor {
        for t in m.targets.iter().filter(|t| t.kind != "self") {
            let busy: Vec<&PhaseStats> = loaded(t).filter(|p| p.cpu_pct.mean >= BUSY).collect();
            if !busy.is_empty() {
                out.push(format!(
                    "{} kept a core busy (up to {:.0} % of one core, mean over the phase) in {}: \
                     a single-threaded part of it is the likely limit there",
                    t.label,
                    peak(&busy),
                    folded(busy.iter().copied())
                ));
            }
        }
        // perfbase's own threads: the limit is its worker count, or every core it had.
        let cap = f64::from(m.cores.max(1)).min(r.config.threads.max(1) as f64) * BUSY;
        for t in m.targets.iter().filter(|t| t.kind == "self") {
            let busy: Vec<&PhaseStats> = loaded(t).filter(|p| p.cpu_pct.mean >= cap).collect();
            if !busy.is_empty() {
                out.push(format!(
                    "perfbase itself was the limit (up to {:.0} % of one core over {} worker \
                     thread{}) in {}: those figures understate what the service can do",
                    peak(&busy),
                    r.config.threads,
                    if r.config.threads == 1 { "" } else { "s" },
                    folded(busy.iter().copied())
                ));
            } else if m.generator_saturated {
                out.push(
                    "perfbase itself was busy for over 90 % of its cores in some phase: the load \
                     generator may have been the limit there"
                        .into(),
                );
            }
        }
        if let Some(line) = machine(&m.targets) {
            out.push(line);
        }
    }
    if let Some(n) = &input.study.noise {
        out.extend(n.limits.iter().cloned());
    }
    out
}

/// The phases where all watched processes together used 90 % of the machine's cores or more.
fn machine(targets: &[TargetReport]) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for t in targets {
        for p in loaded(t) {
            if !names.contains(&p.name.as_str()) {
                names.push(&p.name);
            }
        }
    }
    let full: Vec<(&str, f64)> = names
        .into_iter()
        .map(|n| {
            let sum: f64 = targets
                .iter()
                .filter_map(|t| t.phases.iter().find(|p| p.name == n))
                .map(|p| p.cpu_pct_machine.mean)
                .filter(|v| v.is_finite())
                .sum();
            (n, sum)
        })
        .filter(|(_, sum)| *sum >= BUSY)
        .collect();
    if full.is_empty() {
        return None;
    }
    let phases: Vec<&str> = full.iter().map(|(n, _)| *n).collect();
    Some(format!(
        "the machine's cores were all but used up ({:.0} % of all cores at most, services and \
         perfbase together) in {} phase{}: {}",
        full.iter().map(|(_, s)| *s).fold(0.0, f64::max),
        phases.len(),
        if phases.len() == 1 { "" } else { "s" },
        phases.join(", ")
    ))
}

/// The section, or none when nothing was at a limit.
pub(super) fn section(input: &PageInput<'_>) -> Option<Section> {
    let lines = lines(input);
    if input.result.monitor.is_none() && lines.is_empty() {
        return None;
    }
    let blocks = if lines.is_empty() {
        vec![Block::Text(
            "No watched service, nor perfbase, nor the machine reached a core's limit in any \
             phase (90 % of a core, mean over the phase)."
                .into(),
        )]
    } else {
        vec![Block::List(lines)]
    };
    Some(Section {
        title: "Bottlenecks".into(),
        blocks,
    })
}
