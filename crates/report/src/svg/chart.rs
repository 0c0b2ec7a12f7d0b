//! A line chart with an optional second y axis, markers, shaded bands and a legend.

use super::axis::*;
use std::fmt::Write;

/// One line (and its dots) on a [`Chart`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Series {
    /// Legend text; an empty name keeps the series out of the legend.
    pub name: String,
    pub color: &'static str,
    /// The line; a NaN coordinate breaks it.
    pub line: Vec<(f64, f64)>,
    /// Dots with a tooltip each (an SVG `<title>`, shown on hover without any script).
    pub dots: Vec<(f64, f64, String)>,
    pub dash: bool,
    /// Plotted against the second (right) y axis.
    pub right: bool,
}

/// A vertical (x) or horizontal (y) reference line with a label.
#[derive(Debug, Clone)]
pub(crate) struct Mark {
    pub at: f64,
    pub label: String,
    pub color: &'static str,
    pub dash: &'static str,
}

/// A shaded x range with a label (e.g. the monitor's idle baseline).
#[derive(Debug, Clone)]
pub(crate) struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
}

/// Where the plot area sits in the view box, and how values map into it.
struct Plot<'c> {
    left: f64,
    top: f64,
    pw: f64,
    ph: f64,
    x_axis: &'c Axis,
}

impl Plot<'_> {
    fn x(&self, v: f64) -> f64 {
        self.left + self.pw * self.x_axis.frac(v)
    }
    fn y(&self, a: &Axis, v: f64) -> f64 {
        self.top + self.ph * (1.0 - a.frac(v))
    }
}

/// A line chart.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    pub kind: &'static str,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub y2: Option<Axis>,
    pub series: Vec<Series>,
    pub vmarks: Vec<Mark>,
    pub hmarks: Vec<Mark>,
    pub bands: Vec<Band>,
    pub height: f64,
}

impl Chart {
    /// A chart with no series yet.
    pub fn new(kind: &'static str, title: impl Into<String>, x: Axis, y: Axis) -> Chart {
        Chart {
            kind,
            title: title.into(),
            x,
            y,
            y2: None,
            series: Vec::new(),
            vmarks: Vec::new(),
            hmarks: Vec::new(),
            bands: Vec::new(),
            height: HEIGHT,
        }
    }

