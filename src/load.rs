//! One ad-hoc load run, whatever the protocol: the shape of the load (model, stop, threads,
//! timeout, warm-up), the phases it becomes, the engine run beside the monitor, and the
//! result. `perfbase http`, `pg` and `mysql` differ only in the driver they hand over.

use crate::exit::{AppError, Exit};
use crate::monitoring::{Labelled, MonitorOptions};
use crate::progress::ProgressLine;
use anyhow::Context as _;
use perfbase_core::result::{LoadConfig, Measurement, Model, RunResult, Tool, SCHEMA};
use perfbase_core::{Driver, Recorder};
use perfbase_drivers::http::HttpVersion;
use perfbase_engine::{EngineConfig, Load, PhaseSpec};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Default cap on requests in flight in the open model.
pub const DEFAULT_MAX_INFLIGHT: u64 = 1000;
/// The in-flight cap of open-model runs on databases and brokers, where every request in
/// flight holds a connection of its own: PostgreSQL allows 100 connections by default, and a
/// burst of 1000 AMQP connections ran a RabbitMQ node out of file descriptors.
pub const BACKEND_MAX_INFLIGHT: u64 = 64;
/// Default run length when neither -d nor -n is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// How the load is shaped, for any protocol.
#[derive(Debug, Clone)]
pub struct LoadShape {
    pub load: Load,
    pub duration: Option<Duration>,
    pub count: Option<u64>,
    pub threads: usize,
    pub timeout: Duration,
    /// Open model: the dispatcher's pacing granularity.
    pub pacing: Duration,
    pub warmup: Option<Duration>,
}

/// Runs a driver's set-up step (prefill, slot map, table scale, init) on a one-off
/// single-threaded runtime, outside the engine's workers.
pub fn block_on_local<F: std::future::Future>(f: F) -> Result<F::Output, AppError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::exit::bad_input(format!("cannot start a runtime: {e}")))?;
    Ok(tokio::task::LocalSet::new().block_on(&rt, f))
}

/// How many connections this process may hold at once: its open-file limit (`ulimit -n`) less
/// room for the store, the monitor and standard streams. More would fail one by one as
/// "too many open files" mid-run, or, far beyond, exhaust memory before the first request.
/// The soft limit is first raised to the hard one, as Go's runtime does for vegeta and k6,
/// so a desktop's default 1024 does not cap a run the system allows.
pub fn connection_budget() -> u64 {
    static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read and write only the struct we pass.
        let soft = unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                1024
            } else if lim.rlim_cur < lim.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: lim.rlim_max,
                    rlim_max: lim.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    lim.rlim_max
                } else {
                    lim.rlim_cur
                }
            } else {
                lim.rlim_cur
            }
        };
        soft.saturating_sub(64).max(1)
    })
}

/// `n` sessions, each with a connection of its own, fit [`connection_budget`]; the error
/// names the limit and the remedy.
pub fn check_connections(n: u64) -> Result<(), String> {
    let budget = connection_budget();
    if n <= budget {
        Ok(())
    } else {
        Err(format!(
            "{n} connections are more than this process may open ({budget}: its file limit, \
             ulimit -n, less 64); lower it, or raise the limit with ulimit -n"
        ))
    }
}

