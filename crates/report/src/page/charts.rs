//! The page's charts, for its HTML only (the Markdown keeps the tables): per section, a bar
//! per row of its key figure with the 95 % interval of the median run as a whisker; the
//! latency percentiles of each row as a curve; and each service's CPU and memory idle against
//! under load. Inline SVG drawn with the run report's primitives, nothing fetched.

use super::markup::Block;
use super::precision::stats_of;
use crate::svg::{escape, open_svg, text_width, Axis, Chart, Series, PALETTE, WIDTH};
use perfbase_core::monitor::MonitorReport;
use perfbase_core::study::{ScenarioStudy, StepRow, Summary};
use std::fmt::Write;

/// One bar: its value and, when the runs gave one, the interval drawn as a whisker.
pub(crate) struct Bar {
    pub value: f64,
    pub whisker: Option<(f64, f64)>,
}

/// Horizontal bars, a row per label and a bar per series in each row.
pub(crate) struct Bars {
    pub kind: &'static str,
    pub title: String,
    pub unit: String,
    pub series: Vec<(String, &'static str)>,
    pub rows: Vec<(String, Vec<Option<Bar>>)>,
}

impl Bars {
    pub fn render(&self) -> String {
        let per_row = self.series.len().max(1) as f64;
        let row_h = 8.0 + 14.0 * per_row;
        let legend = if self.series.len() > 1 { 22.0 } else { 0.0 };
        let top = 44.0 + legend;
        let height = top + row_h * self.rows.len() as f64 + 50.0;
        let widest = self
            .rows
            .iter()
            .map(|(l, _)| text_width(l, 11.0))
            .fold(0.0, f64::max);
        let left = (widest + 18.0).clamp(80.0, WIDTH * 0.4);
        let pw = WIDTH - left - 36.0;
        let hi = self
            .rows
            .iter()
            .flat_map(|(_, bars)| bars.iter().flatten())
            .map(|b| b.whisker.map_or(b.value, |w| w.1.max(b.value)))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let x = Axis::linear(self.unit.clone(), 0.0, if hi > 0.0 { hi } else { 1.0 }, 6);
        let px = |v: f64| left + pw * x.frac(v).clamp(0.0, 1.0);
        let mut out = String::new();
        open_svg(&mut out, self.kind, &self.title, height);
        if self.series.len() > 1 {
            let mut lx = left;
            for (name, color) in &self.series {
                let _ = write!(
                    out,
                    r#"<rect x="{lx:.1}" y="46" width="14" height="10" fill="{color}"/><text class="legend" x="{:.1}" y="55">{}</text>"#,
                    lx + 20.0,
                    escape(name)
                );
                lx += 40.0 + text_width(name, 12.0);
            }
        }
        let bottom = top + row_h * self.rows.len() as f64;
        for (v, label) in x.ticks() {
            let at = px(*v);
            let _ = write!(
                out,
                r#"<line class="grid" x1="{at:.1}" y1="{top:.1}" x2="{at:.1}" y2="{bottom:.1}"/><text class="tick" x="{at:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                bottom + 16.0,
                escape(label)
            );
        }
        for (i, (label, bars)) in self.rows.iter().enumerate() {
            let y0 = top + row_h * i as f64 + 4.0;
            let _ = write!(
                out,
                r#"<text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 8.0,
                y0 + row_h / 2.0,
                escape(label)
            );
            for (j, bar) in bars.iter().enumerate() {
                let Some(b) = bar.as_ref().filter(|b| b.value.is_finite()) else {
                    continue;
                };
                let (name, color) = &self.series[j.min(self.series.len() - 1)];
                let y = y0 + 14.0 * j as f64;
                let tip = match b.whisker {
                    Some((lo, hi)) => format!(
                        "{label} {name}: {}, 95 % interval {}–{}",
                        fig(b.value),
                        fig(lo),
                        fig(hi)
                    ),
                    None => format!("{label} {name}: {}", fig(b.value)),
                };
                let _ = write!(
                    out,
                    r#"<g><title>{}</title><rect x="{left:.1}" y="{y:.1}" width="{:.1}" height="11" fill="{color}" fill-opacity="0.75"/>"#,
                    escape(&tip),
                    (px(b.value) - left).max(0.5)
                );
                if let Some((lo, hi)) = b.whisker {
                    let (xl, xh, ym) = (px(lo), px(hi), y + 5.5);
                    let _ = write!(
                        out,
                        r##"<line class="whisker" x1="{xl:.1}" y1="{ym:.1}" x2="{xh:.1}" y2="{ym:.1}" stroke="#24292f" stroke-width="1.3"/><line x1="{xl:.1}" y1="{:.1}" x2="{xl:.1}" y2="{:.1}" stroke="#24292f"/><line x1="{xh:.1}" y1="{:.1}" x2="{xh:.1}" y2="{:.1}" stroke="#24292f"/>"##,
                        y + 1.0,
                        y + 10.0,
                        y + 1.0,
                        y + 10.0
                    );
                }
                out.push_str("</g>");
            }
        }
        let _ = write!(
            out,
            r#"<line class="axis" x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{bottom:.1}"/><line class="axis" x1="{left:.1}" y1="{bottom:.1}" x2="{:.1}" y2="{bottom:.1}"/><text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text></svg>"#,
            left + pw,
            left + pw / 2.0,
            bottom + 38.0,
            escape(&self.unit)
        );
        out
    }
}

fn fig(v: f64) -> String {
    if v >= 100.0 {
        crate::thousands_f(v)
    } else {
        crate::study_text::ms(v)
    }
}

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
        let idle = t.phases.iter().find(|p| p.name == "idle");
        let load: Vec<_> = t
            .phases
            .iter()
            .filter(|p| p.name != "idle" && !p.name.ends_with("cool-down"))
            .collect();
        let n: usize = load.iter().map(|p| p.samples).sum();
        let mean = |f: &dyn Fn(&perfbase_core::monitor::PhaseStats) -> f64| {
            (n > 0).then(|| load.iter().map(|p| f(p) * p.samples as f64).sum::<f64>() / n as f64)
        };
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
