//! A protocol command's flags as the plan they describe: each workload (one, or one per
//! operation of a suite) becomes a scenario of one step with the load the shared flags give,
//! so a command runs through the same study as a plan file.

use super::LoadArgs;
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::monitoring::MonitorOptions;
use crate::plan::{Kind, Plan, Scenario, Step, Workload};
use crate::runner::{Output, RunOptions};
use crate::store::StoreOptions;
use perfbase_analysis::knee::KneeRule;
use perfbase_analysis::sweep::Offered;
use perfbase_core::units::format_duration;
use perfbase_drivers::Operation;
use perfbase_engine::{Load, Pacer};
use std::collections::BTreeMap;
use std::time::Duration;

/// Default run length when neither -d nor -n is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// One workload of a command: what the store and reports call it, and what it loads.
pub struct Job {
    /// The phase's name: `measure`, or the operation of a suite.
    pub step: String,
    pub label: String,
    pub backend: Backend,
}

/// The operations `-w WORKLOAD` names: `suite` (every one, in turn) or one by name; an
/// unknown name is an error listing them.
pub fn pick_ops<O: Operation>(workload: &str) -> Result<Vec<O>, AppError> {
    if workload == "suite" {
        return Ok(O::ALL.to_vec());
    }
    O::from_name(workload).map(|op| vec![op]).ok_or_else(|| {
        bad_input(format!(
            "--workload '{workload}': use suite, {}",
            O::names()
        ))
    })
}

/// `url` starts with one of `schemes`, or the error names what `perfbase COMMAND` takes.
pub fn check_url(url: &str, schemes: &[&str], command: &str) -> Result<(), AppError> {
    if schemes.iter().any(|s| url.starts_with(&format!("{s}://"))) {
        return Ok(());
    }
    let wanted: Vec<String> = schemes.iter().map(|s| format!("{s}://")).collect();
    Err(bad_input(format!(
        "URL '{}': perfbase {command} takes a {} URL",
        perfbase_core::redact::url(url),
        wanted.join(" or ")
    )))
}

/// The jobs of a command over `ops` (one, or a suite's every operation in turn) against
/// `label`: a suite's steps are named by operation, a single one is `measure`; `backend`
/// makes operation i's backend.
pub fn op_jobs<O: Operation>(
    ops: &[O],
    label: &str,
    backend: impl Fn(usize, &O) -> Backend,
) -> Vec<Job> {
    let suite = ops.len() > 1;
    ops.iter()
        .enumerate()
        .map(|(i, op)| Job {
            step: if suite { op.name() } else { "measure" }.into(),
            label: label.to_string(),
            backend: backend(i, op),
        })
        .collect()
}

impl LoadArgs {
    /// The load these flags give `backend`: the open model with -r, else the closed model
    /// with -c (or the backend's default), `per_connection` sessions on each connection
    /// (HTTP/2 streams).
    fn load(&self, backend: &Backend, per_connection: u64) -> Load {
        match self.rate {
            Some(rate) => Load::Open {
                pacer: Pacer::constant(rate),
                max_inflight: self
                    .max_inflight
                    .unwrap_or_else(|| backend.default_max_inflight()),
            },
            None => Load::Closed {
                connections: self
                    .connections
                    .unwrap_or_else(|| backend.default_connections())
                    .saturating_mul(per_connection),
            },
        }
    }

    fn scenario(&self, job: &Job, per_connection: u64) -> Scenario {
        let load = self.load(&job.backend, per_connection);
        let offered = match &load {
            Load::Open { pacer, .. } => Offered::Rate(pacer.mean_rate()),
            Load::Closed { connections } => Offered::Concurrency(*connections),
            Load::Idle => Offered::Concurrency(0),
        };
        let duration = match (self.duration, self.requests) {
            (None, None) => Some(DEFAULT_DURATION),
            (d, _) => d,
        };
        Scenario {
            name: job.step.clone(),
            workload: job.step.clone(),
            kind: Kind::Constant,
            steps: vec![Step {
                name: job.step.clone(),
                workload: None,
                load,
                offered,
                duration,
                count: self.requests,
            }],
            warmup: self.warmup,
            cooldown: None,
            repetitions: 1,
            precision: None,
            max_repetitions: 1,
            abort_on_fail: Vec::new(),
            delay_abort_eval: Duration::ZERO,
            max_time: None,
            thresholds: Vec::new(),
            section: None,
            labels: Vec::new(),
            app: None,
            api: None,
            faults: Vec::new(),
        }
    }

    fn monitor(&self) -> MonitorOptions {
        MonitorOptions {
            selectors: self.monitor.clone(),
            idle: self.monitor_idle,
            interval: self.monitor_interval,
        }
    }

    /// `--json`'s, `--jsonl`'s and `--hdr-log`'s folders exist and it names a file, before any load. `--json -` writes the
    /// result to stdout, so the run's text goes to stderr.
    pub fn check_json(&self) -> Result<(), AppError> {
        self.segment.segment()?;
        self.metrics.check()?;
        self.live.options()?;
        check_outputs(&[
            ("--json", &self.json),
            ("--jsonl", &self.jsonl),
            ("--hdr-log", &self.hdr_log),
        ])
    }

