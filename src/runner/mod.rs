//! The one orchestrator. Every run is a study of a [`Plan`], whether a plan file or a
//! command's flags made it: each scenario's phases go through the engine with its workload's
//! backend (warm-up, steps × repetitions, cool-downs), each measured phase is saved as soon
//! as it ends, then the analysis (sweeps, knee, operating point, repetition statistics,
//! thresholds, checks) is added, the result stored and the reports written.

mod abort;
mod analyse;
mod faults;
mod interleave;
mod jsonl;
pub mod rejudge;
mod report;
mod result;
mod scenario;
mod sinks;

use crate::exit::{bad_input, AppError, Exit};
use crate::plan::Plan;
use crate::store::StoreOptions;
use perfbase_analysis::study::{CheckVerdict, ScenarioStudy};
use perfbase_analysis::sweep::Offered;
use perfbase_core::result::RunResult;
use perfbase_core::Recorder;
use perfbase_engine::RunClock;
use result::Progressive;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// What a run's result is and where it goes.
#[derive(Debug, Clone)]
pub enum Output {
    /// A plan file: `result.json` (after every phase) and `report.md` in this folder, and the
    /// study's findings on the terminal.
    Plan { dir: PathBuf },
    /// A command's one workload: its measured phase is the result, written to `json`.
    Single { json: Option<PathBuf> },
    /// A command's suite of operations, one scenario each: a phase per operation, their
    /// merge at the top, and a table under `title`.
    Suite {
        json: Option<PathBuf>,
        title: String,
    },
}

/// How to run a plan.
pub struct RunOptions {
    pub output: Output,
    /// `-t`: wins over the plan's `threads`, which wins over the machine's cores.
    pub threads: Option<usize>,
    pub progress: bool,
    pub color: bool,
    pub store: StoreOptions,
    /// What the store calls the run: `plan`, `demo`, or the command (`http`, `redis`…).
    pub kind: String,
    /// `--hdr-log`: where each measured second's histogram goes, rewritten after each phase.
    pub hdr_log: Option<PathBuf>,
    /// `--jsonl`: a line per second and per phase while the run goes, to a file or `-`.
    pub jsonl: Option<PathBuf>,
    /// `--metrics-listen`, `--prometheus-remote-write`: live Prometheus exports.
    pub metrics: crate::exporting::MetricsOptions,
    /// `--segment I/N`: run only this share of every phase.
    pub segment: perfbase_engine::Segment,
    /// An agent started by a barrier: its clock's offset from the store's, for the result.
    pub clock: Option<ClockOffset>,
    /// `--start-at`: the wall-clock time the first phase starts.
    pub start_at: Option<SystemTime>,
    /// `--dry-run`: describe the plan and send nothing.
    pub dry_run: bool,
    /// `--tui`, `--dashboard`: the live views.
    pub live: crate::live::LiveOptions,
}

impl RunOptions {
    /// A study writing to `output` on this terminal, with no live output, segment or start
    /// time asked for: the one place a study's options are made, flags and plans alike.
    pub fn new(output: Output, quiet: bool, store: &StoreOptions, kind: &str) -> RunOptions {
        RunOptions {
            output,
            threads: None,
            progress: !quiet && std::io::stderr().is_terminal(),
            color: std::io::stdout().is_terminal(),
            store: store.clone(),
            kind: kind.to_string(),
            hdr_log: None,
            jsonl: None,
            metrics: Default::default(),
            segment: Default::default(),
            clock: None,
            start_at: None,
            dry_run: false,
            live: Default::default(),
        }
    }

    /// How a plan file's study runs: its folder, threads and terminal.
    pub fn plan_file(
        dir: PathBuf,
        threads: Option<u64>,
        quiet: bool,
        store: &StoreOptions,
        kind: &str,
    ) -> RunOptions {
        RunOptions {
            threads: threads.map(|t| t as usize),
            ..RunOptions::new(Output::Plan { dir }, quiet, store, kind)
        }
    }
}

/// An agent's clock against the results store's (`perfbase agent --barrier`), read once: how far ahead the store's is, and
/// the round trip the reading took (its uncertainty).
#[derive(Debug, Clone, Copy)]
pub struct ClockOffset {
    pub offset_ms: f64,
    pub round_trip_ms: f64,
}

/// Where a measured phase sits in its scenario.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    step: usize,
    rep: u32,
    offered: Offered,
}

