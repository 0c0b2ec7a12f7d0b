//! A box plot: whiskers min–max, box p25–p75, a bar at the median, outliers as circles.

use super::axis::*;
use std::fmt::Write;

/// One box of a [`BoxPlot`], in ms.
#[derive(Debug, Clone)]
pub(crate) struct BoxStat {
    pub label: String,
    pub min: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub max: f64,
    /// Values drawn as circles beyond the whiskers (none for a histogram's box).
    pub outliers: Vec<f64>,
}

impl BoxStat {
    /// A box over a few values (a statistic's runs): p25, p50 and p75 by linear interpolation;
    /// values more than 1.5 × IQR beyond the box are outliers, drawn as circles, and the
    /// whiskers reach the least and greatest of the others. `None` without values.
    pub fn of_values(label: String, values: &[f64]) -> Option<BoxStat> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let at = p * (v.len() - 1) as f64;
            let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
        };
        let (p25, p50, p75) = (q(0.25), q(0.5), q(0.75));
        let fence = 1.5 * (p75 - p25);
        let inside = |x: &f64| *x >= p25 - fence && *x <= p75 + fence;
        let kept: Vec<f64> = v.iter().copied().filter(inside).collect();
        Some(BoxStat {
            label,
            min: kept.first().copied().unwrap_or(p25),
            p25,
            p50,
            p75,
            max: kept.last().copied().unwrap_or(p75),
            outliers: v.iter().copied().filter(|x| !inside(x)).collect(),
        })
    }
}

/// Boxes drawn side by side under one label (e.g. the repetitions of one step).
#[derive(Debug, Clone)]
pub(crate) struct BoxGroup {
    pub label: String,
    pub boxes: Vec<BoxStat>,
}

/// A box plot: whiskers min–max, box p25–p75, a bar at the median.
#[derive(Debug, Clone)]
pub(crate) struct BoxPlot {
    pub title: String,
    pub y_label: String,
    pub x_label: String,
    pub groups: Vec<BoxGroup>,
}

impl BoxPlot {
    /// The plot as one `<svg class="chart" data-chart="boxplot">` element.
    pub fn render(&self) -> String {
        let mut out = String::new();
        open_svg(&mut out, "boxplot", &self.title, HEIGHT);
        let area = self.area();
        area.grid(&mut out);
        let slots = self.slots(area.pw);
        let mut x = area.left;
        for (gi, g) in self.groups.iter().enumerate() {
            if gi > 0 {
                x = area.separator(&mut out, x, &slots);
            }
            x = area.group(&mut out, g, x, &slots);
        }
        axis_lines(&mut out, area.left, area.top, area.pw, area.ph);
        area.axis_labels(&mut out, &self.x_label);
        out.push_str("</svg>");
        out
    }

    /// The plot area, its y axis reaching from the least positive value drawn to the greatest.
    fn area(&self) -> Area {
        let all = || self.groups.iter().flat_map(|g| g.boxes.iter());
        let lo = all()
            .flat_map(|b| b.outliers.iter().copied().chain([b.min]))
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let hi = all()
            .flat_map(|b| b.outliers.iter().copied().chain([b.max]))
            .fold(0.0, f64::max);
        let (top, left, right, bottom) = (44.0, 72.0, 28.0, 62.0);
        Area {
            y: Axis::latency(self.y_label.clone(), lo, hi),
            top,
            left,
            pw: WIDTH - left - right,
            ph: HEIGHT - top - bottom,
        }
    }

    /// Slots: one per box, plus half a slot between groups, sharing the plot's width.
    fn slots(&self, pw: f64) -> Slots {
        let n_boxes: usize = self.groups.iter().map(|g| g.boxes.len()).sum();
        let gaps = self.groups.len().saturating_sub(1) as f64 * 0.5;
        let slot = pw / (n_boxes as f64 + gaps).max(1.0);
        Slots {
            slot,
            box_width: (slot * 0.55).min(44.0),
        }
    }
}

/// Where the boxes are drawn: the plot area within the view box, and the y axis that maps
/// milliseconds onto it.
struct Area {
    y: Axis,
    top: f64,
    left: f64,
    pw: f64,
    ph: f64,
}

/// The width each box has to itself, and the width of the box drawn in it.
struct Slots {
    slot: f64,
    box_width: f64,
}

impl Area {
    fn y_of(&self, v: f64) -> f64 {
        self.top + self.ph * (1.0 - self.y.frac(v))
    }

