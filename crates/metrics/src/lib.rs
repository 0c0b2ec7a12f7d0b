//! Live Prometheus exports of a run: the [`Board`] holds every phase's figures so far (updated
//! about once a second from the engine's live copies, and exactly at each phase's end), and
//! [`serve`] (scrapes) and [`remote_write`] (pushes) turn it into series.
//!
//! Every series carries the labels `run` (the result's `started_at`), `scenario`, `step` (the
//! phase's name) and, for per-request figures, `endpoint` (a mix's endpoint, or `all`).

pub mod expose;
pub mod native;
pub mod remote_write;
pub mod serve;

use hdrhistogram::Histogram;
use perfbase_core::{Class, Recorder};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use native::Native;

/// Classic histogram bounds, in seconds: from half a millisecond (a loopback request) to ten
/// seconds (past any timeout a load test keeps).
pub const CLASSIC_BOUNDS_S: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// A latency histogram in seconds, classic and native.
#[derive(Debug, Clone, PartialEq)]
pub struct Buckets {
    pub sum_s: f64,
    pub count: u64,
    /// (upper bound in seconds, cumulative count), without +Inf (which is `count`).
    pub classic: Vec<(f64, u64)>,
    pub native: Native,
}

impl Buckets {
    pub fn from_hdr(h: &Histogram<u64>) -> Buckets {
        // One pass over the recorded values: a value counts under a bound when its whole HDR
        // bucket is under it.
        let mut classic: Vec<(f64, u64)> = CLASSIC_BOUNDS_S.iter().map(|&le| (le, 0)).collect();
        for v in h.iter_recorded() {
            let us = v.value_iterated_to();
            if let Some(first) = CLASSIC_BOUNDS_S
                .iter()
                .position(|&le| us <= (le * 1e6) as u64)
            {
                classic[first].1 += v.count_at_value();
            }
        }
        let mut below = 0;
        for (_, n) in &mut classic {
            below += *n;
            *n = below;
        }
        Buckets {
            sum_s: h.mean() * h.len() as f64 / 1e6,
            count: h.len(),
            classic,
            native: native::from_hdr(h),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    Histogram(Box<Buckets>),
}

/// One series: its labels (in order) and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub labels: Vec<(String, String)>,
    pub value: Value,
}

/// A metric with its series.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub series: Vec<Series>,
}

/// A phase's figures so far.
#[derive(Debug, Clone)]
struct PhaseFigures {
    scenario: String,
    step: String,
    so_far: Recorder,
    elapsed: Duration,
    in_flight: u64,
    requested_rate: Option<f64>,
}

#[derive(Debug, Default)]
struct State {
    run: String,
    phases: Vec<PhaseFigures>,
    finished: bool,
    /// A scrape read the figures after the run finished.
    scraped_final: bool,
}

/// The figures every export reads, shared between the run and the exporters.
#[derive(Debug, Clone, Default)]
pub struct Board(Arc<Mutex<State>>);

/// What one update says about a phase.
pub struct Update<'a> {
    pub scenario: &'a str,
    pub step: &'a str,
    pub so_far: &'a Recorder,
    pub elapsed: Duration,
    pub in_flight: u64,
    /// The open model's requested rate.
    pub requested_rate: Option<f64>,
}

