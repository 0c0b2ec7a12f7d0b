//! The HTML report's per-scenario sections: a scenario's tables and charts, its sweep,
//! the phases and the resources monitor.

use super::*;
use perfbase_monitor::PhaseStats;

pub(super) const BOX_CAPTION: &str =
    "One box per repetition, from that run's latency histogram: whiskers \
     at min and max, the box from p25 to p75, the bar at the median. Boxes that sit at \
     different heights mean the repetitions disagree.";

pub(super) fn scenario_section(
    out: &mut String,
    study: &Study,
    s: &ScenarioStudy,
    boxplots: &[(String, BoxPlot)],
    (endpoints, journeys): (
        &[(String, Vec<Endpoint>)],
        &[crate::journey_tables::JourneyRow],
    ),
    h_sec: &str,
    h_sub: &str,
) {
    let _ = writeln!(out, "<{h_sec}>Scenario {}</{h_sec}>", escape(&s.name));
    let _ = writeln!(
        out,
        "<p>{} on <code>{}</code> (workload <code>{}</code>){}. {}</p>",
        escape(&s.kind),
        escape(&s.target),
        escape(&s.workload),
        if s.repetitions > 1 {
            format!(", {} repetitions (rows merge them)", s.repetitions)
        } else {
            String::new()
        },
        verdict_span(s.passed)
    );
    scenario_charts(out, study, s, boxplots);
    if !s.steps.is_empty() {
        crate::study_tables::sweep(s).html(out);
    }
    if !endpoints.is_empty() {
        crate::run_tables::endpoints(true, endpoints).html(out);
    }
    journey_tables(out, journeys, true);
    scenario_findings(out, study, s);
    if !s.repetition_stats.is_empty() {
        let _ = writeln!(
            out,
            "<{h_sub}>Repetitions</{h_sub}>\n<p class=\"meta\">Each statistic over the {} runs: mean, \
             sample variance, standard deviation, 95 % confidence interval of the mean (Student t), \
             min and max.</p>",
            s.repetitions
        );
        crate::study_tables::repetitions(s).html(out);
    }
    if !s.thresholds.is_empty() {
        let _ = writeln!(out, "<{h_sub}>Thresholds</{h_sub}>");
        crate::study_tables::thresholds(s).html(out);
    }
}

/// A ladder's two charts (latency and throughput against the offered load), then the
/// scenario's box plot when it was repeated.
fn scenario_charts(
    out: &mut String,
    study: &Study,
    s: &ScenarioStudy,
    boxplots: &[(String, BoxPlot)],
) {
    if let Some((a, b)) = ladder_charts(s, study) {
        figure(
            out,
            &a,
            "Latency percentiles of each step (repetitions merged) against the load it \
             offered. The knee is the first step where the service stopped keeping up.",
        );
        figure(
            out,
            &b,
            "Throughput achieved at each step against the load offered.",
        );
    }
    if let Some((_, b)) = boxplots.iter().find(|(name, _)| *name == s.name) {
        figure(out, &b.render(), BOX_CAPTION);
    }
}

/// The scenario's findings; where a knee was found, the rule that found it closes the list.
fn scenario_findings(out: &mut String, study: &Study, s: &ScenarioStudy) {
    let list = findings(s, study);
    if list.is_empty() {
        return;
    }
    out.push_str("<ul class=\"findings\">\n");
    for f in list {
        let _ = writeln!(out, "<li>{}</li>", escape(&f));
    }
    if s.knee.as_ref().is_some_and(|k| k.first_bad.is_some()) {
        let rule = &study.knee_rule;
        let _ = writeln!(
            out,
            "<li class=\"meta\">knee rule: a step is bad when achieved &lt; {:.0} % of the offered rate, \
             or a concurrency step gains &lt; {:.0} % throughput, or p99 &gt; {} × the first step's p99, \
             or more than {:.1} % of requests fail</li>",
            rule.min_throughput_ratio * 100.0,
            rule.min_gain * 100.0,
            rule.p99_factor,
            rule.max_error_ratio * 100.0
        );
    }
    out.push_str("</ul>\n");
}

pub(super) fn monitor_section(out: &mut String, m: &MonitorReport, h_part: &str) {
    for w in &m.warnings {
        let _ = writeln!(out, "<p class=\"banner warn\">{}</p>", escape(w));
    }
    monitor_charts(out, m);
    let _ = writeln!(
        out,
        "<{h_part}>Idle vs under load</{h_part}>\n<p class=\"meta\">Per target and phase: mean (min–max) over \
         the samples, every {} s; perfbase had {} cores.</p>",
        m.interval_s, m.cores
    );
    monitor_table(out, m);
}

