//! The result contract, `perfbase.result/v1`: what `--json FILE` writes, what the store keeps
//! and what reports read. Documented in `docs/result-schema.md` and validated against
//! `docs/result.schema.json` in tests. Fields are only ever added, never renamed, within v1.

pub use crate::endpoint::Endpoint;
use crate::endpoint::{error_map, ratio, status_map};
pub use crate::histogram::{decode_histogram, encode_histogram};
pub use crate::iteration::{CheckResult, GroupResult, Iterations};
pub use crate::latency::LatencyMs;
use crate::metric::MetricResult;
pub use crate::omission::CoEstimate;
pub use crate::outage::{AvailabilityOut, Outage};
use crate::recorder::Recorder;
use crate::timeline::TimelinePoint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The schema tag every result carries.
pub const SCHEMA: &str = "perfbase.result/v1";
/// How histograms are encoded in results.
pub const HISTOGRAM_ENCODING: &str = "hdr-v2-deflate+base64";

/// Open (fixed arrival rate) or closed (fixed concurrency) load model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Open,
    Closed,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Open => "open",
            Model::Closed => "closed",
        }
    }
}

/// Encoded histograms, for exact merging of results later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histograms {
    /// Unit of recorded values: always `us`.
    pub unit: String,
    /// Always [`HISTOGRAM_ENCODING`].
    pub encoding: String,
    /// Response time histogram.
    pub response: String,
    /// Service time histogram (open model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

/// Open-model bookkeeping: what was asked for and what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenModelStats {
    /// Requested arrival rate, operations per second.
    pub requested_rate: f64,
    /// Operations started per second of the send window.
    pub achieved_rate: f64,
    /// Operations that started more than 1 ms after their intended time, or had to wait for a
    /// free connection (max in-flight reached). They were sent, never dropped.
    pub late: u64,
    /// Operations scheduled inside the window that never started because the window closed
    /// while they waited for a free connection.
    pub unsent: u64,
    /// The cap on concurrent operations.
    pub max_inflight: u64,
}

/// One distinct error message and how often it was seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorSampleOut {
    pub class: String,
    pub message: String,
    pub count: u64,
}

/// Reads an optional section (`study`, `monitor`) of a stored result. NaN figures read back
/// through [`crate::nan`]; a section that does not fit its type at all (written by hand, or by
/// a version that shaped it otherwise) reads as absent, so the run's measurements stay
/// readable rather than the whole result being refused.
fn section<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(v.and_then(|v| serde_json::from_value(v).ok()))
}

/// The measured block: shared by a whole run and by each phase of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub requests: u64,
    /// Wall time from the phase start until the last operation finished.
    pub duration_s: f64,
    /// Completed operations per second of `duration_s`.
    pub rps: f64,
    /// Share of operations of class `ok`, 0..1 (0 when nothing completed).
    pub success_ratio: f64,
    /// Status code → count ("0" = no status, e.g. transport errors).
    pub status: BTreeMap<String, u64>,
    /// Error class → count; only classes that occurred.
    pub errors: BTreeMap<String, u64>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub latency_ms: LatencyMs,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_time_ms: Option<LatencyMs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_model: Option<OpenModelStats>,
    /// Closed model only: what the latencies would look like had each connection kept its
    /// pace through every stall (an estimate; see [`CoEstimate`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinated_omission: Option<CoEstimate>,
    /// Operations in flight when the phase was cut off (Ctrl-C, or still running after the
    /// deadline plus the request timeout); they are not in the counts above.
    pub aborted_in_flight: u64,
    pub histogram: Histograms,
    pub timeline: Vec<TimelinePoint>,
    pub error_samples: Vec<ErrorSampleOut>,
    /// Per endpoint, when the load was a mix of several (a targets file, a plan's `requests`);
    /// absent otherwise. Operations that never reached an endpoint (a failed connect before
    /// the request was chosen) count only in the totals above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<Endpoint>,
    /// HTTP/1.1: where the requests' time went (connect, TLS, waiting, receiving).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_timing: Option<crate::timing::HttpTiming>,
    /// Streamed replies (gRPC server streams): messages, their rate and the gaps between
    /// them; the time to the first message is `http_timing.waiting_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<crate::stream::StreamFigures>,
    /// Journeys: the iterations (each op a pass through the steps, each step a request
    /// counted above and in `endpoints`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Iterations>,
    /// Journeys: each named check's passes and failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckResult>,
    /// Journeys: each named group of steps' durations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupResult>,
    /// Scripts: each of their own metrics (counters, gauges, rates and trends).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricResult>,
    /// Availability over time: the longest stretch without a successful operation, the
    /// outages (stretches without success in which operations failed), their errors and the
    /// time to recover. Absent in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<AvailabilityOut>,
}

