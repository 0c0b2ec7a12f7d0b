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

use crate::study_text::{counts, findings, ms, offered};
use crate::svg::{
    escape, figure, nines, quantile_at, Axis, Band, BoxGroup, BoxPlot, BoxStat, Chart, Mark,
    Series, PALETTE,
};
use crate::{bytes, thousands, thousands_f};
use perfbase_analysis::stats::Summary;
use perfbase_analysis::study::{ScenarioStudy, Study};
use perfbase_analysis::sweep::Offered;
use perfbase_analysis::threshold::{parse_threshold, Metric};
use perfbase_core::result::{decode_histogram, Endpoint, LatencyMs, Measurement, Model, RunResult};
use perfbase_core::timeline::TimelinePoint;
use perfbase_monitor::MonitorReport;
use std::collections::BTreeMap;
use std::fmt::Write;

const STYLE: &str = r#"
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
    let multi = runs.len() > 1;
    if runs.is_empty() {
        out.push_str("<h1>perfbase report</h1>\n<p>No runs to show.</p>\n");
    } else if multi {
        overview(&mut out, runs);
    }
    for (i, r) in runs.iter().enumerate() {
        run_section(&mut out, r, i, multi);
    }
    let _ = write!(
        out,
        "<footer>Written by perfbase {}. This page is self-contained: no scripts, no fonts, \
         no images and nothing fetched; charts are inline SVG (hover a point for its value).\
         </footer>\n</body>\n</html>\n",
        escape(env!("CARGO_PKG_VERSION"))
    );
    out
}

// ---------------------------------------------------------------------------------------------
// Page structure

