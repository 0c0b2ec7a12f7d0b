//! The HTML report's charts, drawn as inline SVG from the results' numbers (see the
//! parent module for which charts a page has and why they are hand-made).

use super::*;
use perfbase_core::phase::PhaseKind;

/// A latency-by-percentile curve: points on the "nines" axis up to 6 nines, and dots at the
/// usual percentiles. `None` when the histogram does not decode or is empty.
pub(super) struct Curve {
    count: u64,
    line: Vec<(f64, f64)>,
    dots: Vec<(f64, f64, f64)>,
}

pub(super) const MAX_NINES: u32 = 6;
pub(super) const CURVE_STEPS_PER_NINE: u32 = 60;

pub(super) fn curve(encoded: &str) -> Option<Curve> {
    let h = decode_histogram(encoded).ok()?;
    if h.is_empty() {
        return None;
    }
    let at = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let line = (0..=MAX_NINES * CURVE_STEPS_PER_NINE)
        .map(|k| {
            let x = f64::from(k) / f64::from(CURVE_STEPS_PER_NINE);
            let y = if k == 0 {
                h.min() as f64 / 1000.0
            } else {
                at(quantile_at(x))
            };
            (x, y)
        })
        .collect();
    let dots = [0.5, 0.9, 0.99, 0.999, 0.9999]
        .into_iter()
        .map(|q| (nines(q), at(q), q))
        .collect();
    Some(Curve {
        count: h.len(),
        line,
        dots,
    })
}

/// How far out the percentile axis goes: 99.99 % (4 nines), further for runs large enough to
/// have data there (one nine per decade of requests), at most [`MAX_NINES`].
pub(super) fn nines_for(count: u64) -> u32 {
    let decades = (count.max(1) as f64).log10().ceil() as u32;
    decades.clamp(4, MAX_NINES)
}

pub(super) fn pct_label(q: f64) -> String {
    let p = q * 100.0;
    let s = format!("{p:.4}");
    format!("p{}", s.trim_end_matches('0').trim_end_matches('.'))
}