impl Measurement {
    /// Builds the measured block from a merged, finished recorder. `elapsed` is the wall time
    /// of the phase; `open` carries the requested rate, the send window and the in-flight cap.
    pub fn from_recorder(
        rec: &Recorder,
        elapsed: Duration,
        open: Option<(f64, Duration, u64)>,
    ) -> Measurement {
        let requests = rec.requests();
        let secs = elapsed.as_secs_f64();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let ok = rec.count(crate::Class::Ok);
        Measurement {
            requests,
            duration_s: secs,
            rps: per_s(requests),
            success_ratio: ratio(ok, requests),
            status: status_map(rec.status_counts()),
            errors: error_map(rec.class_counts()),
            bytes_read: rec.bytes_in,
            bytes_written: rec.bytes_out,
            latency_ms: LatencyMs::from_histogram(&rec.response),
            service_time_ms: rec.service.as_ref().map(LatencyMs::from_histogram),
            open_model: open.map(|(rate, window, max_inflight)| {
                let started = rec.started_in_window;
                let w = window.as_secs_f64();
                OpenModelStats {
                    requested_rate: rate,
                    achieved_rate: if w > 0.0 { started as f64 / w } else { 0.0 },
                    late: rec.late,
                    unsent: rec.unsent,
                    max_inflight,
                }
            }),
            coordinated_omission: None,
            aborted_in_flight: rec.aborted,
            histogram: Histograms {
                unit: "us".into(),
                encoding: HISTOGRAM_ENCODING.into(),
                response: encode_histogram(&rec.response),
                service: rec.service.as_ref().map(encode_histogram),
            },
            timeline: rec.timeline.points(),
            error_samples: rec
                .error_samples()
                .iter()
                .map(|s| ErrorSampleOut {
                    class: s.class.name().into(),
                    message: s.message.clone(),
                    count: s.count,
                })
                .collect(),
            endpoints: rec.labels().iter().map(Endpoint::from_stats).collect(),
            http_timing: rec
                .timing
                .as_deref()
                .map(crate::timing::HttpTiming::from_stats),
            stream: rec
                .stream
                .as_deref()
                .map(|st| crate::stream::StreamFigures::from_stats(st, secs)),
            iterations: rec
                .iterations
                .as_deref()
                .map(|i| Iterations::from_stats(i, secs)),
            checks: rec.checks().iter().map(CheckResult::from_count).collect(),
            groups: rec.groups().iter().map(GroupResult::from_stats).collect(),
            metrics: rec
                .metrics()
                .iter()
                .map(|s| MetricResult::from_stats(s, secs))
                .collect(),
            // The phase's end on the run's clock, where an outage still open ends.
            availability: Some(AvailabilityOut::of(
                &rec.availability,
                rec.timeline.span().map_or(elapsed, |(_, to)| to),
            )),
        }
    }
}

/// The tool that wrote a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The machine a result was measured on, captured at run time.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Env {
    pub cpu_model: String,
    pub cores: u32,
    pub memory_bytes: u64,
    pub os: String,
    pub kernel: String,
    pub hostname: String,
    /// The node an agent ran on: on Kubernetes `PERFBASE_NODE_NAME`, which `perfbase k8s`
    /// gives each agent pod from the downward API (`hostname` is then the pod's name, and
    /// `cores` what the pod may use), elsewhere its host name. Recorded by agents (and by any
    /// run given `PERFBASE_NODE_NAME`); a merged run's `agents` list each one's instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A merged run's agents: where each ran and on how many CPUs, by segment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentEnv>,
    pub tool_version: String,
    /// Where the run came from: `GIT_COMMIT` and the common CI variables present at run time
    /// (`GITHUB_SHA`, `CI_COMMIT_SHA`, …), by name. A trend labels its points with them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub source: BTreeMap<String, String>,
    /// The services' versions as they reported them before the load, by address (recorded by
    /// plans with a `[page]`, which ask each service).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub services: BTreeMap<String, String>,
}

