//! Subcommands over stored results: history, show, baseline, compare, report.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// A run: a stored run id, `latest`, `latest:service=api,env=ci`, or a result JSON file.
pub const RUN_HELP: &str = "a run id, `latest`, `latest:KEY=VALUE,…`, or a result JSON file";

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,

    /// How many runs, newest first
    #[arg(long, default_value_t = 20)]
    pub limit: usize,

    /// Only runs with this label (repeatable: all must match): service=api, env=ci
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    #[command(flatten)]
    pub store: super::StoreArgs,
}

/// What `perfbase history` does besides listing.
#[derive(Debug, clap::Subcommand)]
pub enum HistoryAction {
    /// Delete old runs: those neither saved in the last --keep-days days nor among the newest
    /// --keep-last; runs a baseline points at (now or before) are always kept
    Prune(super::PruneArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    #[arg(help = RUN_HELP)]
    pub run: String,

    #[command(flatten)]
    pub store: super::StoreArgs,
}

/// Where a comparison's verdicts go besides the terminal, for CI systems.
#[derive(Debug, Args, Default)]
pub struct VerdictFiles {
    /// Write the comparison as JSON (perfbase.comparison/v1) to this file, - for stdout
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the verdicts as JUnit XML (one test case per compared entry) to this file,
    /// - for stdout
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

impl VerdictFiles {
    /// One of the files is standard output, which then carries only that file.
    pub fn takes_stdout(&self) -> bool {
        [&self.json, &self.junit]
            .into_iter()
            .flatten()
            .any(|p| p.as_os_str() == "-")
    }
}

#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub action: BaselineAction,

    #[command(flatten)]
    pub store: super::StoreArgs,
}

#[derive(Debug, Subcommand)]
pub enum BaselineAction {
    /// Name a stored run as a baseline (replaces the previous one; history is kept)
    Set {
        name: String,
        #[arg(help = RUN_HELP)]
        run: String,
    },
    /// Compare a run against a baseline; exit 1 on a regression beyond the tolerance
    Check {
        name: String,
        #[arg(help = RUN_HELP)]
        run: String,
        /// Changes smaller than this are never regressions
        #[arg(long, default_value = "5%", value_parser = super::parse::ratio)]
        tolerance: f64,
        #[command(flatten)]
        files: VerdictFiles,
    },
    /// List the baselines
    List,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two runs (A then B), or more for a ranking by throughput
    #[arg(required = true, num_args = 2.., help = "runs to compare: run ids, `latest…`, or result JSON files")]
    pub runs: Vec<String>,

    /// Single runs: a change of more than this counts as real
    #[arg(long, default_value = "5%", value_parser = super::parse::ratio)]
    pub tolerance: f64,

    /// Repeated runs: Welch's t-test significance level
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,

    /// Name each stored run by the value of this label (platform for a run saved with the
    /// label platform=AKS):
    /// "AKS vs GKE", "GKE is faster". Default: the one label whose values differ between
    /// the runs, if there is exactly one; else `run ID`
    #[arg(long, value_name = "KEY")]
    pub name_by: Option<String>,

    #[command(flatten)]
    pub files: VerdictFiles,

    #[command(flatten)]
    pub store: super::StoreArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Html,
    Json,
    Csv,
    Junit,
    /// HdrHistogram's percentile distribution of the response times (ms), one per run
    Hgrm,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[arg(
        required = true,
        help = "runs to report: run ids, `latest…`, or result JSON files"
    )]
    pub runs: Vec<String>,

    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,

    /// Write to this file instead of standard output
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub store: super::StoreArgs,
}
