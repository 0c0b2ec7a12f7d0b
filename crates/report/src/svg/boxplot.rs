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
        let h = HEIGHT;
        open_svg(&mut out, "boxplot", &self.title, h);
        let all = || self.groups.iter().flat_map(|g| g.boxes.iter());
        let lo = all()
            .flat_map(|b| b.outliers.iter().copied().chain([b.min]))
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let hi = all()
            .flat_map(|b| b.outliers.iter().copied().chain([b.max]))
            .fold(0.0, f64::max);
        let y = Axis::latency(self.y_label.clone(), lo, hi);
        let (top, left, right, bottom) = (44.0, 72.0, 28.0, 62.0);
        let pw = WIDTH - left - right;
        let ph = h - top - bottom;
        let py = |v: f64| top + ph * (1.0 - y.frac(v));
        for (v, label) in y.ticks() {
            let yy = py(*v);
            let _ = write!(
                out,
                r#"<line class="grid" x1="{left:.1}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left + pw,
                left - 8.0,
                yy + 4.0,
                escape(label)
            );
        }
        // Slots: one per box, plus half a slot between groups.
        let n_boxes: usize = self.groups.iter().map(|g| g.boxes.len()).sum();
        let gaps = self.groups.len().saturating_sub(1) as f64 * 0.5;
        let slot = pw / (n_boxes as f64 + gaps).max(1.0);
        let bw = (slot * 0.55).min(44.0);
        let mut x = left;
        for (gi, g) in self.groups.iter().enumerate() {
            if gi > 0 {
                let sep = x + slot * 0.25;
                let _ = write!(
                    out,
                    r#"<line class="grid" x1="{sep:.1}" y1="{top:.1}" x2="{sep:.1}" y2="{:.1}"/>"#,
                    top + ph + 34.0
                );
                x += slot * 0.5;
            }
            let g_start = x;
            for b in &g.boxes {
                let cx = x + slot / 2.0;
                let (y_min, y_25, y_50, y_75, y_max) =
                    (py(b.min), py(b.p25), py(b.p50), py(b.p75), py(b.max));
                let tip = format!(
                    "{} {}: min {} · p25 {} · median {} · p75 {} · max {} ms",
                    g.label,
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
                        py(*o),
                        escape(&g.label),
                        escape(&b.label),
                        crate::study_text::ms(*o)
                    );
                }
                let _ = write!(
                    out,
                    r#"<text class="tick" x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    top + ph + 16.0,
                    escape(&b.label)
                );
                x += slot;
            }
            let _ = write!(
                out,
                r#"<text class="group" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                (g_start + x) / 2.0,
                top + ph + 32.0,
                escape(&g.label)
            );
        }
        axis_lines(&mut out, left, top, pw, ph);
        let _ = write!(
            out,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="label" transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">{}{}</text>"#,
            left + pw / 2.0,
            top + ph + 52.0,
            escape(&self.x_label),
            top + ph / 2.0,
            escape(&y.label),
            if y.is_log() { " (log scale)" } else { "" }
        );
        out.push_str("</svg>");
        out
    }
}
