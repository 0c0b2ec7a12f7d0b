//! The trend as a self-contained HTML page, in the run report's style: one chart per series
//! (x = time since the first run), each run a dot named by its labels and source, segment
//! means as steps, change points and environment changes as vertical lines, bursts as dots of
//! their own colour.

use super::{changes_text, figure, percent};
use crate::svg::{escape, figure as caption_figure, Axis, Chart, Mark, Series as Line, PALETTE};
use perfbase_core::clock::parse_time;
use perfbase_core::trend::{Series, Trend};
use std::time::UNIX_EPOCH;

/// The page: a heading, the gate's verdict when there is one, then the charts.
pub fn render(trend: &Trend, title: &str) -> String {
    let mut out = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{t}</title><style>{style}</style></head><body>\n<h1>{t}</h1>\n",
        t = escape(title),
        style = crate::page::markup::STYLE,
    );
    body(&mut out, trend);
    out.push_str("</body></html>\n");
    out
}

/// The page's content under its heading (`perfbase ui` shows it in a page of its own, with
/// [`crate::page::markup::STYLE`]).
pub fn body(out: &mut String, trend: &Trend) {
    out.push_str(&format!(
        "<p class=\"intro\">{} series. Change points by E-Divisive means, each kept only when \
         a t test of level or of spread between its neighbouring segments (runs as units) \
         gives p &lt; {} (a change of level also by at least {:.1} %). Bursts (1 to 3 runs far \
         off the level that return to it) are outlier events, drawn apart and left out; runs \
         that are alike from one to the next count as fewer. Hover a point for its run, time, \
         labels and commit.</p>\n",
        trend.series.len(),
        trend.max_p,
        trend.min_change * 100.0
    ));
    if let Some(check) = &trend.check {
        out.push_str(&format!(
            "<pre>{}</pre>\n",
            escape(&super::check_text(check))
        ));
    }
    for s in &trend.series {
        out.push_str(&format!("<section><h2>{}</h2>\n", escape(&s.name)));
        match chart(s) {
            Some(svg) => caption_figure(out, &svg, &changes_caption(s)),
            None => out.push_str("<p>Too few runs to draw.</p>\n"),
        }
        out.push_str("</section>\n");
    }
}

fn changes_caption(s: &Series) -> String {
    let mut caption = format!(
        "Change points: {}. Current segment: {} over {} runs.",
        changes_text(s),
        figure(s, s.segment.mean),
        s.segment.runs
    );
    for line in super::noise_lines(s) {
        // The series' name heads the section already.
        let line = line.strip_prefix(&format!("{}: ", s.name)).unwrap_or(&line);
        caption.push(' ');
        caption.push_str(line);
        caption.push('.');
    }
    caption
}

/// Seconds since the epoch of each point, or its position when a time is missing.
fn times(s: &Series) -> (Vec<f64>, &'static str) {
    let secs: Option<Vec<f64>> = s
        .points
        .iter()
        .map(|p| {
            parse_time(&p.at)
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs_f64())
        })
        .collect();
    match secs {
        Some(t) if t.len() > 1 => {
            let first = t[0];
            let span = t[t.len() - 1] - first;
            let (unit, scale) = if span > 3.0 * 86_400.0 {
                ("days since the first run", 86_400.0)
            } else if span > 3.0 * 3600.0 {
                ("hours since the first run", 3600.0)
            } else {
                ("minutes since the first run", 60.0)
            };
            (t.iter().map(|v| (v - first) / scale).collect(), unit)
        }
        _ => ((0..s.points.len()).map(|i| i as f64).collect(), "run"),
    }
}

