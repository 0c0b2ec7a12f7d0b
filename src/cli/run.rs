//! `perfbase run`: a plan file.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase run plans/demo.toml --dry-run
  perfbase run plans/five-scenarios.toml --monitor postgres --monitor pid:4242
  TARGET_URL=http://127.0.0.1:8080 perfbase run plans/five-scenarios.toml --out results/five --scale 0.1")]
pub struct RunArgs {
    /// The plan file (TOML; see docs/plans.md)
    pub plan: PathBuf,

    /// Folder for result.json and report.md [default: .perfbase/runs/<plan>-<UTC time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Multiply every rate and concurrency in the plan (overrides [plan] scale)
    #[arg(long, value_name = "FACTOR")]
    pub scale: Option<f64>,

    /// Worker threads (overrides [plan] threads) [default: CPU cores]
    #[arg(short = 't', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,

    /// Check the plan and list the phases it would run, without sending any load
    #[arg(long)]
    pub dry_run: bool,

    /// No live progress line
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Write an HdrHistogram interval log (.hlog): each second's latency histogram, tagged
    /// by scenario and step
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,

    #[command(flatten)]
    pub metrics: super::MetricsArgs,

    #[command(flatten)]
    pub live: crate::live::LiveArgs,

    #[command(flatten)]
    pub segment: super::SegmentArgs,

    /// Stream JSON lines while running, to this file or - for stdout: one per second and one
    /// per phase (its whole result)
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,

    /// Watch a service's CPU and memory beside the plan's load (repeatable), in addition to
    /// the plan's [monitor] targets: a process name, pid:PID, name:COMM, cmd:PATTERN or
    /// cgroup:PATH
    #[arg(long = "monitor", value_name = "TARGET")]
    pub monitor: Vec<String>,

    #[command(flatten)]
    pub save: super::SaveArgs,

    /// Sample the watched services idle for this long before the load (overrides the plan's
    /// [monitor] idle; default 3s)
    #[arg(long, value_name = "DURATION", value_parser = super::parse::duration)]
    pub monitor_idle: Option<std::time::Duration>,
}
