//! The page's charts, for its HTML only (the Markdown keeps the tables): per section, a bar
//! per row of its key figure with the 95 % interval of the median run as a whisker; the
//! latency percentiles of each row as a curve; and each service's CPU and memory idle against
//! under load. Inline SVG drawn with the run report's primitives, nothing fetched.

use super::markup::Block;
use super::precision::stats_of;
use crate::svg::{Axis, Bar, Bars, Chart, Series, PALETTE};
use perfbase_core::monitor::MonitorReport;
use perfbase_core::study::{ScenarioStudy, StepRow, Summary};

/// The bar of a figure: the median run's with its interval when the runs gave one (so the
/// whisker surrounds the bar), else the merged figure without a whisker.
fn bar(merged: f64, summary: Option<&Summary>) -> Bar {
    match summary.filter(|s| s.ci95.0.is_finite() && s.ci95.1.is_finite() && s.median.is_finite()) {
        Some(s) => Bar {
            value: s.median,
            whisker: Some(s.ci95),
        },
        None => Bar {
            value: merged,
            whisker: None,
        },
    }
}

/// Which figure a row is drawn by: p99 latency for request/response tables, else throughput.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Key {
    P99,
    Throughput,
}

/// A section's rows: (label, scenario, step).
pub(crate) type Rows<'a> = Vec<(String, &'a ScenarioStudy, &'a StepRow)>;

/// The bars of a section's rows by `key`, and their percentile curves.
pub(crate) fn section_charts(title: &str, rows: &Rows<'_>, key: Key) -> Vec<Block> {
    if rows.is_empty() {
        return Vec::new();
    }
    let (unit, what) = match key {
        Key::P99 => ("p99 latency, ms", "p99 latency"),
        Key::Throughput => ("throughput, per second", "throughput"),
    };
    let bars = rows
        .iter()
        .map(|(label, s, row)| {
            let r = stats_of(s, &row.name);
            let b = match key {
                Key::P99 => bar(row.p99_ms, r.map(|r| &r.p99_ms)),
                Key::Throughput => bar(row.achieved_rps, r.map(|r| &r.rps)),
            };
            (label.clone(), vec![Some(b)])
        })
        .collect();
    let chart = Bars {
        kind: "bars",
        title: format!("{title}: {what} per row"),
        unit: unit.into(),
        series: vec![(what.into(), PALETTE[0])],
        rows: bars,
    };
    vec![
        Block::Figure {
            svg: chart.render(),
            caption: format!(
                "{what} of each row: the median run, with the 95 % interval of the median as a \
                 whisker (none with fewer than 5 runs: the merged figure alone)"
            ),
        },
        Block::Figure {
            svg: curves(title, rows),
            caption: "latency at each percentile, per row (merged over its runs)".into(),
        },
    ]
}

/// Latency from p50 to max, one line per row (the first eight).
fn curves(title: &str, rows: &Rows<'_>) -> String {
    const AT: [&str; 6] = ["p50", "p90", "p95", "p99", "max", ""];
    let points = |r: &StepRow| [r.p50_ms, r.p90_ms, r.p95_ms, r.p99_ms, r.max_ms];
    let shown = &rows[..rows.len().min(PALETTE.len())];
    let all = || {
        shown
            .iter()
            .flat_map(|(_, _, r)| points(r))
            .filter(|v| v.is_finite())
    };
    let lo = all().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let hi = all().fold(0.0, f64::max);
    let x = Axis::categories("percentile", &AT[..5]);
    let y = Axis::latency("latency, ms", lo, if hi > 0.0 { hi } else { 1.0 });
    let mut chart = Chart::new("percentiles", format!("{title}: latency percentiles"), x, y);
    for (i, (label, _, r)) in shown.iter().enumerate() {
        let line: Vec<(f64, f64)> = points(r)
            .iter()
            .enumerate()
            .map(|(k, v)| (k as f64, *v))
            .collect();
        let dots = line
            .iter()
            .map(|&(k, v)| {
                (
                    k,
                    v,
                    format!(
                        "{label} {}: {} ms",
                        AT[k as usize],
                        crate::study_text::ms(v)
                    ),
                )
            })
            .collect();
        chart.series.push(Series {
            name: label.clone(),
            color: PALETTE[i % PALETTE.len()],
            line,
            dots,
            ..Series::default()
        });
    }
    chart.render()
}

/// CPU (% of one core) and resident memory (MiB) of each watched service, idle against the
/// mean under load.
pub(crate) fn resources(m: &MonitorReport) -> Vec<Block> {
    let series = vec![
        ("idle".to_string(), "#8c959f"),
        ("under load".to_string(), PALETTE[0]),
    ];
    let mut cpu = Vec::new();
    let mut rss = Vec::new();
    for t in &m.targets {
        let idle = t.idle();
        let mean = |f: &dyn Fn(&perfbase_core::monitor::PhaseStats) -> f64| t.loaded_mean(f);
        let value = |v: Option<f64>| {
            v.filter(|v| v.is_finite()).map(|value| Bar {
                value,
                whisker: None,
            })
        };
        let mib = 1024.0 * 1024.0;
        cpu.push((
            t.label.clone(),
            vec![
                value(idle.map(|p| p.cpu_pct.mean)),
                value(mean(&|p| p.cpu_pct.mean)),
            ],
        ));
        rss.push((
            t.label.clone(),
            vec![
                value(idle.map(|p| p.rss_bytes.mean / mib)),
                value(mean(&|p| p.rss_bytes.mean / mib)),
            ],
        ));
    }
    if cpu.is_empty() {
        return Vec::new();
    }
    let chart = |kind, title: &str, unit: &str, rows| Bars {
        kind,
        title: title.into(),
        unit: unit.into(),
        series: series.clone(),
        rows,
    };
    vec![
        Block::Figure {
            svg: chart(
                "resources-cpu",
                "CPU idle and under load",
                "CPU, % of one core",
                cpu,
            )
            .render(),
            caption: "mean CPU of each service idle, and over every measured phase (weighted by \
                      samples)"
                .into(),
        },
        Block::Figure {
            svg: chart(
                "resources-rss",
                "Memory idle and under load",
                "RSS, MiB",
                rss,
            )
            .render(),
            caption: "mean resident memory of each service idle, and over every measured phase"
                .into(),
        },
    ]
}
