//! One second of a running study as the live views show it: the step's last second and its
//! figures so far, its seconds, statuses and error classes, endpoints and checks, perfbase's
//! own CPU against its cores, the monitored services, and a ladder's finished steps with the
//! knee and the SLO as they are found. The terminal view and the web dashboard draw the same
//! [`Frame`]; one [`Frames`] makes them, from a step's figures so far (this process's, or the
//! agents' merged through the store).

use hdrhistogram::Histogram;
use perfbase_analysis::knee::{find_knee, KneeRule};
use perfbase_analysis::sweep::{step_row, Offered};
use perfbase_core::result::{Measurement, PhaseResult};
use perfbase_core::timeline::TimelinePoint;
use perfbase_monitor::LatestSamples;
use perfbase_report::html::LiveStep;
use perfbase_report::html::{live_distribution, live_ladder, live_rates};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How many seconds a frame carries back.
const SECONDS_KEPT: usize = 60;
/// perfbase's CPU at or above this share of its cores: the generator may be the limit.
const SATURATED: f64 = 0.9;

/// Requests and latency over a window: the last second, or the step so far.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Window {
    pub requests: u64,
    pub errors: u64,
    pub rps: f64,
    pub errors_per_s: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Window {
    fn of(h: &Histogram<u64>, requests: u64, errors: u64, seconds: f64) -> Window {
        let q = |q: f64| {
            if h.is_empty() {
                f64::NAN
            } else {
                h.value_at_quantile(q) as f64 / 1000.0
            }
        };
        let per_s = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        Window {
            requests,
            errors,
            rps: per_s(requests),
            errors_per_s: per_s(errors),
            p50_ms: q(0.5),
            p90_ms: q(0.9),
            p99_ms: q(0.99),
            max_ms: if h.is_empty() {
                f64::NAN
            } else {
                h.max() as f64 / 1000.0
            },
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Second {
    pub second: u32,
    pub requests: u64,
    pub rps: f64,
    pub errors: u64,
    pub p99_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct EndpointRow {
    pub name: String,
    pub requests: u64,
    pub errors: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckRow {
    pub name: String,
    pub passed: u64,
    pub failed: u64,
}

/// perfbase's own CPU, % of one core, against the cores its workers can use.
#[derive(Debug, Clone, Serialize)]
pub struct Generator {
    pub cpu_pct: f64,
    pub cores: u32,
    pub saturated: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetRow {
    pub label: String,
    pub cpu_pct: f64,
    pub rss_mb: f64,
}

/// The SVG charts of the dashboard, drawn by the HTML report's code.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Charts {
    pub rates: Option<String>,
    pub distribution: Option<String>,
    pub ladder: Option<String>,
}

/// One second of the run, as both live views show it.
#[derive(Debug, Clone, Serialize)]
pub struct Frame {
    pub scenario: String,
    pub step: String,
    pub measured: bool,
    pub elapsed_s: f64,
    pub duration_s: Option<f64>,
    /// Phases begun so far (warm-ups count), and how long the run has gone against how long
    /// the whole plan was planned to take.
    pub phase_index: usize,
    pub run_s: f64,
    pub planned_s: Option<f64>,
    pub second: Window,
    pub so_far: Window,
    pub seconds: Vec<Second>,
    /// The step's latency so far in at most 10 buckets, each doubling: (upper bound in ms,
    /// count).
    pub histogram: Vec<(String, u64)>,
    pub statuses: Vec<(String, u64)>,
    pub classes: Vec<(String, u64)>,
    pub endpoints: Vec<EndpointRow>,
    pub checks: Vec<CheckRow>,
    pub generator: Option<Generator>,
    pub targets: Vec<TargetRow>,
    /// The scenario's finished steps, when it is a ladder, and its knee's index among them
    /// (drawn in `charts.ladder`).
    #[serde(skip)]
    pub ladder: Vec<LiveStep>,
    pub knee: Option<usize>,
    pub charts: Charts,
}

/// What the previous frame of the running phase had, for the last second's figures.
struct Previous {
    phase: (String, String),
    at: Duration,
    response: Histogram<u64>,
    requests: u64,
    errors: u64,
}

/// The ladder steps one scenario has finished.
#[derive(Default)]
struct Ladder {
    rows: Vec<perfbase_analysis::sweep::StepRow>,
    steps: Vec<LiveStep>,
    concurrency: bool,
}

/// Makes frames, keeping what a frame needs from the ones before it.
pub struct Frames {
    started: Instant,
    planned: Option<Duration>,
    phases: usize,
    previous: Option<Previous>,
    /// The running phase's windows so far, as seconds.
    history: Vec<TimelinePoint>,
    ladders: BTreeMap<String, Ladder>,
    knee_rule: KneeRule,
    slo_p99_ms: Option<f64>,
    monitor: Option<LatestSamples>,
    /// Whether to draw the SVG charts (the dashboard's; the terminal has its own).
    pub charts: bool,
}

impl Frames {
    pub fn new(planned: Option<Duration>, knee_rule: KneeRule, slo_p99_ms: Option<f64>) -> Frames {
        Frames {
            started: Instant::now(),
            planned,
            phases: 0,
            previous: None,
            history: Vec::new(),
            ladders: BTreeMap::new(),
            knee_rule,
            slo_p99_ms,
            monitor: None,
            charts: false,
        }
    }

    /// The monitor's newest samples are read into every frame from now on.
    pub fn watch(&mut self, monitor: LatestSamples) {
        self.monitor = Some(monitor);
    }

    /// The frame of `step` of `scenario`, `at` into it, from its figures so far `m` (and its
    /// response histogram, decoded).
    pub fn frame(
        &mut self,
        (scenario, step, measured): (&str, &str, bool),
        (at, duration): (Duration, Option<Duration>),
        m: &Measurement,
        response: &Histogram<u64>,
    ) -> Frame {
        let errors: u64 = m.errors.values().sum();
        let last = self.last_window((scenario, step), at, (m.requests, errors), response);
        // A finished phase's own seconds; a running one's are the frames' windows.
        let points = if m.timeline.is_empty() {
            &self.history
        } else {
            &m.timeline
        };
        let seconds = seconds(points);
        let rates = self.charts.then(|| live_rates(points)).flatten();
        let ladder = self.ladders.get(scenario);
        let mut frame = Frame {
            scenario: scenario.to_string(),
            step: step.to_string(),
            measured,
            elapsed_s: at.as_secs_f64(),
            duration_s: duration.map(|d| d.as_secs_f64()),
            phase_index: self.phases,
            run_s: self.started.elapsed().as_secs_f64(),
            planned_s: self.planned.map(|d| d.as_secs_f64()),
            second: last,
            so_far: Window::of(response, m.requests, errors, at.as_secs_f64()),
            seconds,
            histogram: buckets(response),
            statuses: m.status.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            classes: m.errors.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            endpoints: endpoints(m),
            checks: m
                .checks
                .iter()
                .map(|c| CheckRow {
                    name: c.name.clone(),
                    passed: c.passed,
                    failed: c.failed,
                })
                .collect(),
            generator: None,
            targets: Vec::new(),
            ladder: ladder.map(|l| l.steps.clone()).unwrap_or_default(),
            knee: ladder.and_then(|l| find_knee(&l.rows, &self.knee_rule).first_bad),
            charts: Charts::default(),
        };
        self.resources(&mut frame);
        if self.charts {
            frame.charts = Charts {
                rates,
                distribution: live_distribution(&m.histogram.response),
                ladder: live_ladder(
                    &frame.ladder,
                    ladder.is_some_and(|l| l.concurrency),
                    frame.knee,
                    self.slo_p99_ms,
                ),
            };
        }
        frame
    }

    /// The window since the previous frame of the same phase (since its start for its first),
    /// kept as one of the phase's seconds.
    fn last_window(
        &mut self,
        (scenario, step): (&str, &str),
        at: Duration,
        (requests, errors): (u64, u64),
        response: &Histogram<u64>,
    ) -> Window {
        let key = (scenario.to_string(), step.to_string());
        let previous = self.previous.take().filter(|p| p.phase == key);
        if previous.is_none() {
            self.phases += 1;
            self.history.clear();
        }
        let (from, window) = match previous {
            Some(p) if at > p.at => {
                let mut h = response.clone();
                // Counts only grow within a phase; a failed subtraction (a histogram that
                // shrank, which cannot happen) shows the step so far instead.
                let delta = match h.subtract(&p.response) {
                    Ok(()) => h,
                    Err(_) => response.clone(),
                };
                let n = (
                    requests.saturating_sub(p.requests),
                    errors.saturating_sub(p.errors),
                );
                (
                    p.at,
                    Window::of(&delta, n.0, n.1, (at - p.at).as_secs_f64()),
                )
            }
            Some(p) => (p.at, Window::default()),
            None => (
                Duration::ZERO,
                Window::of(response, requests, errors, at.as_secs_f64()),
            ),
        };
        if at > from {
            let whole = |v: f64| if v.is_finite() { v } else { 0.0 };
            self.history.push(TimelinePoint {
                second: from.as_secs_f64().round() as u32,
                requests: window.requests,
                errors: window.errors,
                p50_ms: whole(window.p50_ms),
                p99_ms: whole(window.p99_ms),
                span_s: (at - from).as_secs_f64(),
            });
        }
        self.previous = Some(Previous {
            phase: key,
            at,
            response: response.clone(),
            requests,
            errors,
        });
        window
    }

    /// A measured step of `scenario` ended: one more point of its ladder curve.
    pub fn step_done(&mut self, scenario: &str, saved: &PhaseResult) {
        let offered = match (saved.offered_rate, saved.offered_connections) {
            (Some(r), _) => Offered::Rate(r),
            (None, Some(c)) => Offered::Concurrency(c),
            (None, None) => return,
        };
        let m = &saved.measurement;
        let l = self.ladders.entry(scenario.to_string()).or_default();
        l.concurrency = matches!(offered, Offered::Concurrency(_));
        l.rows.push(step_row(&saved.name, offered, m, &[]));
        l.steps.push(LiveStep {
            name: saved.name.clone(),
            offered: offered.amount(),
            achieved_rps: m.rps,
            p50_ms: m.latency_ms.p50,
            p99_ms: m.latency_ms.p99,
        });
    }

    fn resources(&self, frame: &mut Frame) {
        let Some(monitor) = &self.monitor else {
            return;
        };
        for s in monitor.read() {
            if s.label == perfbase_monitor::SELF_LABEL {
                let cores = monitor.capacity.max(1);
                frame.generator = Some(Generator {
                    cpu_pct: s.cpu_pct,
                    cores,
                    saturated: s.cpu_pct >= SATURATED * 100.0 * f64::from(cores),
                });
            }
            frame.targets.push(TargetRow {
                label: s.label,
                cpu_pct: s.cpu_pct,
                rss_mb: s.rss_bytes as f64 / 1e6,
            });
        }
    }
}

/// Powers-of-two buckets over the histogram's range (wider ones when it spans more than ten),
/// labelled by their upper bound in ms.
fn buckets(h: &Histogram<u64>) -> Vec<(String, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let lo = (h.min().max(1) as f64).log2().floor() as u32;
    let hi = ((h.max() + 1) as f64).log2().ceil() as u32;
    let width = (hi.saturating_sub(lo)).div_ceil(10).max(1);
    let mut out = Vec::new();
    let mut from = 0u64;
    let mut exp = lo;
    while from <= h.max() {
        exp += width;
        let to = 1u64 << exp.min(62);
        let n = h.count_between(from, to.saturating_sub(1));
        let upper = to as f64 / 1000.0;
        let label = if upper < 1.0 {
            format!("{upper:.2}")
        } else {
            format!("{upper:.0}")
        };
        out.push((label, n));
        from = to;
    }
    out
}

fn seconds(points: &[TimelinePoint]) -> Vec<Second> {
    let from = points.len().saturating_sub(SECONDS_KEPT);
    points[from..]
        .iter()
        .map(|p| Second {
            second: p.second,
            requests: p.requests,
            rps: p.rate(),
            errors: p.errors,
            p99_ms: p.p99_ms,
        })
        .collect()
}

/// The step's endpoints; a step of one request has none of its own: itself, as `all`.
fn endpoints(m: &Measurement) -> Vec<EndpointRow> {
    if m.endpoints.is_empty() && m.requests > 0 {
        return vec![EndpointRow {
            name: "all".into(),
            requests: m.requests,
            errors: m.errors.values().sum(),
            p50_ms: m.latency_ms.p50,
            p99_ms: m.latency_ms.p99,
        }];
    }
    m.endpoints
        .iter()
        .map(|e| EndpointRow {
            name: e.name.clone(),
            requests: e.requests,
            errors: e.errors.values().sum(),
            p50_ms: e.latency_ms.p50,
            p99_ms: e.latency_ms.p99,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfbase_core::result::Model;
    use perfbase_core::Recorder;

    fn histogram(values_us: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &(v, n) in values_us {
            h.record_n(v, n).unwrap();
        }
        h
    }

    fn measurement(requests: u64, h: &Histogram<u64>) -> Measurement {
        let mut m = Measurement::from_recorder(&Recorder::new(false), Duration::ZERO, None);
        m.requests = requests;
        m.histogram.response = perfbase_core::result::encode_histogram(h);
        m
    }

    #[test]
    fn the_last_second_is_the_difference_from_the_previous_frame_and_a_new_step_starts_afresh() {
        let mut frames = Frames::new(None, KneeRule::default(), None);
        let one = histogram(&[(1_000, 100)]);
        let f = frames.frame(
            ("s", "a", true),
            (Duration::from_secs(1), None),
            &measurement(100, &one),
            &one,
        );
        assert_eq!((f.second.requests, f.phase_index), (100, 1));
        let both = histogram(&[(1_000, 100), (10_000, 300)]);
        let f = frames.frame(
            ("s", "a", true),
            (Duration::from_secs(2), None),
            &measurement(400, &both),
            &both,
        );
        // The second second alone: 300 requests at 10 ms; the step so far is mostly 10 ms too.
        assert_eq!(f.second.requests, 300);
        assert!(
            (f.second.p50_ms - 10.0).abs() < 0.01 && (f.second.max_ms - 10.0).abs() < 0.01,
            "{:?}",
            f.second
        );
        assert!((f.so_far.p50_ms - 10.0).abs() < 0.01 && (f.so_far.max_ms - 10.0).abs() < 0.01);
        assert!((f.so_far.p90_ms - 10.0).abs() < 0.01 && f.so_far.requests == 400);
        assert_eq!(
            f.seconds
                .iter()
                .map(|s| (s.second, s.requests))
                .collect::<Vec<_>>(),
            [(0, 100), (1, 300)]
        );
        let f = frames.frame(
            ("s", "b", true),
            (Duration::from_secs(1), None),
            &measurement(100, &one),
            &one,
        );
        assert_eq!(
            (f.second.requests, f.phase_index, f.seconds.len()),
            (100, 2, 1)
        );
    }

    #[test]
    fn a_ladder_grows_a_point_per_finished_step_and_finds_its_knee() {
        let mut frames = Frames::new(None, KneeRule::default(), Some(50.0));
        frames.charts = true;
        // p99 1 ms at 100 and 200/s, then 40 ms at 300 and 400/s: the knee is at 300/s.
        for (i, (rate, p99_us)) in [
            (100.0, 1_000),
            (200.0, 1_000),
            (300.0, 40_000),
            (400.0, 40_000),
        ]
        .into_iter()
        .enumerate()
        {
            let h = histogram(&[(p99_us, 1_000)]);
            let mut m = measurement(1_000, &h);
            m.success_ratio = 1.0;
            m.rps = rate;
            m.duration_s = 1_000.0 / rate;
            m.latency_ms.p50 = p99_us as f64 / 1000.0;
            m.latency_ms.p99 = p99_us as f64 / 1000.0;
            let saved = PhaseResult {
                name: format!("rate {rate}"),
                model: Model::Open,
                scenario: Some("ladder".into()),
                step: Some(i as u32),
                repetition: Some(1),
                offered_rate: Some(rate),
                offered_connections: None,
                missing_segments: Vec::new(),
                faults: Vec::new(),
                measurement: m,
            };
            frames.step_done("ladder", &saved);
        }
        let h = histogram(&[(1_000, 10)]);
        let f = frames.frame(
            ("ladder", "rate 500", true),
            (Duration::from_secs(1), None),
            &measurement(10, &h),
            &h,
        );
        assert_eq!(f.ladder.len(), 4);
        assert_eq!(
            f.knee,
            Some(2),
            "the first step whose p99 is over 3 x the first's"
        );
        let svg = f.charts.ladder.expect("a ladder chart");
        assert!(
            svg.contains("knee: rate 300") && svg.contains("SLO p99 50"),
            "{svg}"
        );
        // Another scenario has no ladder.
        let f = frames.frame(
            ("other", "x", true),
            (Duration::from_secs(1), None),
            &measurement(10, &h),
            &h,
        );
        assert!(f.ladder.is_empty() && f.charts.ladder.is_none());
    }
}
