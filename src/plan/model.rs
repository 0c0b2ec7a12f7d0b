//! The validated plan: what the sections of a plan file (or a command's flags) become.

use crate::backend::http::HttpTarget;
pub use crate::backend::Backend;
use perfbase_analysis::knee::KneeRule;
use perfbase_analysis::sweep::Offered;
use perfbase_analysis::threshold::Threshold;
use perfbase_drivers::workload::Corpus;
use perfbase_engine::Load;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// A plan that cannot be used: file, line and field, and what to write instead (a file that
/// cannot be read at all has no line: `plans/x.toml: cannot read the plan: …`).
#[derive(Debug, Error)]
#[error("{}", self.shown())]
pub struct PlanError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl PlanError {
    fn shown(&self) -> String {
        if self.line == 0 {
            format!("{}: {}", self.file, self.message)
        } else {
            format!(
                "{}:{}: {}: {}",
                self.file, self.line, self.field, self.message
            )
        }
    }
}

/// A validated plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub file: String,
    pub description: Option<String>,
    pub threads: Option<usize>,
    pub timeout: Duration,
    /// Open model: the dispatcher's pacing granularity.
    pub pacing: Duration,
    pub scale: f64,
    pub buckets_ms: Vec<f64>,
    pub knee: KneeRule,
    /// The SLO: decides the operating point of ladders.
    pub slo: Vec<Threshold>,
    /// Gates on every measured phase of scenarios that are not ladders (exit 1 on failure).
    pub thresholds: Vec<Threshold>,
    pub labels: BTreeMap<String, String>,
    pub workloads: BTreeMap<String, Workload>,
    pub scenarios: Vec<Scenario>,
    pub checks: Vec<Check>,
    /// Services to watch beside the load (perfbase itself is always watched).
    pub monitor: crate::monitoring::MonitorOptions,
    pub rankings: Vec<RankingSpec>,
    /// `[[versus]]`: scenario B against A, over their repetitions.
    pub versus: Vec<VersusSpec>,
    /// `[[matrices]]`: scenarios tabled as a matrix on the page.
    pub matrices: Vec<MatrixSpec>,
    /// `[page]`: a dated baselines page after the run.
    pub page: Option<PageSpec>,
    /// `[plan] seed`: the orders of interleaved scenarios' blocks are drawn from it.
    pub seed: u64,
    /// `[plan] interleave` (default true): compared scenarios run in randomised blocks.
    pub interleave: bool,
    /// `[plan] min_run_time` and `min_run_ops`: with a precision target, the least a
    /// duration-bound run measures (later runs of a step lengthened to reach it).
    pub min_run: (Duration, u64),
}

/// A ranking of scenarios by one figure.
#[derive(Debug, Clone)]
pub struct RankingSpec {
    pub name: String,
    pub by: perfbase_analysis::versus::runs::RankBy,
    pub scenarios: Vec<String>,
}

/// Scenario B against scenario A, each side named by its label.
#[derive(Debug, Clone)]
pub struct VersusSpec {
    pub name: String,
    pub a: String,
    pub b: String,
    pub a_label: String,
    pub b_label: String,
}

/// `[[matrices]]`: scenarios in one table, their rows headed by these labels' values.
#[derive(Debug, Clone)]
pub struct MatrixSpec {
    pub name: String,
    pub labels: Vec<String>,
    /// In plan order.
    pub scenarios: Vec<String>,
}

/// What the baselines page is called.
#[derive(Debug, Clone)]
pub struct PageSpec {
    pub title: String,
    /// File name stem: `STEM-YYYYMMDD-HHMMSS.md` and `.html`.
    pub stem: String,
}

/// What a workload loads (`backend`) and how results show it.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    /// What reports show: target URL (redacted) and the request templates as written.
    pub label: String,
    /// The plan's corpora (for `{{corpus}}` templates).
    pub corpora: Vec<Arc<Corpus>>,
    /// Header lines as written (`${ENV}` unexpanded, secrets redacted), for results.
    pub shown_headers: Vec<String>,
    /// What it runs: for a suite (`builtin = "suite"`, `command = "suite"`), its first
    /// operation's backend, which validates the target.
    pub backend: Backend,
    /// A suite's operations, in order: the names of the workloads (`NAME/operation`) a
    /// scenario over it runs one after another, one step each. Empty for any other workload.
    pub suite: Vec<String>,
}

impl Workload {
    /// The HTTP requests and options of an HTTP workload.
    pub fn http(&self) -> Option<&HttpTarget> {
        match &self.backend {
            Backend::Http(h) => Some(h),
            // Every other protocol (none, in a build of HTTP alone).
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

/// The shape of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Constant,
    Stages,
    RateLadder,
    ConcurrencyLadder,
    /// One step per operation of a suite workload, each at the scenario's one load: an
    /// operation table.
    Suite,
}

impl Kind {
    pub fn is_ladder(self) -> bool {
        matches!(self, Kind::RateLadder | Kind::ConcurrencyLadder)
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Constant => "constant",
            Kind::Stages => "stages",
            Kind::RateLadder => "rate ladder",
            Kind::ConcurrencyLadder => "concurrency ladder",
            Kind::Suite => "suite",
        }
    }
}

/// One measured load level.
#[derive(Debug, Clone)]
pub struct Step {
    pub name: String,
    /// The workload this step runs, when not the scenario's: a suite's operation.
    pub workload: Option<String>,
    pub load: Load,
    pub offered: Offered,
    pub duration: Option<Duration>,
    pub count: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub workload: String,
    pub kind: Kind,
    pub steps: Vec<Step>,
    pub warmup: Option<Duration>,
    pub cooldown: Option<Duration>,
    /// How many times each step runs; with `precision`, the fewest.
    pub repetitions: u32,
    /// `precision = "5%"` (as 0.05): repeat each step until the 95 % intervals of its
    /// throughput, mean and p99 latency are within this share of the figure.
    pub precision: Option<f64>,
    /// With `precision`: the most repetitions a step may take, and the most time the
    /// scenario's measured runs may take together, before its figures are marked instead.
    pub max_repetitions: u32,
    pub max_time: Option<Duration>,
    /// Judged on each measured phase at its end; the `abort_on_fail` ones are among them.
    pub thresholds: Vec<Threshold>,
    /// Thresholds judged live on each measured step so far, from `delay_abort_eval` into it:
    /// one that fails stops the run (and every agent of it), saying which.
    pub abort_on_fail: Vec<Threshold>,
    pub delay_abort_eval: Duration,
    /// The page section it is shown in, when the plan names one.
    pub section: Option<String>,
    /// A row of a page's API table: (implementation, endpoint, note).
    pub api: Option<(String, String, String)>,
    /// `labels`: (name, value) pairs that place it in a `[[matrices]]` table.
    pub labels: Vec<(String, String)>,
    /// `app`: the monitor target that is the system under test, as written (expanded).
    pub app: Option<String>,
    /// `[[scenarios.faults]]`, in the order given.
    pub faults: Vec<Fault>,
}

/// A command run `at` into each measured run of a scenario (its steps × repetitions, not the
/// warm-up), from the current directory, killed after `timeout`.
#[derive(Debug, Clone)]
pub struct Fault {
    pub at: Duration,
    /// The program and its arguments (`${ENV}` expanded), run without a shell.
    pub run: Vec<String>,
    pub timeout: Duration,
}

/// An exact expectation: `requests` sequential requests (over `connections`) give exactly
/// these status counts.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub workload: String,
    pub requests: u64,
    pub connections: u64,
    pub expect: BTreeMap<u16, u64>,
}