/// Where one agent of a merged run ran, and on how much.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentEnv {
    /// Its segment of the schedule, `I/N`.
    pub segment: String,
    /// The node it ran on ([`Env::node_name`]).
    pub node: String,
    /// Its host name: on Kubernetes, its pod's name.
    pub hostname: String,
    /// The CPUs it could use.
    pub cores: u32,
}

impl Env {
    /// The node the run ran on: `node` when recorded, else the host name.
    pub fn node_name(&self) -> &str {
        self.node.as_deref().unwrap_or(&self.hostname)
    }

    /// What must stay the same for two runs to be compared like for like: CPU model, cores,
    /// kernel, perfbase's version and the services' versions when recorded (not the host
    /// name, which CI machines change at will).
    pub fn fingerprint(&self) -> String {
        let mut f = format!(
            "{} × {} cores, kernel {}, perfbase {}",
            self.cpu_model, self.cores, self.kernel, self.tool_version
        );
        for version in self.services.values() {
            f.push_str(", ");
            f.push_str(version);
        }
        f
    }
}

/// How the load was shaped (protocol-independent part).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadConfig {
    pub threads: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_inflight: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    pub warmup_s: f64,
    pub timeout_s: f64,
    /// Open model: the dispatcher's pacing granularity; latency runs from each batch's slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_granularity_s: Option<f64>,
    /// Protocol-specific settings (for HTTP: method, headers (redacted), keep-alive, targets).
    #[serde(default)]
    pub protocol: BTreeMap<String, serde_json::Value>,
}

/// A named phase of a plan (warm-up, a sweep step, a repetition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    pub model: Model,
    /// The plan scenario (or check) this phase belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// Step of the scenario (0-based) and repetition (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<u32>,
    /// The offered load: a rate (open model) or a number of connections (closed model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_connections: Option<u64>,
    /// A merged run: the segments (`I/N`) that gave no result for this step. A step without
    /// all its segments is not the load it names: it is invalid, and the run partial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_segments: Vec<String>,
    /// The plan's faults run during this phase (`[[scenarios.faults]]`), in the order run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultEvent>,
    #[serde(flatten)]
    pub measurement: Measurement,
}

/// A fault a plan ran during a phase: its command, when it ran and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultEvent {
    /// When the command started, seconds on the run's clock.
    pub at_s: f64,
    /// The command as run (arguments joined by spaces, redacted).
    pub command: String,
    /// Its exit status; absent when it could not start, was killed at its timeout or by a
    /// signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    pub took_ms: f64,
    /// The start of what it printed (stdout, then stderr), redacted, or why it failed.
    pub output: String,
}

/// A whole run: what `--json FILE` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub tool: Tool,
    /// RFC 3339 UTC wall-clock time of the start of measurement (a label only).
    pub started_at: String,
    /// The `run` label of the series a run exported live (`--metrics-listen`,
    /// `--prometheus-remote-write`), so its result and its series can be joined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// `I/N` when this process ran segment I of N of one schedule (`--segment`): a part
    /// for `perfbase merge`, not a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
    /// An agent started through the store's barrier: how far the store's clock was ahead of
    /// this machine's, in ms (negative: behind), read with the least round trip of five.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
    /// The target, secrets redacted.
    pub target: String,
    pub protocol: String,
    pub model: Model,
    pub config: LoadConfig,
    /// True when the run was interrupted (Ctrl-C) and this is a partial result.
    pub interrupted: bool,
    /// Why the run stopped early when something other than a signal to this process asked it
    /// to: a stop request through the store (Ctrl-C of `perfbase k8s --follow`, an abort
    /// threshold on the agents' merged figures), with who asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// A merged run: the segments (`I/N`) whose agents were lost (their heartbeat stopped and
    /// they saved no result); the run is partial and none of its steps is whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_segments: Vec<String>,
    #[serde(flatten)]
    pub measurement: Measurement,
    /// Phases of a plan, in order; empty for a single ad-hoc run.
    pub phases: Vec<PhaseResult>,
    /// A plan's findings (sweeps, knee, operating point, repetition statistics, verdicts);
    /// see [`crate::study::Study`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "section"
    )]
    pub study: Option<crate::study::Study>,
    /// CPU and memory of the monitored services and of perfbase itself, idle and per phase;
    /// see [`crate::monitor::MonitorReport`].
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "section"
    )]
    pub monitor: Option<crate::monitor::MonitorReport>,
    pub env: Env,
}