fn chart(s: &Series) -> Option<String> {
    if s.points.len() < 2 {
        return None;
    }
    let (x, x_label) = times(s);
    let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
    let (y_lo, y_hi) = y_range(&values);
    let x_max = x.last().copied().unwrap_or(1.0).max(1e-9);
    let y_label = format!("{} ({})", s.metric, s.unit);
    let mut c = Chart::new(
        "trend",
        s.name.clone(),
        Axis::linear(x_label, 0.0, x_max, 8),
        Axis::linear(y_label, y_lo, y_hi, 6),
    );
    c.series.push(Line {
        name: s.metric.clone(),
        color: PALETTE[0],
        line: x.iter().copied().zip(values.iter().copied()).collect(),
        dots: run_dots(s, &x),
        ..Line::default()
    });
    if !s.bursts.is_empty() {
        let dots = (0..s.points.len())
            .filter(|&i| s.in_burst(i))
            .map(|i| {
                let p = &s.points[i];
                let tip = format!(
                    "run {}: {}, burst (outlier event)",
                    p.run,
                    figure(s, p.value)
                );
                (x[i], p.value, tip)
            })
            .collect();
        c.series.push(Line {
            name: "burst".into(),
            color: PALETTE[7],
            dots,
            ..Line::default()
        });
    }
    c.series.push(Line {
        name: "segment mean".into(),
        color: PALETTE[1],
        line: segment_steps(s, &x),
        dash: true,
        ..Line::default()
    });
    for cp in &s.change_points {
        c.vmarks.push(Mark {
            at: x[cp.index],
            label: format!("{} {}", percent(cp.change), cp.direction),
            color: if cp.direction == "worse" {
                "#b42318"
            } else {
                "#2f9e44"
            },
            dash: "",
        });
    }
    for e in &s.environment_changes {
        c.vmarks.push(Mark {
            at: x[e.index],
            label: "environment changed".into(),
            color: "#57606a",
            dash: "4 3",
        });
    }
    Some(c.render())
}

/// The y axis' range: the values with a tenth of their spread (at least 1 % of the largest)
/// either side, never below 0 unless a value is.
fn y_range(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.01);
    // Every value zero (an error rate that never moved): an axis up to 1, where 1e-9 drew
    // ticks no one can read.
    let pad = if pad > 0.0 { pad } else { 1.0 };
    ((lo - pad).max(0.0).min(lo), hi + pad)
}

/// A dot per run, its tooltip naming the run, when it started, its labels and its figure.
fn run_dots(s: &Series, x: &[f64]) -> Vec<(f64, f64, String)> {
    s.points
        .iter()
        .zip(x)
        .map(|(p, &xv)| {
            let mut tip = format!("run {}", p.run);
            if !p.at.is_empty() {
                tip.push_str(&format!(" · {}", p.at));
            }
            for (k, v) in p.labels.iter() {
                tip.push_str(&format!(" · {k}={v}"));
            }
            tip.push_str(&format!(": {}", figure(s, p.value)));
            (xv, p.value, tip)
        })
        .collect()
}

/// The segment means (bursts left out) as a step line: flat within a segment, a NaN gap
/// between segments.
fn segment_steps(s: &Series, x: &[f64]) -> Vec<(f64, f64)> {
    let mut cuts: Vec<usize> = vec![0];
    cuts.extend(s.change_points.iter().map(|c| c.index));
    cuts.push(s.points.len());
    let mut line = Vec::new();
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let kept: Vec<f64> = (a..b)
            .filter(|&i| !s.in_burst(i))
            .map(|i| s.points[i].value)
            .collect();
        let mean = if kept.is_empty() {
            s.points[a..b].iter().map(|p| p.value).sum::<f64>() / (b - a) as f64
        } else {
            kept.iter().sum::<f64>() / kept.len() as f64
        };
        line.push((x[a], mean));
        line.push((x[b - 1], mean));
        line.push((f64::NAN, f64::NAN));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(got: (f64, f64), want: (f64, f64)) -> bool {
        (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-9
    }

    #[test]
    fn the_y_axis_pads_the_values_and_an_all_zero_series_goes_up_to_one() {
        // An error rate of 0 in every run: the axis used to end at 1e-9.
        assert_eq!(y_range(&[0.0, 0.0, 0.0]), (0.0, 1.0));
        // A tenth of the spread either side, or 1 % of the largest value when that is more.
        let r = y_range(&[100.0, 200.0]);
        assert!(near(r, (90.0, 210.0)), "{r:?}");
        let r = y_range(&[100.0, 110.0]);
        assert!(near(r, (98.9, 111.1)), "{r:?}");
        let r = y_range(&[50.0, 50.0]);
        assert!(near(r, (49.5, 50.5)), "{r:?}");
        // Never below 0 for positive values, but a negative value stays on the chart.
        assert_eq!(y_range(&[0.0, 10.0]).0, 0.0);
        assert_eq!(y_range(&[-5.0, 10.0]).0, -5.0);
    }
}
