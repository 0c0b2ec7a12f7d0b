//! `perfbase trend`: metrics over the stored runs, change points and the trend gate; and
//! `perfbase history prune`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct TrendArgs {
    /// Only this plan's runs (the plan's `name`)
    #[arg(long)]
    pub plan: Option<String>,

    /// Only runs with this label (repeatable: all must match): env=ci, branch=main
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Only this scenario
    #[arg(long)]
    pub scenario: Option<String>,

    /// Only this step (a suite's operation, a ladder's `c=4` or `100/s`)
    #[arg(long)]
    pub step: Option<String>,

    /// Metrics, comma-separated: p50, p99, rps, error_rate, knee, operating_point [default:
    /// all]
    #[arg(long = "metric", value_delimiter = ',', value_name = "LIST")]
    pub metrics: Vec<String>,

    /// Only the newest N runs of each series
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,

    /// A change point is kept when Welch's test between the runs on its two sides gives a p
    /// below this
    #[arg(long, default_value_t = 0.001, value_name = "P")]
    pub max_p: f64,

    /// A change of level smaller than this (of the level before) is not kept as a change
    /// point, however certain; changes of spread are kept on their p alone
    #[arg(long, default_value = "1%", value_parser = super::parse::ratio, value_name = "RATIO")]
    pub min_change: f64,

    /// The CI gate: exit 1 when the newest run of a series is worse than the runs of its
    /// current segment beyond --tolerance, at p below --max-p
    #[arg(long)]
    pub check: bool,

    /// With --check: changes smaller than this never fail
    #[arg(long, default_value = "5%", value_parser = super::parse::ratio)]
    pub tolerance: f64,

    /// Read series from this JSON-lines file instead of the store: one
    /// {"name": "...", "values": [..]} per line, each value one run
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,

    /// Write the trend as JSON (perfbase.trend/v1) to this file, - for stdout
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write a self-contained HTML page with one chart per series
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// With --check: write the verdicts as JUnit XML, - for stdout
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Write the newest run of each series in Bencher Metric Format (BMF) JSON
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,

    /// Write the newest run's lower-is-better series (latencies, errors) for
    /// github-action-benchmark's customSmallerIsBetter
    #[arg(long, value_name = "FILE")]
    pub github_smaller: Option<PathBuf>,

    /// Write the newest run's higher-is-better series (throughput, knee) for
    /// github-action-benchmark's customBiggerIsBetter
    #[arg(long, value_name = "FILE")]
    pub github_bigger: Option<PathBuf>,

    #[command(flatten)]
    pub store: super::StoreArgs,
}

impl TrendArgs {
    /// The files to write, with their flags; standard output carries only the one given `-`.
    pub fn files(&self) -> [(&'static str, &Option<PathBuf>); 6] {
        [
            ("--json", &self.json),
            ("--html", &self.html),
            ("--junit", &self.junit),
            ("--bmf", &self.bmf),
            ("--github-smaller", &self.github_smaller),
            ("--github-bigger", &self.github_bigger),
        ]
    }
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Keep every run saved in the last N days
    #[arg(long, value_name = "N")]
    pub keep_days: Option<u32>,

    /// Keep the newest N runs
    #[arg(long, value_name = "N")]
    pub keep_last: Option<usize>,

    #[command(flatten)]
    pub store: super::StoreArgs,
}
