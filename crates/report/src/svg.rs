//! Small SVG chart primitives for the HTML report: "nice number" axis ticks, linear, log and
//! percentile ("nines") axes, a line chart with an optional second y axis, markers, shaded
//! bands and a legend, and a box plot. Every chart is one `<svg class="chart" data-chart=KIND>`
//! element with a title, axes with ticks and labels, and a legend when it has named series.
//!
//! The output is plain SVG text meant to be inlined into an HTML page: no `xmlns` (the HTML
//! parser puts inline `<svg>` in the SVG namespace), no ids (so several charts never clash), no
//! script, no external reference. Styling that is the same for every chart (fonts, grid, tick
//! colours) comes from classes the page's stylesheet defines; data colours are attributes.

use std::fmt::Write;

/// Width of every chart's view box; the page scales it to the column width.
pub(crate) const WIDTH: f64 = 880.0;
/// Default height of a chart's view box.
pub(crate) const HEIGHT: f64 = 340.0;

/// Colours for series that have no meaning of their own (runs, monitored targets), chosen to
/// stay apart on screen and when printed.
pub(crate) const PALETTE: [&str; 8] = [
    "#1f6feb", "#d9480f", "#2f9e44", "#9c36b5", "#0b7285", "#c2255c", "#5c940d", "#e67700",
];

/// Escapes text for HTML and XML content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML text; nothing useful is lost.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A "nice" number near `x`: 1, 2 or 5 times a power of ten. `round` picks the nearest,
/// otherwise the smallest nice number ≥ x (Heckbert, "Nice numbers for graph labels",
/// Graphics Gems, 1990).
pub(crate) fn nice_num(x: f64, round: bool) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let exp = x.log10().floor();
    let base = 10f64.powf(exp);
    let f = x / base;
    let nice = if round {
        if f < 1.5 {
            1.0
        } else if f < 3.0 {
            2.0
        } else if f < 7.0 {
            5.0
        } else {
            10.0
        }
    } else if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// Decimals needed to print multiples of `step` exactly (steps are 1, 2 or 5 × 10^k).
fn decimals(step: f64) -> usize {
    if step >= 1.0 || !step.is_finite() || step <= 0.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    }
}

/// About `target` evenly spaced nice ticks covering `[lo, hi]`: the first tick is ≤ lo, the
/// last ≥ hi, the step is 1, 2 or 5 × 10^k (Heckbert's loose labelling).
pub(crate) fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() {
        (lo.min(hi), lo.max(hi))
    } else {
        (0.0, 1.0)
    };
    if hi - lo < 1e-12 {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        lo -= if lo == 0.0 { 0.0 } else { pad };
        hi += pad;
    }
    let range = nice_num(hi - lo, false);
    let step = nice_num(range / (target.max(2) - 1) as f64, true);
    let start = (lo / step).floor() * step;
    let end = (hi / step).ceil() * step;
    let n = ((end - start) / step).round() as usize;
    let scale = 10f64.powi(decimals(step) as i32 + 1);
    (0..=n)
        .map(|k| ((start + k as f64 * step) * scale).round() / scale)
        .map(|v| if v == 0.0 { 0.0 } else { v }) // no "-0"
        .collect()
}

/// A tick label: `0.25`, `40`, `1,500`.
pub(crate) fn fmt_tick(v: f64, step: f64) -> String {
    let d = decimals(step);
    if d == 0 && v.abs() >= 1000.0 {
        let s = crate::thousands(v.abs().round() as u64);
        if v < 0.0 {
            format!("-{s}")
        } else {
            s
        }
    } else {
        format!("{v:.d$}")
    }
}

/// Ticks for a log10 axis over `[lo, hi]` (lo > 0): the 1-2-5 sequence, or only powers of ten
/// when that would give more than 10 ticks. Returns (axis min, axis max, ticks).
pub(crate) fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1e-3 };
    let hi = if hi.is_finite() && hi > lo {
        hi
    } else {
        lo * 10.0
    };
    let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mut cands = Vec::new();
    for e in e0..=e1 {
        for m in [1.0, 2.0, 5.0] {
            // Round to the decade's precision so 0.1 × 3 style errors never show in labels.
            let v = m * 10f64.powi(e);
            cands.push(clean(v));
        }
    }
    let min = cands
        .iter()
        .copied()
        .filter(|&c| c <= lo * (1.0 + 1e-9))
        .fold(cands[0], f64::max);
    let max = cands
        .iter()
        .copied()
        .find(|&c| c >= hi * (1.0 - 1e-9))
        .unwrap_or(hi);
    let ticks: Vec<f64> = cands
        .iter()
        .copied()
        .filter(|&c| c >= min && c <= max)
        .collect();
    if ticks.len() <= 10 {
        return (min, max, ticks);
    }
    let (min, max) = (clean(10f64.powi(e0)), clean(10f64.powi(e1)));
    let decades: Vec<f64> = (e0..=e1).map(|e| clean(10f64.powi(e))).collect();
    (min, max, decades)
}