/// CPU and memory of every target over time, each chart left out when nothing was sampled.
fn monitor_charts(out: &mut String, m: &MonitorReport) {
    let cpu = monitor_chart(
        m,
        "monitor",
        "CPU of the monitored targets",
        "CPU %, 100 = one core",
        |s| s.cpu_pct,
    );
    if let Some(chart) = cpu {
        figure(
            out,
            &chart,
            "CPU of each target's whole process tree per sampling interval; 100 % is one core. \
             The shaded band is the idle baseline taken before the load started; dashed lines \
             mark phase changes.",
        );
    }
    let memory = monitor_chart(
        m,
        "monitor-memory",
        "Memory of the monitored targets",
        "RSS, MiB",
        |s| s.rss_bytes as f64 / (1024.0 * 1024.0),
    );
    if let Some(chart) = memory {
        figure(
            out,
            &chart,
            "Resident memory of each target's whole process tree at each sample, in MiB; the \
             shaded band is the idle baseline, dashed lines mark phase changes.",
        );
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// A row per target and phase; the cgroup memory column only when some target has it.
fn monitor_table(out: &mut String, m: &MonitorReport) {
    let with_mem = m
        .targets
        .iter()
        .any(|t| t.phases.iter().any(|p| p.memory_current_bytes.is_some()));
    let _ = write!(
        out,
        "<table>\n<tr><th class=\"l\">target</th><th class=\"l\">phase</th><th>samples</th>\
         <th>CPU % of a core</th><th>CPU % of machine</th><th>RSS MiB (max)</th><th>VSZ MiB</th>\
         <th>threads</th><th>fds</th><th>ctx sw/s</th><th>procs</th>{}</tr>\n",
        if with_mem {
            "<th>cgroup memory MiB (max)</th>"
        } else {
            ""
        }
    );
    for t in &m.targets {
        let label = match t.exited_at_s {
            Some(at) => format!("{} (exited at {at:.1} s)", t.label),
            None => t.label.clone(),
        };
        for (i, p) in t.phases.iter().enumerate() {
            // The target is named once, on its first phase's row.
            let label = if i == 0 {
                escape(&label)
            } else {
                String::new()
            };
            monitor_row(out, &label, p, with_mem);
        }
    }
    out.push_str("</table>\n");
}

/// One phase of one target: its samples and each metric's mean (with range or peak).
fn monitor_row(out: &mut String, label: &str, p: &PhaseStats, with_mem: bool) {
    let _ = write!(
        out,
        "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1} ({:.1}–{:.1})</td>\
         <td>{:.1}</td><td>{:.1} ({:.1})</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td>",
        if p.kind() == perfbase_core::phase::PhaseKind::Idle {
            " class=\"idle\""
        } else {
            ""
        },
        label,
        escape(&p.name),
        p.samples,
        p.cpu_pct.mean,
        p.cpu_pct.min,
        p.cpu_pct.max,
        p.cpu_pct_machine.mean,
        p.rss_bytes.mean / MIB,
        p.rss_bytes.max / MIB,
        p.vsz_bytes.mean / MIB,
        count(p.threads.mean),
        p.fds.map_or("-".to_string(), |f| count(f.mean)),
        p.ctx_switches_per_s.mean,
        count(p.processes.mean)
    );
    if with_mem {
        let _ = write!(
            out,
            "<td>{}</td>",
            p.memory_current_bytes.map_or("-".to_string(), |s| format!(
                "{:.1} ({:.1})",
                s.mean / MIB,
                s.max / MIB
            ))
        );
    }
    out.push_str("</tr>\n");
}

/// A mean of counts (threads, fds, processes): whole when it is one, else to a tenth.
fn count(v: f64) -> String {
    if (v - v.round()).abs() < 0.05 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A journey's iterations and checks, when the load was one.
pub(super) fn journey_tables(
    out: &mut String,
    rows: &[crate::journey_tables::JourneyRow],
    step_col: bool,
) {
    if let Some(t) = crate::journey_tables::iterations(step_col, rows) {
        t.html(out);
    }
    if let Some(t) = crate::journey_tables::groups(step_col, rows) {
        t.html(out);
    }
    if let Some(t) = crate::journey_tables::checks(step_col, rows) {
        t.html(out);
    }
    if let Some(t) = crate::journey_tables::metrics(step_col, rows) {
        t.html(out);
    }
}
