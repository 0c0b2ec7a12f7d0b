//! The Markdown report of a plan run: the tables performance pages are made of — sweep tables,
//! knee, operating point and headroom, repetition statistics, thresholds, checks, every phase,
//! and the test environment captured at run time.

use crate::study_text::{availability_line, findings, stream_line};
use crate::table::{md_code, md_text};
use crate::{journey_tables, run_tables, study_tables};
use crate::{thousands, thousands_f};
use perfbase_analysis::study::{ScenarioStudy, Study};
use perfbase_core::result::RunResult;
use std::fmt::Write;

fn verdict(passed: bool) -> &'static str {
    if passed {
        "pass"
    } else {
        "**FAIL**"
    }
}

/// Renders any result: a plan's study report, or a single run's.
pub fn render_any(r: &RunResult) -> String {
    match &r.study {
        Some(study) => render(r, study),
        None => render_run(r),
    }
}

fn environment(out: &mut String, r: &RunResult) {
    let _ = writeln!(out, "## Test environment\n");
    run_tables::environment(&r.env).markdown(out);
    let _ = writeln!(out);
}

fn monitor(out: &mut String, r: &RunResult) {
    if let Some(m) = &r.monitor {
        let _ = writeln!(out, "\n## Resources: CPU and memory, idle and under load\n");
        out.push_str(&crate::monitor::render_markdown(m));
    }
}

/// The report of a single run (`perfbase http`): environment, summary, latency, errors.
pub fn render_run(r: &RunResult) -> String {
    let mut out = String::new();
    let m = &r.measurement;
    let _ = writeln!(out, "# Run: {}\n", md_text(&r.target));
    let _ = writeln!(
        out,
        "Measured {} with perfbase {}: {} model{}{}.\n",
        r.started_at,
        r.tool.version,
        r.model.name(),
        r.config
            .connections
            .map(|c| format!(", {c} connections"))
            .unwrap_or_default(),
        r.config
            .rate
            .map(|v| format!(", {v}/s requested"))
            .unwrap_or_default()
    );
    environment(&mut out, r);
    let _ = writeln!(out, "## Summary\n");
    run_tables::summary(m).markdown(&mut out);
    let _ = writeln!(out, "\n## Latency\n");
    run_tables::latency(m).markdown(&mut out);
    if let Some(t) = &m.http_timing {
        let _ = writeln!(
            out,
            "\nConnections: {} requests opened theirs, {} reused one.",
            thousands(t.new_connections),
            thousands(t.reused_connections)
        );
    }
    if let Some(st) = &m.stream {
        let _ = writeln!(out, "\nStreamed replies: {}.", stream_line(st));
    }
    if let Some(line) = m.availability.as_ref().and_then(availability_line) {
        let _ = writeln!(out, "\nAvailability: {line}.");
    }
    if let Some(o) = &m.open_model {
        let _ = writeln!(
            out,
            "\nRequested {}/s, achieved {}/s; {} late, {} unsent.",
            thousands_f(o.requested_rate),
            thousands_f(o.achieved_rate),
            thousands(o.late),
            thousands(o.unsent)
        );
    }
    if !m.endpoints.is_empty() {
        let _ = writeln!(out, "\n## Per endpoint\n");
        run_tables::endpoints(false, &[(String::new(), &m.endpoints[..])]).markdown(&mut out);
    }
    journey_sections(&mut out, &journey_tables::run_journeys(m), false, "##");
    if !m.error_samples.is_empty() {
        let _ = writeln!(out, "\n## Error samples\n");
        run_tables::error_samples(m).markdown(&mut out);
    }
    monitor(&mut out, r);
    out
}

/// Renders the report of a plan run.
pub fn render(r: &RunResult, study: &Study) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Performance study: {}\n", md_text(&study.plan));
    let _ = writeln!(
        out,
        "Measured {} with perfbase {}{}. Overall: {}.\n",
        r.started_at,
        r.tool.version,
        if study.scale != 1.0 {
            format!(", load scaled by {}", study.scale)
        } else {
            String::new()
        },
        if r.interrupted {
            "interrupted, partial results".to_string()
        } else if study.passed {
            "all thresholds and checks passed".to_string()
        } else {
            "**a threshold or check failed**".to_string()
        }
    );
    summary(&mut out, r, study);
    environment(&mut out, r);
    let _ = writeln!(out, "## Findings\n");
    for s in &study.scenarios {
        for f in findings(s, study) {
            let _ = writeln!(out, "- **{}**: {}", md_text(&s.name), md_text(&f));
        }
    }
    for c in &study.checks {
        let _ = writeln!(
            out,
            "- **check {}**: {}",
            md_text(&c.name),
            verdict(c.passed)
        );
    }
    let _ = writeln!(out);
    for s in &study.scenarios {
        scenario(&mut out, r, s, study);
    }
    for k in &study.rankings {
        let _ = writeln!(
            out,
            "## Ranking: {} (by {})\n",
            md_text(&k.name),
            md_text(&k.by)
        );
        out.push_str(&crate::compare::render_ranking_of(&k.rows, "scenario"));
        out.push('\n');
    }
    for v in &study.versus {
        let _ = writeln!(out, "## A vs B: {}\n", md_text(&v.name));
        let _ = writeln!(
            out,
            "Each statistic's mean and variance over each side's runs; B ({}) against A ({}) in percent, resolved by Welch's t-test on the logarithm of the runs' figures at p < 0.05 (with one run on a side, nothing is resolved).\n",
            md_text(&v.b_label),
            md_text(&v.a_label)
        );
        for step in &v.steps {
            let _ = writeln!(out, "**{}**\n", md_text(&step.step));
            for line in crate::study_text::versus_lines(v, step) {
                let _ = writeln!(out, "- {}", md_text(&line));
            }
            out.push('\n');
        }
    }
    checks(&mut out, study);
    phases(&mut out, r);
    monitor(&mut out, r);
    out
}

