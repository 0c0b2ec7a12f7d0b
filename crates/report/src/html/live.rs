//! The live dashboard's charts, drawn by the same SVG code as the report's, from a running
//! step's figures: its seconds so far, its latency distribution so far, and a ladder's curve
//! of latency against the offered load, one point per finished step.

use super::*;

/// One finished step of a ladder, as the live curve plots it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveStep {
    pub name: String,
    /// The offered load: requests/s (open model) or connections (closed model).
    pub offered: f64,
    pub achieved_rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// A running step's seconds: requests and errors per second (left axis) and each second's p99
/// (right axis), x in seconds since the step started.
pub fn live_rates(points: &[TimelinePoint]) -> Option<String> {
    if points.is_empty() {
        return None;
    }
    let at: Vec<(f64, &TimelinePoint)> = points
        .iter()
        .map(|p| (f64::from(p.second) + 0.5, p))
        .collect();
    let mut chart = rate_chart(&at, false);
    chart.title = "Requests, errors and p99 per second (this step)".into();
    chart.x = Axis::linear(
        "seconds since the step started",
        0.0,
        at.iter().map(|(x, _)| x + 0.5).fold(1.0, f64::max),
        10,
    );
    Some(chart.render())
}

/// The step's latency by percentile so far, from its encoded response histogram.
pub fn live_distribution(encoded: &str) -> Option<String> {
    let c = curve(encoded)?;
    Some(distribution_chart(
        "Latency by percentile (this step so far)",
        &[("response".to_string(), &c, P99, false)],
    ))
}

/// A ladder's latency against its offered load, one point per finished step, with the knee
/// (the index of its first bad step) and the SLO's p99 line once they are known. None with
/// fewer than one step.
pub fn live_ladder(
    steps: &[LiveStep],
    concurrency: bool,
    knee: Option<usize>,
    slo_p99_ms: Option<f64>,
) -> Option<String> {
    if steps.is_empty() {
        return None;
    }
    let x_label = if concurrency {
        "offered load, concurrent connections"
    } else {
        "offered load, requests/s"
    };
    let xmax = steps.iter().map(|s| s.offered).fold(1.0, f64::max) * 1.05;
    let ymax = steps
        .iter()
        .map(|s| s.p99_ms)
        .chain(slo_p99_ms)
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.15;
    let mut chart = Chart::new(
        "ladder",
        "Latency against offered load (finished steps)",
        Axis::linear(x_label, 0.0, xmax, 8),
        Axis::linear("latency, ms", 0.0, ymax, 6),
    );
    for (name, color, pick) in [
        (
            "p50",
            P50,
            (|s: &LiveStep| s.p50_ms) as fn(&LiveStep) -> f64,
        ),
        ("p99", P99, |s: &LiveStep| s.p99_ms),
    ] {
        chart.series.push(Series {
            name: name.into(),
            color,
            line: steps.iter().map(|s| (s.offered, pick(s))).collect(),
            dots: steps
                .iter()
                .map(|s| {
                    let tip = format!(
                        "{}: {name} {} ms at {} offered, {} req/s achieved",
                        s.name,
                        ms(pick(s)),
                        thousands_f(s.offered),
                        thousands_f(s.achieved_rps)
                    );
                    (s.offered, pick(s), tip)
                })
                .collect(),
            ..Series::default()
        });
    }
    if let Some(step) = knee.and_then(|k| steps.get(k)) {
        chart.vmarks.push(Mark {
            at: step.offered,
            label: format!("knee: {}", step.name),
            color: KNEE,
            dash: "6 4",
        });
    }
    if let Some(slo) = slo_p99_ms {
        chart.hmarks.push(Mark {
            at: slo,
            label: format!("SLO p99 {} ms", ms(slo)),
            color: GOOD,
            dash: "4 3",
        });
    }
    Some(chart.render())
}

/// The dashboard's page: the report's stylesheet, and a script that fills the page from the
/// server-sent events at `/events` and turns to `/report` when the run ends. Served as it
/// is, with nothing to fetch but the page's own two URLs.
pub fn live_page(title: &str) -> String {
    include_str!("live_page.html")
        .replace("{{STYLE}}", STYLE)
        .replace("{{TITLE}}", &escape(title))
}