pub(super) fn distribution_chart(
    title: &str,
    series: &[(String, &Curve, &'static str, bool)],
) -> String {
    let max_nines = nines_for(series.iter().map(|(_, c, _, _)| c.count).max().unwrap_or(1));
    let xmax = f64::from(max_nines);
    let ys = || {
        series
            .iter()
            .flat_map(|(_, c, _, _)| c.line.iter().filter(|(x, _)| *x <= xmax + 1e-9))
            .map(|&(_, y)| y)
    };
    let lo = ys().filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min);
    let hi = ys().fold(0.0, f64::max);
    let x = Axis::percentile("percentile", max_nines);
    let y = Axis::latency("latency, ms", lo, hi);
    let mut chart = Chart::new("distribution", title, x, y);
    for (name, c, color, dash) in series {
        chart.series.push(Series {
            name: name.clone(),
            color,
            line: c
                .line
                .iter()
                .copied()
                .filter(|(x, _)| *x <= xmax + 1e-9)
                .collect(),
            dots: c
                .dots
                .iter()
                .filter(|(x, _, _)| *x <= xmax + 1e-9)
                .map(|&(x, y, q)| (x, y, format!("{name}: {} = {} ms", pct_label(q), ms(y))))
                .collect(),
            dash: *dash,
            right: false,
        });
    }
    chart.render()
}

/// The run's per-second timeline, on the run's clock: the top-level timeline (a plan's
/// phases follow one another on it), or the phases' own where there is none (a suite), with a
/// mark where each phase starts. Rates divide a partial second by the part of it covered.
/// Returns the chart and its caption, or None without any second.
pub(super) fn timeline_chart(r: &RunResult) -> Option<(String, String)> {
    let mut points: Vec<(f64, &TimelinePoint)> = Vec::new();
    let mut marks = Vec::new();
    let at = |p: &TimelinePoint| f64::from(p.second) + 0.5;
    points.extend(r.measurement.timeline.iter().map(|p| (at(p), p)));
    for ph in &r.phases {
        let Some(first) = ph.measurement.timeline.first() else {
            continue;
        };
        // A phase covers the end of its first second: it starts at 1 − span into it.
        marks.push(Mark {
            at: f64::from(first.second) + 1.0 - first.span_s.clamp(0.0, 1.0),
            label: ph.name.clone(),
            color: "#8c959f",
            dash: "3 3",
        });
        if r.measurement.timeline.is_empty() {
            points.extend(ph.measurement.timeline.iter().map(|p| (at(p), p)));
        }
    }
    if points.is_empty() {
        return None;
    }
    let mut chart = rate_chart(&points, !marks.is_empty());
    chart.vmarks = marks;
    let caption = if r.phases.is_empty() {
        "Completed requests and errors per second (left axis; a partial first or last second \
         is divided by its real length) and that second's p99 response time (right axis)."
            .to_string()
    } else {
        "The run's seconds (dashed lines mark where each phase starts): completed requests \
         and errors per second (left axis; a second a phase covered only in part is divided \
         by that part) and that second's p99 (right axis)."
            .to_string()
    };
    Some((chart.render(), caption))
}

/// Requests, errors (left axis) and p99 (right axis) per second, at x seconds: the run's
/// timeline in the report and a running step's in the live dashboard. `marked`: labels at
/// the top need headroom.
pub(super) fn rate_chart(points: &[(f64, &TimelinePoint)], marked: bool) -> Chart {
    let xmax = points.iter().map(|(x, _)| x + 0.5).fold(1.0, f64::max);
    // 15 % headroom keeps the phase labels at the top clear of the lines.
    let headroom = if marked { 1.15 } else { 1.0 };
    let ymax = headroom * points.iter().map(|(_, p)| p.rate()).fold(1.0, f64::max);
    let p99max = headroom * points.iter().map(|(_, p)| p.p99_ms).fold(0.0, f64::max);
    let mut chart = Chart::new(
        "timeline",
        "Requests, errors and p99 per second",
        Axis::linear("seconds since the start of measurement", 0.0, xmax, 10),
        Axis::linear("per second", 0.0, ymax, 6),
    );
    chart.y2 = Some(Axis::linear(
        "p99 ms",
        0.0,
        if p99max > 0.0 { p99max } else { 1.0 },
        6,
    ));
    chart.series.push(Series {
        name: "requests/s".into(),
        color: P50,
        line: points.iter().map(|(x, p)| (*x, p.rate())).collect(),
        ..Series::default()
    });
    chart.series.push(Series {
        name: "errors/s".into(),
        color: P99,
        line: points
            .iter()
            .map(|(x, p)| (*x, p.errors as f64 * p.rate() / (p.requests.max(1) as f64)))
            .collect(),
        ..Series::default()
    });
    chart.series.push(Series {
        name: "p99 ms (right axis)".into(),
        color: P95,
        // Seconds without completions have no latency: the line breaks there.
        line: points
            .iter()
            .map(|(x, p)| (*x, if p.requests > 0 { p.p99_ms } else { f64::NAN }))
            .collect(),
        dash: true,
        right: true,
        ..Series::default()
    });
    chart
}

pub(super) fn offered_label(o: Offered) -> String {
    offered(&o)
}

pub(super) fn ladder_charts(s: &ScenarioStudy, study: &Study) -> Option<(String, String)> {
    if !(s.kind == "rate ladder" || s.kind == "concurrency ladder") || s.steps.is_empty() {
        return None;
    }
    let is_rate = matches!(s.steps[0].offered, Offered::Rate(_));
    let x_label = if is_rate {
        "offered load, requests/s"
    } else {
        "offered load, concurrent connections"
    };
    let xmax = s
        .steps
        .iter()
        .map(|r| r.offered.amount())
        .fold(0.0, f64::max);
    let vmarks = ladder_marks(s);
    let mut lat = latency_chart(s, study, Axis::linear(x_label, 0.0, xmax, 8));
    lat.vmarks = vmarks.clone();
    let mut thr = achieved_chart(s, is_rate, xmax, Axis::linear(x_label, 0.0, xmax, 8));
    thr.vmarks = vmarks;
    Some((lat.render(), thr.render()))
}

/// p50, p95 and p99 against the offered load, with the SLO's latency limits.
pub(super) fn latency_chart(s: &ScenarioStudy, study: &Study, x: Axis) -> Chart {
    // Latency vs offered load.
    let slo: Vec<(f64, String)> = study
        .slo
        .iter()
        .filter_map(|t| {
            let th = parse_threshold(t).ok()?;
            matches!(th.metric, Metric::LatencyMs(_)).then(|| (th.value, format!("SLO {t}")))
        })
        .collect();
    let lats = || {
        s.steps
            .iter()
            .flat_map(|r| [r.p50_ms, r.p95_ms, r.p99_ms])
            .chain(slo.iter().map(|(v, _)| *v))
            .filter(|v| v.is_finite())
    };
    let lo = lats().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let hi = lats().fold(0.0, f64::max);
    let mut lat = Chart::new(
        "latency-vs-rate",
        format!("{}: latency vs offered load", s.name),
        x,
        Axis::latency("latency, ms", lo, hi),
    );
    type Pick = fn(&perfbase_analysis::sweep::StepRow) -> f64;
    let percentiles: [(&str, &'static str, Pick); 3] = [
        ("p50", P50, |r| r.p50_ms),
        ("p95", P95, |r| r.p95_ms),
        ("p99", P99, |r| r.p99_ms),
    ];
    for (name, color, pick) in percentiles {
        let pts: Vec<(f64, f64)> = s
            .steps
            .iter()
            .map(|r| (r.offered.amount(), pick(r)))
            .collect();
        lat.series.push(Series {
            name: name.to_string(),
            color,
            dots: s
                .steps
                .iter()
                .zip(&pts)
                .map(|(r, &(x, y))| {
                    (
                        x,
                        y,
                        format!("{} at {}: {} ms", name, offered(&r.offered), ms(y)),
                    )
                })
                .collect(),
            line: pts,
            ..Series::default()
        });
    }
    lat.hmarks = slo
        .iter()
        .map(|(v, label)| Mark {
            at: *v,
            label: label.clone(),
            color: GOOD,
            dash: "8 4",
        })
        .collect();
    lat
}

/// The operating point and the knee, as vertical marks in load order.
pub(super) fn ladder_marks(s: &ScenarioStudy) -> Vec<Mark> {
    let mut vmarks = Vec::new();
    if let Some(op) = &s.operating_point {
        vmarks.push(Mark {
            at: op.offered.amount(),
            label: format!("operating point {}", offered(&op.offered)),
            color: GOOD,
            dash: "2 3",
        });
    }
    if let Some(b) = s
        .knee
        .as_ref()
        .and_then(|k| k.first_bad)
        .and_then(|b| s.steps.get(b))
    {
        vmarks.push(Mark {
            at: b.offered.amount(),
            label: format!("knee {}", offered(&b.offered)),
            color: KNEE,
            dash: "6 4",
        });
    }
    vmarks.sort_by(|a, b| a.at.total_cmp(&b.at));
    vmarks
}

/// Achieved against offered load, beside the ideal (or linear scaling for concurrency).
pub(super) fn achieved_chart(s: &ScenarioStudy, is_rate: bool, xmax: f64, x: Axis) -> Chart {
    // Achieved vs offered.
    let achieved_max = s.steps.iter().map(|r| r.achieved_rps).fold(0.0, f64::max);
    let y = Axis::linear(
        "achieved, requests/s",
        0.0,
        if is_rate {
            achieved_max.max(xmax)
        } else {
            achieved_max
        },
        6,
    );
    let ytop = y.ticks().last().map_or(achieved_max, |t| t.0);
    let mut thr = Chart::new(
        "achieved-vs-offered",
        format!("{}: achieved vs offered load", s.name),
        x,
        y,
    );
    let ideal = if is_rate {
        let end = xmax.min(ytop);
        Some(("ideal: achieved = offered", vec![(0.0, 0.0), (end, end)]))
    } else {
        let first = &s.steps[0];
        let (x0, a0) = (first.offered.amount(), first.achieved_rps);
        (x0 > 0.0 && a0 > 0.0).then(|| {
            // Linear scaling from the first step, cut where it leaves the chart.
            let end = xmax.min(ytop * x0 / a0);
            (
                "linear scaling from the first step",
                vec![(0.0, 0.0), (end, a0 * end / x0)],
            )
        })
    };
    if let Some((name, line)) = ideal {
        thr.series.push(Series {
            name: name.to_string(),
            color: "#8c959f",
            line,
            dash: true,
            ..Series::default()
        });
    }
    thr.series.push(Series {
        name: "achieved requests/s".into(),
        color: P50,
        line: s
            .steps
            .iter()
            .map(|r| (r.offered.amount(), r.achieved_rps))
            .collect(),
        dots: s
            .steps
            .iter()
            .map(|r| {
                (
                    r.offered.amount(),
                    r.achieved_rps,
                    format!(
                        "{} offered: achieved {}/s, {:.2} % success",
                        offered(&r.offered),
                        thousands_f(r.achieved_rps),
                        r.success_ratio * 100.0
                    ),
                )
            })
            .collect(),
        ..Series::default()
    });
    thr
}

/// One box plot per scenario whose phases include a repetition > 1, in the order the
/// scenarios first appear among the phases.
pub(super) fn boxplots(r: &RunResult) -> Vec<(String, BoxPlot)> {
    let mut order: Vec<&str> = Vec::new();
    for p in &r.phases {
        if let Some(s) = p.scenario.as_deref() {
            if !order.contains(&s) {
                order.push(s);
            }
        }
    }
    let mut out = Vec::new();
    for name in order {
        let phases: Vec<_> = r
            .phases
            .iter()
            .filter(|p| p.scenario.as_deref() == Some(name) && p.repetition.is_some())
            .collect();
        if !phases.iter().any(|p| p.repetition.unwrap_or(1) > 1) {
            continue;
        }
        let mut by_step: BTreeMap<u32, (String, Vec<(u32, BoxStat)>)> = BTreeMap::new();
        for p in phases {
            let Some(b) = box_stat(
                &p.measurement.histogram.response,
                format!("#{}", p.repetition.unwrap_or(1)),
            ) else {
                continue;
            };
            let step = p.step.unwrap_or(0);
            let label = match (p.offered_rate, p.offered_connections) {
                (Some(rate), _) => offered_label(Offered::Rate(rate)),
                (None, Some(c)) => offered_label(Offered::Concurrency(c)),
                _ => format!("step {}", step + 1),
            };
            by_step
                .entry(step)
                .or_insert_with(|| (label, Vec::new()))
                .1
                .push((p.repetition.unwrap_or(1), b));
        }
        if by_step.is_empty() {
            continue;
        }
        let groups = by_step
            .into_values()
            .map(|(label, mut boxes)| {
                boxes.sort_by_key(|(rep, _)| *rep);
                BoxGroup {
                    label,
                    boxes: boxes.into_iter().map(|(_, b)| b).collect(),
                }
            })
            .collect();
        out.push((
            name.to_string(),
            BoxPlot {
                title: format!("{name}: latency of each repetition"),
                y_label: "latency, ms".into(),
                x_label: "step (offered load) and repetition".into(),
                groups,
            },
        ));
    }
    out
}

pub(super) fn box_stat(encoded: &str, label: String) -> Option<BoxStat> {
    let h = decode_histogram(encoded).ok()?;
    if h.is_empty() {
        return None;
    }
    let at = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Some(BoxStat {
        label,
        min: h.min() as f64 / 1000.0,
        p25: at(0.25),
        p50: at(0.5),
        p75: at(0.75),
        max: h.max() as f64 / 1000.0,
        outliers: Vec::new(),
    })
}

/// A per-second timeline of one metric of every monitored target, with the idle baseline
/// shaded and phase changes marked: `value` picks the metric from a sample.
pub(super) fn monitor_chart(
    m: &MonitorReport,
    kind: &'static str,
    title: &str,
    unit: &str,
    value: fn(&perfbase_monitor::Sample) -> f64,
) -> Option<String> {
    let targets: Vec<_> = m
        .targets
        .iter()
        .filter(|t| !t.timeline.is_empty())
        .collect();
    if targets.is_empty() {
        return None;
    }
    let samples = || targets.iter().flat_map(|t| t.timeline.iter());
    let tmax = samples().map(|s| s.t_s).fold(1.0, f64::max);
    // 15 % headroom keeps the phase labels at the top clear of the lines.
    let vmax = 1.15 * samples().map(value).fold(1.0, f64::max);
    let mut chart = Chart::new(
        kind,
        title,
        Axis::linear("seconds since the monitor started", 0.0, tmax, 10),
        Axis::linear(unit, 0.0, vmax, 6),
    );
    for (i, t) in targets.iter().enumerate() {
        chart.series.push(Series {
            name: t.label.clone(),
            color: PALETTE[i % PALETTE.len()],
            line: t.timeline.iter().map(|s| (s.t_s, value(s))).collect(),
            dash: t.kind == "self",
            ..Series::default()
        });
    }
    // Phases, from the longest timeline: a sample covers the interval that ends at its t_s.
    let Some(longest) = targets.iter().max_by_key(|t| t.timeline.len()) else {
        return Some(chart.render());
    };
    let mut prev: Option<&str> = None;
    for s in &longest.timeline {
        if prev != Some(s.phase.as_str()) {
            let start = (s.t_s - m.interval_s).max(0.0);
            if s.kind() == PhaseKind::Idle {
                let end = longest
                    .timeline
                    .iter()
                    .filter(|x| x.kind() == PhaseKind::Idle)
                    .map(|x| x.t_s)
                    .fold(start, f64::max);
                chart.bands.push(Band {
                    from: start,
                    to: end,
                    label: "idle".into(),
                });
            } else if prev.is_some() {
                chart.vmarks.push(Mark {
                    at: start,
                    label: s.phase.clone(),
                    color: "#8c959f",
                    dash: "3 3",
                });
            }
            prev = Some(s.phase.as_str());
        }
    }
    Some(chart.render())
}