    /// The plan of `jobs` under these flags: one scenario each, in order.
    pub fn plan(&self, name: &str, jobs: Vec<Job>, per_connection: u64) -> Plan {
        let scenarios = jobs
            .iter()
            .map(|j| self.scenario(j, per_connection))
            .collect();
        let workloads = jobs
            .into_iter()
            .map(|j| {
                let w = Workload {
                    name: j.step.clone(),
                    label: j.label,
                    corpora: Vec::new(),
                    shown_headers: Vec::new(),
                    backend: j.backend,
                    suite: Vec::new(),
                };
                (j.step, w)
            })
            .collect();
        Plan {
            name: name.to_string(),
            file: String::new(),
            description: None,
            threads: self.threads.map(|t| t as usize),
            timeout: self.timeout,
            pacing: self.pacing_granularity,
            scale: 1.0,
            buckets_ms: Vec::new(),
            knee: KneeRule::default(),
            slo: Vec::new(),
            thresholds: self.thresholds.clone(),
            labels: BTreeMap::new(),
            workloads,
            scenarios,
            checks: Vec::new(),
            monitor: self.monitor(),
            rankings: Vec::new(),
            versus: Vec::new(),
            matrices: Vec::new(),
            page: None,
            seed: 0,
            interleave: false,
            min_run: (Duration::ZERO, 0),
        }
    }

    /// A suite's title: what, where, and how long each operation runs (`-d` and `-n` apply to
    /// each one, as redis-benchmark's `-n` does).
    pub fn suite_title(&self, what: &str, label: &str, operations: usize) -> String {
        let each = match (self.requests, self.duration) {
            (Some(n), Some(d)) => format!("{n} requests or {} each", format_duration(d)),
            (Some(n), None) => format!("{n} requests each"),
            (None, d) => format!("{} each", format_duration(d.unwrap_or(DEFAULT_DURATION))),
        };
        format!("perfbase {what} suite on {label}: {operations} operations, {each}")
    }

    /// How the command's study runs and where its result goes; `title` makes it a suite.
    pub fn options(&self, kind: &str, title: Option<String>, store: &StoreOptions) -> RunOptions {
        let json = self.json.clone();
        let output = match title {
            Some(title) => Output::Suite { json, title },
            None => Output::Single { json },
        };
        RunOptions {
            hdr_log: self.hdr_log.clone(),
            jsonl: self.jsonl.clone(),
            metrics: self.metrics.options(),
            // Checked with the outputs, before any load (check_json), as the segment is.
            live: self.live.options().unwrap_or_default(),
            // Checked with the outputs, before any load (check_json).
            segment: self.segment.segment().unwrap_or_default(),
            start_at: self.segment.start_at,
            dry_run: self.dry_run,
            ..RunOptions::new(output, self.quiet, store, kind)
        }
    }
}

/// Each output file's folder exists and the path names a file, before any load. One going to
/// stdout (`-`) makes stdout carry only that data: the run's text goes to stderr. Two on
/// stdout would interleave, so that is refused.
pub fn check_outputs(outputs: &[(&str, &Option<std::path::PathBuf>)]) -> Result<(), AppError> {
    let on_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| p.as_ref().is_some_and(|p| p.as_os_str() == "-"))
        .map(|(flag, _)| *flag)
        .collect();
    if on_stdout.len() > 1 {
        return Err(bad_input(format!(
            "{} cannot share stdout ('-'): give all but one of them a file",
            on_stdout.join(" and ")
        )));
    }
    // Two outputs in one file: the last writer would silently replace the other's content.
    let files: Vec<(&str, &std::path::PathBuf)> = outputs
        .iter()
        .filter_map(|(flag, p)| p.as_ref().map(|p| (*flag, p)))
        .filter(|(_, p)| p.as_os_str() != "-")
        .collect();
    for (i, (a, pa)) in files.iter().enumerate() {
        if let Some((b, _)) = files[i + 1..].iter().find(|(_, pb)| same_file(pa, pb)) {
            return Err(bad_input(format!(
                "{a} and {b} both name {}: give each its own file",
                pa.display()
            )));
        }
    }
    for (flag, path) in outputs {
        match path {
            Some(p) if p.as_os_str() == "-" => crate::out::give_stdout_to_data(),
            Some(p) => crate::limits::check_output_path(p, flag).map_err(bad_input)?,
            None => {}
        }
    }
    Ok(())
}

/// Whether two output paths name one file, existing or not: the same name in the same
/// folder (`r.json` and `./r.json`), or the same file through a link.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    let resolved = |p: &std::path::Path| {
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = std::fs::canonicalize(dir.unwrap_or(std::path::Path::new("."))).ok()?;
        Some(dir.join(p.file_name()?))
    };
    a == b
        || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
        || matches!((resolved(a), resolved(b)), (Some(x), Some(y)) if x == y)
}

/// A plan of one broker workload under `load`'s flags.
pub fn one_workload(
    load: &LoadArgs,
    url: &str,
    backend: Backend,
    store: &StoreOptions,
) -> (Plan, RunOptions) {
    let kind = backend.protocol();
    let job = Job {
        step: "measure".into(),
        label: perfbase_core::redact::url(url),
        backend,
    };
    (
        load.plan(kind, vec![job], 1),
        load.options(kind, None, store),
    )
}
