//! What a run has measured so far, saved after every measured phase, and the result it makes:
//! a plan file's whole study, one command's single measurement, or a suite's phase per
//! operation.

use super::{Output, Slot};
use crate::backend::Side;
use crate::plan::{Plan, Scenario};
use anyhow::Context as _;
use perfbase_analysis::study::Study;
use perfbase_analysis::sweep::Offered;
use perfbase_core::merge::merge_measurements;
use perfbase_core::result::{LoadConfig, Measurement, Model, PhaseResult, RunResult};
use perfbase_core::Recorder;
use perfbase_engine::{Load, PhaseOutcome};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// What the run has measured so far.
pub(super) struct Progressive<'a> {
    pub plan: &'a Plan,
    pub output: &'a Output,
    pub started: SystemTime,
    /// Every engine run of the study keeps its timelines on this one clock.
    pub clock: perfbase_engine::RunClock,
    pub phases: Vec<PhaseResult>,
    pub total: Recorder,
    pub total_elapsed: Duration,
    pub interrupted: bool,
    pub monitor: Option<perfbase_monitor::MonitorReport>,
    /// Worker threads the engine ran with (the most any scenario used).
    pub threads: usize,
    /// The last measured phase of each scenario so far, by scenario index, with its start.
    pub last: BTreeMap<usize, (Measurement, SystemTime)>,
    /// Each finished scenario's side figures, by scenario index.
    pub sides: BTreeMap<usize, Side>,
    /// `--hdr-log`: every measured second so far.
    pub hdr: Option<HdrLog>,
    /// Where the live figures go besides the result: progress, `--jsonl`, Prometheus.
    pub sinks: super::sinks::Sinks,
    /// The `run` label of the exported series, kept in the result.
    pub run_id: Option<String>,
    /// This process's share of the schedule (`--segment`).
    pub segment: perfbase_engine::Segment,
    /// An agent's clock against the store's (`perfbase agent --barrier`).
    pub store_clock: Option<super::ClockOffset>,
    /// Each service's version as it reported it before the load (plans with a page), by
    /// address: part of the environment a trend compares.
    pub services: BTreeMap<String, String>,
}

/// The HdrHistogram interval log of a run: each measured phase's seconds, tagged by phase,
/// on the run's clock (which starts with its first measured phase).
pub(super) struct HdrLog {
    path: PathBuf,
    origin: Option<SystemTime>,
    intervals: Vec<perfbase_report::hlog::Interval>,
}

impl HdrLog {
    pub fn new(path: PathBuf) -> HdrLog {
        HdrLog {
            path,
            origin: None,
            intervals: Vec::new(),
        }
    }

    fn add(&mut self, o: &PhaseOutcome) {
        let timeline = &o.recorder.timeline;
        let from = timeline.span().map_or(Duration::ZERO, |s| s.0);
        self.origin.get_or_insert(o.started_at - from);
        for (start_s, duration_s, histogram) in timeline.intervals() {
            self.intervals.push(perfbase_report::hlog::Interval {
                tag: o.spec.name.clone(),
                start_s,
                duration_s,
                histogram,
            });
        }
    }

    /// Rewrites the whole log (atomically, so a reader never sees half of it).
    fn write(&self) -> anyhow::Result<()> {
        let text = perfbase_report::hlog::interval_log(
            self.origin.unwrap_or_else(SystemTime::now),
            &self.intervals,
        )
        .map_err(|e| anyhow::anyhow!("{e}"))
        .and_then(|t| perfbase_report::json::write_text_atomic(&self.path, &t).map_err(Into::into));
        text.with_context(|| format!("--hdr-log {}: cannot write", self.path.display()))
    }
}

/// Adds one run's driver figure to the scenario's: counts add up (a suite's GET misses, a
/// cluster's replies per node and redirects, summed over its operations), anything else is
/// the latest (a TPC-B scale).
pub(super) fn add_extra(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                add_extra(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a @ Value::Number(_), Value::Number(b)) => {
            if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
                *a = (x + y).into();
            } else {
                *a = Value::Number(b);
            }
        }
        (a, b) => *a = b,
    }
}

pub(super) fn model_of(load: &Load) -> Model {
    match load {
        Load::Open { .. } => Model::Open,
        _ => Model::Closed,
    }
}