/// Rounds away binary noise: 0.30000000000000004 → 0.3.
fn clean(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 12 - v.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits.clamp(0, 300));
    (v * scale).round() / scale
}

/// A log-axis tick label: `0.05`, `2`, `1,000`.
pub(crate) fn fmt_log_tick(v: f64) -> String {
    if v >= 1.0 {
        fmt_tick(v, 1.0)
    } else {
        let d = (-v.log10().floor()) as usize;
        format!("{v:.d$}")
    }
}

/// The percentile axis position of quantile `q` (0..1): log10(1 / (1 − q)), the number of
/// "nines" — 0 → 0, 0.9 → 1, 0.99 → 2, 0.999 → 3. Quantiles at or above 1 − 10⁻⁹ are clamped.
pub(crate) fn nines(q: f64) -> f64 {
    let q = q.clamp(0.0, 1.0 - 1e-9);
    -(1.0 - q).log10()
}

/// The quantile at percentile-axis position `x`: the inverse of [`nines`].
pub(crate) fn quantile_at(x: f64) -> f64 {
    1.0 - 10f64.powf(-x)
}

/// The label of the tick `k` nines out: `0 %`, `90 %`, `99 %`, `99.9 %`, `99.99 %`.
pub(crate) fn nines_label(k: u32) -> String {
    match k {
        0 => "0 %".to_string(),
        1 => "90 %".to_string(),
        2 => "99 %".to_string(),
        k => format!("99.{} %", "9".repeat(k as usize - 2)),
    }
}

/// One axis: its label, range, scale and labelled ticks.
#[derive(Debug, Clone)]
pub(crate) struct Axis {
    pub label: String,
    min: f64,
    max: f64,
    log: bool,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// A linear axis covering `[lo, hi]` with about `n` nice ticks.
    pub fn linear(label: impl Into<String>, lo: f64, hi: f64, n: usize) -> Axis {
        let t = nice_ticks(lo, hi, n);
        let step = if t.len() > 1 { t[1] - t[0] } else { 1.0 };
        Axis {
            label: label.into(),
            min: t[0],
            max: t[t.len() - 1],
            log: false,
            ticks: t.iter().map(|&v| (v, fmt_tick(v, step))).collect(),
        }
    }

    /// A log10 axis covering `[lo, hi]` (lo > 0).
    pub fn log(label: impl Into<String>, lo: f64, hi: f64) -> Axis {
        let (min, max, t) = log_ticks(lo, hi);
        Axis {
            label: label.into(),
            min,
            max,
            log: true,
            ticks: t.iter().map(|&v| (v, fmt_log_tick(v))).collect(),
        }
    }

    /// A latency axis in ms over `[lo, hi]`: log10 when the values span two decades or more
    /// (so the fast part stays readable beside a blow-up), linear from 0 otherwise.
    pub fn latency(label: impl Into<String>, lo: f64, hi: f64) -> Axis {
        if lo > 0.0 && hi / lo >= 100.0 {
            Axis::log(label, lo, hi)
        } else {
            Axis::linear(label, 0.0, hi, 6)
        }
    }

    /// A percentile axis whose values are [`nines`] positions, from 0 % to `max_nines` nines
    /// (4 → 99.99 %), one labelled tick per nine.
    pub fn percentile(label: impl Into<String>, max_nines: u32) -> Axis {
        let max_nines = max_nines.max(1);
        Axis {
            label: label.into(),
            min: 0.0,
            max: f64::from(max_nines),
            log: false,
            ticks: (0..=max_nines)
                .map(|k| (f64::from(k), nines_label(k)))
                .collect(),
        }
    }

    /// Whether the axis is logarithmic.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// Where `v` falls along the axis, 0 at the minimum and 1 at the maximum (not clamped,
    /// except that a log axis maps values ≤ 0 to its minimum).
    pub fn frac(&self, v: f64) -> f64 {
        if self.log {
            let v = if v > 0.0 { v } else { self.min };
            (v.log10() - self.min.log10()) / (self.max.log10() - self.min.log10())
        } else if self.max > self.min {
            (v - self.min) / (self.max - self.min)
        } else {
            0.0
        }
    }

