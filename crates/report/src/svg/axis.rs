//! What every chart shares: escaping, "nice number" ticks, linear, log and percentile
//! axes, text widths, the legend layout, the `<svg>` opening and line paths.

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
pub(crate) fn decimals(step: f64) -> usize {
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
pub(crate) fn clean(v: f64) -> f64 {
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

    /// An axis of named positions 0, 1, … (p50, p95, …, max), one labelled tick each, with
    /// a little room either side so the first and last points do not sit on the frame.
    pub fn categories(label: impl Into<String>, names: &[&str]) -> Axis {
        Axis {
            label: label.into(),
            min: -0.25,
            max: names.len().saturating_sub(1) as f64 + 0.25,
            log: false,
            ticks: names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, n.to_string()))
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

/// Approximate rendered width of `s` at `size` px (average glyph ≈ 0.58 em).
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.58
}

/// Legend entries laid out in rows; returns the y of each row's baseline and (x, row) per entry.
pub(crate) fn legend_layout(names: &[&str], width: f64) -> (usize, Vec<(f64, usize)>) {
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

pub(crate) fn open_svg(out: &mut String, kind: &str, title: &str, height: f64) {
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

pub(crate) fn path_of(points: impl Iterator<Item = Option<(f64, f64)>>) -> String {
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

/// The plot area's left (y) and bottom (x) axis lines.
pub(crate) fn axis_lines(out: &mut String, left: f64, top: f64, pw: f64, ph: f64) {
    let _ = write!(
        out,
        r#"<line class="axis" x1="{left:.1}" y1="{top:.1}" x2="{left:.1}" y2="{:.1}"/><line class="axis" x1="{left:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/>"#,
        top + ph,
        top + ph,
        left + pw,
        top + ph
    );
}