impl Board {
    /// The board of run `run` (its label on every series).
    pub fn new(run: &str) -> Board {
        Board(Arc::new(Mutex::new(State {
            run: run.to_string(),
            ..State::default()
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves figures that are still figures.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets a phase's figures (live copies lag up to a second; a phase's end is exact).
    pub fn update(&self, u: Update) {
        let mut s = self.state();
        let figures = PhaseFigures {
            scenario: u.scenario.to_string(),
            step: u.step.to_string(),
            so_far: u.so_far.live_copy(),
            elapsed: u.elapsed,
            in_flight: u.in_flight,
            requested_rate: u.requested_rate,
        };
        match s
            .phases
            .iter_mut()
            .find(|p| p.scenario == u.scenario && p.step == u.step)
        {
            Some(p) => *p = figures,
            None => s.phases.push(figures),
        }
    }

    /// The run is over: the figures are final.
    pub fn finish(&self) {
        self.state().finished = true;
    }

    pub fn finished(&self) -> bool {
        self.state().finished
    }

    /// A scrape has read the final figures.
    pub fn final_scraped(&self) -> bool {
        self.state().scraped_final
    }

    fn mark_scraped(&self) {
        let mut s = self.state();
        if s.finished {
            s.scraped_final = true;
        }
    }

    /// Every metric with its series, as of now.
    pub fn families(&self) -> Vec<Family> {
        let s = self.state();
        let mut f = Families::default();
        for p in &s.phases {
            let base = vec![
                ("run".to_string(), s.run.clone()),
                ("scenario".to_string(), p.scenario.clone()),
                ("step".to_string(), p.step.clone()),
            ];
            let r = &p.so_far;
            let endpoints: Vec<Endpoint> = if r.labels().is_empty() {
                vec![Endpoint {
                    name: "all",
                    requests: r.requests(),
                    classes: r.class_counts(),
                    status: r.status_counts(),
                    histogram: &r.response,
                }]
            } else {
                r.labels()
                    .iter()
                    .map(|l| Endpoint {
                        name: &l.name,
                        requests: l.requests(),
                        classes: l.class_counts(),
                        status: l.status_counts(),
                        histogram: &l.response,
                    })
                    .collect()
            };
            for e in endpoints {
                let mut labels = base.clone();
                labels.push(("endpoint".into(), e.name.to_string()));
                f.requests.push(number(&labels, &[], e.requests as f64));
                for (class, n) in e.classes.iter().filter(|(c, _)| *c != Class::Ok) {
                    f.errors
                        .push(number(&labels, &[("class", class.name())], *n as f64));
                }
                for (code, n) in &e.status {
                    f.status
                        .push(number(&labels, &[("status", &code.to_string())], *n as f64));
                }
                f.latency.push(Series {
                    labels,
                    value: Value::Histogram(Box::new(Buckets::from_hdr(e.histogram))),
                });
            }
            let elapsed = p.elapsed.as_secs_f64();
            let achieved = if elapsed > 0.0 {
                r.requests() as f64 / elapsed
            } else {
                0.0
            };
            f.achieved.push(number(&base, &[], achieved));
            if let Some(rate) = p.requested_rate {
                f.requested.push(number(&base, &[], rate));
            }
            f.in_flight.push(number(&base, &[], p.in_flight as f64));
            f.late.push(number(&base, &[], r.late as f64));
            f.unsent.push(number(&base, &[], r.unsent as f64));
        }
        f.into_families()
    }
}

struct Endpoint<'a> {
    name: &'a str,
    requests: u64,
    classes: Vec<(Class, u64)>,
    status: Vec<(u16, u64)>,
    histogram: &'a Histogram<u64>,
}

fn number(base: &[(String, String)], extra: &[(&str, &str)], v: f64) -> Series {
    let mut labels = base.to_vec();
    labels.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Series {
        labels,
        value: Value::Number(v),
    }
}

#[derive(Default)]
struct Families {
    requests: Vec<Series>,
    errors: Vec<Series>,
    status: Vec<Series>,
    latency: Vec<Series>,
    achieved: Vec<Series>,
    requested: Vec<Series>,
    in_flight: Vec<Series>,
    late: Vec<Series>,
    unsent: Vec<Series>,
}

impl Families {
    fn into_families(self) -> Vec<Family> {
        use Kind::*;
        let all = [
            (
                "perfbase_requests",
                "Completed requests (operations)",
                Counter,
                self.requests,
            ),
            (
                "perfbase_errors",
                "Failed requests by error class",
                Counter,
                self.errors,
            ),
            (
                "perfbase_responses",
                "Responses by status code",
                Counter,
                self.status,
            ),
            (
                "perfbase_request_duration_seconds",
                "Response time, from the intended start in the open model",
                Histogram,
                self.latency,
            ),
            (
                "perfbase_achieved_rate",
                "Completed requests per second of the phase so far",
                Gauge,
                self.achieved,
            ),
            (
                "perfbase_requested_rate",
                "The open model's requested rate, per second",
                Gauge,
                self.requested,
            ),
            (
                "perfbase_in_flight",
                "Requests started and not yet completed",
                Gauge,
                self.in_flight,
            ),
            (
                "perfbase_late",
                "Open model: requests that could not start on schedule",
                Counter,
                self.late,
            ),
            (
                "perfbase_unsent",
                "Open model: requests that never started (no free connection within the timeout)",
                Counter,
                self.unsent,
            ),
        ];
        all.into_iter()
            .filter(|f| !f.3.is_empty())
            .map(|(name, help, kind, series)| Family {
                name,
                help,
                kind,
                series,
            })
            .collect()
    }
}

/// Runs `task` (given the stop signal) on a thread of its own with a one-thread tokio
/// runtime, so exports never share the load's event loops; the signal stops it.
pub(crate) fn spawn_stoppable<T, F>(
    name: &str,
    task: impl FnOnce(Arc<tokio::sync::Notify>) -> F + Send + 'static,
) -> std::io::Result<(Arc<tokio::sync::Notify>, std::thread::JoinHandle<T>)>
where
    F: std::future::Future<Output = T>,
    T: Send + 'static,
{
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopped = stop.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || rt.block_on(task(stopped)))?;
    Ok((stop, thread))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_buckets_are_cumulative_and_a_value_past_the_last_bound_is_only_in_the_count() {
        let mut h = perfbase_core::recorder::new_histogram(3);
        h.record_n(300, 2).unwrap();
        h.record(3_000).unwrap();
        h.record(20_000_000).unwrap();
        let b = Buckets::from_hdr(&h);
        assert_eq!(b.count, 4);
        let at = |le: f64| b.classic.iter().find(|c| c.0 == le).unwrap().1;
        assert_eq!(
            (at(0.0005), at(0.001), at(0.0025), at(0.005), at(10.0)),
            (2, 2, 2, 3, 3)
        );
        assert!(b.classic.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}