    /// The labelled ticks.
    pub fn ticks(&self) -> &[(f64, String)] {
        &self.ticks
    }
}

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

/// Approximate rendered width of `s` at `size` px (average glyph ≈ 0.58 em).
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.58
}

/// Legend entries laid out in rows; returns the y of each row's baseline and (x, row) per entry.
fn legend_layout(names: &[&str], width: f64) -> (usize, Vec<(f64, usize)>) {
    let mut pos = Vec::with_capacity(names.len());
    let (mut x, mut row) = (16.0, 0usize);
    for n in names {
        let w = 30.0 + text_width(n, 12.0) + 18.0;
        if x + w > width - 16.0 && x > 16.0 {
            x = 16.0;
            row += 1;
        }
        pos.push((x, row));
        x += w;
    }
    (if names.is_empty() { 0 } else { row + 1 }, pos)
}

fn open_svg(out: &mut String, kind: &str, title: &str, height: f64) {
    let _ = write!(
        out,
        r#"<svg class="chart" data-chart="{kind}" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{}">"#,
        escape(title)
    );
    let _ = write!(
        out,
        r#"<text class="title" x="16" y="24">{}</text>"#,
        escape(title)
    );
}

fn path_of(points: impl Iterator<Item = Option<(f64, f64)>>) -> String {
    let mut d = String::new();
    let mut pen_down = false;
    for p in points {
        match p {
            Some((x, y)) => {
                let _ = write!(d, "{}{x:.1} {y:.1}", if pen_down { " L" } else { " M" });
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    d.trim_start().to_string()
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

        let top = if rows == 0 {
            44.0
        } else {
            46.0 + rows as f64 * 18.0 + 6.0
        };
        let left = 72.0;
        let right = if self.y2.is_some() { 72.0 } else { 28.0 };
        let bottom = 54.0;
        let pw = WIDTH - left - right;
        let ph = h - top - bottom;
        let px = |v: f64| left + pw * self.x.frac(v);
        let py = |a: &Axis, v: f64| top + ph * (1.0 - a.frac(v));

        for b in &self.bands {
            let (x0, x1) = (
                px(b.from).clamp(left, left + pw),
                px(b.to).clamp(left, left + pw),
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

        // Grid and ticks.
        for (v, label) in self.y.ticks() {
            let y = py(&self.y, *v);
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
                let y = py(y2, *v);
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
            let x = px(*v);
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
        // Axes and their labels.
        let _ = write!(
            out,
            r#"<line class="axis" x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{:.1}"/><line class="axis" x1="{left:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/>"#,
            top + ph,
            top + ph,
            left + pw,
            top + ph
        );
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

        // Reference lines.
        for m in &self.hmarks {
            let y = py(&self.y, m.at);
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
        // Vertical marks: labels that would overlap the previous one stay off (the line and
        // its hover title remain).
        let mut last_label_end = f64::NEG_INFINITY;
        let mut row = 0usize;
        for m in &self.vmarks {
            let x = px(m.at);
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
                    .map(|&(x, y)| finite(x, y).then(|| (px(x), py(axis, y)))),
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
                    px(*x),
                    py(axis, *y),
                    s.color,
                    escape(tip)
                );
            }
        }
        out.push_str("</svg>");
        out
    }
}

/// One box of a [`BoxPlot`], in ms.
#[derive(Debug, Clone)]
pub(crate) struct BoxStat {
    pub label: String,
    pub min: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub max: f64,
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
            .map(|b| b.min)
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let hi = all().map(|b| b.max).fold(0.0, f64::max);
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
        let _ = write!(
            out,
            r#"<line class="axis" x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{:.1}"/><line class="axis" x1="{left:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/>"#,
            top + ph,
            top + ph,
            left + pw,
            top + ph
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_numbers() {
        assert_eq!(nice_num(97.0, false), 100.0);
        assert_eq!(nice_num(25.0, true), 20.0);
        assert_eq!(nice_num(0.34, true), 0.5);
        assert_eq!(nice_num(7.1, true), 10.0);
        assert_eq!(nice_num(1.4, false), 2.0);
    }

    #[test]
    fn ticks_cover_the_range_with_nice_steps() {
        assert_eq!(
            nice_ticks(0.0, 97.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(nice_ticks(0.0, 1.0, 6), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(nice_ticks(0.13, 4.2, 5), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        // The first tick may sit below the data (Heckbert's loose labels).
        assert_eq!(
            nice_ticks(100.0, 800.0, 6),
            vec![0.0, 200.0, 400.0, 600.0, 800.0]
        );
        assert_eq!(nice_ticks(-3.0, 12.0, 4), vec![-5.0, 0.0, 5.0, 10.0, 15.0]);
        // Degenerate and broken inputs still give an axis.
        assert_eq!(nice_ticks(0.0, 0.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        let t = nice_ticks(5.0, 5.0, 5);
        assert!(
            t[0] <= 5.0 && *t.last().unwrap() >= 5.0 && t.len() >= 2,
            "{t:?}"
        );
        assert_eq!(nice_ticks(f64::NAN, 3.0, 5), nice_ticks(0.0, 1.0, 5));
        // No binary noise in labels.
        let t = nice_ticks(0.0, 0.7, 8);
        assert_eq!(t[3], 0.3);
        assert_eq!(fmt_tick(0.3, 0.1), "0.3");
        assert_eq!(fmt_tick(1500.0, 500.0), "1,500");
        assert_eq!(fmt_tick(40.0, 20.0), "40");
        assert_eq!(fmt_tick(0.25, 0.05), "0.25");
    }

    #[test]
    fn log_ticks_use_1_2_5_or_decades() {
        let (min, max, t) = log_ticks(0.8, 230.0);
        assert_eq!((min, max), (0.5, 500.0));
        assert_eq!(
            t,
            vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
        let (min, max, t) = log_ticks(0.03, 4000.0);
        assert_eq!((min, max), (0.01, 10000.0));
        assert_eq!(t, vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]);
        let labels: Vec<String> = t.iter().map(|&v| fmt_log_tick(v)).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10", "100", "1,000", "10,000"]);
        let a = Axis::log("ms", 1.0, 100.0);
        assert!((a.frac(10.0) - 0.5).abs() < 1e-12);
        assert_eq!(a.frac(0.0), 0.0, "non-positive values sit at the bottom");
    }

    #[test]
    fn percentile_axis_maps_nines() {
        assert_eq!(nines(0.0), 0.0);
        assert!((nines(0.9) - 1.0).abs() < 1e-12);
        assert!((nines(0.99) - 2.0).abs() < 1e-12);
        assert!((nines(0.999) - 3.0).abs() < 1e-9);
        assert!((nines(1.0) - 9.0).abs() < 1e-6, "q = 1 is clamped");
        assert!((quantile_at(nines(0.995)) - 0.995).abs() < 1e-12);
        let labels: Vec<String> = (0..=5).map(nines_label).collect();
        assert_eq!(
            labels,
            ["0 %", "90 %", "99 %", "99.9 %", "99.99 %", "99.999 %"]
        );
        let a = Axis::percentile("percentile", 4);
        assert_eq!(a.ticks().len(), 5);
        assert_eq!(a.ticks()[4].1, "99.99 %");
        assert!((a.frac(nines(0.99)) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn latency_axis_goes_log_past_two_decades() {
        assert!(!Axis::latency("ms", 1.0, 50.0).is_log());
        assert!(Axis::latency("ms", 0.5, 900.0).is_log());
        assert!(!Axis::latency("ms", 0.0, 900.0).is_log());
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape(r#"<a href="x">Tom & 'Jerry'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{1}b"), "a\u{fffd}b");
        assert_eq!(escape("plain ü"), "plain ü");
    }

    #[test]
    fn chart_renders_escaped_text_and_breaks_lines_at_nan() {
        let mut c = Chart::new(
            "timeline",
            "A <b> chart",
            Axis::linear("s", 0.0, 3.0, 4),
            Axis::linear("ms", 0.0, 10.0, 5),
        );
        c.series.push(Series {
            name: "p99 & co".into(),
            color: "#000",
            line: vec![(0.0, 1.0), (1.0, f64::NAN), (2.0, 3.0), (3.0, 4.0)],
            dots: vec![(2.0, 3.0, "x<y".into())],
            ..Series::default()
        });
        let svg = c.render();
        assert!(svg.starts_with(r#"<svg class="chart" data-chart="timeline""#));
        assert!(svg.contains("A &lt;b&gt; chart") && !svg.contains("<b>"));
        assert!(svg.contains("p99 &amp; co"));
        assert!(svg.contains("<title>x&lt;y</title>"));
        // Two sub-paths: the NaN point lifts the pen.
        let d = svg.split(r#"<path d=""#).nth(1).unwrap();
        let d = &d[..d.find('"').unwrap()];
        assert_eq!(d.matches('M').count(), 2, "{d}");
        assert!(svg.ends_with("</svg>"));
    }
}