/// Runs a command's or a plan file's plan (or, with --dry-run, describes it), stopping early
/// on Ctrl-C.
pub fn launch((plan, options): (Plan, RunOptions)) -> Result<Exit, AppError> {
    if options.dry_run {
        out!("{}", crate::plan::describe(&plan));
        return Ok(Exit::Success);
    }
    let interrupt = crate::interrupt::install();
    run(&plan, &options, interrupt).map(|(exit, _)| exit)
}

/// Runs `plan`, saves and reports its result, and returns the exit code: prepare (every
/// driver built, the sinks and the monitor started), each scenario, the checks, finish.
pub fn run(
    plan: &Plan,
    o: &RunOptions,
    interrupt: Arc<AtomicBool>,
) -> Result<(Exit, RunResult), AppError> {
    let (mut state, before) = prepare(plan, o, &interrupt)?;
    let mut studied: Vec<(usize, ScenarioStudy)> = Vec::new();
    let mut interleaved = Vec::new();
    for group in interleave::groups(plan) {
        if state.stopped(&interrupt) {
            break;
        }
        if let [k] = group[..] {
            let s = &plan.scenarios[k];
            let study = scenario::run_scenario((k, s), o, &mut state, &before.monitor, &interrupt);
            studied.push((k, study?));
        } else {
            let (studies, order) =
                interleave::run_group(&group, o, &mut state, &before.monitor, &interrupt)?;
            studied.extend(studies);
            interleaved.push(order);
        }
    }
    // The findings in plan order, whatever order the groups ran in.
    studied.sort_by_key(|(k, _)| *k);
    let scenarios: Vec<ScenarioStudy> = studied.into_iter().map(|(_, s)| s).collect();
    let mut checks = Vec::new();
    for c in &plan.checks {
        if state.stopped(&interrupt) {
            break;
        }
        let judged =
            scenario::run_check(plan, c, o, &mut state, &before.monitor, interrupt.clone());
        checks.extend(judged?);
    }
    state.stopped(&interrupt);
    finish(o, state, before, (scenarios, checks, interleaved))
}

/// What a run starts before its first load and needs at its end.
struct Before {
    monitor: perfbase_monitor::Monitor,
    /// A page's services, with the versions they reported before the load.
    services: Option<Vec<perfbase_report::page::Service>>,
    /// A page's noise floor and the machine's CPU counters at the start.
    noise: Option<crate::noise::Before>,
}

/// Everything before the first load: the output folder, every driver built (a bad workload
/// stops the run before any load is sent), the sinks, the services' versions for a page, the
/// monitor's idle baseline, and `--start-at`.
fn prepare<'a>(
    plan: &'a Plan,
    o: &'a RunOptions,
    interrupt: &Arc<AtomicBool>,
) -> Result<(Progressive<'a>, Before), AppError> {
    if let Output::Plan { dir } = &o.output {
        std::fs::create_dir_all(dir)
            .map_err(|e| bad_input(format!("--out {}: cannot create: {e}", dir.display())))?;
    }
    let used = plan.scenarios.iter().flat_map(|s| {
        std::iter::once(&s.workload).chain(s.steps.iter().filter_map(|st| st.workload.as_ref()))
    });
    for name in used.chain(plan.checks.iter().map(|c| &c.workload)) {
        plan.workloads[name]
            .backend
            .validate()
            .map_err(|e| bad_input(format!("{}{e}", scenario::context(plan, name))))?;
    }
    let loads = plan
        .scenarios
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| &st.load));
    let started = SystemTime::now();
    let (sinks, run_id) = sinks::Sinks::open(plan, o, started)?;
    let mut state = Progressive {
        plan,
        output: &o.output,
        started,
        clock: RunClock::default(),
        phases: Vec::new(),
        total: Recorder::new(false),
        total_elapsed: Duration::ZERO,
        interrupted: false,
        monitor: None,
        threads: scenario::threads_for(plan, o, loads),
        last: BTreeMap::new(),
        sides: BTreeMap::new(),
        hdr: o.hdr_log.clone().map(result::HdrLog::new),
        sinks,
        run_id,
        segment: o.segment,
        store_clock: o.clock,
        services: BTreeMap::new(),
    };
    // A page names the services' versions as they were before the load.
    let services = plan.page.as_ref().map(|_| crate::page::services(plan));
    for s in services.iter().flatten() {
        state.services.insert(s.address.clone(), s.version.clone());
    }
    let monitor = crate::monitoring::start(&plan.monitor, interrupt)?;
    monitor.set_worker_threads(state.threads);
    state.sinks.watch(monitor.latest());
    if let Some(at) = o.start_at {
        wait_until(at, interrupt);
        // The result's start is the load's: agents started through a barrier or --start-at
        // waited up to here.
        state.started = SystemTime::now();
    }
    // Last before the load, so the counters cover it and nothing else.
    let noise = plan.page.as_ref().map(|_| crate::noise::before());
    Ok((
        state,
        Before {
            monitor,
            services,
            noise,
        },
    ))
}

