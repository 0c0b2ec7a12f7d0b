//! The monitor's tables, one row per target × phase, drawn by the table model: plain text for
//! the terminal, Markdown for the report. Here rather than in perfbase-monitor, which samples
//! and keeps its data types only, so every table perfbase prints goes through `crate::table`.

use crate::table::text::Layout;
use crate::table::{Cell, Table};
use perfbase_monitor::{MonitorReport, PhaseStats, Stat, TargetReport};

const MIB: f64 = 1024.0 * 1024.0;

fn fmt_cpu(s: &Stat) -> String {
    format!("{:.1} ({:.1}–{:.1})", s.mean, s.min, s.max)
}

fn fmt_mib(v: f64) -> String {
    format!("{:.1}", v / MIB)
}

/// A count's mean: `7`, or `7.5` when it moved during the phase.
fn fmt_count(v: f64) -> String {
    if (v - v.round()).abs() < 0.05 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn header(with_memory_current: bool) -> Vec<String> {
    let mut h: Vec<String> = [
        "target",
        "phase",
        "samples",
        "CPU % mean (min–max)",
        "RSS MiB mean (max)",
        "VSZ MiB",
        "threads",
        "fds",
        "ctx sw/s",
        "procs",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if with_memory_current {
        h.push("cgroup mem MiB mean (max)".to_string());
    }
    h
}

fn target_label(t: &TargetReport) -> String {
    match t.exited_at_s {
        Some(at) => format!("{} (exited at {at:.1} s)", t.label),
        None => t.label.clone(),
    }
}

fn phase_cells(p: &PhaseStats, with_memory_current: bool) -> Vec<String> {
    let mut cells = vec![
        p.name.clone(),
        p.samples.to_string(),
        fmt_cpu(&p.cpu_pct),
        format!(
            "{} ({})",
            fmt_mib(p.rss_bytes.mean),
            fmt_mib(p.rss_bytes.max)
        ),
        fmt_mib(p.vsz_bytes.mean),
        fmt_count(p.threads.mean),
        p.fds.map_or_else(|| "-".to_string(), |f| fmt_count(f.mean)),
        format!("{:.0}", p.ctx_switches_per_s.mean),
        fmt_count(p.processes.mean),
    ];
    if with_memory_current {
        cells.push(p.memory_current_bytes.map_or_else(
            || "-".to_string(),
            |m| format!("{} ({})", fmt_mib(m.mean), fmt_mib(m.max)),
        ));
    }
    cells
}

/// The table (target label on each target's first row only unless `repeat_label`, which a
/// Markdown reader sorting or skimming rows needs).
fn table(report: &MonitorReport, repeat_label: bool) -> Table {
    let with_mem = report
        .targets
        .iter()
        .flat_map(|t| &t.phases)
        .any(|p| p.memory_current_bytes.is_some());
    let head = header(with_mem);
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for t in &report.targets {
        let label = target_label(t);
        if t.phases.is_empty() {
            let mut row = vec![label, "-".to_string(), "0".to_string()];
            row.resize(head.len(), "-".to_string());
            rows.push(row.into_iter().map(Cell::from).collect());
            continue;
        }
        for (i, p) in t.phases.iter().enumerate() {
            let first = if i == 0 || repeat_label {
                label.clone()
            } else {
                String::new()
            };
            let mut row = vec![first];
            row.extend(phase_cells(p, with_mem));
            rows.push(row.into_iter().map(Cell::from).collect());
        }
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    // Text columns (target, phase) left, figures right.
    Table::new(&head, rows, 2)
}

fn title(report: &MonitorReport) -> String {
    format!(
        "Resources: CPU % of one core ({} core{} available), sampled every {} s",
        report.cores,
        if report.cores == 1 { "" } else { "s" },
        trim_float(report.interval_s)
    )
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A plain-text table: one row per target × phase with CPU % (mean, min–max), RSS MiB (mean,
/// max), VSZ MiB, threads, fds, context switches per second and process count; an exited
/// target is marked "exited at 3.2 s"; warnings follow the table.
pub fn render_table(report: &MonitorReport) -> String {
    let table = table(report, false);
    let mut out = title(report);
    out.push('\n');
    table.text(&Layout::fitted(table.head.len()), false, &mut out);
    for w in &report.warnings {
        out.push_str("warning: ");
        out.push_str(w);
        out.push('\n');
    }
    out
}

/// The same table in Markdown, warnings as a list below it.
pub fn render_markdown(report: &MonitorReport) -> String {
    let mut out = format!("{}\n\n", title(report));
    table(report, true).markdown(&mut out);
    if !report.warnings.is_empty() {
        out.push('\n');
        for w in &report.warnings {
            out.push_str(&format!("- **warning:** {}\n", w.replace('|', "\\|")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_monitor::{PhaseStats, Stat, TargetReport};

    fn st(min: f64, mean: f64, max: f64) -> Stat {
        Stat { min, mean, max }
    }

    fn phase(name: &str, cpu: f64, mem: Option<Stat>) -> PhaseStats {
        PhaseStats {
            name: name.to_string(),
            samples: 5,
            cpu_pct: st(cpu - 1.0, cpu, cpu + 1.0),
            cpu_pct_machine: st(0.0, cpu / 2.0, 0.0),
            rss_bytes: st(245.0 * MIB, 245.0 * MIB, 250.0 * MIB),
            vsz_bytes: st(420.0 * MIB, 420.0 * MIB, 420.0 * MIB),
            threads: st(7.0, 7.0, 7.0),
            fds: Some(st(10.0, 12.5, 15.0)),
            ctx_switches_per_s: st(1.0, 35.4, 60.0),
            memory_current_bytes: mem,
            processes: st(6.0, 6.0, 6.0),
        }
    }

    fn report() -> MonitorReport {
        MonitorReport {
            interval_s: 1.0,
            cores: 2,
            targets: vec![
                TargetReport {
                    label: "name:postgres".into(),
                    kind: "process".into(),
                    pids: vec![10],
                    exited_at_s: Some(3.24),
                    phases: vec![phase("idle", 1.5, None), phase("measure", 20.0, None)],
                    timeline: vec![],
                },
                TargetReport {
                    label: "cmd:a|b".into(),
                    kind: "cgroup".into(),
                    pids: vec![],
                    exited_at_s: None,
                    phases: vec![phase("idle", 0.2, Some(st(MIB, 2.0 * MIB, 3.0 * MIB)))],
                    timeline: vec![],
                },
                TargetReport {
                    label: "perfbase (self)".into(),
                    kind: "self".into(),
                    pids: vec![1],
                    exited_at_s: None,
                    phases: vec![],
                    timeline: vec![],
                },
            ],
            generator_saturated: false,
            warnings: vec!["something to know".into()],
        }
    }

    #[test]
    fn table() {
        let t = render_table(&report());
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("2 cores") && lines[0].contains("every 1 s"));
        assert!(lines[1].starts_with("target") && lines[1].contains("CPU % mean (min–max)"));
        assert!(lines[2].starts_with("name:postgres (exited at 3.2 s)"));
        assert!(lines[2].contains("1.5 (0.5–2.5)"));
        assert!(lines[2].contains("245.0 (250.0)"));
        assert!(lines[2].contains("420.0") && lines[2].contains("12.5"));
        assert!(lines[3].trim_start().starts_with("measure"));
        assert!(lines[4].contains("2.0 (3.0)"), "{t}");
        assert!(lines[5].starts_with("perfbase (self)"));
        assert_eq!(lines[6], "warning: something to know");
        // Columns line up: every row as wide as the header.
        let w = lines[1].chars().count();
        assert!(lines[2..5].iter().all(|l| l.chars().count() == w), "{t}");
    }

    #[test]
    fn markdown() {
        let m = render_markdown(&report());
        assert!(m.contains("| target | phase | samples | CPU % mean (min–max) |"));
        assert!(m.contains("|---|---|---:|"));
        assert!(m.contains("| name:postgres (exited at 3.2 s) | measure | 5 | 20.0 (19.0–21.0) |"));
        assert!(m.contains("| cmd:a\\|b | idle |"));
        assert!(m.contains("- **warning:** something to know"));
        let rows = m.lines().filter(|l| l.starts_with("| ")).count();
        assert_eq!(rows, 1 + 4);
    }

    /// The exact text, pinned from the renderers as they stood before the table model drew it.
    #[test]
    fn pinned_text() {
        let table = concat!(
            "Resources: CPU % of one core (2 cores available), sampled every 1 s\n",
            "target                           phase    samples  CPU % mean (min–max)  RSS MiB mean (max)  VSZ MiB  threads   fds  ctx sw/s  procs  cgroup mem MiB mean (max)\n",
            "name:postgres (exited at 3.2 s)  idle           5         1.5 (0.5–2.5)       245.0 (250.0)    420.0        7  12.5        35      6                          -\n",
            "                                 measure        5      20.0 (19.0–21.0)       245.0 (250.0)    420.0        7  12.5        35      6                          -\n",
            "cmd:a|b                          idle           5        0.2 (-0.8–1.2)       245.0 (250.0)    420.0        7  12.5        35      6                  2.0 (3.0)\n",
            "perfbase (self)                  -              0                     -                   -        -        -     -         -      -                          -\n",
            "warning: something to know\n",
        );
        assert_eq!(render_table(&report()), table);
        let markdown = concat!(
            "Resources: CPU % of one core (2 cores available), sampled every 1 s\n",
            "\n",
            "| target | phase | samples | CPU % mean (min–max) | RSS MiB mean (max) | VSZ MiB | threads | fds | ctx sw/s | procs | cgroup mem MiB mean (max) |\n",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            "| name:postgres (exited at 3.2 s) | idle | 5 | 1.5 (0.5–2.5) | 245.0 (250.0) | 420.0 | 7 | 12.5 | 35 | 6 | - |\n",
            "| name:postgres (exited at 3.2 s) | measure | 5 | 20.0 (19.0–21.0) | 245.0 (250.0) | 420.0 | 7 | 12.5 | 35 | 6 | - |\n",
            "| cmd:a\\|b | idle | 5 | 0.2 (-0.8–1.2) | 245.0 (250.0) | 420.0 | 7 | 12.5 | 35 | 6 | 2.0 (3.0) |\n",
            "| perfbase (self) | - | 0 | - | - | - | - | - | - | - | - |\n",
            "\n",
            "- **warning:** something to know\n",
        );
        assert_eq!(render_markdown(&report()), markdown);
    }
}