    /// The chart as one `<svg>` element.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let h = self.height;
        open_svg(&mut out, self.kind, &self.title, h);
        let rows = self.legend(&mut out);
        let top = if rows == 0 {
            44.0
        } else {
            46.0 + rows as f64 * 18.0 + 6.0
        };
        let left = 72.0;
        let right = if self.y2.is_some() { 72.0 } else { 28.0 };
        let p = Plot {
            left,
            top,
            pw: WIDTH - left - right,
            ph: h - top - 54.0,
            x_axis: &self.x,
        };
        self.bands(&mut out, &p);
        self.grid(&mut out, &p);
        self.axes(&mut out, &p);
        self.hmarks(&mut out, &p);
        self.vmarks(&mut out, &p);
        self.data(&mut out, &p);
        out.push_str("</svg>");
        out
    }

    /// The legend of the named series; returns how many rows it took.
    fn legend(&self, out: &mut String) -> usize {
        let named: Vec<&Series> = self.series.iter().filter(|s| !s.name.is_empty()).collect();
        let names: Vec<&str> = named.iter().map(|s| s.name.as_str()).collect();
        let (rows, pos) = legend_layout(&names, WIDTH);
        for (s, (lx, row)) in named.iter().zip(&pos) {
            let ly = 46.0 + *row as f64 * 18.0;
            let _ = write!(
                out,
                r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{}" stroke-width="2.5"{}/>"#,
                ly - 4.0,
                lx + 24.0,
                ly - 4.0,
                s.color,
                if s.dash {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                }
            );
            let _ = write!(
                out,
                r#"<text class="legend" x="{:.1}" y="{ly:.1}">{}</text>"#,
                lx + 30.0,
                escape(&s.name)
            );
        }
        rows
    }

    /// Shaded x ranges with their labels.
    fn bands(&self, out: &mut String, p: &Plot<'_>) {
        let Plot {
            left, top, pw, ph, ..
        } = *p;
        for b in &self.bands {
            let (x0, x1) = (
                p.x(b.from).clamp(left, left + pw),
                p.x(b.to).clamp(left, left + pw),
            );
            if x1 > x0 {
                let _ = write!(
                    out,
                    r##"<rect x="{x0:.1}" y="{top:.1}" width="{:.1}" height="{ph:.1}" fill="#f1f3f5"/><text class="mark" x="{:.1}" y="{:.1}">{}</text>"##,
                    x1 - x0,
                    x0 + 4.0,
                    top + 14.0,
                    escape(&b.label)
                );
            }
        }
    }

    /// Grid lines and tick labels of every axis.
    fn grid(&self, out: &mut String, p: &Plot<'_>) {
        let Plot {
            left, top, pw, ph, ..
        } = *p;
        // Grid and ticks.
        for (v, label) in self.y.ticks() {
            let y = p.y(&self.y, *v);
            let _ = write!(
                out,
                r#"<line class="grid" x1="{left:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left + pw,
                left - 8.0,
                y + 4.0,
                escape(label)
            );
        }
        if let Some(y2) = &self.y2 {
            for (v, label) in y2.ticks() {
                let y = p.y(y2, *v);
                let _ = write!(
                    out,
                    r#"<line class="axis" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}">{}</text>"#,
                    left + pw,
                    left + pw + 5.0,
                    left + pw + 8.0,
                    y + 4.0,
                    escape(label)
                );
            }
        }
        for (v, label) in self.x.ticks() {
            let x = p.x(*v);
            let _ = write!(
                out,
                r#"<line class="grid" x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}"/><line class="axis" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                top + ph,
                top + ph,
                top + ph + 5.0,
                top + ph + 19.0,
                escape(label)
            );
        }
    }

    /// The axis lines and their labels.
    fn axes(&self, out: &mut String, p: &Plot<'_>) {
        let Plot {
            left, top, pw, ph, ..
        } = *p;
        // Axes and their labels.
        axis_lines(out, left, top, pw, ph);
        let _ = write!(
            out,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            left + pw / 2.0,
            top + ph + 40.0,
            escape(&self.x.label)
        );
        let _ = write!(
            out,
            r#"<text class="label" transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">{}{}</text>"#,
            top + ph / 2.0,
            escape(&self.y.label),
            if self.y.is_log() { " (log scale)" } else { "" }
        );
        if let Some(y2) = &self.y2 {
            let _ = write!(
                out,
                r#"<line class="axis" x1="{:.1}" y1="{top:.1}" x2="{:.1}" y2="{:.1}"/><text class="label" transform="translate({:.1} {:.1}) rotate(90)" text-anchor="middle">{}</text>"#,
                left + pw,
                left + pw,
                top + ph,
                WIDTH - 18.0,
                top + ph / 2.0,
                escape(&y2.label)
            );
        }
    }

    /// Horizontal reference lines (limits), labelled at their left end.
    fn hmarks(&self, out: &mut String, p: &Plot<'_>) {
        let Plot {
            left, top, pw, ph, ..
        } = *p;
        // Reference lines.
        for m in &self.hmarks {
            let y = p.y(&self.y, m.at);
            if !(top - 0.5..=top + ph + 0.5).contains(&y) {
                continue;
            }
            let _ = write!(
                out,
                r#"<line x1="{left:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}" stroke-width="1.5" stroke-dasharray="{}"/><text class="mark" x="{:.1}" y="{:.1}" fill="{}">{}</text>"#,
                left + pw,
                m.color,
                m.dash,
                // Left end: curves that cross a limit usually rise towards the right.
                left + 6.0,
                y - 5.0,
                m.color,
                escape(&m.label)
            );
        }
    }

    /// Vertical reference lines (knee, operating point).
    fn vmarks(&self, out: &mut String, p: &Plot<'_>) {
        let Plot {
            left, top, pw, ph, ..
        } = *p;
        // Vertical marks: labels that would overlap the previous one stay off (the line and
        // its hover title remain).
        let mut last_label_end = f64::NEG_INFINITY;
        let mut row = 0usize;
        for m in &self.vmarks {
            let x = p.x(m.at);
            if !(left - 0.5..=left + pw + 0.5).contains(&x) {
                continue;
            }
            let _ = write!(
                out,
                r#"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{:.1}" stroke="{}" stroke-width="1.5" stroke-dasharray="{}"><title>{}</title></line>"#,
                top + ph,
                m.color,
                m.dash,
                escape(&m.label)
            );
            if m.label.is_empty() {
                continue;
            }
            let w = text_width(&m.label, 11.0);
            let (tx, anchor) = if x + 4.0 + w > left + pw {
                (x - 4.0, "end")
            } else {
                (x + 4.0, "start")
            };
            let start = if anchor == "end" { tx - w } else { tx };
            // Two label rows let neighbouring marks (knee, operating point) both show.
            if start <= last_label_end + 4.0 {
                if row == 0 {
                    row = 1;
                } else {
                    continue;
                }
            } else {
                row = 0;
            }
            last_label_end = start + w;
            let _ = write!(
                out,
                r#"<text class="mark" x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" fill="{}">{}</text>"#,
                top + 13.0 + row as f64 * 14.0,
                m.color,
                escape(&m.label)
            );
        }
    }

    /// The series: lines and their dots with tooltips.
    fn data(&self, out: &mut String, p: &Plot<'_>) {
        // Data.
        for s in &self.series {
            let axis = if s.right {
                self.y2.as_ref().unwrap_or(&self.y)
            } else {
                &self.y
            };
            let finite = |x: f64, y: f64| x.is_finite() && y.is_finite();
            let d = path_of(
                s.line
                    .iter()
                    .map(|&(x, y)| finite(x, y).then(|| (p.x(x), p.y(axis, y)))),
            );
            if !d.is_empty() {
                let _ = write!(
                    out,
                    r#"<path d="{d}" fill="none" stroke="{}" stroke-width="2" stroke-linejoin="round"{}/>"#,
                    s.color,
                    if s.dash {
                        r#" stroke-dasharray="6 4""#
                    } else {
                        ""
                    }
                );
            }
            for (x, y, tip) in &s.dots {
                if !finite(*x, *y) {
                    continue;
                }
                let _ = write!(
                    out,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}" stroke="#fff" stroke-width="1"><title>{}</title></circle>"##,
                    p.x(*x),
                    p.y(axis, *y),
                    s.color,
                    escape(tip)
                );
            }
        }
    }
}