/// Everything after the last load: the monitor and sinks stopped, the study assembled, the
/// result saved and stored, the reports and the page written, and the exit code.
fn finish(
    o: &RunOptions,
    mut state: Progressive<'_>,
    before: Before,
    (scenarios, checks, interleaved): (
        Vec<ScenarioStudy>,
        Vec<CheckVerdict>,
        Vec<perfbase_core::study::Interleaving>,
    ),
) -> Result<(Exit, RunResult), AppError> {
    let plan = state.plan;
    state.monitor = Some(crate::monitoring::finish(before.monitor));
    let mut study = analyse::assemble(plan, scenarios, checks, &state.phases);
    study.interleaved = interleaved;
    study.noise = before
        .noise
        .as_ref()
        .map(|n| crate::noise::after(n, state.monitor.as_ref()));
    let result = state.result(Some(&study));
    // The terminal view gives the screen back before the reports; the sinks finish after
    // them, so a dashboard's open page can fetch the report.
    state.sinks.ended(&result);
    let exit = conclude(o, &state, &result, &study, before.services);
    state.sinks.finish();
    Ok((exit?, result))
}

/// The result saved and stored, the reports and the page written, and the exit code.
fn conclude(
    o: &RunOptions,
    state: &Progressive<'_>,
    result: &RunResult,
    study: &perfbase_analysis::study::Study,
    services: Option<Vec<perfbase_report::page::Service>>,
) -> Result<Exit, AppError> {
    let plan = state.plan;
    // Stored first: an output that cannot be written (a FIFO nobody reads, a full disk) must
    // not cost the run its place in the store.
    let written = state.write(result);
    let saved = crate::store::save(&o.store, &o.kind, result, &plan.labels);
    written?;
    let run_id = saved.as_ref().ok().copied().flatten();
    report::present(plan, o, state, result, study)?;
    if let (Some(spec), Output::Plan { dir }, Some(services)) = (&plan.page, &o.output, services) {
        let (md, html) = crate::page::write(crate::page::PageRun {
            plan,
            spec,
            dir,
            store: &o.store,
            run_id,
            result,
            study,
            services,
            closing: report::closing_blocks(plan, state, result),
        })?;
        outln!("page: {}  {}", md.display(), html.display());
    }
    // One segment's thresholds and checks judge only its share of the load: the whole is
    // judged on the merged run (`perfbase merge --plan`), so they do not fail this one.
    let passed = study.passed || !o.segment.is_whole();
    if !study.passed && passed {
        errln!(
            "perfbase: segment {}: its thresholds or checks failed on its share of the load; `perfbase merge --plan` judges the merged run",
            o.segment
        );
    }
    // A result nothing could keep outranks every other outcome: the run is not a baseline.
    let exit = match saved {
        Err(crate::store::Lost) => Exit::Failed,
        Ok(_) if crate::out::has_output_failed() => Exit::Failed,
        Ok(_) => Exit::of(result, passed),
    };
    if let Some(why) = exit.explain() {
        errln!("perfbase: {why}");
    }
    Ok(exit)
}

/// Waits for `--start-at` (Ctrl-C cuts it short); a time already past starts at once, and
/// says by how much, since agents started that way are not aligned.
fn wait_until(at: SystemTime, interrupt: &AtomicBool) {
    match at.duration_since(SystemTime::now()) {
        Ok(wait) => {
            let until = std::time::Instant::now() + wait;
            while std::time::Instant::now() < until
                && !interrupt.load(std::sync::atomic::Ordering::Relaxed)
            {
                std::thread::sleep(
                    Duration::from_millis(20).min(until.saturating_duration_since(std::time::Instant::now())),
                );
            }
        }
        Err(e) => errln!(
            "perfbase: warning: --start-at was {:.3} s ago; starting now, not aligned with the other agents",
            e.duration().as_secs_f64()
        ),
    }
}
