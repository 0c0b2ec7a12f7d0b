//! Horizontal bars with interval whiskers: a row per label, a bar per series in each row, the
//! whisker drawn over the bar when the runs gave an interval.

use super::axis::{axis_lines, escape, open_svg, text_width, Axis, WIDTH};
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
        let row_h = 8.0 + 14.0 * self.series.len().max(1) as f64;
        let legend = if self.series.len() > 1 { 22.0 } else { 0.0 };
        let top = 44.0 + legend;
        let bottom = top + row_h * self.rows.len() as f64;
        let widest = self
            .rows
            .iter()
            .map(|(l, _)| text_width(l, 11.0))
            .fold(0.0, f64::max);
        let left = (widest + 18.0).clamp(80.0, WIDTH * 0.4);
        let pw = WIDTH - left - 36.0;
        let x = Axis::linear(self.unit.clone(), 0.0, self.highest(), 6);
        let px = |v: f64| left + pw * x.frac(v).clamp(0.0, 1.0);
        let mut out = String::new();
        open_svg(&mut out, self.kind, &self.title, bottom + 50.0);
        self.legend(&mut out, left);
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
                let series = &self.series[j.min(self.series.len() - 1)];
                let y = y0 + 14.0 * j as f64;
                draw_bar(&mut out, (label, series), b, (left, y), &px);
            }
        }
        axis_lines(&mut out, left, top, pw, bottom - top);
        let _ = write!(
            out,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text></svg>"#,
            left + pw / 2.0,
            bottom + 38.0,
            escape(&self.unit)
        );
        out
    }

    /// The axis's end: the highest bar or whisker, or 1 with nothing to draw.
    fn highest(&self) -> f64 {
        let hi = self
            .rows
            .iter()
            .flat_map(|(_, bars)| bars.iter().flatten())
            .map(|b| b.whisker.map_or(b.value, |w| w.1.max(b.value)))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        if hi > 0.0 {
            hi
        } else {
            1.0
        }
    }

    /// The series' names and colours above the bars, when there are several.
    fn legend(&self, out: &mut String, left: f64) {
        if self.series.len() < 2 {
            return;
        }
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
}

/// One bar at `(left, y)` of row `label` in `series`, with its whisker and a tooltip.
fn draw_bar(
    out: &mut String,
    (label, (name, color)): (&str, &(String, &'static str)),
    b: &Bar,
    (left, y): (f64, f64),
    px: &dyn Fn(f64) -> f64,
) {
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

fn fig(v: f64) -> String {
    if v >= 100.0 {
        crate::thousands_f(v)
    } else {
        crate::study_text::ms(v)
    }
}
