//! The self-contained HTML report: one page for one or more runs, with the tables of the
//! Markdown report (summary, sweeps, knee and operating point, repetition statistics,
//! thresholds, checks, phases, resources) and charts of the same data.
//!
//! # Self-contained, and why the charts are hand-made SVG
//!
//! The page is a single file: the stylesheet is in a `<style>` element, every chart is inline
//! SVG that this crate generates from the numbers, and there is no `<script>`, no web font, no
//! image and no URL to load anything from. That is deliberate:
//!
//! - no third-party code ends up in the perfbase binary or in the report (no vendored
//!   JavaScript chart library to audit, update or license);
//! - nothing is fetched, so the report opens the same offline, behind a proxy, from a CI
//!   artifact or years later, and opening it leaks nothing to a CDN;
//! - with no JavaScript there is nothing to throw, so the page logs no console errors; hover
//!   details come from SVG `<title>` elements, which browsers show natively;
//! - SVG is vector text: it prints sharply (the stylesheet has print rules), it is searchable,
//!   and two reports diff line by line like the rest of the page.
//!
//! All text that comes from a result (targets, scenario, phase and target names, error
//! messages) is escaped for HTML.
//!
//! # Which charts are drawn
//!
//! Every chart is an `<svg class="chart" data-chart="KIND">`. A chart with no data is left out,
//! never drawn empty, so the number of charts follows from the results alone. For each run:
//!
//! | kind | how many |
//! |---|---|
//! | `distribution` | 1 when the run's top-level response histogram decodes and is not empty (latency vs percentile, x axis log-scaled as 1/(1−q); service time too for the open model) |
//! | `timeline` | 1 when the timeline has at least one second: the phases' timelines end to end for a plan (phases present), else the top-level timeline |
//! | `latency-vs-rate` | 1 per `rate ladder` / `concurrency ladder` scenario of the `study` with at least one step: p50, p95, p99 vs offered load, knee, operating point and latency SLO lines |
//! | `achieved-vs-offered` | 1 per such ladder scenario: achieved requests/s vs offered, with the ideal line (y = x for rate ladders, linear scaling from the first step for concurrency ladders) |
//! | `boxplot` | 1 per scenario whose phases include a repetition > 1 and at least one decodable, non-empty histogram: one box per repetition run, grouped by step |
//! | `monitor` | 1 when `monitor` parses and some target has at least one sample: CPU % per target over time |
//!
//! With several runs the page adds one more `distribution` chart at the top comparing them
//! (one line per run with a non-empty histogram) when at least one run has one. A `study` that
//! does not parse is reported as such and contributes no charts or tables.

use crate::run_tables;
use crate::study_text::{findings, ms, offered};
use crate::svg::{
    escape, figure, nines, quantile_at, Axis, Band, BoxGroup, BoxPlot, BoxStat, Chart, Mark,
    Series, PALETTE,
};
use crate::{thousands, thousands_f};
use perfbase_analysis::study::{ScenarioStudy, Study};
use perfbase_analysis::sweep::Offered;
use perfbase_analysis::{parse_threshold, Metric};
use perfbase_core::result::{decode_histogram, Endpoint, Measurement, Model, RunResult};
use perfbase_core::timeline::TimelinePoint;
use perfbase_monitor::MonitorReport;
use std::collections::BTreeMap;
use std::fmt::Write;

mod charts;
mod live;
mod sections;
use charts::*;
pub use live::{live_distribution, live_ladder, live_page, live_rates, LiveStep};
use sections::*;

