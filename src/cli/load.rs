//! Load-shape flags shared by every protocol's command (http, pg, mysql).

use super::parse;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Closed model: N connections, each sending its next request when the last completes
    /// [default: 50 for http, 1 for databases, without --rate]
    #[arg(short = 'c', long, value_name = "N", value_parser = parse::connections, conflicts_with = "rate")]
    pub connections: Option<u64>,

    /// Open model: start requests at this fixed rate (2000, 2k, 500/s, 120/m), whatever the
    /// responses do; latency runs from each request's intended start
    #[arg(short = 'r', long, value_name = "RATE", value_parser = parse::rate)]
    pub rate: Option<f64>,

    /// Stop after this long (250ms, 10s, 1m) [default: 10s unless -n is given]. A suite
    /// (-w suite) runs each operation this long, as redis-benchmark's -n: 7 operations at
    /// -d 7s take 49 s
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = parse::positive_duration)]
    pub duration: Option<Duration>,

    /// Stop after this many requests (1000, 60k); with -d, whichever comes first. A suite
    /// sends this many per operation
    #[arg(short = 'n', long = "requests", value_name = "COUNT", value_parser = parse::count)]
    pub requests: Option<u64>,

    /// Worker threads, each with its own event loop and connections [default: CPU cores]
    #[arg(short = 't', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,

    /// A request without a complete response by then counts as a timeout
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse::timeout)]
    pub timeout: Duration,

    /// Run the same load for this long first and discard its measurements
    #[arg(long, value_name = "DURATION", value_parser = parse::positive_duration)]
    pub warmup: Option<Duration>,

    /// Open model: at most N requests in flight; a request that cannot start on time is sent
    /// late and counted as late [default: 1000 for http, 64 for databases and brokers]
    #[arg(long, value_name = "N", value_parser = parse::connections, requires = "rate")]
    pub max_inflight: Option<u64>,

    /// Open model: wake at most once per this interval and start every request due by then
    /// (latency runs from that slot); 0 wakes at each request's exact time, at a higher CPU
    /// cost; at most 100ms
    #[arg(long, default_value = "1ms", value_name = "DURATION", value_parser = parse::pacing, requires = "rate")]
    pub pacing_granularity: Duration,

    /// Print what would run (each step's load, in-flight cap, pacing and timeout) and exit
    /// without sending anything
    #[arg(long)]
    pub dry_run: bool,

    /// Watch a service's CPU and memory beside the load (repeatable): a process name,
    /// pid:PID, name:COMM, cmd:PATTERN or cgroup:PATH; children count with their parent
    #[arg(long = "monitor", value_name = "TARGET")]
    pub monitor: Vec<String>,

    /// With --monitor: sample the services idle for this long before the load
    #[arg(long, default_value = "3s", value_name = "DURATION", value_parser = parse::duration)]
    pub monitor_idle: Duration,

    /// Time between monitor samples
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse::positive_duration)]
    pub monitor_interval: Duration,

    /// Fail the run (exit 1) unless this holds (repeatable): 'p99 < 200ms', 'error_rate < 1%',
    /// 'rps > 100', or k6's 'p(95)<200', 'http_req_failed<0.01'
    #[arg(long = "threshold", value_name = "THRESHOLD", value_parser = parse::threshold)]
    pub thresholds: Vec<perfbase_analysis::threshold::Threshold>,

    /// Write the result JSON (perfbase.result/v1) to this file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write an HdrHistogram interval log (.hlog): each second's latency histogram, tagged
    /// by phase, as HistogramLogProcessor and hdr-plot read it
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,

    /// Stream JSON lines while running, to this file or - for stdout: one per second
    /// (requests, errors, rate) and one per phase (its whole result)
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,

    #[command(flatten)]
    pub metrics: super::MetricsArgs,

    #[command(flatten)]
    pub live: crate::live::LiveArgs,

    #[command(flatten)]
    pub segment: super::SegmentArgs,

    /// No live progress line
    #[arg(short = 'q', long)]
    pub quiet: bool,

    #[command(flatten)]
    pub save: super::SaveArgs,
}