    /// A grid line and a label at each tick of the y axis.
    fn grid(&self, out: &mut String) {
        let (left, pw) = (self.left, self.pw);
        for (v, label) in self.y.ticks() {
            let yy = self.y_of(*v);
            let _ = write!(
                out,
                r#"<line class="grid" x1="{left:.1}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left + pw,
                left - 8.0,
                yy + 4.0,
                escape(label)
            );
        }
    }

    /// The line between two groups, in the half slot that parts them; returns where the next
    /// group starts.
    fn separator(&self, out: &mut String, x: f64, slots: &Slots) -> f64 {
        let (top, ph) = (self.top, self.ph);
        let sep = x + slots.slot * 0.25;
        let _ = write!(
            out,
            r#"<line class="grid" x1="{sep:.1}" y1="{top:.1}" x2="{sep:.1}" y2="{:.1}"/>"#,
            top + ph + 34.0
        );
        x + slots.slot * 0.5
    }

    /// A group's boxes from `x` on, with the group's label centred under them; returns where
    /// the group ends.
    fn group(&self, out: &mut String, g: &BoxGroup, x: f64, slots: &Slots) -> f64 {
        let g_start = x;
        let mut x = x;
        for b in &g.boxes {
            self.one_box(out, &g.label, b, x + slots.slot / 2.0, slots.box_width);
            x += slots.slot;
        }
        let _ = write!(
            out,
            r#"<text class="group" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (g_start + x) / 2.0,
            self.top + self.ph + 32.0,
            escape(&g.label)
        );
        x
    }

    /// One box centred on `cx`: whiskers, box, median bar and a tooltip with the figures, then
    /// its outliers and its label.
    fn one_box(&self, out: &mut String, group: &str, b: &BoxStat, cx: f64, bw: f64) {
        let (y_min, y_25, y_50, y_75, y_max) = (
            self.y_of(b.min),
            self.y_of(b.p25),
            self.y_of(b.p50),
            self.y_of(b.p75),
            self.y_of(b.max),
        );
        let tip = format!(
            "{} {}: min {} · p25 {} · median {} · p75 {} · max {} ms",
            group,
            b.label,
            crate::study_text::ms(b.min),
            crate::study_text::ms(b.p25),
            crate::study_text::ms(b.p50),
            crate::study_text::ms(b.p75),
            crate::study_text::ms(b.max)
        );
        let _ = write!(
            out,
            r##"<g><title>{}</title><line x1="{cx:.1}" y1="{y_max:.1}" x2="{cx:.1}" y2="{y_min:.1}" stroke="#57606a" stroke-width="1.2"/><line x1="{:.1}" y1="{y_max:.1}" x2="{:.1}" y2="{y_max:.1}" stroke="#57606a" stroke-width="1.2"/><line x1="{:.1}" y1="{y_min:.1}" x2="{:.1}" y2="{y_min:.1}" stroke="#57606a" stroke-width="1.2"/><rect x="{:.1}" y="{y_75:.1}" width="{bw:.1}" height="{:.1}" fill="#dbe9ff" stroke="#1f6feb" stroke-width="1.5"/><line x1="{:.1}" y1="{y_50:.1}" x2="{:.1}" y2="{y_50:.1}" stroke="#0b3d91" stroke-width="3"/></g>"##,
            escape(&tip),
            cx - bw / 4.0,
            cx + bw / 4.0,
            cx - bw / 4.0,
            cx + bw / 4.0,
            cx - bw / 2.0,
            (y_25 - y_75).max(1.0),
            cx - bw / 2.0,
            cx + bw / 2.0,
        );
        for o in &b.outliers {
            let _ = write!(
                out,
                r##"<circle class="outlier" cx="{cx:.1}" cy="{:.1}" r="3.5" fill="none" stroke="#cf222e" stroke-width="1.3"><title>{} {}: outlier {} ms</title></circle>"##,
                self.y_of(*o),
                escape(group),
                escape(&b.label),
                crate::study_text::ms(*o)
            );
        }
        let _ = write!(
            out,
            r#"<text class="tick" x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            self.top + self.ph + 16.0,
            escape(&b.label)
        );
    }

    /// The x axis's label under the groups, and the y axis's along its side.
    fn axis_labels(&self, out: &mut String, x_label: &str) {
        let (top, left, pw, ph) = (self.top, self.left, self.pw, self.ph);
        let _ = write!(
            out,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="label" transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">{}{}</text>"#,
            left + pw / 2.0,
            top + ph + 52.0,
            escape(x_label),
            top + ph / 2.0,
            escape(&self.y.label),
            if self.y.is_log() { " (log scale)" } else { "" }
        );
    }
}