fn overview(out: &mut String, runs: &[RunResult]) {
    let _ = writeln!(out, "<h1>perfbase report: {} runs</h1>", runs.len());
    out.push_str(
        "<p class=\"meta\">Each run is shown in full below; first, side by side.</p>\n<table>\n\
         <tr><th>run</th><th class=\"l\">target</th><th class=\"l\">started</th><th class=\"l\">model</th>\
         <th>requests</th><th>req/s</th><th>success</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr>\n",
    );
    for (i, r) in runs.iter().enumerate() {
        let m = &r.measurement;
        let l = &m.latency_ms;
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#run-{n}\">#{n}</a></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
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
            n = i + 1
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
    // Heading levels: a single run's target is the page's h1; with several runs each run is
    // an h2 and its parts move one level down.
    let (h_sec, h_sub, h_part) = if multi {
        let _ = writeln!(
            out,
            "<h2 class=\"run\">Run {}: {}</h2>",
            index + 1,
            escape(&r.target)
        );
        ("h3", "h4", "h4")
    } else {
        let _ = writeln!(out, "<h1>{}</h1>", escape(&r.target));
        ("h2", "h3", "h4")
    };
    let study = r.study.as_ref();
    header(out, r, study);

    let _ = writeln!(out, "<{h_sec}>Summary</{h_sec}>");
    match study {
        // A plan: one row per scenario and check, never their figures mixed.
        Some(st) => scenario_summary(out, r, st),
        None => summary(out, &r.measurement),
    }

    if let Some(st) = study {
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

    let boxplots = boxplots(r);
    let mut boxplots_shown = Vec::new();
    if let Some(st) = study {
        for s in &st.scenarios {
            let endpoints = crate::scenario_endpoints(r, s);
            scenario_section(out, st, s, &boxplots, &endpoints, h_sec, h_sub);
            boxplots_shown.push(s.name.clone());
        }
        if !st.checks.is_empty() {
            let _ = writeln!(out, "<{h_sec}>Checks</{h_sec}>");
            out.push_str(
                "<table>\n<tr><th class=\"l\">check</th><th>requests</th><th class=\"l\">expected</th>\
                 <th class=\"l\">actual</th><th>verdict</th></tr>\n",
            );
            for c in &st.checks {
                let _ = writeln!(
                    out,
                    "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>{}</tr>",
                    escape(&c.name),
                    thousands(c.requests),
                    escape(&counts(&c.expect)),
                    escape(&counts(&c.actual)),
                    verdict_cell(c.passed)
                );
            }
            out.push_str("</table>\n");
        }
        for v in &st.versus {
            crate::html_versus::section(out, v, h_sec, h_sub);
        }
    }
    // Repeated scenarios the study does not describe (no study yet, or it did not parse).
    let rest: Vec<&(String, BoxPlot)> = boxplots
        .iter()
        .filter(|(name, _)| !boxplots_shown.contains(name))
        .collect();
    if !rest.is_empty() {
        let _ = writeln!(out, "<{h_sec}>Repetitions</{h_sec}>");
        for (_, b) in rest {
            figure(out, &b.render(), BOX_CAPTION);
        }
    }

    if !r.phases.is_empty() {
        let _ = writeln!(out, "<{h_sec}>Phases</{h_sec}>");
        phases_table(out, r);
    }
    if let Some(m) = &r.monitor {
        let _ = writeln!(
            out,
            "<{h_sec}>Resources: CPU and memory, idle and under load</{h_sec}>"
        );
        monitor_section(out, m, h_part);
    }
    out.push_str("</section>\n");
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
    let e = &r.env;
    out.push_str(
        "<table class=\"env\">\n<tr><th class=\"l\">CPU</th><th>cores</th><th>memory</th>\
         <th class=\"l\">OS</th><th class=\"l\">kernel</th><th class=\"l\">perfbase</th></tr>\n",
    );
    let _ = writeln!(
        out,
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n</table>",
        escape(&e.cpu_model),
        e.cores,
        bytes(e.memory_bytes),
        escape(&e.os),
        escape(&e.kernel),
        escape(&e.tool_version)
    );
}

fn scenario_summary(out: &mut String, r: &RunResult, study: &Study) {
    out.push_str("<table class=\"summary\">\n<tr>");
    for (i, h) in crate::study_text::SUMMARY_HEADS.iter().enumerate() {
        let class = if i < 2 { " class=\"l\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for (cells, failed) in crate::study_text::summary_rows(r, study) {
        let _ = write!(out, "<tr{}>", if failed { " class=\"fail\"" } else { "" });
        for (i, c) in cells.iter().enumerate() {
            let class = if i < 2 { " class=\"l\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", escape(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn summary(out: &mut String, m: &Measurement) {
    let none = || "none".to_string();
    let status = if m.status.is_empty() {
        none()
    } else {
        escape(&status_counts(&m.status))
    };
    let errors = if m.errors.is_empty() {
        none()
    } else {
        escape(&counts(&m.errors))
    };
    out.push_str(
        "<table>\n<tr><th>requests</th><th>duration</th><th>requests/s</th><th>success</th>\
         <th class=\"l\">status codes</th><th class=\"l\">errors</th><th>read</th><th>written</th></tr>\n",
    );
    let _ = writeln!(
        out,
        "<tr><td>{}</td><td>{:.2} s</td><td>{}</td><td{}>{:.2} %</td><td class=\"l\">{status}</td>\
         <td class=\"l\">{errors}</td><td>{}</td><td>{}</td></tr>\n</table>",
        thousands(m.requests),
        m.duration_s,
        thousands_f(m.rps),
        success_class(m.success_ratio),
        m.success_ratio * 100.0,
        bytes(m.bytes_read),
        bytes(m.bytes_written)
    );
    out.push_str(
        "<table>\n<tr><th class=\"l\">latency, ms</th><th>min</th><th>mean</th><th>stdev</th>\
         <th>p50</th><th>p75</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n",
    );
    latency_row(out, "response time", &m.latency_ms);
    if let Some(s) = &m.service_time_ms {
        latency_row(out, "service time", s);
    }
    if let Some(t) = &m.http_timing {
        for (name, l) in crate::markdown::timing_parts(t) {
            latency_row(out, name, l);
        }
    }
    out.push_str("</table>\n");
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
        endpoints_table(out, false, &[(String::new(), &m.endpoints[..])]);
    }
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
    if m.aborted_in_flight > 0 {
        let _ = writeln!(
            out,
            "<p class=\"meta\">{} operations were still in flight at the cut-off and are not counted.</p>",
            thousands(m.aborted_in_flight)
        );
    }
    if !m.error_samples.is_empty() {
        out.push_str(
            "<table>\n<tr><th class=\"l\">error class</th><th class=\"l\">message</th><th>count</th></tr>\n",
        );
        for s in &m.error_samples {
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}</td><td class=\"l\"><code>{}</code></td><td>{}</td></tr>",
                escape(&s.class),
                escape(&s.message),
                thousands(s.count)
            );
        }
        out.push_str("</table>\n");
    }
}

/// The per-endpoint table of a mix: one row per endpoint (per step with `step_col`).
fn endpoints_table(out: &mut String, step_col: bool, rows: &[(String, &[Endpoint])]) {
    let _ = writeln!(
        out,
        "<table class=\"endpoints\">\n<tr>{}<th class=\"l\">endpoint</th><th>requests</th><th>success</th>\
         <th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th><th class=\"l\">status codes</th></tr>",
        if step_col { "<th class=\"l\">step</th>" } else { "" }
    );
    for (step, endpoints) in rows {
        for e in endpoints.iter() {
            let _ = writeln!(
                out,
                "<tr>{}<td class=\"l\"><code>{}</code></td><td>{}</td><td{}>{:.2} %</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                if step_col {
                    format!("<td class=\"l\">{}</td>", escape(step))
                } else {
                    String::new()
                },
                escape(&e.name),
                thousands(e.requests),
                success_class(e.success_ratio),
                e.success_ratio * 100.0,
                ms(e.latency_ms.p50),
                ms(e.latency_ms.p95),
                ms(e.latency_ms.p99),
                ms(e.latency_ms.max),
                escape(&status_counts(&e.status))
            );
        }
    }
    out.push_str("</table>\n");
}

fn latency_row(out: &mut String, name: &str, l: &LatencyMs) {
    let _ = writeln!(
        out,
        "<tr><th class=\"l\">{name}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        ms(l.min),
        ms(l.mean),
        ms(l.stdev),
        ms(l.p50),
        ms(l.p75),
        ms(l.p90),
        ms(l.p95),
        ms(l.p99),
        ms(l.p999),
        ms(l.max)
    );
}

const BOX_CAPTION: &str = "One box per repetition, from that run's latency histogram: whiskers \
     at min and max, the box from p25 to p75, the bar at the median. Boxes that sit at \
     different heights mean the repetitions disagree.";

fn scenario_section(
    out: &mut String,
    study: &Study,
    s: &ScenarioStudy,
    boxplots: &[(String, BoxPlot)],
    endpoints: &[(String, Vec<Endpoint>)],
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
    if !s.steps.is_empty() {
        sweep_table(out, s);
    }
    if !endpoints.is_empty() {
        let rows: Vec<(String, &[Endpoint])> =
            endpoints.iter().map(|(n, e)| (n.clone(), &e[..])).collect();
        endpoints_table(out, true, &rows);
    }
    let list = findings(s, study);
    if !list.is_empty() {
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
    if !s.repetition_stats.is_empty() {
        let _ = writeln!(
            out,
            "<{h_sub}>Repetitions</{h_sub}>\n<p class=\"meta\">Each statistic over the {} runs: mean, \
             sample variance, standard deviation, 95 % confidence interval of the mean (Student t), \
             min and max.</p>",
            s.repetitions
        );
        out.push_str(
            "<table>\n<tr><th class=\"l\">step</th><th class=\"l\">statistic</th><th>mean</th>\
             <th>variance</th><th>stdev</th><th>95 % CI</th><th>min</th><th>max</th></tr>\n",
        );
        let per_s = |v: f64| format!("{v:.1}");
        let pct = |v: f64| format!("{:.2} %", v * 100.0);
        for st in &s.repetition_stats {
            let rows: [StatRow; 8] = [
                ("requests/s", &st.rps, &per_s),
                ("success", &st.success_ratio, &pct),
                ("min ms", &st.min_ms, &ms),
                ("mean ms", &st.mean_ms, &ms),
                ("p50 ms", &st.p50_ms, &ms),
                ("p90 ms", &st.p90_ms, &ms),
                ("p99 ms", &st.p99_ms, &ms),
                ("max ms", &st.max_ms, &ms),
            ];
            for (name, sm, f) in rows {
                let _ = writeln!(
                    out,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">{name}</td><td>{}</td><td>{:.4}</td>\
                     <td>{:.4}</td><td>{} – {}</td><td>{}</td><td>{}</td></tr>",
                    escape(&st.step),
                    f(sm.mean),
                    sm.variance,
                    sm.stdev,
                    f(sm.ci95.0),
                    f(sm.ci95.1),
                    f(sm.min),
                    f(sm.max)
                );
            }
        }
        out.push_str("</table>\n");
    }
    if !s.thresholds.is_empty() {
        let _ = writeln!(out, "<{h_sub}>Thresholds</{h_sub}>");
        out.push_str(
            "<table>\n<tr><th class=\"l\">phase</th><th class=\"l\">threshold</th><th>actual</th><th>verdict</th></tr>\n",
        );
        for t in &s.thresholds {
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}</td><td class=\"l\"><code>{}</code></td><td>{}</td>{}</tr>",
                escape(&t.phase),
                escape(&t.verdict.threshold),
                escape(&actual(&t.verdict.threshold, t.verdict.actual)),
                verdict_cell(t.verdict.passed)
            );
        }
        out.push_str("</table>\n");
    }
}

/// A repetition statistic: its name, its summary and how to print its values.
type StatRow<'a> = (&'a str, &'a Summary, &'a dyn Fn(f64) -> String);

fn sweep_table(out: &mut String, s: &ScenarioStudy) {
    let buckets: Vec<String> = s
        .steps
        .first()
        .map(|row| {
            row.under_ms
                .iter()
                .map(|(b, _)| format!("&lt; {b} ms"))
                .collect()
        })
        .unwrap_or_default();
    out.push_str(
        "<table>\n<tr><th class=\"l\">step</th><th>offered</th><th>achieved/s</th><th>success</th>",
    );
    for h in crate::study_text::LATENCY_HEADS {
        let _ = write!(out, "<th>{h}</th>");
    }
    for b in &buckets {
        let _ = write!(out, "<th>{b}</th>");
    }
    out.push_str("</tr>\n");
    for (i, row) in s.steps.iter().enumerate() {
        let knee = s.knee.as_ref().is_some_and(|k| k.first_bad == Some(i));
        let op = s.operating_point.as_ref().is_some_and(|p| p.index == i);
        let class = match (knee, op) {
            (true, _) => " class=\"knee\"",
            (false, true) => " class=\"op\"",
            _ => "",
        };
        let _ = write!(
            out,
            "<tr{class}><td class=\"l\">{}{}{}{}</td><td>{}</td><td>{}</td><td>{:.2} %</td>{}",
            escape(&row.name),
            row.invalid.as_deref().map_or(String::new(), |why| format!(
                "<span class=\"tag knee\" title=\"{}\">invalid</span>",
                escape(why)
            )),
            if knee {
                "<span class=\"tag knee\">knee</span>"
            } else {
                ""
            },
            if op {
                "<span class=\"tag op\">operating point</span>"
            } else {
                ""
            },
            offered(&row.offered),
            thousands_f(row.achieved_rps),
            row.success_ratio * 100.0,
            crate::study_text::latency_cells(row)
                .map(|c| format!("<td>{c}</td>"))
                .concat()
        );
        for (_, share) in &row.under_ms {
            if share.is_nan() {
                out.push_str("<td>-</td>");
            } else {
                let _ = write!(out, "<td>{:.1} %</td>", share * 100.0);
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

fn phases_table(out: &mut String, r: &RunResult) {
    out.push_str(
        "<table>\n<tr><th class=\"l\">phase</th><th class=\"l\">scenario</th><th>step</th><th>rep.</th>\
         <th>offered</th><th class=\"l\">model</th><th>requests</th><th>duration s</th><th>req/s</th>\
         <th>success</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th></tr>\n",
    );
    for p in &r.phases {
        let m = &p.measurement;
        let offered = match (p.offered_rate, p.offered_connections) {
            (Some(rate), _) => offered_label(Offered::Rate(rate)),
            (None, Some(c)) => offered_label(Offered::Concurrency(c)),
            _ => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{offered}</td>\
             <td class=\"l\">{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td{}>{:.2} %</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&p.name),
            escape(p.scenario.as_deref().unwrap_or("-")),
            p.step.map_or("-".to_string(), |s| (s + 1).to_string()),
            p.repetition.map_or("-".to_string(), |r| r.to_string()),
            p.model.name(),
            thousands(m.requests),
            m.duration_s,
            thousands_f(m.rps),
            success_class(m.success_ratio),
            m.success_ratio * 100.0,
            ms(m.latency_ms.p50),
            ms(m.latency_ms.p95),
            ms(m.latency_ms.p99),
            ms(m.latency_ms.max)
        );
    }
    out.push_str("</table>\n");
}

fn monitor_section(out: &mut String, m: &MonitorReport, h_part: &str) {
    for w in &m.warnings {
        let _ = writeln!(out, "<p class=\"banner warn\">{}</p>", escape(w));
    }
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
    let with_mem = m
        .targets
        .iter()
        .any(|t| t.phases.iter().any(|p| p.memory_current_bytes.is_some()));
    let _ = writeln!(
        out,
        "<{h_part}>Idle vs under load</{h_part}>\n<p class=\"meta\">Per target and phase: mean (min–max) over \
         the samples, every {} s; perfbase had {} cores.</p>",
        m.interval_s, m.cores
    );
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
    const MIB: f64 = 1024.0 * 1024.0;
    let count = |v: f64| {
        if (v - v.round()).abs() < 0.05 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    for t in &m.targets {
        let label = match t.exited_at_s {
            Some(at) => format!("{} (exited at {at:.1} s)", t.label),
            None => t.label.clone(),
        };
        for (i, p) in t.phases.iter().enumerate() {
            let _ = write!(
                out,
                "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1} ({:.1}–{:.1})</td>\
                 <td>{:.1}</td><td>{:.1} ({:.1})</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td>",
                if p.name == "idle" { " class=\"idle\"" } else { "" },
                if i == 0 { escape(&label) } else { String::new() },
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
    }
    out.push_str("</table>\n");
}

// ---------------------------------------------------------------------------------------------
// Charts

/// A latency-by-percentile curve: points on the "nines" axis up to 6 nines, and dots at the
/// usual percentiles. `None` when the histogram does not decode or is empty.
struct Curve {
    count: u64,
    line: Vec<(f64, f64)>,
    dots: Vec<(f64, f64, f64)>,
}

const MAX_NINES: u32 = 6;
const CURVE_STEPS_PER_NINE: u32 = 60;

fn curve(encoded: &str) -> Option<Curve> {
    let h = decode_histogram(encoded).ok()?;
    if h.is_empty() {
        return None;
    }
    let at = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let line = (0..=MAX_NINES * CURVE_STEPS_PER_NINE)
        .map(|k| {
            let x = f64::from(k) / f64::from(CURVE_STEPS_PER_NINE);
            let y = if k == 0 {
                h.min() as f64 / 1000.0
            } else {
                at(quantile_at(x))
            };
            (x, y)
        })
        .collect();
    let dots = [0.5, 0.9, 0.99, 0.999, 0.9999]
        .into_iter()
        .map(|q| (nines(q), at(q), q))
        .collect();
    Some(Curve {
        count: h.len(),
        line,
        dots,
    })
}

/// How far out the percentile axis goes: 99.99 % (4 nines), further for runs large enough to
/// have data there (one nine per decade of requests), at most [`MAX_NINES`].
fn nines_for(count: u64) -> u32 {
    let decades = (count.max(1) as f64).log10().ceil() as u32;
    decades.clamp(4, MAX_NINES)
}

fn pct_label(q: f64) -> String {
    let p = q * 100.0;
    let s = format!("{p:.4}");
    format!("p{}", s.trim_end_matches('0').trim_end_matches('.'))
}

fn distribution_chart(title: &str, series: &[(String, &Curve, &'static str, bool)]) -> String {
    let max_nines = nines_for(series.iter().map(|(_, c, _, _)| c.count).max().unwrap_or(1));
    let xmax = f64::from(max_nines);
    let ys = || {
        series
            .iter()
            .flat_map(|(_, c, _, _)| c.line.iter().filter(|(x, _)| *x <= xmax + 1e-9))
            .map(|&(_, y)| y)
    };
    let lo = ys().filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min);
    let hi = ys().fold(0.0, f64::max);
    let x = Axis::percentile("percentile", max_nines);
    let y = Axis::latency("latency, ms", lo, hi);
    let mut chart = Chart::new("distribution", title, x, y);
    for (name, c, color, dash) in series {
        chart.series.push(Series {
            name: name.clone(),
            color,
            line: c
                .line
                .iter()
                .copied()
                .filter(|(x, _)| *x <= xmax + 1e-9)
                .collect(),
            dots: c
                .dots
                .iter()
                .filter(|(x, _, _)| *x <= xmax + 1e-9)
                .map(|&(x, y, q)| (x, y, format!("{name}: {} = {} ms", pct_label(q), ms(y))))
                .collect(),
            dash: *dash,
            right: false,
        });
    }
    chart.render()
}

/// The run's per-second timeline, on the run's clock: the top-level timeline (a plan's
/// phases follow one another on it), or the phases' own where there is none (a suite), with a
/// mark where each phase starts. Rates divide a partial second by the part of it covered.
/// Returns the chart and its caption, or None without any second.
fn timeline_chart(r: &RunResult) -> Option<(String, String)> {
    let mut points: Vec<(f64, &TimelinePoint)> = Vec::new();
    let mut marks = Vec::new();
    let at = |p: &TimelinePoint| f64::from(p.second) + 0.5;
    points.extend(r.measurement.timeline.iter().map(|p| (at(p), p)));
    for ph in &r.phases {
        let Some(first) = ph.measurement.timeline.first() else {
            continue;
        };
        // A phase covers the end of its first second: it starts at 1 − span into it.
        marks.push(Mark {
            at: f64::from(first.second) + 1.0 - first.span_s.clamp(0.0, 1.0),
            label: ph.name.clone(),
            color: "#8c959f",
            dash: "3 3",
        });
        if r.measurement.timeline.is_empty() {
            points.extend(ph.measurement.timeline.iter().map(|p| (at(p), p)));
        }
    }
    if points.is_empty() {
        return None;
    }
    let xmax = points.iter().map(|(x, _)| x + 0.5).fold(1.0, f64::max);
    // 15 % headroom keeps the phase labels at the top clear of the lines.
    let headroom = if marks.is_empty() { 1.0 } else { 1.15 };
    let ymax = headroom * points.iter().map(|(_, p)| p.rate()).fold(1.0, f64::max);
    let p99max = headroom * points.iter().map(|(_, p)| p.p99_ms).fold(0.0, f64::max);
    let mut chart = Chart::new(
        "timeline",
        "Requests, errors and p99 per second",
        Axis::linear("seconds since the start of measurement", 0.0, xmax, 10),
        Axis::linear("per second", 0.0, ymax, 6),
    );
    chart.y2 = Some(Axis::linear(
        "p99 ms",
        0.0,
        if p99max > 0.0 { p99max } else { 1.0 },
        6,
    ));
    chart.series.push(Series {
        name: "requests/s".into(),
        color: P50,
        line: points.iter().map(|(x, p)| (*x, p.rate())).collect(),
        ..Series::default()
    });
    chart.series.push(Series {
        name: "errors/s".into(),
        color: P99,
        line: points
            .iter()
            .map(|(x, p)| (*x, p.errors as f64 * p.rate() / (p.requests.max(1) as f64)))
            .collect(),
        ..Series::default()
    });
    chart.series.push(Series {
        name: "p99 ms (right axis)".into(),
        color: P95,
        // Seconds without completions have no latency: the line breaks there.
        line: points
            .iter()
            .map(|(x, p)| (*x, if p.requests > 0 { p.p99_ms } else { f64::NAN }))
            .collect(),
        dash: true,
        right: true,
        ..Series::default()
    });
    chart.vmarks = marks;
    let caption = if r.phases.is_empty() {
        "Completed requests and errors per second (left axis; a partial first or last second \
         is divided by its real length) and that second's p99 response time (right axis)."
            .to_string()
    } else {
        "The run's seconds (dashed lines mark where each phase starts): completed requests \
         and errors per second (left axis; a second a phase covered only in part is divided \
         by that part) and that second's p99 (right axis)."
            .to_string()
    };
    Some((chart.render(), caption))
}

fn offered_label(o: Offered) -> String {
    offered(&o)
}

fn ladder_charts(s: &ScenarioStudy, study: &Study) -> Option<(String, String)> {
    if !(s.kind == "rate ladder" || s.kind == "concurrency ladder") || s.steps.is_empty() {
        return None;
    }
    let is_rate = matches!(s.steps[0].offered, Offered::Rate(_));
    let x_label = if is_rate {
        "offered load, requests/s"
    } else {
        "offered load, concurrent connections"
    };
    let xmax = s
        .steps
        .iter()
        .map(|r| r.offered.amount())
        .fold(0.0, f64::max);
    let vmarks = ladder_marks(s);
    let mut lat = latency_chart(s, study, Axis::linear(x_label, 0.0, xmax, 8));
    lat.vmarks = vmarks.clone();
    let mut thr = achieved_chart(s, is_rate, xmax, Axis::linear(x_label, 0.0, xmax, 8));
    thr.vmarks = vmarks;
    Some((lat.render(), thr.render()))
}

/// p50, p95 and p99 against the offered load, with the SLO's latency limits.
fn latency_chart(s: &ScenarioStudy, study: &Study, x: Axis) -> Chart {
    // Latency vs offered load.
    let slo: Vec<(f64, String)> = study
        .slo
        .iter()
        .filter_map(|t| {
            let th = parse_threshold(t).ok()?;
            matches!(th.metric, Metric::LatencyMs(_)).then(|| (th.value, format!("SLO {t}")))
        })
        .collect();
    let lats = || {
        s.steps
            .iter()
            .flat_map(|r| [r.p50_ms, r.p95_ms, r.p99_ms])
            .chain(slo.iter().map(|(v, _)| *v))
            .filter(|v| v.is_finite())
    };
    let lo = lats().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let hi = lats().fold(0.0, f64::max);
    let mut lat = Chart::new(
        "latency-vs-rate",
        format!("{}: latency vs offered load", s.name),
        x,
        Axis::latency("latency, ms", lo, hi),
    );
    type Pick = fn(&perfbase_analysis::sweep::StepRow) -> f64;
    let percentiles: [(&str, &'static str, Pick); 3] = [
        ("p50", P50, |r| r.p50_ms),
        ("p95", P95, |r| r.p95_ms),
        ("p99", P99, |r| r.p99_ms),
    ];
    for (name, color, pick) in percentiles {
        let pts: Vec<(f64, f64)> = s
            .steps
            .iter()
            .map(|r| (r.offered.amount(), pick(r)))
            .collect();
        lat.series.push(Series {
            name: name.to_string(),
            color,
            dots: s
                .steps
                .iter()
                .zip(&pts)
                .map(|(r, &(x, y))| {
                    (
                        x,
                        y,
                        format!("{} at {}: {} ms", name, offered(&r.offered), ms(y)),
                    )
                })
                .collect(),
            line: pts,
            ..Series::default()
        });
    }
    lat.hmarks = slo
        .iter()
        .map(|(v, label)| Mark {
            at: *v,
            label: label.clone(),
            color: GOOD,
            dash: "8 4",
        })
        .collect();
    lat
}

/// The operating point and the knee, as vertical marks in load order.
fn ladder_marks(s: &ScenarioStudy) -> Vec<Mark> {
    let mut vmarks = Vec::new();
    if let Some(op) = &s.operating_point {
        vmarks.push(Mark {
            at: op.offered.amount(),
            label: format!("operating point {}", offered(&op.offered)),
            color: GOOD,
            dash: "2 3",
        });
    }
    if let Some(b) = s
        .knee
        .as_ref()
        .and_then(|k| k.first_bad)
        .and_then(|b| s.steps.get(b))
    {
        vmarks.push(Mark {
            at: b.offered.amount(),
            label: format!("knee {}", offered(&b.offered)),
            color: KNEE,
            dash: "6 4",
        });
    }
    vmarks.sort_by(|a, b| a.at.total_cmp(&b.at));
    vmarks
}

/// Achieved against offered load, beside the ideal (or linear scaling for concurrency).
fn achieved_chart(s: &ScenarioStudy, is_rate: bool, xmax: f64, x: Axis) -> Chart {
    // Achieved vs offered.
    let achieved_max = s.steps.iter().map(|r| r.achieved_rps).fold(0.0, f64::max);
    let y = Axis::linear(
        "achieved, requests/s",
        0.0,
        if is_rate {
            achieved_max.max(xmax)
        } else {
            achieved_max
        },
        6,
    );
    let ytop = y.ticks().last().map_or(achieved_max, |t| t.0);
    let mut thr = Chart::new(
        "achieved-vs-offered",
        format!("{}: achieved vs offered load", s.name),
        x,
        y,
    );
    let ideal = if is_rate {
        let end = xmax.min(ytop);
        Some(("ideal: achieved = offered", vec![(0.0, 0.0), (end, end)]))
    } else {
        let first = &s.steps[0];
        let (x0, a0) = (first.offered.amount(), first.achieved_rps);
        (x0 > 0.0 && a0 > 0.0).then(|| {
            // Linear scaling from the first step, cut where it leaves the chart.
            let end = xmax.min(ytop * x0 / a0);
            (
                "linear scaling from the first step",
                vec![(0.0, 0.0), (end, a0 * end / x0)],
            )
        })
    };
    if let Some((name, line)) = ideal {
        thr.series.push(Series {
            name: name.to_string(),
            color: "#8c959f",
            line,
            dash: true,
            ..Series::default()
        });
    }
    thr.series.push(Series {
        name: "achieved requests/s".into(),
        color: P50,
        line: s
            .steps
            .iter()
            .map(|r| (r.offered.amount(), r.achieved_rps))
            .collect(),
        dots: s
            .steps
            .iter()
            .map(|r| {
                (
                    r.offered.amount(),
                    r.achieved_rps,
                    format!(
                        "{} offered: achieved {}/s, {:.2} % success",
                        offered(&r.offered),
                        thousands_f(r.achieved_rps),
                        r.success_ratio * 100.0
                    ),
                )
            })
            .collect(),
        ..Series::default()
    });
    thr
}

/// One box plot per scenario whose phases include a repetition > 1, in the order the
/// scenarios first appear among the phases.
fn boxplots(r: &RunResult) -> Vec<(String, BoxPlot)> {
    let mut order: Vec<&str> = Vec::new();
    for p in &r.phases {
        if let Some(s) = p.scenario.as_deref() {
            if !order.contains(&s) {
                order.push(s);
            }
        }
    }
    let mut out = Vec::new();
    for name in order {
        let phases: Vec<_> = r
            .phases
            .iter()
            .filter(|p| p.scenario.as_deref() == Some(name) && p.repetition.is_some())
            .collect();
        if !phases.iter().any(|p| p.repetition.unwrap_or(1) > 1) {
            continue;
        }
        let mut by_step: BTreeMap<u32, (String, Vec<(u32, BoxStat)>)> = BTreeMap::new();
        for p in phases {
            let Some(b) = box_stat(
                &p.measurement.histogram.response,
                format!("#{}", p.repetition.unwrap_or(1)),
            ) else {
                continue;
            };
            let step = p.step.unwrap_or(0);
            let label = match (p.offered_rate, p.offered_connections) {
                (Some(rate), _) => offered_label(Offered::Rate(rate)),
                (None, Some(c)) => offered_label(Offered::Concurrency(c)),
                _ => format!("step {}", step + 1),
            };
            by_step
                .entry(step)
                .or_insert_with(|| (label, Vec::new()))
                .1
                .push((p.repetition.unwrap_or(1), b));
        }
        if by_step.is_empty() {
            continue;
        }
        let groups = by_step
            .into_values()
            .map(|(label, mut boxes)| {
                boxes.sort_by_key(|(rep, _)| *rep);
                BoxGroup {
                    label,
                    boxes: boxes.into_iter().map(|(_, b)| b).collect(),
                }
            })
            .collect();
        out.push((
            name.to_string(),
            BoxPlot {
                title: format!("{name}: latency of each repetition"),
                y_label: "latency, ms".into(),
                x_label: "step (offered load) and repetition".into(),
                groups,
            },
        ));
    }
    out
}

fn box_stat(encoded: &str, label: String) -> Option<BoxStat> {
    let h = decode_histogram(encoded).ok()?;
    if h.is_empty() {
        return None;
    }
    let at = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Some(BoxStat {
        label,
        min: h.min() as f64 / 1000.0,
        p25: at(0.25),
        p50: at(0.5),
        p75: at(0.75),
        max: h.max() as f64 / 1000.0,
        outliers: Vec::new(),
    })
}

/// A per-second timeline of one metric of every monitored target, with the idle baseline
/// shaded and phase changes marked: `value` picks the metric from a sample.
fn monitor_chart(
    m: &MonitorReport,
    kind: &'static str,
    title: &str,
    unit: &str,
    value: fn(&perfbase_monitor::Sample) -> f64,
) -> Option<String> {
    let targets: Vec<_> = m
        .targets
        .iter()
        .filter(|t| !t.timeline.is_empty())
        .collect();
    if targets.is_empty() {
        return None;
    }
    let samples = || targets.iter().flat_map(|t| t.timeline.iter());
    let tmax = samples().map(|s| s.t_s).fold(1.0, f64::max);
    // 15 % headroom keeps the phase labels at the top clear of the lines.
    let vmax = 1.15 * samples().map(value).fold(1.0, f64::max);
    let mut chart = Chart::new(
        kind,
        title,
        Axis::linear("seconds since the monitor started", 0.0, tmax, 10),
        Axis::linear(unit, 0.0, vmax, 6),
    );
    for (i, t) in targets.iter().enumerate() {
        chart.series.push(Series {
            name: t.label.clone(),
            color: PALETTE[i % PALETTE.len()],
            line: t.timeline.iter().map(|s| (s.t_s, value(s))).collect(),
            dash: t.kind == "self",
            ..Series::default()
        });
    }
    // Phases, from the longest timeline: a sample covers the interval that ends at its t_s.
    let Some(longest) = targets.iter().max_by_key(|t| t.timeline.len()) else {
        return Some(chart.render());
    };
    let mut prev: Option<&str> = None;
    for s in &longest.timeline {
        if prev != Some(s.phase.as_str()) {
            let start = (s.t_s - m.interval_s).max(0.0);
            if s.phase == "idle" {
                let end = longest
                    .timeline
                    .iter()
                    .filter(|x| x.phase == "idle")
                    .map(|x| x.t_s)
                    .fold(start, f64::max);
                chart.bands.push(Band {
                    from: start,
                    to: end,
                    label: "idle".into(),
                });
            } else if prev.is_some() {
                chart.vmarks.push(Mark {
                    at: start,
                    label: s.phase.clone(),
                    color: "#8c959f",
                    dash: "3 3",
                });
            }
            prev = Some(s.phase.as_str());
        }
    }
    Some(chart.render())
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

/// Failed operations make a success cell red; full success stays plain.
fn success_class(ratio: f64) -> &'static str {
    if ratio < 1.0 {
        " class=\"fail\""
    } else {
        ""
    }
}

/// Status counts as `10,404 × 200, 7 × no status`: code 0 counts operations that got none.
fn status_counts(m: &BTreeMap<String, u64>) -> String {
    let mut named: BTreeMap<String, u64> = BTreeMap::new();
    for (code, n) in m {
        let key = if code == "0" {
            "no status".to_string()
        } else {
            code.clone()
        };
        *named.entry(key).or_default() += n;
    }
    counts(&named)
}

fn verdict_cell(passed: bool) -> &'static str {
    if passed {
        "<td class=\"pass\">pass</td>"
    } else {
        "<td class=\"fail\">FAIL</td>"
    }
}

fn verdict_span(passed: bool) -> &'static str {
    if passed {
        "<span class=\"pass\">pass</span>"
    } else {
        "<span class=\"fail\">FAIL</span>"
    }
}

/// A threshold's actual value in the threshold's unit.
fn actual(threshold: &str, v: f64) -> String {
    if v.is_nan() {
        return "-".to_string();
    }
    match parse_threshold(threshold).map(|t| t.metric) {
        Ok(Metric::LatencyMs(_)) => format!("{} ms", ms(v)),
        Ok(Metric::ErrorRate | Metric::SuccessRatio) => format!("{:.2} %", v * 100.0),
        Ok(Metric::Rps) => format!("{}/s", thousands_f(v)),
        Err(_) => format!("{v:.4}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_analysis::knee::{find_knee, KneeRule};
    use perfbase_analysis::sweep::step_row;
    use perfbase_core::result::{Env, LoadConfig, PhaseResult, Tool, SCHEMA};
    use perfbase_core::{Outcome, Recorder};
    use std::time::Duration;

    /// `n` operations at `ms` milliseconds (plus a little spread) over `secs` seconds.
    fn measurement(n: u64, ms: u64, secs: u64) -> Measurement {
        let mut rec = Recorder::new(false);
        for i in 0..n {
            rec.record(
                &Outcome::http(200, 100, 50),
                Duration::from_micros(ms * 1000 + (i % 10) * 100),
                Duration::ZERO,
                Duration::from_millis(i * secs * 1000 / n.max(1)),
            );
        }
        rec.finish();
        Measurement::from_recorder(&rec, Duration::from_secs(secs), None)
    }

    fn run(measurement: Measurement, phases: Vec<PhaseResult>, study: Option<Study>) -> RunResult {
        RunResult {
            schema: SCHEMA.into(),
            run_id: None,
            segment: None,
            clock_offset_ms: None,
            tool: Tool {
                name: "perfbase".into(),
                version: "0.1.0".into(),
            },
            started_at: "2026-01-01T00:00:00Z".into(),
            target: "http://localhost/".into(),
            protocol: "http".into(),
            model: Model::Closed,
            config: LoadConfig {
                threads: 1,
                connections: Some(8),
                rate: None,
                max_inflight: None,
                duration_s: Some(2.0),
                count: None,
                warmup_s: 0.0,
                timeout_s: 1.0,
                pacing_granularity_s: None,
                protocol: BTreeMap::new(),
            },
            interrupted: false,
            measurement,
            phases,
            study,
            monitor: None,
            env: Env::default(),
        }
    }

    fn charts(html: &str, kind: &str) -> usize {
        html.matches(&format!(r#"data-chart="{kind}""#)).count()
    }

    #[test]
    fn concurrency_ladder_draws_linear_scaling() {
        // Throughput 100/s per connection up to 400/s.
        let steps: Vec<_> = [1u64, 2, 4, 8]
            .iter()
            .map(|&c| {
                let thr = (100 * c).min(400);
                let m = measurement(thr * 2, 10 * c * 100 / thr, 2);
                step_row(&format!("c={c}"), Offered::Concurrency(c), &m, &[])
            })
            .collect();
        let knee = find_knee(&steps, &KneeRule::default());
        assert_eq!(knee.first_bad, Some(3));
        let study = Study {
            plan: "vu".into(),
            scale: 1.0,
            slo: vec!["p99 < 40ms".into(), "error_rate < 1%".into()],
            knee_rule: KneeRule::default(),
            scenarios: vec![ScenarioStudy {
                name: "vus".into(),
                kind: "concurrency ladder".into(),
                workload: "w".into(),
                target: "t".into(),
                repetitions: 1,
                steps,
                knee: Some(knee),
                operating_point: None,
                repetition_stats: Vec::new(),
                thresholds: Vec::new(),
                passed: true,
            }],
            checks: Vec::new(),
            passed: true,
            rankings: Vec::new(),
            versus: Vec::new(),
        };
        let r = run(measurement(100, 5, 2), Vec::new(), Some(study));
        let html = render(&[r]);
        assert_eq!(html.matches(r#"class="chart""#).count(), 4);
        assert_eq!(charts(&html, "latency-vs-rate"), 1);
        assert_eq!(charts(&html, "achieved-vs-offered"), 1);
        assert!(html.contains("linear scaling from the first step"));
        assert!(html.contains("offered load, concurrent connections"));
        assert!(html.contains(">knee c=8<"));
        assert!(html.contains(">SLO p99 &lt; 40ms<"));
        assert!(
            !html.contains("SLO error_rate"),
            "only latency SLOs are lines"
        );
    }

    #[test]
    fn repetitions_without_a_study_still_get_a_box_plot() {
        let phase = |rep: u32, ms: u64| PhaseResult {
            name: format!("steady #{rep}"),
            model: Model::Closed,
            scenario: Some("steady".into()),
            step: Some(0),
            repetition: Some(rep),
            offered_rate: None,
            offered_connections: Some(8),
            measurement: measurement(40, ms, 1),
        };
        let r = run(
            measurement(120, 3, 3),
            vec![phase(1, 2), phase(2, 3), phase(3, 2)],
            None,
        );
        let html = render(&[r]);
        assert_eq!(charts(&html, "boxplot"), 1);
        assert!(html.contains(">Repetitions<"));
        assert_eq!(
            html.matches("<rect x=").count(),
            3,
            "one box per repetition"
        );
        // One repetition only: no box plot.
        let r = run(measurement(40, 3, 1), vec![phase(1, 2)], None);
        assert_eq!(charts(&render(&[r]), "boxplot"), 0);
    }

    #[test]
    fn nines_for_grows_with_the_run() {
        assert_eq!(nines_for(0), 4);
        assert_eq!(nines_for(1_000), 4);
        assert_eq!(nines_for(150_000), 6);
        assert_eq!(nines_for(u64::MAX), MAX_NINES);
        assert_eq!(pct_label(0.999), "p99.9");
        assert_eq!(pct_label(0.5), "p50");
    }

    #[test]
    fn actual_values_in_the_threshold_unit() {
        assert_eq!(actual("p99 < 50ms", 12.345), "12.3 ms");
        assert_eq!(actual("error_rate < 1%", 0.0123), "1.23 %");
        assert_eq!(actual("rps > 100", 250.0), "250.0/s");
        assert_eq!(actual("p99 < 50ms", f64::NAN), "-");
    }

    #[test]
    fn study_with_null_figures_reads_back_as_nan_and_renders() {
        let v = serde_json::json!({
            "plan": "p", "scale": 1.0, "slo": [],
            "knee_rule": {"min_throughput_ratio": 0.95, "p99_factor": 3.0, "max_error_ratio": 0.01, "min_gain": 0.05},
            "scenarios": [{
                "name": "s", "kind": "constant", "workload": "w", "target": "t", "repetitions": 1,
                "steps": [{"name": "a", "offered": {"rate": 10.0}, "achieved_rps": 0.0, "success_ratio": 1.0,
                           "p50_ms": 0.0, "p90_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0,
                           "under_ms": [[10.0, null]]}],
                "repetition_stats": [],
                "thresholds": [{"phase": "a", "threshold": "p99 < 5ms", "actual": null, "passed": false}],
                "passed": false
            }],
            "checks": [], "passed": false
        });
        let s: Study = serde_json::from_value(v).expect("parses");
        assert!(s.scenarios[0].steps[0].under_ms[0].1.is_nan());
        assert!(s.scenarios[0].thresholds[0].verdict.actual.is_nan());
        assert!(serde_json::from_value::<Study>(serde_json::json!({"plan": 1})).is_err());
        // A whole result with such a study reads back, and every renderer shows the study.
        let r = run(measurement(50, 2, 1), Vec::new(), Some(s));
        let back: RunResult =
            serde_json::from_str(&serde_json::to_string(&r).unwrap()).expect("reads back");
        let study = back.study.as_ref().expect("the study is kept");
        assert!(study.scenarios[0].thresholds[0].verdict.actual.is_nan());
        assert!(render(std::slice::from_ref(&back)).contains("Findings"));
        assert!(crate::markdown::render_any(&back).contains("# Performance study: p"));
        assert!(crate::junit::render(&[("r".into(), &back)]).contains("p99 &lt; 5ms"));
    }
}
