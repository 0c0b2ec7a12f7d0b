//! A trend (`perfbase trend`) for people and for other tools: the terminal table with a
//! sparkline per series, the HTML page of charts ([`html`]), and the gate's JUnit and the
//! benchmark-tracker formats ([`exports`]).

pub mod exports;
pub mod html;

use crate::table::text::Layout;
use crate::table::{Cell, Table};
use perfbase_core::trend::{Series, Trend};

/// Eight heights of a sparkline, lowest first.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The values as a one-line sparkline, scaled between their own minimum and maximum (a flat
/// series is a flat line); non-finite values are gaps.
pub fn sparkline(values: &[f64]) -> String {
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    values
        .iter()
        .map(|&v| {
            if !v.is_finite() {
                ' '
            } else if hi <= lo {
                BARS[3]
            } else {
                BARS[(((v - lo) / (hi - lo)) * 7.0).round() as usize]
            }
        })
        .collect()
}

/// How many of the newest runs a terminal sparkline shows.
pub const SPARK_RUNS: usize = 30;

/// A figure in a series' unit: milliseconds to 3 significant digits, rates whole, ratios as %.
pub fn figure(series: &Series, v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    match series.unit.as_str() {
        "ms" => format!("{} ms", sig3(v)),
        "/s" if v.abs() >= 100.0 => format!("{}/s", crate::thousands(v.round() as u64)),
        "/s" => format!("{v:.1}/s"),
        "ratio" => format!("{:.2} %", v * 100.0),
        _ => sig3(v),
    }
}

fn sig3(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

/// A change as a signed percentage: "+4.9 %".
pub fn percent(change: f64) -> String {
    format!("{:+.1} %", change * 100.0)
}

/// The change points of a series in a cell: "run 25: +4.9 % worse (p < 0.001)", one per line
/// on the terminal, `;`-joined here.
pub fn changes_text(series: &Series) -> String {
    if series.change_points.is_empty() {
        return "none".into();
    }
    series
        .change_points
        .iter()
        .map(|c| {
            let what = if c.kind == "spread" { " spread" } else { "" };
            let mut s = format!(
                "run {}: {}{what} {} ({})",
                c.run,
                percent(c.change),
                c.direction,
                perfbase_analysis::versus::welch::p_text(c.p)
            );
            if c.environment.is_some() {
                s.push_str(", environment changed");
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a series' noise held besides its change points: each burst (an outlier event, left
/// out of the search), and correlated runs when the tests counted them as fewer.
pub fn noise_lines(series: &Series) -> Vec<String> {
    let mut out: Vec<String> = series
        .bursts
        .iter()
        .map(|b| {
            let runs = if b.runs == 1 {
                "1 run".to_string()
            } else {
                format!("{} runs", b.runs)
            };
            format!(
                "{}: burst at run {} ({runs}, {} off its segment): an outlier event, left out of the change points",
                series.name,
                b.run,
                percent(b.change)
            )
        })
        .collect();
    if let Some(n) = series.noise.as_ref().filter(|n| n.assumed > 0.0) {
        out.push(format!(
            "{}: neighbouring runs are alike (lag-1 autocorrelation {:.2}): tested as {:.0} independent runs of {}",
            series.name,
            n.autocorrelation,
            n.effective_runs,
            series.points.len()
        ));
    }
    out
}

/// The terminal table: one row per series, then the gate's verdicts and the environment
/// changes.
pub fn render(trend: &Trend) -> String {
    if trend.series.is_empty() {
        return "No stored runs match: check --plan, --label, --scenario, --step and --metric \
                (perfbase history lists what the store holds).\n"
            .into();
    }
    let head = [
        "Series",
        "Runs",
        "History",
        "Latest",
        "Current segment",
        "Change points",
    ];
    let mut rows = Vec::new();
    for s in &trend.series {
        let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        let shown = &values[values.len().saturating_sub(SPARK_RUNS)..];
        let latest = values.last().copied().unwrap_or(f64::NAN);
        let seg = &s.segment;
        let spread = if seg.stdev.is_finite() && seg.mean != 0.0 {
            format!(" ±{:.1} %", 100.0 * seg.stdev / seg.mean.abs())
        } else {
            String::new()
        };
        rows.push(vec![
            Cell::from(s.name.clone()),
            values.len().to_string().into(),
            sparkline(shown).into(),
            figure(s, latest).into(),
            format!("{}{spread} over {} runs", figure(s, seg.mean), seg.runs).into(),
            changes_text(s).into(),
        ]);
    }
    let table = Table::new(&head, rows, 1).words_in(&[2, 5]);
    let mut out = String::new();
    table.text(&Layout::fitted(head.len()), false, &mut out);
    let mut envs: Vec<String> = Vec::new();
    for s in &trend.series {
        for e in &s.environment_changes {
            let line = format!(
                "environment changed at run {}: {} → {}; runs on either side are not like for like",
                s.points[e.index].run, e.from, e.to
            );
            if !envs.contains(&line) {
                envs.push(line);
            }
        }
    }
    // Series names and fingerprints come from the store: escaped before a terminal sees them.
    let notes = trend.series.iter().flat_map(noise_lines);
    for line in envs.into_iter().chain(notes) {
        out.push_str(&perfbase_core::redact::printable(&line));
        out.push('\n');
    }
    if let Some(check) = &trend.check {
        out.push('\n');
        out.push_str(&check_text(check));
    }
    out
}

/// The gate's verdict: the failing series (or how many passed), one line each.
pub fn check_text(check: &perfbase_core::trend::TrendCheck) -> String {
    let mut out = String::new();
    for v in check.verdicts.iter().filter(|v| v.failed) {
        out.push_str(&format!(
            "FAIL {}: run {} is {} against the {} runs before it ({}), beyond the tolerance of {:.1} %\n",
            v.series,
            v.run,
            percent(v.change),
            v.segment_runs,
            v.p.map_or_else(|| "p unknown".into(), perfbase_analysis::versus::welch::p_text),
            check.tolerance * 100.0
        ));
    }
    let odd = check
        .verdicts
        .iter()
        .filter(|v| v.verdict == "not like for like")
        .count();
    if odd > 0 {
        out.push_str(&format!(
            "note: {odd} series changed environment at the newest run: not like for like, not judged\n"
        ));
    }
    out.push_str(&format!(
        "trend check: {} ({} series, {} worse)\n",
        if check.passed { "passed" } else { "FAILED" },
        check.verdicts.len(),
        check.verdicts.iter().filter(|v| v.failed).count()
    ));
    out
}
