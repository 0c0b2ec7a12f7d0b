//! The one orchestrator. Every run is a study of a [`Plan`], whether a plan file or a
//! command's flags made it: each scenario's phases go through the engine with its workload's
//! backend (warm-up, steps × repetitions, cool-downs), each measured phase is saved as soon
//! as it ends, then the analysis (sweeps, knee, operating point, repetition statistics,
//! thresholds, checks) is added, the result stored and the reports written.

mod analyse;
mod jsonl;
mod record;
pub mod rejudge;
mod report;

use crate::exit::{bad_input, AppError, Exit};
use crate::plan::{Check, Plan, Scenario};
use crate::progress::ProgressLine;
use crate::records::StoreOptions;
use perfbase_analysis::study::CheckVerdict;
use perfbase_analysis::sweep::Offered;
use perfbase_core::result::RunResult;
use perfbase_core::Recorder;
use perfbase_engine::{EngineConfig, Load, Observer, PhaseOutcome, PhaseSpec, RunClock};
use record::{Progressive, Side};
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
    Study { dir: PathBuf },
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
pub struct StudyOptions {
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
}

impl StudyOptions {
    /// How a plan file's study runs: its folder, threads and terminal.
    pub fn plan_file(
        dir: PathBuf,
        threads: Option<u64>,
        quiet: bool,
        store: &StoreOptions,
        kind: &str,
    ) -> StudyOptions {
        StudyOptions {
            output: Output::Study { dir },
            threads: threads.map(|t| t as usize),
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

/// Saves each measured phase as soon as the engine hands it over, and shows progress.
struct Saver<'a, 'b> {
    state: &'b mut Progressive<'a>,
    scenario: (usize, String),
    slots: Vec<Option<Slot>>,
    progress: ProgressLine,
    error: Option<anyhow::Error>,
    /// Requests in flight at the last tick, for the live exports.
    in_flight: u64,
}

impl Observer for Saver<'_, '_> {
    fn tick(&mut self, phase: &PhaseSpec, elapsed: Duration, p: perfbase_engine::ProgressSnapshot) {
        self.progress.tick(phase, elapsed, p);
        self.in_flight = p.in_flight;
        if let Some(j) = &mut self.state.jsonl {
            j.second(&self.scenario.1, phase, elapsed, p);
        }
    }

    fn live(&mut self, phase: &PhaseSpec, elapsed: Duration, so_far: &perfbase_core::Recorder) {
        if let (Some(e), true) = (&self.state.exporter, phase.record) {
            e.update(&self.scenario.1, phase, so_far, elapsed, self.in_flight);
        }
    }

    fn phase_done(&mut self, phase: &PhaseOutcome) {
        self.progress.phase_done(phase);
        if !phase.spec.record {
            if let Some(j) = &mut self.state.jsonl {
                j.phase(&phase.spec, None);
            }
            return;
        }
        let slot = self.slots.get(phase.index).copied().flatten();
        if let Some(e) = &self.state.exporter {
            e.update(
                &self.scenario.1,
                &phase.spec,
                &phase.recorder,
                phase.elapsed,
                0,
            );
        }
        self.state
            .add((self.scenario.0, &self.scenario.1), slot, phase);
        if let Some(j) = &mut self.state.jsonl {
            j.phase(&phase.spec, self.state.phases.last());
        }
        if let Err(e) = self.state.save_progress() {
            self.error.get_or_insert(e);
        }
    }
}

/// The engine's phases of scenario `s`, where each measured one sits, and the workload each
/// runs. A command's phases keep the names its users know (`warmup`, `measure`, the
/// operation); a plan's name the scenario and step. A suite's steps run on their own
/// workloads, in order within each repetition (so a repetition's deletes remove the rows its
/// inserts made, as one `perfbase pg -w suite` run does).
fn phases(s: &Scenario, plain: bool) -> (Vec<PhaseSpec>, Vec<Option<Slot>>, Vec<String>) {
    let mut specs = Vec::new();
    let mut slots = Vec::new();
    let order = (1..=s.repetitions).flat_map(|rep| (0..s.steps.len()).map(move |k| (rep, k)));
    let workload_of = |k: usize| s.steps[k].workload.clone().unwrap_or(s.workload.clone());
    let mut workloads = Vec::new();
    if let Some(w) = s.warmup {
        specs.push(PhaseSpec {
            name: if plain {
                "warmup".into()
            } else {
                format!("{} warm-up", s.name)
            },
            load: s.steps[0].load.clone(),
            duration: Some(w),
            count: None,
            record: false,
        });
        slots.push(None);
        workloads.push(workload_of(0));
    }
    for (rep, k) in order {
        let step = &s.steps[k];
        if let (Some(c), false) = (s.cooldown, specs.is_empty()) {
            specs.push(PhaseSpec {
                name: format!("{} cool-down", s.name),
                load: Load::Idle,
                duration: Some(c),
                count: None,
                record: false,
            });
            slots.push(None);
            workloads.push(workload_of(k));
        }
        let name = if plain {
            step.name.clone()
        } else if s.repetitions > 1 {
            format!("{} {} #{rep}", s.name, step.name)
        } else if s.steps.len() > 1 {
            format!("{} {}", s.name, step.name)
        } else {
            s.name.clone()
        };
        specs.push(PhaseSpec {
            name,
            load: step.load.clone(),
            duration: step.duration,
            count: step.count,
            record: true,
        });
        slots.push(Some(Slot {
            step: k,
            rep,
            offered: step.offered,
        }));
        workloads.push(workload_of(k));
    }
    (specs, slots, workloads)
}

/// Consecutive phases on the same workload, as index ranges: each is one engine run. With
/// `each_measured`, a run also ends after every measured phase: a stream's consumers start
/// and drain around each run, so each step and repetition gets its own.
fn runs_of(
    workloads: &[String],
    specs: &[PhaseSpec],
    each_measured: bool,
) -> Vec<std::ops::Range<usize>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, w) in workloads.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if workloads[r.start] == *w && !(each_measured && specs[r.end - 1].record) => {
                r.end = i + 1
            }
            _ => runs.push(i..i + 1),
        }
    }
    runs
}

