//! The bottlenecks the monitor saw, worded for the page: a watched service that kept a core
//! busy (a single-threaded server, or one thread of it, is then the limit), perfbase itself
//! busy enough that the load generator may have been the limit, the machine's cores all but
//! used up, and the limits the run recorded in its noise section.

use super::markup::{Block, Section};
use super::PageInput;
use perfbase_core::monitor::{PhaseStats, TargetReport};

/// A phase at or above this share of a core (of all cores, for the machine) is at the limit.
const BUSY: f64 = 90.0;

/// Phase names with their repetitions folded, at most [`LISTED`] of them:
/// `PostgreSQL operations scan (9 runs); pgbench TPC-B c=4 (runs #1, #3); … and 4 more`.
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
    let more = groups.len().saturating_sub(LISTED);
    let mut parts: Vec<String> = groups
        .into_iter()
        .take(LISTED)
        .map(|(b, reps)| match reps.len() {
            0 => b,
            1 => format!("{b} (run {})", reps[0]),
            // A few runs by number; more by count, which is what a reader takes in.
            2..=3 => format!("{b} (runs {})", reps.join(", ")),
            n => format!("{b} ({n} runs)"),
        })
        .collect();
    if more > 0 {
        parts.push(format!("and {more} more"));
    }
    parts.join("; ")
}

/// The most steps a line names: a bottleneck is read, not searched.
const LISTED: usize = 6;

fn peak(phases: &[&PhaseStats]) -> f64 {
    phases.iter().map(|p| p.cpu_pct.mean).fold(0.0, f64::max)
}

/// The bottleneck lines, in order: services, perfbase, the machine, the recorded limits.
pub(super) fn lines(input: &PageInput<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let r = input.result;
    if let Some(m) = &r.monitor {
        for t in m.targets.iter().filter(|t| t.kind != "self") {
            let busy: Vec<&PhaseStats> = t.loaded().filter(|p| p.cpu_pct.mean >= BUSY).collect();
            if !busy.is_empty() {
                // A phase shorter than a few samples can read past the machine's cores (a
                // process tree's ticks land in one sample): no more than the machine has.
                let most = f64::from(m.cores.max(1)) * 100.0;
                out.push(service_line(&t.label, peak(&busy).min(most), &busy));
            }
        }
        // perfbase's own threads: the limit is its worker count, or every core it had.
        let cap = f64::from(m.cores.max(1)).min(r.config.threads.max(1) as f64) * BUSY;
        for t in m.targets.iter().filter(|t| t.kind == "self") {
            let busy: Vec<&PhaseStats> = t.loaded().filter(|p| p.cpu_pct.mean >= cap).collect();
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

/// A watched service at a core's limit: one core held (a single-threaded part of it is then
/// the limit), or several (the service is CPU-bound, and shares the machine with the load).
fn service_line(label: &str, peak: f64, busy: &[&PhaseStats]) -> String {
    let at = folded(busy.iter().copied());
    if peak < 150.0 {
        format!(
            "{label} kept a core busy (up to {peak:.0} % of one core, mean over the phase) in \
             {at}: a single-threaded part of it is the likely limit there"
        )
    } else {
        format!(
            "{label} was CPU-bound (up to {:.1} cores, mean over the phase) in {at}: on this \
             machine it competes with the load generator for the cores",
            peak / 100.0
        )
    }
}

/// The phases where all watched processes together used 90 % of the machine's cores or more.
fn machine(targets: &[TargetReport]) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for t in targets {
        for p in t.loaded() {
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
    let busy: Vec<&PhaseStats> = full
        .iter()
        .filter_map(|(n, _)| {
            targets
                .iter()
                .flat_map(|t| &t.phases)
                .find(|p| p.name == *n)
        })
        .collect();
    // Samples of short phases can add up past 100 %: the line says "at least 90 %".
    Some(format!(
        "the machine's cores were all but used up (90 % or more of all cores, services and \
         perfbase together) in {} phase{}: {}",
        full.len(),
        if full.len() == 1 { "" } else { "s" },
        folded(busy.into_iter())
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