impl Progressive<'_> {
    /// Whether the run must stop: a phase ended interrupted, or a signal came since, between
    /// two phases, where no phase saw it. Either way the run did not finish its plan, and its
    /// result, everywhere, says so.
    pub fn stopped(&mut self, interrupt: &std::sync::atomic::AtomicBool) -> bool {
        self.interrupted |= interrupt.load(std::sync::atomic::Ordering::SeqCst);
        self.interrupted
    }

    pub fn add(&mut self, scenario: (usize, &str), slot: Option<Slot>, o: &PhaseOutcome) {
        self.total.merge(&o.recorder);
        self.total_elapsed += o.elapsed;
        self.interrupted |= o.interrupted;
        let (offered_rate, offered_connections) = match slot.map(|s| s.offered) {
            Some(Offered::Rate(r)) => (Some(r), None),
            Some(Offered::Concurrency(c)) => (None, Some(c)),
            None => (None, None),
        };
        if let Some(log) = &mut self.hdr {
            log.add(o);
        }
        let measurement = o.measurement();
        self.last
            .insert(scenario.0, (measurement.clone(), o.started_at));
        self.phases.push(PhaseResult {
            name: o.spec.name.clone(),
            model: model_of(&o.spec.load),
            scenario: Some(scenario.1.to_string()),
            step: slot.map(|s| s.step as u32),
            repetition: slot.map(|s| s.rep),
            offered_rate,
            offered_connections,
            missing_segments: Vec::new(),
            faults: Vec::new(),
            measurement,
        });
    }

    /// Where the result is saved after every phase, if anywhere.
    pub fn path(&self) -> Option<PathBuf> {
        match self.output {
            Output::Plan { dir } => Some(dir.join("result.json")),
            Output::Single { json } | Output::Suite { json, .. } => json.clone(),
        }
    }

    /// Saves the result so far after a phase, so Ctrl-C or a crash loses nothing; skipped
    /// for a stream (stdout, a FIFO), which gets only the final result.
    pub fn save_progress(&self) -> anyhow::Result<()> {
        if let Some(log) = &self.hdr {
            if !perfbase_report::json::is_stream(&log.path) {
                log.write()?;
            }
        }
        match self.path() {
            Some(path) if !perfbase_report::json::is_stream(&path) => {
                // Written while the plan is still running: if nothing replaces it (a second
                // Ctrl-C, a kill), it must not claim to be a whole run.
                let mut r = self.result(None);
                r.interrupted = true;
                perfbase_report::json::write_atomic(&path, &r)
                    .with_context(|| format!("cannot write the result to {}", path.display()))
            }
            _ => Ok(()),
        }
    }

    /// Writes the final result `r` and the HDR log where they were asked for.
    pub fn write(&self, r: &RunResult) -> anyhow::Result<()> {
        if let Some(log) = &self.hdr {
            log.write()?;
        }
        if let Some(path) = self.path() {
            perfbase_report::json::write_atomic(&path, r)
                .with_context(|| format!("cannot write the result to {}", path.display()))?;
        }
        Ok(())
    }

    pub fn result(&self, study: Option<&Study>) -> RunResult {
        let mut r = match self.output {
            Output::Plan { .. } => return self.study_result(study),
            Output::Single { .. } => self.single_result(),
            Output::Suite { .. } => self.suite_result(),
        };
        // A command's --threshold verdicts are kept with its result, as a plan's are.
        if !self.plan.thresholds.is_empty() {
            r.study = study.cloned();
        }
        r
    }

    fn base(&self, target: String, protocol: &str, model: Model, config: LoadConfig) -> RunResult {
        let nothing = Measurement::from_recorder(&Recorder::new(false), Duration::ZERO, None);
        RunResult {
            started_at: crate::env::rfc3339(self.started),
            run_id: self.run_id.clone(),
            segment: (!self.segment.is_whole()).then(|| self.segment.to_string()),
            clock_offset_ms: self.store_clock.map(|c| c.offset_ms),
            interrupted: self.interrupted,
            stop_reason: crate::interrupt::reason(),
            monitor: self.monitor.clone(),
            env: self.env(),
            ..RunResult::of(target, protocol, (model, config), nothing)
        }
    }

    /// The machine measured on; an agent's (a segment's) names its node, so that the merged
    /// run can say where each agent ran: `PERFBASE_NODE_NAME` on Kubernetes, else its host.
    fn env(&self) -> perfbase_core::result::Env {
        let mut env = perfbase_core::result::Env {
            services: self.services.clone(),
            ..crate::env::capture()
        };
        if !self.segment.is_whole() && env.node.is_none() {
            env.node = Some(env.hostname.clone());
        }
        env
    }

    /// A plan file's result: every measured phase, the total, and the study once analysed.
    fn study_result(&self, study: Option<&Study>) -> RunResult {
        let plan = self.plan;
        let mut total = self.total.clone();
        total.finish();
        let model = self.phases.first().map_or(Model::Closed, |p| p.model);
        let config = LoadConfig {
            threads: self.threads as u32,
            connections: None,
            rate: None,
            max_inflight: None,
            duration_s: None,
            count: None,
            warmup_s: 0.0,
            timeout_s: plan.timeout.as_secs_f64(),
            pacing_granularity_s: None,
            protocol: plan_settings(plan),
        };
        let target = format!("plan {} ({})", plan.name, plan.file);
        let mut r = self.base(target, "http", model, config);
        r.measurement = Measurement::from_recorder(&total, self.total_elapsed, None);
        r.phases = self.phases.clone();
        r.study = study.cloned();
        r
    }

    /// The scenario a command's result describes: the last one that measured something (the
    /// first before any did).
    fn current(&self) -> usize {
        let scenarios = self.plan.scenarios.len();
        self.last
            .range(..scenarios)
            .next_back()
            .map_or(0, |(k, _)| *k)
    }

    /// The result of a command's scenario `k`: its measured phase at the top, no phases.
    fn command_result(&self, k: usize) -> RunResult {
        let s = &self.plan.scenarios[k];
        let w = &self.plan.workloads[&s.workload];
        let model = model_of(&s.steps[0].load);
        let mut config = command_config(self.plan, s, self.threads);
        config.protocol = w.backend.settings();
        let side = self.sides.get(&k);
        if let Some(side) = side {
            config.protocol.extend(side.extras.clone());
        }
        let mut r = self.base(w.label.clone(), w.backend.protocol(), model, config);
        match self.last.get(&k) {
            Some((m, started)) => {
                r.measurement = m.clone();
                r.started_at = crate::env::rfc3339(*started);
            }
            None => {
                let empty = Recorder::new(model == Model::Open);
                r.measurement = Measurement::from_recorder(&empty, Duration::ZERO, None);
                r.started_at = crate::env::rfc3339(SystemTime::now());
            }
        }
        if let Some(consumed) = side.and_then(|s| s.consumed.as_ref()) {
            // A stream: the publishers' side and the consumers' side, each a phase.
            let phase = |name: &str, m: &Measurement| PhaseResult {
                name: name.into(),
                model: r.model,
                scenario: Some("stream".into()),
                step: None,
                repetition: None,
                offered_rate: r.config.rate,
                offered_connections: r.config.connections,
                missing_segments: Vec::new(),
                faults: Vec::new(),
                measurement: m.clone(),
            };
            r.phases = vec![phase("publish", &r.measurement), phase("consume", consumed)];
        }
        r
    }

    fn single_result(&self) -> RunResult {
        self.command_result(self.current())
    }

    /// A suite's result: the last operation's, with a phase per operation and their merge at
    /// the top.
    fn suite_result(&self) -> RunResult {
        let mut r = self.command_result(self.current());
        r.phases = self
            .last
            .range(..self.plan.scenarios.len())
            .enumerate()
            .map(|(i, (&k, (m, _)))| PhaseResult {
                name: self.plan.scenarios[k].steps[0].name.clone(),
                model: r.model,
                scenario: Some("suite".into()),
                step: Some(i as u32),
                repetition: Some(1),
                offered_rate: r.config.rate,
                offered_connections: r.config.connections,
                missing_segments: Vec::new(),
                faults: Vec::new(),
                measurement: m.clone(),
            })
            .collect();
        let parts: Vec<&Measurement> = r.phases.iter().map(|p| &p.measurement).collect();
        if !parts.is_empty() {
            r.measurement = merge_measurements(&parts);
        }
        r
    }
}