/// Worker threads for `loads`: as asked (`-t`, then the plan's `threads`, then the cores),
/// but no more than the most sessions any of them runs, since a worker needs one.
fn threads_for<'l>(plan: &Plan, o: &StudyOptions, loads: impl Iterator<Item = &'l Load>) -> usize {
    let asked = o
        .threads
        .or(plan.threads)
        .unwrap_or_else(crate::limits::cores);
    loads.map(|l| l.active_workers(asked)).max().unwrap_or(1)
}

fn engine(plan: &Plan, threads: usize, clock: &RunClock, o: &StudyOptions) -> EngineConfig {
    EngineConfig {
        threads,
        timeout: plan.timeout,
        pacing: plan.pacing,
        clock: clock.clone(),
        live: o.metrics.enabled(),
        segment: o.segment,
    }
}

/// How errors about workload `name` start: the plan file and the workload, for plan files.
fn context(plan: &Plan, name: &str) -> String {
    if plan.file.is_empty() {
        String::new()
    } else {
        format!("{}: workload '{name}': ", plan.file)
    }
}

/// Runs `plan`, saves and reports its result, and returns the exit code.
pub fn run(
    plan: &Plan,
    o: &StudyOptions,
    interrupt: Arc<AtomicBool>,
) -> Result<(Exit, RunResult), AppError> {
    if let Output::Study { dir } = &o.output {
        std::fs::create_dir_all(dir)
            .map_err(|e| bad_input(format!("--out {}: cannot create: {e}", dir.display())))?;
    }
    // Build every driver first: a bad workload stops the run before any load is sent.
    let used = plan.scenarios.iter().flat_map(|s| {
        std::iter::once(&s.workload).chain(s.steps.iter().filter_map(|st| st.workload.as_ref()))
    });
    for name in used.chain(plan.checks.iter().map(|c| &c.workload)) {
        plan.workloads[name]
            .backend
            .validate()
            .map_err(|e| bad_input(format!("{}{e}", context(plan, name))))?;
    }
    let loads = plan
        .scenarios
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| &st.load));
    let mut state = Progressive {
        plan,
        output: &o.output,
        started: SystemTime::now(),
        clock: RunClock::default(),
        phases: Vec::new(),
        total: Recorder::new(false),
        total_elapsed: Duration::ZERO,
        interrupted: false,
        monitor: None,
        threads: threads_for(plan, o, loads),
        last: BTreeMap::new(),
        sides: BTreeMap::new(),
        hdr: o.hdr_log.clone().map(record::HdrLog::new),
        jsonl: match &o.jsonl {
            Some(path) => Some(jsonl::Jsonl::open(path).map_err(|e| {
                bad_input(format!("--jsonl {}: cannot write: {e}", path.display()))
            })?),
            None => None,
        },
        exporter: None,
        run_id: None,
        segment: o.segment,
        store_clock: o.clock,
    };
    state.exporter =
        crate::exporting::start(&o.metrics, crate::exporting::new_run_id(state.started))?;
    state.run_id = state.exporter.as_ref().map(|e| e.run_id().to_string());
    // A page names the services' versions as they were before the load.
    let services = plan.page.as_ref().map(|_| crate::page::services(plan));
    let monitor = crate::monitoring::start(&plan.monitor, &interrupt)?;
    monitor.set_worker_threads(state.threads);
    if let Some(at) = o.start_at {
        wait_until(at, &interrupt);
    }
    let plain = !matches!(o.output, Output::Study { .. });
    let mut scenario_studies = Vec::new();
    for (k, s) in plan.scenarios.iter().enumerate() {
        if state.interrupted {
            break;
        }
        let (specs, slots, workloads) = phases(s, plain);
        let threads = threads_for(plan, o, s.steps.iter().map(|st| &st.load));
        let cfg = engine(plan, threads, &state.clock, o);
        let mut outcomes = Vec::new();
        let mut side = Side::default();
        let mut set_up = std::collections::HashSet::new();
        let streams = matches!(
            &plan.workloads[&s.workload].backend,
            crate::backend::Backend::Amqp(crate::backend::AmqpTarget {
                stream: Some(_),
                ..
            })
        );
        for run in runs_of(&workloads, &specs, streams) {
            if state.interrupted {
                break;
            }
            let name = &workloads[run.start];
            let mut observer = crate::monitoring::Labelled {
                monitor: &monitor,
                inner: Saver {
                    state: &mut state,
                    scenario: (k, s.name.clone()),
                    slots: slots[run.clone()].to_vec(),
                    progress: ProgressLine::new(o.progress),
                    error: None,
                    in_flight: 0,
                },
            };
            // A suite's later repetitions run on what its first one set up.
            let backend = &plan.workloads[name].backend;
            let backend = if set_up.insert(name) {
                backend.clone()
            } else {
                backend.clone().without_setup()
            };
            let ran = backend.run(
                &context(plan, name),
                &cfg,
                &specs[run.clone()],
                interrupt.clone(),
                &mut observer,
            )?;
            if let Some(e) = observer.inner.error.take() {
                return Err(e.into());
            }
            // Each engine run counts its phases from 0; the scenario's slots count them all.
            outcomes.extend(ran.outcomes.into_iter().map(|mut o| {
                o.index += run.start;
                o
            }));
            for (k, v) in ran.extras {
                record::add_extra(side.extras.entry(k).or_insert(serde_json::Value::Null), v);
            }
            // A stream's consumers, over every run of the scenario (merged exactly).
            side.consumed = match (side.consumed.take(), ran.consumed) {
                (Some(a), Some(b)) => Some(perfbase_core::result::merge_measurements(&[&a, &b])),
                (a, b) => a.or(b),
            };
        }
        scenario_studies.push(analyse::analyse(plan, s, &outcomes, &slots));
        state.sides.insert(k, side);
    }
    let mut checks = Vec::new();
    for c in &plan.checks {
        if state.interrupted {
            break;
        }
        checks.extend(run_check(
            plan,
            c,
            o,
            &mut state,
            &monitor,
            interrupt.clone(),
        )?);
    }
    state.monitor = Some(crate::monitoring::finish(monitor));
    if let Some(e) = state.exporter.take() {
        e.finish();
    }
    let study = analyse::assemble(plan, scenario_studies, checks, &state.phases);
    let result = state.save(Some(&study))?;
    let run_id = crate::records::save(&o.store, &o.kind, &result, &plan.labels);
    report::present(plan, o, &state, &result, &study)?;
    if let (Some(spec), Output::Study { dir }, Some(services)) = (&plan.page, &o.output, services) {
        let (md, html) = crate::page::write(crate::page::PageRun {
            plan,
            spec,
            dir,
            store: &o.store,
            run_id,
            result: &result,
            study: &study,
            services,
            closing: report::closing_blocks(plan, &state, &result),
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
    let exit = Exit::of(&result, passed);
    if let Some(why) = exit.explain() {
        errln!("perfbase: {why}");
    }
    Ok((exit, result))
}

/// A check: `requests` requests in order on its connections, judged by exact status counts.
fn run_check(
    plan: &Plan,
    c: &Check,
    o: &StudyOptions,
    state: &mut Progressive<'_>,
    monitor: &perfbase_monitor::Monitor,
    interrupt: Arc<AtomicBool>,
) -> Result<Option<CheckVerdict>, AppError> {
    let specs = vec![PhaseSpec {
        name: format!("check {}", c.name),
        load: Load::Closed {
            connections: c.connections,
        },
        duration: None,
        count: Some(c.requests),
        record: true,
    }];
    let cfg = engine(plan, 1, &state.clock, o);
    let mut observer = crate::monitoring::Labelled {
        monitor,
        inner: Saver {
            state,
            scenario: (usize::MAX, format!("check {}", c.name)),
            slots: vec![None],
            progress: ProgressLine::new(o.progress),
            error: None,
            in_flight: 0,
        },
    };
    // One thread: requests in order, as a client hitting a rate limiter would send them.
    let ran = plan.workloads[&c.workload].backend.run(
        &context(plan, &c.workload),
        &cfg,
        &specs,
        interrupt,
        &mut observer,
    )?;
    if let Some(e) = observer.inner.error.take() {
        return Err(e.into());
    }
    Ok(ran
        .outcomes
        .first()
        .filter(|out| !out.interrupted)
        .map(|out| {
            let expect = c.expect.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            CheckVerdict::judge(&c.name, c.requests, expect, out.measurement().status)
        }))
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