impl LoadShape {
    /// The shape the shared load flags describe; `default_connections` applies without -c/-r.
    pub fn from_args(
        a: &crate::cli::LoadArgs,
        default_connections: u64,
        default_max_inflight: u64,
    ) -> LoadShape {
        let load = match a.rate {
            Some(rate) => Load::Open {
                pacer: perfbase_engine::Pacer::constant(rate),
                max_inflight: a.max_inflight.unwrap_or(default_max_inflight),
            },
            None => Load::Closed {
                connections: a.connections.unwrap_or(default_connections),
            },
        };
        let duration = match (a.duration, a.requests) {
            (None, None) => Some(DEFAULT_DURATION),
            (d, _) => d,
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        LoadShape {
            load,
            duration,
            count: a.requests,
            threads: a.threads.map_or(cores, |t| t as usize),
            timeout: a.timeout,
            pacing: a.pacing_granularity,
            warmup: a.warmup,
        }
    }

    /// `perfbase http --http2 -c N --streams M`: N connections carry N × M sessions (one
    /// stream each), as with h2load's `-c N -m M`. (A plan's `concurrency` counts streams.)
    pub fn with_streams(mut self, version: HttpVersion) -> LoadShape {
        if let (Load::Closed { connections }, HttpVersion::Http2 { streams }) =
            (&mut self.load, version)
        {
            *connections = connections.saturating_mul(streams as u64);
        }
        self
    }

    /// Workers that take part (a worker needs at least one session).
    pub fn effective_threads(&self) -> usize {
        self.load.active_workers(self.threads)
    }

    /// Warm-up (discarded) then the measured phase.
    pub fn phases(&self) -> Vec<PhaseSpec> {
        let mut phases = Vec::new();
        if let Some(w) = self.warmup {
            phases.push(PhaseSpec {
                name: "warmup".into(),
                load: self.load.clone(),
                duration: Some(w),
                count: None,
                record: false,
            });
        }
        phases.push(PhaseSpec {
            name: "measure".into(),
            load: self.load.clone(),
            duration: self.duration,
            count: self.count,
            record: true,
        });
        phases
    }

    /// The result's `config`, with the protocol's own settings.
    pub fn config(&self, protocol: BTreeMap<String, serde_json::Value>) -> LoadConfig {
        let (connections, rate, max_inflight) = match self.load {
            Load::Closed { connections } => (Some(connections), None, None),
            Load::Open {
                pacer,
                max_inflight,
            } => (None, Some(pacer.mean_rate()), Some(max_inflight)),
            Load::Idle => (None, None, None),
        };
        LoadConfig {
            threads: self.effective_threads() as u32,
            connections,
            rate,
            max_inflight,
            duration_s: self.duration.map(|d| d.as_secs_f64()),
            count: self.count,
            warmup_s: self.warmup.map_or(0.0, |d| d.as_secs_f64()),
            timeout_s: self.timeout.as_secs_f64(),
            pacing_granularity_s: rate.map(|_| self.pacing.as_secs_f64()),
            protocol,
        }
    }
}

/// What the result is called and how the run is shown.
#[derive(Debug, Clone)]
pub struct Presentation {
    /// The target as reports show it (redacted).
    pub label: String,
    pub protocol: &'static str,
    pub progress: bool,
    pub monitor: MonitorOptions,
    /// The protocol's settings for `config.protocol` (secrets redacted).
    pub settings: BTreeMap<String, serde_json::Value>,
}

impl Presentation {
    /// The presentation the shared load flags ask for.
    pub fn from_args(
        a: &crate::cli::LoadArgs,
        label: String,
        protocol: &'static str,
        settings: BTreeMap<String, serde_json::Value>,
    ) -> Presentation {
        use std::io::IsTerminal;
        Presentation {
            label,
            protocol,
            progress: !a.quiet && std::io::stderr().is_terminal(),
            monitor: MonitorOptions {
                selectors: a.monitor.clone(),
                idle: a.monitor_idle,
                interval: a.monitor_interval,
            },
            settings,
        }
    }
}

/// Runs `shape` against `driver` beside the monitor and returns the result.
pub fn execute<D: Driver>(
    driver: Arc<D>,
    shape: &LoadShape,
    p: &Presentation,
    interrupt: Arc<AtomicBool>,
) -> Result<RunResult, AppError> {
    let engine = EngineConfig {
        threads: shape.effective_threads(),
        timeout: shape.timeout,
        pacing: shape.pacing,
    };
    let monitor = crate::monitoring::start(&p.monitor, &interrupt)?;
    monitor.set_worker_threads(engine.threads);
    let mut observer = Labelled {
        monitor: &monitor,
        inner: ProgressLine::new(p.progress),
    };
    let outcomes = perfbase_engine::run(driver, &engine, &shape.phases(), interrupt, &mut observer)
        .context("the load engine could not start")?;
    let open_model = matches!(shape.load, Load::Open { .. });
    let interrupted = outcomes.iter().any(|o| o.interrupted);
    let (measurement, started_at) = match outcomes.iter().rev().find(|o| o.spec.record) {
        Some(o) => (o.measurement(), o.started_at),
        None => (
            Measurement::from_recorder(&Recorder::new(open_model), Duration::ZERO, None),
            std::time::SystemTime::now(),
        ),
    };
    Ok(RunResult {
        schema: SCHEMA.into(),
        tool: Tool {
            name: "perfbase".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        started_at: crate::env::rfc3339(started_at),
        target: p.label.clone(),
        protocol: p.protocol.into(),
        model: if open_model {
            Model::Open
        } else {
            Model::Closed
        },
        config: shape.config(p.settings.clone()),
        interrupted,
        measurement,
        phases: Vec::new(),
        study: None,
        monitor: crate::monitoring::finish(monitor).1,
        env: crate::env::capture(),
    })
}

/// Writes the JSON (if asked), prints the summary and decides the exit code.
pub fn finish(result: &RunResult, json: Option<&Path>) -> Result<Exit, AppError> {
    let saved = json.map(|p| {
        perfbase_report::json::write_atomic(p, result)
            .with_context(|| format!("cannot write the result to {}", p.display()))
    });
    out!("{}", perfbase_report::terminal::render(result));
    crate::app::print_monitor(result);
    if let Some(Err(e)) = saved {
        return Err(e.into());
    }
    let ok = result.measurement.requests - result.measurement.errors.values().sum::<u64>();
    if result.interrupted {
        errln!("perfbase: interrupted; the partial result above covers what was measured");
        Ok(Exit::Interrupted)
    } else if ok == 0 {
        errln!("perfbase: no request succeeded: the target was unusable (see the errors above)");
        Ok(Exit::Unusable)
    } else {
        Ok(Exit::Success)
    }
}

/// Runs one operation kind after another (a database or cache suite) and folds the runs into
/// one result: a phase per operation, the top level merged exactly.
pub fn suite(
    names: &[&'static str],
    mut run_one: impl FnMut(&'static str) -> Result<RunResult, AppError>,
) -> Result<Option<RunResult>, AppError> {
    let mut phases = Vec::new();
    let mut last: Option<RunResult> = None;
    for name in names {
        let r = run_one(name)?;
        phases.push(perfbase_core::result::PhaseResult {
            name: (*name).into(),
            model: r.model,
            scenario: Some("suite".into()),
            step: Some(phases.len() as u32),
            repetition: Some(1),
            offered_rate: r.config.rate,
            offered_connections: r.config.connections,
            measurement: r.measurement.clone(),
        });
        let interrupted = r.interrupted;
        last = Some(r);
        if interrupted {
            break;
        }
    }
    Ok(last.map(|mut result| {
        let parts: Vec<_> = phases.iter().map(|p| &p.measurement).collect();
        result.measurement = perfbase_core::result::merge_measurements(&parts);
        result.phases = phases;
        result
    }))
}

/// The suite table: one row per operation.
pub fn print_suite(result: &RunResult, title: &str) {
    outln!("{title}");
    outln!(
        "  {:<12} {:>10} {:>12} {:>9} {:>9} {:>9} {:>8}",
        "operation",
        "ops",
        "ops/s",
        "avg ms",
        "p95 ms",
        "p99 ms",
        "errors"
    );
    for p in &result.phases {
        let m = &p.measurement;
        outln!(
            "  {:<12} {:>10} {:>12} {:>9.3} {:>9.3} {:>9.3} {:>8}",
            p.name,
            perfbase_report::thousands(m.requests),
            perfbase_report::thousands_f(m.rps),
            m.latency_ms.mean,
            m.latency_ms.p95,
            m.latency_ms.p99,
            perfbase_report::thousands(m.errors.values().sum::<u64>())
        );
    }
    for p in &result.phases {
        for e in &p.measurement.error_samples {
            outln!("  {}: {} ×{}: {}", p.name, e.class, e.count, e.message);
        }
    }
    crate::app::print_monitor(result);
}

/// The exit code of a finished suite.
pub fn suite_exit(result: &RunResult) -> Exit {
    if result.interrupted {
        Exit::Interrupted
    } else if result.measurement.success_ratio == 0.0 {
        Exit::Unusable
    } else {
        Exit::Success
    }
}