impl RunResult {
    /// A run of `measurement` of `protocol` on `target`, by this perfbase, with nothing else
    /// known yet: no start time, phases, study, monitor, segment or stop. The runner fills in
    /// what it knows; the reports' and the store's tests start their fixtures from it.
    pub fn of(
        target: impl Into<String>,
        protocol: impl Into<String>,
        (model, config): (Model, LoadConfig),
        measurement: Measurement,
    ) -> RunResult {
        RunResult {
            schema: SCHEMA.into(),
            tool: Tool {
                name: "perfbase".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            started_at: String::new(),
            run_id: None,
            segment: None,
            clock_offset_ms: None,
            target: target.into(),
            protocol: protocol.into(),
            model,
            config,
            interrupted: false,
            stop_reason: None,
            lost_segments: Vec::new(),
            measurement,
            phases: Vec::new(),
            study: None,
            monitor: None,
            env: Env::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Outcome;

    #[test]
    fn a_fingerprint_names_what_makes_runs_comparable() {
        let mut e = Env {
            cpu_model: "AMD EPYC".into(),
            cores: 2,
            kernel: "6.1".into(),
            hostname: "ci-17".into(),
            tool_version: "0.1.0".into(),
            ..Env::default()
        };
        let before = e.fingerprint();
        assert_eq!(before, "AMD EPYC × 2 cores, kernel 6.1, perfbase 0.1.0");
        e.hostname = "ci-18".into();
        e.source.insert("GIT_COMMIT".into(), "abc".into());
        assert_eq!(
            e.fingerprint(),
            before,
            "host and commit are not the environment"
        );
        e.services.insert(
            "postgres://127.0.0.1:25432".into(),
            "PostgreSQL 16.2".into(),
        );
        assert!(e.fingerprint().ends_with(", PostgreSQL 16.2"));
    }

    #[test]
    fn histogram_round_trips_through_base64() {
        let mut r = Recorder::new(false);
        for us in [10u64, 200, 3000, 45_000, 1_000_000] {
            r.record(
                &Outcome::http(200, 1, 1),
                Duration::from_micros(us),
                Duration::ZERO,
                Duration::ZERO,
            );
        }
        let text = encode_histogram(&r.response);
        let back = decode_histogram(&text).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(
            back.value_at_quantile(0.5),
            r.response.value_at_quantile(0.5)
        );
        assert_eq!(back.max(), r.response.max());
    }

    #[test]
    fn measurement_counts() {
        let mut r = Recorder::new(true);
        for i in 0..10u64 {
            let st = if i == 9 { 500 } else { 200 };
            r.record(
                &Outcome::http(st, 100, 50),
                Duration::from_millis(2),
                Duration::from_millis(1),
                Duration::from_millis(i * 100),
            );
        }
        r.late = 3;
        r.started_in_window = 10;
        r.finish();
        let m = Measurement::from_recorder(
            &r,
            Duration::from_secs(2),
            Some((5.0, Duration::from_secs(2), 10)),
        );
        assert_eq!(m.requests, 10);
        assert_eq!(m.rps, 5.0);
        assert_eq!(m.success_ratio, 0.9);
        assert_eq!(m.status.get("200"), Some(&9));
        assert_eq!(m.errors.get("http_5xx"), Some(&1));
        assert_eq!(m.bytes_read, 1000);
        let open = m.open_model.unwrap();
        assert_eq!(open.achieved_rate, 5.0);
        assert_eq!(open.late, 3);
        assert!((m.latency_ms.p50 - 2.0).abs() < 0.01);
        assert!((m.service_time_ms.unwrap().p50 - 1.0).abs() < 0.01);
    }
}
