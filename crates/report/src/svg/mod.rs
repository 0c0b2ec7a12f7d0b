//! Small SVG chart primitives for the HTML report: "nice number" axis ticks, linear, log and
//! percentile ("nines") axes, a line chart with an optional second y axis, markers, shaded
//! bands and a legend, a box plot, and bars with interval whiskers. Every chart is one `<svg class="chart" data-chart=KIND>`
//! element with a title, axes with ticks and labels, and a legend when it has named series.
//!
//! The output is plain SVG text meant to be inlined into an HTML page: no `xmlns` (the HTML
//! parser puts inline `<svg>` in the SVG namespace), no ids (so several charts never clash), no
//! script, no external reference. Styling that is the same for every chart (fonts, grid, tick
//! colours) comes from classes the page's stylesheet defines; data colours are attributes.

mod axis;
mod bars;
mod boxplot;
mod chart;
#[cfg(test)]
mod tests;

pub(crate) use axis::*;
pub(crate) use bars::{Bar, Bars};
pub(crate) use boxplot::{BoxGroup, BoxPlot, BoxStat};
pub(crate) use chart::{Band, Chart, Mark, Series};

/// A chart in the page: its `<svg>` in a `<figure>` with the caption under it.
pub(crate) fn figure(out: &mut String, svg: &str, caption: &str) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>",
        escape(caption)
    );
}
