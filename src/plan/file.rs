//! The plan file as written: serde structs mirroring the TOML, unknown keys rejected. Fields
//! that later checks may reject are `Spanned`, so errors can name their line.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

pub(crate) type S<T> = Spanned<T>;

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanFile {
    #[serde(default)]
    pub plan: Meta,
    #[serde(default)]
    pub targets: BTreeMap<String, TargetDef>,
    #[serde(default)]
    pub corpora: BTreeMap<String, CorpusDef>,
    #[serde(default)]
    pub workloads: BTreeMap<String, WorkloadHead>,
    #[serde(default)]
    pub scenarios: Vec<ScenarioDef>,
    #[serde(default)]
    pub checks: Vec<CheckDef>,
    pub slo: Option<SloDef>,
    pub monitor: Option<MonitorDef>,
    #[serde(default)]
    pub rankings: Vec<RankingDef>,
    #[serde(default)]
    pub versus: Vec<VersusDef>,
    #[serde(default)]
    pub matrices: Vec<MatrixDef>,
    pub page: Option<PageDef>,
}

/// `[[matrices]]`: scenarios that form a matrix, one table with a row per scenario and step,
/// headed by the scenarios' values of these labels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MatrixDef {
    pub name: S<String>,
    /// The row heads, outermost first: `["web server", "SQL driver"]`.
    pub labels: S<Vec<S<String>>>,
    /// Default: every scenario that gives all of the labels.
    pub scenarios: Option<Vec<S<String>>>,
}

/// `[[versus]]`: scenario B against scenario A over their repetitions.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VersusDef {
    pub name: Option<S<String>>,
    pub a: S<String>,
    pub b: S<String>,
    /// What the sentences call each side (default: the scenario's name).
    pub a_label: Option<S<String>>,
    pub b_label: Option<S<String>>,
}

/// `[[rankings]]`: scenarios side by side, best first.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RankingDef {
    pub name: S<String>,
    /// Default: every scenario.
    pub scenarios: Option<Vec<S<String>>>,
    /// `throughput` (default), `p50`, `p99` or `mean`.
    pub by: Option<S<String>>,
}

/// `[page]`: write a dated "Performance Baselines" page after the run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageDef {
    pub title: Option<S<String>>,
    /// The file name before `-YYYYMMDD-HHMMSS.md` (default `performance-baselines`).
    pub file: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MonitorDef {
    /// Selectors: `postgres`, `pid:1234`, `name:nginx`, `cmd:PATTERN`, `cgroup:PATH`.
    #[serde(default)]
    pub targets: Vec<S<String>>,
    pub idle: Option<S<String>>,
    pub interval: Option<S<String>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Meta {
    pub name: Option<S<String>>,
    pub description: Option<String>,
    pub scale: Option<S<f64>>,
    pub threads: Option<S<i64>>,
    pub timeout: Option<S<String>>,
    pub pacing_granularity: Option<S<String>>,
    /// Every scenario's `precision`, `max_repetitions` and `max_time` unless it sets its own.
    pub precision: Option<S<String>>,
    pub max_repetitions: Option<S<i64>>,
    pub max_time: Option<S<String>>,
    /// With a precision target, the least a duration-bound run measures: this long, and this
    /// many operations (its later runs are lengthened, up to 4 × the step's duration).
    pub min_run_time: Option<S<String>>,
    pub min_run_ops: Option<S<i64>>,
    /// The seed of interleaved scenarios' block orders (default 0).
    pub seed: Option<S<i64>>,
    /// Compared scenarios run interleaved (default true); false runs each in turn.
    pub interleave: Option<bool>,
    pub buckets: Option<Vec<S<String>>>,
    #[serde(default)]
    pub thresholds: Vec<S<String>>,
    pub knee: Option<KneeDef>,
    #[serde(default)]
    pub labels: BTreeMap<String, S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KneeDef {
    pub throughput_ratio: Option<S<f64>>,
    pub p99_factor: Option<S<f64>>,
    pub error_ratio: Option<S<f64>>,
    pub min_gain: Option<S<f64>>,
    pub trend_factor: Option<S<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetDef {
    pub url: S<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, S<String>>,
    pub keepalive: Option<bool>,
    /// https://: accept any server certificate.
    pub insecure: Option<bool>,
    /// https://: also trust these PEM certificates (relative to the plan's folder).
    pub cacert: Option<S<String>>,
    /// Speak HTTP/2 (h2c with prior knowledge, or ALPN h2 over TLS).
    pub http2: Option<S<bool>>,
    /// HTTP/2: how many of a scenario's `concurrency` (requests in flight) share a connection.
    pub streams: Option<S<i64>>,
    /// What an http(s):// target speaks above HTTP: `vault` (HashiCorp Vault or OpenBao).
    pub protocol: Option<S<String>>,
    /// Vault: the environment variable holding the token (default VAULT_TOKEN)…
    pub token_env: Option<S<String>>,
    /// …or a file holding it (relative to the plan's folder).
    pub token_file: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GenerateDef {
    /// `key-{n}`; or absent with `length` for random alphanumeric strings.
    pub pattern: Option<S<String>>,
    pub count: S<i64>,
    pub start: Option<i64>,
    /// Random strings of this many characters (random bodies, random keys).
    pub length: Option<S<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CorpusDef {
    pub file: Option<S<String>>,
    pub values: Option<Vec<String>>,
    pub generate: Option<GenerateDef>,
    pub column: Option<S<String>>,
    pub weight_column: Option<S<String>>,
    pub pick: Option<S<String>>,
    pub misses: Option<S<f64>>,
}

/// A workload as the plan's first reading sees it: its target, which says which protocol's
/// fields the rest of its table is (plan/fields.rs reads them).
#[derive(Debug, Deserialize)]
pub(crate) struct WorkloadHead {
    pub target: S<String>,
}

/// One journey of a workload's `journeys`.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct JourneyDef {
    pub name: S<String>,
    pub weight: Option<S<i64>>,
    pub steps: Vec<StepDef>,
}

/// One step of a journey: a request, what to take from its answer, what to check in it.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepDef {
    pub name: Option<S<String>>,
    pub method: Option<S<String>>,
    pub path: S<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, S<String>>,
    pub body: Option<S<String>>,
    #[serde(default)]
    pub capture: BTreeMap<String, CaptureDef>,
    #[serde(default)]
    pub check: BTreeMap<String, StepCheckDef>,
    /// `"2s"`, or `["1s", "3s"]` for a uniform pause in that range.
    pub think: Option<S<toml::Value>>,
    /// Consecutive steps of one group are timed together (k6's `group`).
    pub group: Option<S<String>>,
}

/// `capture.NAME = { json = "/ptr" }`, `{ header = "Location", regex = "…" }`,
/// `{ regex = "…" }` (over the body) or `{ status = true }`.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureDef {
    pub json: Option<S<String>>,
    pub header: Option<S<String>>,
    pub status: Option<S<bool>>,
    pub regex: Option<S<String>>,
}

/// `check.NAME = { status = [200] }`, `{ body_contains = "…" }`, `{ json = "/p", equals =
/// "…" }`, `{ json = "/p", exists = true }`, `{ header = "…", matches = "…" }` or
/// `{ max_size = N }`.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepCheckDef {
    pub status: Option<S<Vec<i64>>>,
    pub body_contains: Option<S<String>>,
    pub json: Option<S<String>>,
    pub equals: Option<S<String>>,
    pub exists: Option<S<bool>>,
    pub header: Option<S<String>>,
    pub matches: Option<S<String>>,
    pub max_size: Option<S<i64>>,
}

/// `feed = { file = "users.csv", strategy = "queue" }`: a CSV with a header row, each column
/// a value of the iteration.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct FeedDef {
    pub file: S<String>,
    pub strategy: Option<S<String>>,
}

