//! The coordinator: starts one worker thread per core asked for, hands every worker its share
//! of each phase, waits for their recorders and merges them. Only this file talks across
//! threads, and only once per phase (plus relaxed atomics read once a second for progress).

use crate::message::{Command, Report, Setup, WorkerReport};
use crate::phase::{EngineError, Load, PhaseOutcome, PhaseSpec};
use crate::progress::{Progress, ProgressSnapshot};
use crate::worker;
use perfbase_core::{Driver, Recorder};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// The default open-model pacing granularity (see [`EngineConfig::pacing`]): 1 ms, the
/// resolution of wrk2's and oha's timers; measured to cut the CPU per request at 20k/s from
/// 42 µs (a wake-up per request) to under 10 µs.
pub const DEFAULT_PACING: Duration = Duration::from_millis(1);

/// The coarsest pacing granularity: beyond it a wake-up starts a tenth of a second's
/// requests at once, and a granularity near the run's length sends one burst and calls it a
/// rate.
pub const MAX_PACING: Duration = Duration::from_millis(100);

/// Why a pacing granularity is refused, or `None` when it can pace.
pub fn pacing_problem(g: Duration) -> Option<String> {
    (g > MAX_PACING).then(|| {
        format!(
            "{g:?} is coarser than 100ms, the coarsest pacing perfbase keeps as a rate (each \
             wake-up would start that long's requests at once); use 0 to 100ms"
        )
    })
}

/// Engine-wide settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Worker threads (each with its own event loop, connections and recorder).
    pub threads: usize,
    /// Per-operation timeout (also bounds opening a session).
    pub timeout: Duration,
    /// Open model: the dispatcher wakes at most once per this interval and starts every op
    /// due by then; zero wakes exactly at every op's intended time.
    pub pacing: Duration,
    /// The run's clock, shared by every engine run of one study (one per scenario), so that
    /// per-second timelines count seconds since the run's first measured phase.
    pub clock: RunClock,
    /// Workers publish a copy of their recorder once a second and the observer gets the
    /// phase so far ([`Observer::live`]), for live exports (Prometheus). Off, the hot path
    /// pays nothing for it.
    pub live: bool,
    /// This process's share when several run one schedule together (the whole by default).
    pub segment: crate::Segment,
}

/// The start of a run's first measured phase, set by whichever engine run gets there first;
/// clones share it. Timelines are kept on this clock: two 1.5 s phases are seconds 0–1.5 and
/// 1.5–3 of the run, not both 0–1.5.
#[derive(Debug, Clone, Default)]
pub struct RunClock(Arc<std::sync::OnceLock<Instant>>);

impl RunClock {
    /// Where a phase starting at `start` sits on the clock; the first measured phase sets it.
    fn offset(&self, start: Instant, measured: bool) -> Duration {
        let origin = if measured {
            *self.0.get_or_init(|| start)
        } else {
            match self.0.get() {
                Some(o) => *o,
                // A warm-up before anything was measured: at the clock's start.
                None => return Duration::ZERO,
            }
        };
        start.saturating_duration_since(origin)
    }
}

/// How long after telling its observers (`phase_started`) a phase starts: a short lead so
/// every worker is waiting before the common start instant.
pub const START_LEAD: Duration = Duration::from_millis(5);

/// Hooks the caller gets while the engine runs (progress lines, saving each phase at once).
pub trait Observer {
    /// Just before a phase starts (a monitor labels its samples with the phase from here on).
    fn phase_started(&mut self, _phase: &PhaseSpec) {}
    /// About once a second during a phase.
    fn tick(&mut self, _phase: &PhaseSpec, _elapsed: Duration, _progress: ProgressSnapshot) {}
    /// With [`EngineConfig::live`], right after each tick: the phase as of `at` into it,
    /// merged exactly from the workers' copies (up to a second old).
    fn live(&mut self, _phase: &PhaseSpec, _at: Duration, _so_far: &Recorder) {}
    /// As soon as a phase is merged, before the next one starts.
    fn phase_done(&mut self, _phase: &PhaseOutcome) {}
}

impl Observer for () {}