/// The `config` of a command's run: the load its flags gave, as one step.
fn command_config(plan: &Plan, s: &Scenario, threads: usize) -> LoadConfig {
    let step = &s.steps[0];
    let (connections, rate, max_inflight) = match step.load {
        Load::Closed { connections } => (Some(connections), None, None),
        Load::Open {
            pacer,
            max_inflight,
        } => (None, Some(pacer.mean_rate()), Some(max_inflight)),
        Load::Idle => (None, None, None),
    };
    LoadConfig {
        threads: threads as u32,
        connections,
        rate,
        max_inflight,
        duration_s: step.duration.map(|d| d.as_secs_f64()),
        count: step.count,
        warmup_s: s.warmup.map_or(0.0, |d| d.as_secs_f64()),
        timeout_s: plan.timeout.as_secs_f64(),
        pacing_granularity_s: rate.map(|_| plan.pacing.as_secs_f64()),
        protocol: BTreeMap::new(),
    }
}

/// A plan's part of `config.protocol`: the file, scale, counts, headers as written, labels.
fn plan_settings(plan: &Plan) -> BTreeMap<String, Value> {
    let mut protocol = BTreeMap::new();
    protocol.insert("plan".into(), plan.file.clone().into());
    protocol.insert("scale".into(), plan.scale.into());
    protocol.insert("scenarios".into(), plan.scenarios.len().into());
    protocol.insert("checks".into(), plan.checks.len().into());
    // Each workload's header lines as written: `${VAR}` unexpanded, secret values redacted.
    let headers: BTreeMap<&str, &Vec<String>> = plan
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
    if !plan.labels.is_empty() {
        protocol.insert(
            "labels".into(),
            serde_json::to_value(&plan.labels).unwrap_or_default(),
        );
    }
    protocol
}

#[cfg(test)]
mod tests {
    use super::add_extra;
    use serde_json::json;

    #[test]
    fn a_suites_driver_figures_add_up_over_its_operations() {
        let mut total = serde_json::Value::Null;
        add_extra(
            &mut total,
            json!({"127.0.0.1:7001": 10, "127.0.0.1:7002": 5}),
        );
        add_extra(
            &mut total,
            json!({"127.0.0.1:7001": 1, "127.0.0.1:7003": 4}),
        );
        assert_eq!(
            total,
            json!({"127.0.0.1:7001": 11, "127.0.0.1:7002": 5, "127.0.0.1:7003": 4})
        );
        let mut misses = json!(3);
        add_extra(&mut misses, json!(4));
        assert_eq!(misses, json!(7));
        let mut text = json!("a");
        add_extra(&mut text, json!("b"));
        assert_eq!(text, json!("b"));
    }
}