/// A number (200) or a text with units ("2k", "500/s", "250ms").
#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub(crate) enum NumOrText {
    Int(i64),
    Float(f64),
    Text(String),
}

/// One value or a ladder of values.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    Many(Vec<NumOrText>),
    One(NumOrText),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StageDef {
    pub rate: Option<S<NumOrText>>,
    pub ramp_to: Option<S<NumOrText>>,
    pub concurrency: Option<S<i64>>,
    pub duration: S<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenarioDef {
    pub name: S<String>,
    pub workload: S<String>,
    pub rate: Option<S<OneOrMany>>,
    pub concurrency: Option<S<OneOrMany>>,
    pub stages: Option<S<Vec<StageDef>>>,
    pub duration: Option<S<String>>,
    pub requests: Option<S<i64>>,
    pub warmup: Option<S<String>>,
    pub cooldown: Option<S<String>>,
    pub repetitions: Option<S<i64>>,
    /// Repeat until the key figures' 95 % intervals are within this share: `"5%"`.
    pub precision: Option<S<String>>,
    pub max_repetitions: Option<S<i64>>,
    pub max_time: Option<S<String>>,
    pub max_inflight: Option<S<i64>>,
    #[serde(default)]
    pub thresholds: Vec<S<String>>,
    /// Thresholds judged live, about once a second on the step so far (across all agents of
    /// a run), that stop the run when one fails: k6's `abortOnFail`.
    #[serde(default)]
    pub abort_on_fail: Vec<S<String>>,
    /// How far into a step `abort_on_fail` starts to be judged: k6's `delayAbortEval`.
    pub delay_abort_eval: Option<S<String>>,
    /// The page section it is shown in (default: its service kind, e.g. `PostgreSQL`).
    pub section: Option<S<String>>,
    /// A page's API tables: the implementation whose table it is a row of, the row's endpoint
    /// (default: the scenario's name) and what the Notes column says.
    pub implementation: Option<S<String>>,
    pub endpoint: Option<S<String>>,
    pub note: Option<S<String>>,
    /// Its place in a `[[matrices]]` table: `{ "web server" = "Go net/http" }`.
    pub labels: Option<S<BTreeMap<String, S<String>>>>,
    /// The process under test (a monitor target, watched for the whole run): its CPU and
    /// memory go in the scenario's matrix rows.
    pub app: Option<S<String>>,
    /// `[[scenarios.faults]]`: commands run at set times into each measured run.
    #[serde(default)]
    pub faults: Vec<FaultDef>,
}

/// A fault: `run` (a command and its arguments, no shell) `at` into each measured run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FaultDef {
    pub at: S<String>,
    pub run: Vec<S<String>>,
    pub timeout: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckDef {
    pub name: S<String>,
    pub workload: S<String>,
    pub requests: S<i64>,
    pub connections: Option<S<i64>>,
    pub expect: S<BTreeMap<String, i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SloDef {
    #[serde(default)]
    pub thresholds: Vec<S<String>>,
}
