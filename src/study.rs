//! Running a plan: every scenario's phases go through the engine (warm-up, steps ×
//! repetitions, cool-downs), each measured phase is saved to the result file as soon as it
//! ends, then the analysis (sweeps, knee, operating point, repetition statistics, thresholds,
//! checks) is added and the reports are written.

use crate::exit::{bad_input, AppError, Exit};
use crate::plan::{Backend, Check, Plan, Scenario};
use crate::progress::ProgressLine;
use anyhow::Context as _;
use perfbase_analysis::knee::find_knee;
use perfbase_analysis::slo::operating_point_with;
use perfbase_analysis::study::{
    repetition_stats, CheckVerdict, PhaseVerdict, ScenarioStudy, Study,
};
use perfbase_analysis::sweep::{step_row, Offered};
use perfbase_core::result::{LoadConfig, Measurement, Model, PhaseResult, RunResult, Tool, SCHEMA};
use perfbase_core::Recorder;
use perfbase_drivers::http::HttpDriver;
use perfbase_engine::{EngineConfig, Load, Observer, PhaseOutcome, PhaseSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How to run a plan.
pub struct StudyOptions {
    pub out: PathBuf,
    /// `-t`: wins over the plan's `threads`, which wins over the machine's cores.
    pub threads: Option<usize>,
    pub progress: bool,
    pub color: bool,
}

/// Where a measured phase sits in its scenario.
#[derive(Debug, Clone, Copy)]
struct Slot {
    step: usize,
    rep: u32,
    offered: Offered,
}

/// What the run has measured so far; saved after every phase.
struct Progressive<'a> {
    plan: &'a Plan,
    out: &'a Path,
    started: SystemTime,
    phases: Vec<PhaseResult>,
    total: Recorder,
    total_elapsed: Duration,
    interrupted: bool,
    monitor: Option<serde_json::Value>,
    /// Worker threads the engine ran with.
    threads: usize,
}

impl Progressive<'_> {
    fn add(&mut self, scenario: &str, slot: Option<Slot>, o: &PhaseOutcome) {
        self.total.merge(&o.recorder);
        self.total_elapsed += o.elapsed;
        self.interrupted |= o.interrupted;
        let (offered_rate, offered_connections) = match slot.map(|s| s.offered) {
            Some(Offered::Rate(r)) => (Some(r), None),
            Some(Offered::Concurrency(c)) => (None, Some(c)),
            None => (None, None),
        };
        self.phases.push(PhaseResult {
            name: o.spec.name.clone(),
            model: model_of(&o.spec.load),
            scenario: Some(scenario.to_string()),
            step: slot.map(|s| s.step as u32),
            repetition: slot.map(|s| s.rep),
            offered_rate,
            offered_connections,
            measurement: o.measurement(),
        });
    }

    fn result(&self, study: Option<&Study>) -> RunResult {
        let mut total = self.total.clone();
        total.finish();
        let model = self.phases.first().map_or(Model::Closed, |p| p.model);
        let mut protocol = BTreeMap::new();
        protocol.insert("plan".into(), self.plan.file.clone().into());
        protocol.insert("scale".into(), self.plan.scale.into());
        protocol.insert("scenarios".into(), self.plan.scenarios.len().into());
        protocol.insert("checks".into(), self.plan.checks.len().into());
        // Each workload's header lines as written: `${VAR}` unexpanded, secret values redacted.
        let headers: BTreeMap<&str, &Vec<String>> = self
            .plan
            .workloads
            .iter()
            .filter(|(_, w)| !w.shown_headers.is_empty())
            .map(|(name, w)| (name.as_str(), &w.shown_headers))
            .collect();
        if !headers.is_empty() {
            protocol.insert(
                "headers".into(),
                serde_json::to_value(headers).unwrap_or_default(),
            );
        }
        if !self.plan.labels.is_empty() {
            protocol.insert(
                "labels".into(),
                serde_json::to_value(&self.plan.labels).unwrap_or_default(),
            );
        }
        RunResult {
            schema: SCHEMA.into(),
            tool: Tool {
                name: "perfbase".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            started_at: crate::env::rfc3339(self.started),
            target: format!("plan {} ({})", self.plan.name, self.plan.file),
            protocol: "http".into(),
            model,
            config: LoadConfig {
                threads: self.threads as u32,
                connections: None,
                rate: None,
                max_inflight: None,
                duration_s: None,
                count: None,
                warmup_s: 0.0,
                timeout_s: self.plan.timeout.as_secs_f64(),
                pacing_granularity_s: None,
                protocol,
            },
            interrupted: self.interrupted,
            measurement: Measurement::from_recorder(&total, self.total_elapsed, None),
            phases: self.phases.clone(),
            study: study.and_then(|s| serde_json::to_value(s).ok()),
            monitor: self.monitor.clone(),
            env: crate::env::capture(),
        }
    }

    fn save(&self, study: Option<&Study>) -> anyhow::Result<RunResult> {
        let r = self.result(study);
        let path = self.out.join("result.json");
        perfbase_report::json::write_atomic(&path, &r)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(r)
    }
}