pub const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1120px; padding: 28px 32px 48px; background: #fff; color: #1f2328;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 26px; margin: 0 0 6px; word-break: break-all; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 17px; margin: 26px 0 8px; }
h4 { font-size: 15px; margin: 18px 0 6px; }
h2.run { font-size: 23px; margin-top: 56px; border-bottom: 3px solid #1f6feb; word-break: break-all; }
p { margin: 6px 0; }
.meta { color: #57606a; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f6f8fa; padding: 1px 4px; border-radius: 4px; }
table { border-collapse: collapse; margin: 8px 0 18px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: 4px 9px; text-align: right; vertical-align: top; }
td { white-space: nowrap; }
th { background: #f6f8fa; font-weight: 600; }
th.l, td.l { text-align: left; white-space: normal; }
table.kv th { text-align: left; }
td.pass, span.pass { color: #116329; background: #dafbe1; font-weight: 600; }
td.fail, span.fail, tr.fail td { color: #a40e26; background: #ffebe9; font-weight: 600; }
span.pass, span.fail { padding: 2px 8px; border-radius: 10px; }
tr.knee td { background: #fff8c5; }
tr.op td { background: #dafbe1; }
tr.idle td { color: #57606a; background: #f6f8fa; }
.tag { font-size: 11px; font-weight: 600; padding: 0 5px; border-radius: 8px; margin-left: 4px; white-space: nowrap; }
.tag.knee { background: #ffe58f; color: #6b4c00; }
.tag.op { background: #b7ebc6; color: #0f5323; }
.banner { padding: 8px 12px; border-radius: 6px; margin: 10px 0; border: 1px solid; }
.banner.warn { background: #fff8c5; border-color: #d4a72c; }
.banner.fail { background: #ffebe9; border-color: #ff8182; }
.banner.pass { background: #dafbe1; border-color: #4ac26b; }
ul.findings li { margin: 3px 0; }
figure { margin: 14px 0 22px; }
figcaption { color: #57606a; font-size: 12.5px; margin-top: 4px; }
svg.chart { display: block; width: 100%; max-width: 980px; height: auto; background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
svg.chart text { fill: #1f2328; font-family: inherit; }
svg.chart .title { font-size: 15px; font-weight: 600; }
svg.chart .legend { font-size: 12px; }
svg.chart .tick { font-size: 11px; fill: #57606a; }
svg.chart .label { font-size: 12px; fill: #24292f; }
svg.chart .group { font-size: 12px; font-weight: 600; }
svg.chart .mark { font-size: 11px; font-weight: 600; }
svg.chart .grid { stroke: #eaeef2; stroke-width: 1; }
svg.chart .axis { stroke: #8c959f; stroke-width: 1; }
footer { margin-top: 48px; color: #57606a; font-size: 12px; border-top: 1px solid #d0d7de; padding-top: 8px; }
@page { margin: 14mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2, h3, h4 { break-after: avoid; }
  figure, tr { break-inside: avoid; }
  svg.chart { max-width: 100%; border-color: #bbb; }
  h2.run { break-before: page; }
}
"#;

/// Colours of the latency percentiles, the same on every chart.
const P50: &str = "#1f6feb";
const P95: &str = "#e67700";
const P99: &str = "#c92a2a";
const KNEE: &str = "#495057";
const GOOD: &str = "#2f9e44";

/// One self-contained HTML page for one or more runs (several runs: shown one after another,
/// with a comparison chart of their latency distributions).
pub fn render(runs: &[RunResult]) -> String {
    let mut out = String::with_capacity(128 * 1024);
    let title = match runs {
        [r] => format!("perfbase report: {}", r.target),
        _ => format!("perfbase report: {} runs", runs.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"perfbase {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(env!("CARGO_PKG_VERSION")),
        escape(&title)
    );
    body(&mut out, runs);
    let _ = write!(
        out,
        "<footer>Written by perfbase {}. This page is self-contained: no scripts, no fonts, \
         no images and nothing fetched; charts are inline SVG (hover a point for its value).\
         </footer>\n</body>\n</html>\n",
        escape(env!("CARGO_PKG_VERSION"))
    );
    out
}

/// The report's content without its document (`perfbase ui` puts it in a page of its own,
/// with [`STYLE`]): the overview of several runs, then each run.
pub fn body(out: &mut String, runs: &[RunResult]) {
    let multi = runs.len() > 1;
    if runs.is_empty() {
        out.push_str("<h1>perfbase report</h1>\n<p>No runs to show.</p>\n");
    } else if multi {
        let _ = writeln!(out, "<h1>perfbase report: {} runs</h1>", runs.len());
        out.push_str(
            "<p class=\"meta\">Each run is shown in full below; first, side by side.</p>\n",
        );
        overview(out, runs, true);
    }
    for (i, r) in runs.iter().enumerate() {
        run_section(out, r, i, multi);
    }
}

/// Several runs side by side (their headline table and their latency distributions on one
/// chart), as the report of several runs opens: for `perfbase ui`'s comparison.
pub fn side_by_side(out: &mut String, runs: &[RunResult]) {
    overview(out, runs, false);
}

// ---------------------------------------------------------------------------------------------
// Page structure

/// With `anchors`, each run's number leads to its section below.
fn overview(out: &mut String, runs: &[RunResult], anchors: bool) {
    out.push_str(
        "<table>\n\
         <tr><th>run</th><th class=\"l\">target</th><th class=\"l\">started</th><th class=\"l\">model</th>\
         <th>requests</th><th>req/s</th><th>success</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr>\n",
    );
    for (i, r) in runs.iter().enumerate() {
        let m = &r.measurement;
        let l = &m.latency_ms;
        let n = i + 1;
        let number = if anchors {
            format!("<a href=\"#run-{n}\">#{n}</a>")
        } else {
            format!("#{n}")
        };
        let _ = writeln!(
            out,
            "<tr><td>{number}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td>{}</td><td>{}</td><td>{:.2} %</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.target),
            escape(&r.started_at),
            r.model.name(),
            thousands(m.requests),
            thousands_f(m.rps),
            m.success_ratio * 100.0,
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.p999),
            ms(l.max),
        );
    }
    out.push_str("</table>\n");
    let curves: Vec<(String, Curve)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let c = curve(&r.measurement.histogram.response)?;
            Some((format!("#{} {}", i + 1, short(&r.target, 48)), c))
        })
        .collect();
    if !curves.is_empty() {
        let series: Vec<(String, &Curve, &'static str, bool)> = curves
            .iter()
            .enumerate()
            .map(|(i, (name, c))| (name.clone(), c, PALETTE[i % PALETTE.len()], false))
            .collect();
        let chart = distribution_chart("Latency distribution of every run", &series);
        figure(
            out,
            &chart,
            "Response time at each percentile, one line per run; the x axis spreads the tail \
             (each labelled step is one more nine).",
        );
    }
}

fn run_section(out: &mut String, r: &RunResult, index: usize, multi: bool) {
    let _ = writeln!(out, "<section id=\"run-{}\">", index + 1);
    let Levels { sec, sub, part } = run_heading(out, r, index, multi);
    let study = r.study.as_ref();
    header(out, r, study);

    let _ = writeln!(out, "<{sec}>Summary</{sec}>");
    match study {
        // A plan: one row per scenario and check, never their figures mixed.
        Some(st) => crate::study_tables::summary(r, st).html(out),
        None => summary(out, &r.measurement),
    }
    if let Some(st) = study {
        findings_list(out, st, sec);
    }
    latency_charts(out, r, sec);

    let boxplots = boxplots(r);
    if let Some(st) = study {
        study_sections(out, r, st, &boxplots, sec, sub);
    }
    other_repetitions(out, &boxplots, study, sec);

    if !r.phases.is_empty() {
        let _ = writeln!(out, "<{sec}>Phases</{sec}>");
        crate::study_tables::phases(r).html(out);
    }
    if let Some(m) = &r.monitor {
        let _ = writeln!(
            out,
            "<{sec}>Resources: CPU and memory, idle and under load</{sec}>"
        );
        monitor_section(out, m, part);
    }
    out.push_str("</section>\n");
}

/// The heading elements of a run's sections, its subsections and the parts within those.
struct Levels {
    sec: &'static str,
    sub: &'static str,
    part: &'static str,
}

/// The run's own heading, and the levels its parts take under it.
fn run_heading(out: &mut String, r: &RunResult, index: usize, multi: bool) -> Levels {
    // A single run's target is the page's h1; with several runs each run is an h2 and its
    // parts move one level down.
    if multi {
        let _ = writeln!(
            out,
            "<h2 class=\"run\">Run {}: {}</h2>",
            index + 1,
            escape(&r.target)
        );
        Levels {
            sec: "h3",
            sub: "h4",
            part: "h4",
        }
    } else {
        let _ = writeln!(out, "<h1>{}</h1>", escape(&r.target));
        Levels {
            sec: "h2",
            sub: "h3",
            part: "h4",
        }
    }
}

/// Every scenario's findings and every check's verdict, in one list under the summary.
fn findings_list(out: &mut String, st: &Study, h_sec: &str) {
    let _ = writeln!(out, "<{h_sec}>Findings</{h_sec}>\n<ul class=\"findings\">");
    for s in &st.scenarios {
        for f in findings(s, st) {
            let _ = writeln!(out, "<li><b>{}</b>: {}</li>", escape(&s.name), escape(&f));
        }
    }
    for c in &st.checks {
        let _ = writeln!(
            out,
            "<li><b>check {}</b>: {}</li>",
            escape(&c.name),
            verdict_span(c.passed)
        );
    }
    out.push_str("</ul>\n");
}

/// The run's latency distribution and its timeline, under one heading when either exists.
fn latency_charts(out: &mut String, r: &RunResult, h_sec: &str) {
    let dist = curve(&r.measurement.histogram.response);
    let timeline = timeline_chart(r);
    if dist.is_some() || timeline.is_some() {
        let _ = writeln!(out, "<{h_sec}>Latency</{h_sec}>");
    }
    if let Some(resp) = dist {
        let service = r.measurement.histogram.service.as_deref().and_then(curve);
        let mut series = vec![("response time".to_string(), &resp, P50, false)];
        if let Some(sv) = &service {
            series.push((
                "service time (from the actual send)".to_string(),
                sv,
                P95,
                true,
            ));
        }
        let chart = distribution_chart("Latency by percentile", &series);
        figure(
            out,
            &chart,
            "Response time at each percentile (HDR histogram); the x axis is log-scaled as \
             1/(1−q), so each labelled step is one more nine. Dots mark p50, p90, p99, p99.9 \
             and p99.99.",
        );
    }
    if let Some((chart, caption)) = timeline {
        figure(out, &chart, &caption);
    }
}

/// A plan's sections: one per scenario (with its box plot), the checks, and each A-vs-B.
fn study_sections(
    out: &mut String,
    r: &RunResult,
    st: &Study,
    boxplots: &[(String, BoxPlot)],
    h_sec: &str,
    h_sub: &str,
) {
    for s in &st.scenarios {
        let endpoints = crate::scenario_endpoints(r, s);
        let steps: Vec<String> = s.steps.iter().map(|row| row.name.clone()).collect();
        let journeys = crate::journey_tables::scenario_journeys(r, &s.name, &steps);
        scenario_section(out, st, s, boxplots, (&endpoints, &journeys), h_sec, h_sub);
    }
    if !st.checks.is_empty() {
        let _ = writeln!(out, "<{h_sec}>Checks</{h_sec}>");
        crate::study_tables::checks(st).html(out);
    }
    for v in &st.versus {
        crate::html_versus::section(out, v, h_sec, h_sub);
    }
}

/// Box plots of repeated scenarios the study does not describe (no study yet, or it did not
/// parse): a scenario's own section shows the others.
fn other_repetitions(
    out: &mut String,
    boxplots: &[(String, BoxPlot)],
    study: Option<&Study>,
    h_sec: &str,
) {
    let described =
        |name: &String| study.is_some_and(|st| st.scenarios.iter().any(|s| s.name == *name));
    let rest: Vec<&BoxPlot> = boxplots
        .iter()
        .filter(|(name, _)| !described(name))
        .map(|(_, b)| b)
        .collect();
    if !rest.is_empty() {
        let _ = writeln!(out, "<{h_sec}>Repetitions</{h_sec}>");
        for b in rest {
            figure(out, &b.render(), BOX_CAPTION);
        }
    }
}

fn header(out: &mut String, r: &RunResult, study: Option<&Study>) {
    let c = &r.config;
    let shape = match r.model {
        Model::Closed => match c.connections {
            Some(n) => format!("closed model, {} connections", thousands(n)),
            None => "closed model".to_string(),
        },
        Model::Open => {
            let mut s = "open model".to_string();
            if let Some(rate) = c.rate {
                let _ = write!(s, ", {}/s", thousands_f(rate).trim_end_matches(".0"));
            }
            if let Some(n) = c.max_inflight {
                let _ = write!(s, ", at most {} in flight", thousands(n));
            }
            s
        }
    };
    let mut bound = Vec::new();
    if let Some(d) = c.duration_s {
        bound.push(format!("{d} s"));
    }
    if let Some(n) = c.count {
        bound.push(format!("{} requests", thousands(n)));
    }
    if c.warmup_s > 0.0 {
        bound.push(format!("{} s warm-up", c.warmup_s));
    }
    let _ = writeln!(
        out,
        "<p class=\"meta\">Started {} · perfbase {} · {} · {} · {} thread{}{}</p>",
        escape(&r.started_at),
        escape(&r.tool.version),
        escape(&r.protocol),
        shape,
        c.threads,
        if c.threads == 1 { "" } else { "s" },
        if bound.is_empty() {
            String::new()
        } else {
            format!(" · {}", escape(&bound.join(", ")))
        }
    );
    if r.interrupted {
        out.push_str(
            "<p class=\"banner warn\"><b>Interrupted</b>: the run was cut short (Ctrl-C); \
             these are partial results.</p>\n",
        );
    }
    if let Some(st) = study {
        let _ = writeln!(
            out,
            "<p class=\"banner {}\">Plan <b>{}</b>{}: {}</p>",
            if st.passed { "pass" } else { "fail" },
            escape(&st.plan),
            if st.scale != 1.0 {
                format!(", load scaled by {}", st.scale)
            } else {
                String::new()
            },
            if st.passed {
                "all thresholds and checks passed"
            } else {
                "<b>a threshold or check failed</b>"
            }
        );
    }
    run_tables::environment(&r.env).html(out);
}

fn summary(out: &mut String, m: &Measurement) {
    run_tables::summary(m).html(out);
    run_tables::latency(m).html(out);
    if let Some(t) = &m.http_timing {
        let _ = writeln!(
            out,
            "<table class=\"kv\">\n<tr><th>connections opened</th><td>{}</td></tr>\n\
             <tr><th>connections reused</th><td>{}</td></tr>\n</table>",
            thousands(t.new_connections),
            thousands(t.reused_connections)
        );
    }
    if !m.endpoints.is_empty() {
        run_tables::endpoints(false, &[(String::new(), &m.endpoints[..])]).html(out);
    }
    sections::journey_tables(out, &crate::journey_tables::run_journeys(m), false);
    if let Some(o) = &m.open_model {
        let _ = writeln!(
            out,
            "<table class=\"kv\">\n<tr><th>requested rate</th><td>{}/s</td></tr>\n\
             <tr><th>achieved rate (started)</th><td>{}/s</td></tr>\n\
             <tr><th>late (started &gt; 1 ms behind schedule)</th><td>{}</td></tr>\n\
             <tr><th>unsent (window closed first)</th><td>{}</td></tr>\n\
             <tr><th>max in flight</th><td>{}</td></tr>\n</table>",
            thousands_f(o.requested_rate),
            thousands_f(o.achieved_rate),
            thousands(o.late),
            thousands(o.unsent),
            thousands(o.max_inflight)
        );
        if o.requested_rate > 0.0 && o.achieved_rate < 0.95 * o.requested_rate {
            out.push_str(
                "<p class=\"banner warn\">The achieved rate is below 95 % of the requested \
                 rate: the target (or the in-flight cap) could not keep up.</p>\n",
            );
        }
    }
    if let Some(line) = m
        .availability
        .as_ref()
        .and_then(crate::study_text::availability_line)
    {
        let _ = writeln!(
            out,
            "<p class=\"banner warn\">Availability: {}.</p>",
            escape(&line)
        );
    }
    if m.aborted_in_flight > 0 {
        let _ = writeln!(
            out,
            "<p class=\"meta\">{} operations were still in flight at the cut-off and are not counted.</p>",
            thousands(m.aborted_in_flight)
        );
    }
    if !m.error_samples.is_empty() {
        run_tables::error_samples(m).html(out);
    }
}

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

fn verdict_span(passed: bool) -> &'static str {
    if passed {
        "<span class=\"pass\">pass</span>"
    } else {
        "<span class=\"fail\">FAIL</span>"
    }
}

#[cfg(test)]
mod tests;