/// Runs `phases` in order against `driver`. `interrupt` stops the run within about 50 ms
/// (the current phase is returned with what it measured, marked interrupted).
pub fn run<D: Driver>(
    driver: Arc<D>,
    cfg: &EngineConfig,
    phases: &[PhaseSpec],
    interrupt: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<Vec<PhaseOutcome>, EngineError> {
    let threads = cfg.threads.max(1);
    let progress = Arc::new(Progress::new(threads));
    let Workers {
        commands,
        handles,
        reports: report_rx,
    } = spawn(&driver, cfg, threads, &interrupt, &progress)?;

    let mut outcomes = Vec::with_capacity(phases.len());
    let mut failure = None;
    for (index, spec) in phases.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        progress.reset();
        observer.phase_started(spec);
        let lead = START_LEAD;
        let start = Instant::now() + lead;
        let started_at = SystemTime::now() + lead;
        let active = spec.load.active_workers(threads);
        let ops = Arc::new(AtomicU64::new(0));
        let offset = cfg.clock.offset(start, spec.record);
        for tx in &commands {
            // A closed channel means the worker died; that surfaces below as WorkerLost.
            let _ = tx.send(Command {
                spec: spec.clone(),
                start,
                active,
                ops: Arc::clone(&ops),
                offset,
            });
        }
        let reports = match collect(&report_rx, threads, (spec, start), &progress, cfg, observer) {
            Ok(reports) => reports,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        let outcome = merge(
            (index, cfg.segment),
            spec,
            (start, offset),
            started_at,
            reports,
            interrupt.load(Ordering::Relaxed),
        );
        observer.phase_done(&outcome);
        let stop = outcome.interrupted;
        outcomes.push(outcome);
        if stop {
            break;
        }
    }
    drop(commands);
    for h in handles {
        let _ = h.join();
    }
    match failure {
        Some(e) if outcomes.is_empty() => Err(e),
        _ => Ok(outcomes),
    }
}

/// The worker threads: a command channel each, their handles, and the one channel their
/// reports come on.
struct Workers {
    commands: Vec<mpsc::Sender<Command>>,
    handles: Vec<std::thread::JoinHandle<()>>,
    reports: mpsc::Receiver<Report>,
}

/// Starts the worker threads, each waiting for its commands.
fn spawn<D: Driver>(
    driver: &Arc<D>,
    cfg: &EngineConfig,
    threads: usize,
    interrupt: &Arc<AtomicBool>,
    progress: &Arc<Progress>,
) -> Result<Workers, EngineError> {
    let (report_tx, report_rx) = mpsc::channel::<Report>();
    let mut commands = Vec::with_capacity(threads);
    let mut handles = Vec::with_capacity(threads);
    for id in 0..threads {
        let (tx, rx) = mpsc::channel::<Command>();
        let setup = Setup {
            id,
            driver: driver.clone(),
            timeout: cfg.timeout,
            pacing: cfg.pacing,
            interrupt: interrupt.clone(),
            progress: progress.clone(),
            live: cfg.live,
            segment: cfg.segment,
        };
        let reports = report_tx.clone();
        let handle = std::thread::Builder::new()
            .name(format!("perfbase-worker-{id}"))
            .spawn(move || worker::main(setup, rx, reports))
            .map_err(|source| EngineError::Start { worker: id, source })?;
        commands.push(tx);
        handles.push(handle);
    }
    Ok(Workers {
        commands,
        handles,
        reports: report_rx,
    })
}

/// Every worker's report of one phase, telling the observer the progress (and the live
/// recorder) about once a second while it waits.
fn collect(
    report_rx: &mpsc::Receiver<Report>,
    threads: usize,
    (spec, start): (&PhaseSpec, Instant),
    progress: &Progress,
    cfg: &EngineConfig,
    observer: &mut dyn Observer,
) -> Result<Vec<WorkerReport>, EngineError> {
    let mut reports: Vec<WorkerReport> = Vec::with_capacity(threads);
    while reports.len() < threads {
        match report_rx.recv_timeout(Duration::from_secs(1)) {
            Ok(Ok(r)) => reports.push(r),
            Ok(Err(e)) => return Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                observer.tick(spec, start.elapsed(), progress.snapshot());
                if let Some((at, so_far)) = cfg.live.then(|| progress.live()).flatten() {
                    observer.live(spec, at, &so_far);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(EngineError::WorkerLost(reports.len()))
            }
        }
    }
    Ok(reports)
}

fn merge(
    (index, segment): (usize, crate::Segment),
    spec: &PhaseSpec,
    (start, offset): (Instant, Duration),
    started_at: SystemTime,
    reports: Vec<WorkerReport>,
    interrupted: bool,
) -> PhaseOutcome {
    let open = matches!(spec.load, Load::Open { .. });
    let mut recorder = Recorder::new(open);
    let mut end = start;
    let mut last_dispatch: Option<Instant> = None;
    for r in &reports {
        recorder.merge(&r.recorder);
        end = end.max(r.end);
        if let Some(d) = r.last_dispatch {
            last_dispatch = Some(last_dispatch.map_or(d, |x: Instant| x.max(d)));
        }
    }
    recorder.finish();
    let mut elapsed = end.saturating_duration_since(start);
    let window = match (&spec.load, last_dispatch, spec.duration) {
        // A timed open-model phase that ran to its end: the window is the planned duration,
        // however few ops could start in it, so the achieved rate is what was really sent
        // (20 started in 3 s is 6.7/s, not 20 over the 20 ms they took to start). Its
        // duration is that window, or the time to the last completion if later: `-r 2 -d 3s`
        // lasts 3 s, not the 2.5 s to its last send.
        (Load::Open { .. }, _, Some(d)) if !interrupted => {
            elapsed = elapsed.max(d);
            d
        }
        (Load::Open { pacer, .. }, Some(last), _) => {
            // A count-bounded or interrupted phase: the window closes one interval after the
            // last op actually started, capped by the planned duration.
            let w = last.saturating_duration_since(start)
                + perfbase_core::units::saturating_secs(
                    f64::from(segment.count.max(1)) / pacer.final_rate(),
                );
            spec.duration.map_or(w, |d| w.min(d))
        }
        _ => elapsed,
    };
    // The phase's span on the run's clock: its timeline's first and last seconds are
    // partial, and a rate per second divides by the part the phase covered.
    recorder.timeline.set_span(offset, offset + elapsed);
    recorder.availability.cover(offset, offset + elapsed);
    PhaseOutcome {
        index,
        spec: spec.clone(),
        recorder,
        started_at,
        elapsed,
        window,
        interrupted,
        segment,
    }
}