fn model_of(load: &Load) -> Model {
    match load {
        Load::Open { .. } => Model::Open,
        _ => Model::Closed,
    }
}

/// Saves each measured phase as soon as the engine hands it over, and shows progress.
struct Saver<'a, 'b> {
    state: &'b mut Progressive<'a>,
    scenario: String,
    slots: Vec<Option<Slot>>,
    progress: ProgressLine,
    error: Option<anyhow::Error>,
}

impl Observer for Saver<'_, '_> {
    fn tick(&mut self, phase: &PhaseSpec, elapsed: Duration, p: perfbase_engine::ProgressSnapshot) {
        self.progress.tick(phase, elapsed, p);
    }

    fn phase_done(&mut self, phase: &PhaseOutcome) {
        self.progress.phase_done(phase);
        if !phase.spec.record {
            return;
        }
        let slot = self.slots.get(phase.index).copied().flatten();
        self.state.add(&self.scenario, slot, phase);
        if let Err(e) = self.state.save(None) {
            self.error.get_or_insert(e);
        }
    }
}

fn phases(s: &Scenario) -> (Vec<PhaseSpec>, Vec<Option<Slot>>) {
    let mut specs = Vec::new();
    let mut slots = Vec::new();
    if let Some(w) = s.warmup {
        specs.push(PhaseSpec {
            name: format!("{} warm-up", s.name),
            load: s.steps[0].load.clone(),
            duration: Some(w),
            count: None,
            record: false,
        });
        slots.push(None);
    }
    for rep in 1..=s.repetitions {
        for (k, step) in s.steps.iter().enumerate() {
            if let (Some(c), false) = (s.cooldown, specs.is_empty()) {
                specs.push(PhaseSpec {
                    name: format!("{} cool-down", s.name),
                    load: Load::Idle,
                    duration: Some(c),
                    count: None,
                    record: false,
                });
                slots.push(None);
            }
            let name = if s.repetitions > 1 {
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
        }
    }
    (specs, slots)
}

/// Merges the outcomes of one step (its repetitions) into one measurement.
fn merged(outs: &[&PhaseOutcome]) -> Measurement {
    let open = outs
        .iter()
        .any(|o| matches!(o.spec.load, Load::Open { .. }));
    let mut rec = Recorder::new(open);
    let (mut elapsed, mut window) = (Duration::ZERO, Duration::ZERO);
    for o in outs {
        rec.merge(&o.recorder);
        elapsed += o.elapsed;
        window += o.window;
    }
    rec.finish();
    let info = outs.first().and_then(|o| match o.spec.load {
        Load::Open {
            pacer,
            max_inflight,
        } => Some((pacer.mean_rate(), window, max_inflight)),
        _ => None,
    });
    Measurement::from_recorder(&rec, elapsed, info)
}

fn analyse(
    plan: &Plan,
    s: &Scenario,
    outcomes: &[PhaseOutcome],
    slots: &[Option<Slot>],
) -> ScenarioStudy {
    let measured: Vec<(Slot, &PhaseOutcome)> = outcomes
        .iter()
        .filter_map(|o| slots.get(o.index).copied().flatten().map(|slot| (slot, o)))
        .collect();
    let mut rows = Vec::new();
    let mut merged_steps = Vec::new();
    let mut repetition = Vec::new();
    for (k, step) in s.steps.iter().enumerate() {
        let outs: Vec<&PhaseOutcome> = measured
            .iter()
            .filter(|(sl, _)| sl.step == k)
            .map(|(_, o)| *o)
            .collect();
        if outs.is_empty() {
            continue; // interrupted before this step
        }
        let m = merged(&outs);
        rows.push(step_row(&step.name, step.offered, &m, &plan.buckets_ms));
        if s.repetitions > 1 {
            let runs: Vec<Measurement> = outs.iter().map(|o| o.measurement()).collect();
            let refs: Vec<&Measurement> = runs.iter().collect();
            repetition.extend(repetition_stats(&step.name, &refs));
        }
        merged_steps.push(m);
    }
    let (knee, operating_point) = if s.kind.is_ladder() {
        let knee = find_knee(&rows, &plan.knee);
        let op = if plan.slo.is_empty() {
            None
        } else {
            // Steps past the knee are not candidates, even where they still meet the SLO (a
            // saturated closed ladder can keep p99 under a loose SLO while adding nothing).
            let usable = knee.first_bad.unwrap_or(rows.len());
            let refs: Vec<&Measurement> = merged_steps[..usable].iter().collect();
            operating_point_with(&rows[..usable], &refs, &plan.slo, &knee, &plan.knee).map(
                |mut op| {
                    // Headroom is measured to the knee's step, which the truncated rows no longer hold.
                    op.headroom = knee
                        .first_bad
                        .map(|b| rows[b].offered.amount() / op.offered.amount() - 1.0);
                    op
                },
            )
        };
        (Some(knee), op)
    } else {
        (None, None)
    };
    let mut gates = s.thresholds.clone();
    if !s.kind.is_ladder() {
        gates.extend(plan.thresholds.iter().cloned());
    }
    let thresholds: Vec<PhaseVerdict> = measured
        .iter()
        .flat_map(|(_, o)| {
            let m = o.measurement();
            gates
                .iter()
                .map(|t| PhaseVerdict {
                    phase: o.spec.name.clone(),
                    verdict: t.check(&m),
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let w = &plan.workloads[&s.workload];
    ScenarioStudy {
        name: s.name.clone(),
        kind: s.kind.name().into(),
        workload: s.workload.clone(),
        target: w.label.clone(),
        repetitions: s.repetitions,
        passed: thresholds.iter().all(|t| t.verdict.passed),
        steps: rows,
        knee,
        operating_point,
        repetition_stats: repetition,
        thresholds,
    }
}

/// Checks that a workload's driver can be built (before any load is sent).
fn check_driver(plan: &Plan, workload: &str) -> Result<(), AppError> {
    let w = &plan.workloads[workload];
    match w.backend {
        Backend::Http => HttpDriver::from_specs(&w.specs, w.corpora.clone(), &w.options)
            .map(|_| ())
            .map_err(|e| bad_input(format!("{}: workload '{workload}': {e}", plan.file))),
        // Other sessions connect in the engine, where failures are counted; the plan checked
        // their URLs and options.
        _ => Ok(()),
    }
}

/// Runs `specs` with the workload's driver: the one place a plan picks its protocol.
fn run_engine(
    plan: &Plan,
    workload: &str,
    cfg: &EngineConfig,
    specs: &[PhaseSpec],
    interrupt: Arc<AtomicBool>,
    observer: &mut dyn Observer,
) -> Result<Vec<PhaseOutcome>, AppError> {
    use perfbase_drivers::{amqp, mqtt, nats, redis};
    let w = &plan.workloads[workload];
    let bad = |e: String| bad_input(format!("{}: workload '{workload}': {e}", plan.file));
    let outcomes = match &w.backend {
        Backend::Http => {
            let d = HttpDriver::from_specs(&w.specs, w.corpora.clone(), &w.options)
                .map_err(|e| bad(e.to_string()))?;
            // A plan's `concurrency` counts requests in flight; with HTTP/2 they share
            // connections `streams` at a time.
            perfbase_engine::run(Arc::new(d), cfg, specs, interrupt, observer)
        }
        Backend::Sql(sql) => {
            let workload = crate::sql::with_table_scale(
                sql.dialect,
                &sql.url,
                sql.workload.clone(),
                sql.scale_given,
            )?;
            match sql.dialect {
                crate::sql::Dialect::Postgres => {
                    use perfbase_drivers::sql::postgres::{PgDriver, PgOptions};
                    let d = PgDriver::new(
                        &sql.url,
                        workload,
                        PgOptions {
                            pipeline: sql.pipeline,
                        },
                    )
                    .map_err(|e| bad(e.to_string()))?;
                    perfbase_engine::run(Arc::new(d), cfg, specs, interrupt, observer)
                }
                crate::sql::Dialect::Mysql => {
                    let d = perfbase_drivers::sql::mysql::MyDriver::new(&sql.url, workload)
                        .map_err(|e| bad(e.to_string()))?;
                    perfbase_engine::run(Arc::new(d), cfg, specs, interrupt, observer)
                }
            }
        }
        Backend::Redis(r) => {
            if r.prefill {
                crate::load::block_on_local(redis::prefill(&r.url, &r.options))?
                    .map_err(|e| bad(format!("prefill: {e}")))?;
            }
            let d = redis::RedisDriver::new(&r.url, r.op, r.options.clone())
                .map_err(|e| bad(e.to_string()))?;
            perfbase_engine::run(Arc::new(d), cfg, specs, interrupt, observer)
        }
        Backend::Amqp { url, options } => {
            let d = amqp::AmqpDriver::new(url, options.clone()).map_err(|e| bad(e.to_string()))?;
            perfbase_engine::run(Arc::new(d), cfg, specs, interrupt, observer)
        }
        Backend::Nats { url, options } => {
            let d = Arc::new(nats::NatsDriver::new(url, *options).map_err(|e| bad(e.to_string()))?);
            let outcomes = perfbase_engine::run(d.clone(), cfg, specs, interrupt, observer);
            if options.mode == nats::NatsMode::JetStream {
                crate::brokers::remove_stream(&d);
            }
            outcomes
        }
        Backend::Mqtt { url, options } => {
            let d = mqtt::MqttDriver::new(url, *options).map_err(|e| bad(e.to_string()))?;
            perfbase_engine::run(Arc::new(d), cfg, specs, interrupt, observer)
        }
    };
    outcomes
        .context("the load engine could not start")
        .map_err(AppError::from)
}

fn engine(plan: &Plan, o: &StudyOptions) -> EngineConfig {
    EngineConfig {
        threads: o.threads.or(plan.threads).unwrap_or_else(crate::app::cores),
        timeout: plan.timeout,
        pacing: perfbase_engine::DEFAULT_PACING,
    }
}

fn status_map(m: &Measurement) -> BTreeMap<String, u64> {
    m.status.clone()
}

/// Runs `plan`, writes `result.json` and `report.md` into `o.out`, prints the findings and
/// returns the exit code.
pub fn run(
    plan: &Plan,
    o: &StudyOptions,
    interrupt: Arc<AtomicBool>,
) -> Result<(Exit, RunResult), AppError> {
    std::fs::create_dir_all(&o.out)
        .map_err(|e| bad_input(format!("--out {}: cannot create: {e}", o.out.display())))?;
    // Build every driver first: a bad workload stops the run before any load is sent.
    for s in &plan.scenarios {
        check_driver(plan, &s.workload)?;
    }
    for c in &plan.checks {
        check_driver(plan, &c.workload)?;
    }
    let mut state = Progressive {
        plan,
        out: &o.out,
        started: SystemTime::now(),
        phases: Vec::new(),
        total: Recorder::new(false),
        total_elapsed: Duration::ZERO,
        interrupted: false,
        monitor: None,
        threads: engine(plan, o).threads,
    };
    let monitor = crate::monitoring::start(&plan.monitor, &interrupt)?;
    monitor.set_worker_threads(state.threads);
    let mut scenario_studies = Vec::new();
    for s in &plan.scenarios {
        if state.interrupted {
            break;
        }
        let (specs, slots) = phases(s);
        let mut observer = crate::monitoring::Labelled {
            monitor: &monitor,
            inner: Saver {
                state: &mut state,
                scenario: s.name.clone(),
                slots: slots.clone(),
                progress: ProgressLine::new(o.progress),
                error: None,
            },
        };
        let outcomes = run_engine(
            plan,
            &s.workload,
            &engine(plan, o),
            &specs,
            interrupt.clone(),
            &mut observer,
        )?;
        if let Some(e) = observer.inner.error.take() {
            return Err(e.into());
        }
        scenario_studies.push(analyse(plan, s, &outcomes, &slots));
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
    state.monitor = crate::monitoring::finish(monitor).1;
    let passed =
        scenario_studies.iter().all(|s| s.passed) && checks.iter().all(|c: &CheckVerdict| c.passed);
    let study = Study {
        plan: plan.name.clone(),
        scale: plan.scale,
        slo: plan.slo.iter().map(|t| t.text.clone()).collect(),
        knee_rule: plan.knee,
        scenarios: scenario_studies,
        checks,
        passed,
    };
    let result = state.save(Some(&study))?;
    let report = o.out.join("report.md");
    perfbase_report::json::write_text_atomic(
        &report,
        &perfbase_report::markdown::render(&result, &study),
    )
    .with_context(|| format!("cannot write {}", report.display()))?;
    out!(
        "{}",
        perfbase_report::terminal::render_study(&result, &study, o.color)
    );
    outln!(
        "\nresults: {}  report: {}",
        o.out.join("result.json").display(),
        report.display()
    );
    let ok = result.measurement.requests - result.measurement.errors.values().sum::<u64>();
    let exit = if result.interrupted {
        errln!("perfbase: interrupted; the results above cover what was measured");
        Exit::Interrupted
    } else if !study.passed {
        errln!("perfbase: a threshold or check failed (see above)");
        Exit::CheckFailed
    } else if ok == 0 && result.measurement.requests > 0 {
        errln!("perfbase: no request succeeded: the target was unusable");
        Exit::Unusable
    } else {
        Exit::Success
    };
    Ok((exit, result))
}

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
    let mut observer = crate::monitoring::Labelled {
        monitor,
        inner: Saver {
            state,
            scenario: format!("check {}", c.name),
            slots: vec![None],
            progress: ProgressLine::new(o.progress),
            error: None,
        },
    };
    let mut cfg = engine(plan, o);
    cfg.threads = 1; // requests in order, as a client hitting a rate limiter would send them
    let outcomes = run_engine(plan, &c.workload, &cfg, &specs, interrupt, &mut observer)?;
    if let Some(e) = observer.inner.error.take() {
        return Err(e.into());
    }
    Ok(outcomes.first().filter(|out| !out.interrupted).map(|out| {
        let expect = c.expect.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        CheckVerdict::judge(&c.name, c.requests, expect, status_map(&out.measurement()))
    }))
}