/// One scenario's section: what ran, its sweep table, findings, endpoints, repetitions and
/// thresholds.
fn scenario(out: &mut String, r: &RunResult, s: &ScenarioStudy, study: &Study) {
    let _ = writeln!(out, "## Scenario {}\n", md_text(&s.name));
    let _ = writeln!(
        out,
        "{} on `{}` (workload `{}`){}.\n",
        md_text(&s.kind),
        md_code(&s.target),
        md_code(&s.workload),
        if s.repetitions > 1 {
            format!(", {} repetitions (rows merge them)", s.repetitions)
        } else {
            String::new()
        }
    );
    study_tables::sweep(s).markdown(out);
    let _ = writeln!(out);
    for f in findings(s, study) {
        let _ = writeln!(out, "- {}", md_text(&f));
    }
    if let Some(k) = &s.knee {
        if k.first_bad.is_some() {
            let rule = &study.knee_rule;
            let _ = writeln!(
                out,
                "- knee rule: a step is bad when achieved < {:.0} % of the offered rate, or a concurrency step gains < {:.0} % throughput, or p99 > {} × the first step's p99, or more than {:.1} % of requests fail",
                rule.min_throughput_ratio * 100.0,
                rule.min_gain * 100.0,
                rule.p99_factor,
                rule.max_error_ratio * 100.0
            );
        }
    }
    let _ = writeln!(out);
    let per_step = crate::scenario_endpoints(r, s);
    if !per_step.is_empty() {
        let _ = writeln!(out, "### Per endpoint\n");
        run_tables::endpoints(true, &per_step).markdown(out);
        let _ = writeln!(out);
    }
    let steps: Vec<String> = s.steps.iter().map(|row| row.name.clone()).collect();
    let journeys = journey_tables::scenario_journeys(r, &s.name, &steps);
    journey_sections(out, &journeys, true, "###");
    repetitions(out, s);
    if !s.thresholds.is_empty() {
        let _ = writeln!(out, "### Thresholds\n");
        study_tables::thresholds(s).markdown(out);
        let _ = writeln!(out);
    }
}

/// Statistics of each step over its repetitions.
fn repetitions(out: &mut String, s: &ScenarioStudy) {
    if !s.repetition_stats.is_empty() {
        let _ = writeln!(
            out,
            "### Repetitions\n\nEach statistic over the {} runs: mean, sample variance, standard deviation, 95 % confidence interval of the mean (Student t), min and max.\n",
            s.repetitions
        );
        study_tables::repetitions(s).markdown(out);
        let _ = writeln!(out);
    }
}

/// The checks' expected and actual status counts.
fn checks(out: &mut String, study: &Study) {
    if !study.checks.is_empty() {
        let _ = writeln!(out, "## Checks\n");
        study_tables::checks(study).markdown(out);
        let _ = writeln!(out);
    }
}

/// Every measured phase, one row each.
fn phases(out: &mut String, r: &RunResult) {
    let _ = writeln!(out, "## Phases\n");
    study_tables::phases(r).markdown(out);
}

/// One row per scenario and check, each with its own figures and verdict.
fn summary(out: &mut String, r: &RunResult, study: &Study) {
    let _ = writeln!(out, "## Summary\n");
    study_tables::summary(r, study).markdown(out);
    let _ = writeln!(out);
}

/// A journey's iterations and checks under headings of level `h`.
fn journey_sections(
    out: &mut String,
    rows: &[journey_tables::JourneyRow],
    step_col: bool,
    h: &str,
) {
    if let Some(t) = journey_tables::iterations(step_col, rows) {
        let _ = writeln!(out, "\n{h} Iterations\n");
        t.markdown(out);
    }
    if let Some(t) = journey_tables::groups(step_col, rows) {
        let _ = writeln!(out, "\n{h} Groups of steps\n");
        t.markdown(out);
    }
    if let Some(t) = journey_tables::checks(step_col, rows) {
        let _ = writeln!(out, "\n{h} Checks per name\n");
        t.markdown(out);
    }
    if let Some(t) = journey_tables::metrics(step_col, rows) {
        let _ = writeln!(out, "\n{h} Script metrics\n");
        t.markdown(out);
    }
    if !rows.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
}
