//! Command-line flags, one file per subcommand, and the plan each protocol command's flags
//! describe (`command.rs`): a command is a plan of one scenario, or one per operation of a
//! suite. Running it is `study`'s job; `app` dispatches.

mod command;
pub use command::check_outputs;
mod import;
mod inspect;
mod load;
mod run;
mod script;
mod serve;
mod tls;
mod trend;
pub mod ui;

pub use import::{ImportArgs, ImportWhat};
pub use inspect::{
    BaselineAction, BaselineArgs, CompareArgs, Format, HistoryAction, HistoryArgs, ReportArgs,
    ShowArgs, VerdictFiles,
};
pub use load::LoadArgs;
pub use run::RunArgs;
pub use serve::{DemoArgs, ServeArgs};
pub use tls::TlsArgs;
pub use trend::{PruneArgs, TrendArgs};

/// Each protocol's flags, `cli/NAME.rs`, and their subcommands, from the one list: the
/// `Command` each file declares (one subcommand, or SQL's two) is flattened into
/// [`ProtocolCommand`], which runs it.
macro_rules! protocol_commands {
    ($($(#[$doc:meta])* $m:ident => $variant:ident($target:ident), $feature:literal,
       [$($scheme:literal),*], $shown:literal, $above_http:literal;)*) => {
        $(#[cfg(feature = $feature)] mod $m;)*

        /// The protocols' subcommands (`perfbase http`, `perfbase pg`…).
        #[derive(Debug, Subcommand)]
        pub enum ProtocolCommand {
            $(#[cfg(feature = $feature)] #[command(flatten)] $variant($m::Command),)*
        }

        impl ProtocolCommand {
            /// Runs the protocol's command.
            pub fn run(self) -> Result<crate::exit::Exit, crate::exit::AppError> {
                match self {
                    $(#[cfg(feature = $feature)] ProtocolCommand::$variant(c) => c.run(),)*
                }
            }
        }
    };
}
crate::backend::each_protocol!(protocol_commands);
/// `Name: value` as -H gives it (the fuzz harness tries it too).
pub use http::parse_header;

use clap::{Parser, Subcommand};

/// A clap error as one line that names the flag: clap's own message, its tips, and where to
/// read more — not the usage block, so a script's log holds one line per failure.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let mut usage = None;
    for line in lines {
        if let Some(tip) = line.strip_prefix("tip: ") {
            msg.push_str("; ");
            msg.push_str(tip);
        } else if line.starts_with("For more information") {
        } else if let Some(u) = line.strip_prefix("Usage: ") {
            // "perfbase http [OPTIONS] [URL]" -> "perfbase http"
            let words: Vec<&str> = u
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect();
            usage.get_or_insert(words.join(" "));
        } else if usage.is_none() {
            // The detail lines under the message, e.g. the missing arguments.
            msg.push(' ');
            msg.push_str(line);
        }
    }
    // The fix, where clap only says what is wrong.
    if e.kind() == clap::error::ErrorKind::ArgumentConflict
        && msg.contains("--connections")
        && msg.contains("--rate")
    {
        msg.push_str(
            ": -c is the closed model's connections; with -r (the open model) use \
             --max-inflight to cap the requests in flight",
        );
    }
    if let Some(cmd) = usage.filter(|c| !c.is_empty()) {
        msg.push_str(&format!(" (see '{cmd} --help')"));
    }
    msg
}

/// Load-test services and turn the measurements into performance baselines.
#[derive(Debug, Parser)]
#[command(name = "perfbase", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Where results are kept: on the commands that read the store.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// Results store: a SQLite file or a postgres:// URL
    #[arg(
        long,
        env = "PERFBASE_STORE",
        default_value = ".perfbase/results.db",
        value_name = "FILE|URL"
    )]
    pub store: String,
}

impl StoreArgs {
    /// The store to read.
    pub fn options(&self) -> crate::store::StoreOptions {
        crate::store::StoreOptions {
            location: self.store.clone(),
            disabled: false,
            labels: Vec::new(),
        }
    }
}

/// Running one schedule as several processes (agents): on the commands that measure.
#[derive(Debug, Clone, clap::Args)]
pub struct SegmentArgs {
    /// Run only segment I of N of every phase (0 <= I < N): the ops n with n mod N = I, so
    /// N agents together send exactly one machine's schedule; `perfbase merge` adds them up
    #[arg(
        long,
        value_name = "I/N",
        env = "PERFBASE_SEGMENT",
        conflicts_with = "segments"
    )]
    pub segment: Option<perfbase_engine::Segment>,

    /// With Kubernetes' Indexed Jobs: run segment $JOB_COMPLETION_INDEX of N
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub segments: Option<u32>,

    /// Start the load at this wall-clock time (RFC 3339 or seconds since the epoch), so
    /// agents started apart begin their first phase together
    #[arg(long, value_name = "TIME", env = "PERFBASE_START_AT", value_parser = parse::time)]
    pub start_at: Option<std::time::SystemTime>,
}

impl SegmentArgs {
    pub fn segment(&self) -> Result<perfbase_engine::Segment, crate::exit::AppError> {
        let bad = |m: String| crate::exit::bad_input(m);
        match (self.segment, self.segments) {
            (Some(s), _) => Ok(s),
            (None, Some(n)) => {
                let index = std::env::var("JOB_COMPLETION_INDEX").map_err(|_| {
                    bad(format!(
                        "--segments {n}: JOB_COMPLETION_INDEX is not set (an Indexed Job sets it); give --segment I/{n} instead"
                    ))
                })?;
                format!("{}/{n}", index.trim()).parse().map_err(|e| {
                    bad(format!(
                        "--segments {n} with JOB_COMPLETION_INDEX={index}: {e}"
                    ))
                })
            }
            (None, None) => Ok(perfbase_engine::Segment::default()),
        }
    }
}

/// Live Prometheus exports: on the commands that measure.
#[derive(Debug, Clone, clap::Args)]
pub struct MetricsArgs {
    /// Serve the figures for Prometheus to scrape while running (OpenMetrics, or protobuf
    /// with native histograms when the scraper asks): 127.0.0.1:9464
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,

    /// After the run, keep serving until a scrape has read the final figures, at most this long
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = parse::duration)]
    pub metrics_linger: std::time::Duration,

    /// Push the figures to this Prometheus remote-write URL every second and at the end:
    /// http://127.0.0.1:9090/api/v1/write
    #[arg(long, value_name = "URL")]
    pub prometheus_remote_write: Option<String>,
}

impl MetricsArgs {
    /// Refuses a linger with nothing to linger for, and warns when the figures are served
    /// beyond this machine (they name the targets and their load).
    pub fn check(&self) -> Result<(), crate::exit::AppError> {
        if !self.metrics_linger.is_zero() && self.metrics_listen.is_none() {
            return Err(crate::exit::bad_input(
                "--metrics-linger keeps --metrics-listen serving after the run: give \
                 --metrics-listen too, or drop --metrics-linger",
            ));
        }
        if let Some(addr) = self.metrics_listen.filter(|a| !a.ip().is_loopback()) {
            errln!(
                "perfbase: warning: --metrics-listen {addr} serves the run's figures (targets, \
                 rates, errors) to any host that can reach this one; 127.0.0.1 keeps them on \
                 this machine"
            );
        }
        Ok(())
    }

    pub fn options(&self) -> crate::exporting::MetricsOptions {
        crate::exporting::MetricsOptions {
            listen: self.metrics_listen,
            remote_write: self.prometheus_remote_write.clone(),
            linger: self.metrics_linger,
        }
    }
}

/// Where and how a run is saved: on the commands that measure.
#[derive(Debug, Clone, clap::Args)]
pub struct SaveArgs {
    #[command(flatten)]
    pub store: StoreArgs,

    /// Do not save the result in the store
    #[arg(long)]
    pub no_store: bool,

    /// Label the saved run (repeatable): service=api, version=1.4.2, env=ci, any free tag
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
}

impl SaveArgs {
    /// The store to save in, with the labels (a label the store would refuse stops the
    /// command before any load).
    pub fn options(&self) -> Result<crate::store::StoreOptions, crate::exit::AppError> {
        if !self.no_store {
            crate::store::check_location(&self.store.store)?;
        } else if !self.labels.is_empty() || store_flag_given() {
            // PERFBASE_STORE in the environment is not a contradiction: it names the store
            // for every command, and --no-store skips it for this one.
            return Err(crate::exit::bad_input(format!(
                "--no-store with {}: a run not saved has no store and no labels; drop one",
                if store_flag_given() {
                    "--store"
                } else {
                    "--label"
                }
            )));
        }
        Ok(crate::store::StoreOptions {
            location: self.store.store.clone(),
            disabled: self.no_store,
            labels: crate::store::parse_labels(&self.labels)?,
        })
    }
}

/// Whether `--store` was written on the command line (clap's default and PERFBASE_STORE
/// look the same once parsed).
fn store_flag_given() -> bool {
    std::env::args().any(|a| a == "--store" || a.starts_with("--store="))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Protocol(ProtocolCommand),
    /// Run a plan file: scenarios, ladders, repetitions, thresholds and checks.
    Run(Box<RunArgs>),
    /// Run a JavaScript workload: each iteration of its function, every request it makes
    /// timed (perfbase script checkout.js --url http://127.0.0.1:8080 -c 20 -d 30s)
    Script(Box<script::ScriptArgs>),
    /// Run the embedded reference service on a loopback port.
    Serve(ServeArgs),
    /// Start the reference service in-process and run plans/demo.toml against it.
    Demo(DemoArgs),
    /// List stored runs, newest first
    History(HistoryArgs),
    /// Print a stored run
    Show(ShowArgs),
    /// Name baselines and check runs against them (the CI gate)
    Baseline(BaselineArgs),
    /// Compare runs: A vs B with verdicts, or a ranking of several
    Compare(CompareArgs),
    /// Metrics over the stored runs: sparklines, change points, and a CI gate on the newest
    Trend(Box<TrendArgs>),
    /// Render runs as Markdown, HTML, JSON, CSV or JUnit XML
    Report(ReportArgs),
    /// Merge the results of agents that ran the segments of one schedule into one run
    Merge(MergeArgs),
    /// Run one segment of a plan as one agent of a run spread over several machines (the pods
    /// of `perfbase k8s`), saved in the shared store under the run's id
    Agent(Box<AgentArgs>),
    /// Print the Kubernetes manifests that run a plan as N agents (kubectl apply -f -)
    #[cfg(feature = "k8s")]
    K8s(K8sArgs),
    /// Write a plan from a curl command or a HAR recording: perfbase import har FILE.har
    Import(ImportArgs),
    /// Browse the store in a web browser: runs, comparisons, plans' trends, baselines and the
    /// runs agents are doing now (read-only; loopback unless --allow-remote)
    Ui(ui::UiArgs),
    /// Print a shell completion script: source <(perfbase completions bash)
    Completions(CompletionsArgs),
    /// Print perfbase's man page (roff): perfbase man | man -l -
    Man,
}

#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The agents' results: run ids, `latest…`, or result JSON files (--segment I/N each)
    #[arg(required_unless_present = "run_id", num_args = 2.., conflicts_with = "run_id")]
    pub runs: Vec<String>,

    /// Merge the results every `perfbase agent --run-id ID` saved in the store
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// With --run-id: wait until this many agents have saved their results (a merge Job
    /// started beside its agents), polling the store every second up to --wait-timeout
    #[arg(long, value_name = "N", requires = "run_id", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub wait_for: Option<u32>,

    /// How long --wait-for waits before it gives up (exit 2, naming the agents missing)
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse::duration)]
    pub wait_timeout: std::time::Duration,

    /// With --wait-for: an agent whose heartbeat in the store is older than this and that
    /// saved no result is lost (its pod or machine died); the merge then goes on without it,
    /// and the merged run is partial, naming the lost segment (exit 130)
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse::duration, requires = "wait_for")]
    pub lost_after: std::time::Duration,

    /// Write the merged result JSON (perfbase.result/v1) to this file, - for stdout
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,

    /// With --run-id: save the merged run in the store too, with the label merged-run=ID
    #[arg(long, requires = "run_id")]
    pub save: bool,

    /// The plan the agents ran: judge its thresholds, knees, SLO operating points, checks,
    /// rankings and A-vs-B blocks on the merged run (the exit code then says whether they
    /// passed), as one machine's run would have been judged
    #[arg(long, value_name = "PLAN")]
    pub plan: Option<std::path::PathBuf>,

    /// With --plan: the --scale the agents ran it with
    #[arg(long, value_name = "FACTOR", requires = "plan")]
    pub scale: Option<f64>,

    /// With --run-id: the agents' merged figures live while the merge waits for them
    #[command(flatten)]
    pub web: crate::live::DashboardArgs,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  perfbase agent plan.toml --segment 0/3 --run-id nightly-42 --store postgres://…
  JOB_COMPLETION_INDEX=1 perfbase agent plan.toml --segments 3 --run-id nightly-42
  perfbase merge --run-id nightly-42 --wait-for 3 --json merged.json")]
pub struct AgentArgs {
    /// The run this agent belongs to: its result is saved in the store with the label
    /// agent-run=ID, which `perfbase merge --run-id ID` gathers
    #[arg(long, value_name = "ID", env = "PERFBASE_RUN_ID")]
    pub run_id: String,

    /// Start together through the store: say this segment has arrived, wait until all N
    /// have, then start 2 s after the last on the store's clock; the result records this
    /// machine's clock offset from the store's (instead of --start-at)
    #[arg(long, conflicts_with = "start_at")]
    pub barrier: bool,

    /// How long --barrier waits for the others before it gives up (exit 2, naming who came)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse::duration)]
    pub barrier_timeout: std::time::Duration,

    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, clap::Args)]
pub struct K8sArgs {
    /// The plan file, put in a ConfigMap
    pub plan: std::path::PathBuf,

    /// How many agents (pods), each running one segment of every phase
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub agents: u32,

    /// The container image with perfbase in it (see the Dockerfile)
    #[arg(long, value_name = "IMAGE")]
    pub image: String,

    /// The Secret holding the shared store's postgres:// URL, which every agent saves to
    /// (the URL is never written into a manifest)
    #[arg(long, value_name = "NAME")]
    pub store_secret: String,

    /// The key of the URL in that Secret
    #[arg(long, default_value = "url", value_name = "KEY")]
    pub store_key: String,

    /// The objects' name (default perfbase-PLAN)
    #[arg(long)]
    pub name: Option<String>,

    #[arg(long)]
    pub namespace: Option<String>,

    /// Passed to every agent: the wall-clock time their first phase starts (without it, the
    /// agents meet at the store's barrier, `perfbase agent --barrier`, and start together)
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,

    /// The id the agents save their results under (default: NAME-YYYYMMDD-HHMMSS, now)
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// Also a Job that waits for the N agents' results in the store, merges them and saves
    /// the merged run (`perfbase merge --run-id ID --wait-for N --save`)
    #[arg(long)]
    pub merge_job: bool,

    /// Apply the objects to the cluster of the current kubeconfig (KUBECONFIG), server-side,
    /// instead of printing their YAML
    #[arg(long)]
    pub apply: bool,

    /// With --apply and --merge-job: wait for the agents' pods and the merge Job, saying what
    /// each pod does, then print the merged run from the store (--store, the same store the
    /// pods' Secret names) and exit with its code; a Ctrl-C stops every agent through the
    /// store (each saves its partial result, and the merge Job merges them)
    #[arg(long, requires_all = ["apply", "merge_job"])]
    pub follow: bool,

    /// The pods use the node's network (hostNetwork), so that 127.0.0.1 in the plan is the
    /// node's loopback: for a service on the nodes themselves, or a one-node test cluster.
    /// Off, the pods reach targets through the cluster's network, as services usually are
    #[arg(long)]
    pub host_network: bool,

    /// Each agent's CPU, as a Kubernetes quantity (2, 1.5, 500m): its request and its limit,
    /// so that it gets the cores it is measured with (Guaranteed QoS)
    #[arg(long, default_value = "1", value_name = "QUANTITY")]
    pub cpu: String,

    /// Each agent's memory, as a Kubernetes quantity (1Gi, 512Mi, 2G): request and limit
    #[arg(long, default_value = "1Gi", value_name = "QUANTITY")]
    pub memory: String,

    /// Do not ask the scheduler to spread the agents across nodes (by default a soft
    /// topologySpreadConstraint on kubernetes.io/hostname: one per node while nodes last)
    #[arg(long)]
    pub no_spread: bool,

    /// How long the agents' Job may run (activeDeadlineSeconds), and the merge wait for them
    /// (its Job 5 min more). Default: the plan's length at most, a fifth more, the barrier's
    /// 10 min and 5 min; 6h when that is not known here (the plan's ${VARS} are the pods', or a
    /// step is bounded by a count only)
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    pub deadline: Option<std::time::Duration>,

    /// How long Kubernetes keeps the finished Jobs and their pods, for their logs and
    /// --follow (ttlSecondsAfterFinished)
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = parse::duration)]
    pub ttl: std::time::Duration,

    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// clap value parsers for perfbase's units, so bad values name their flag.
pub(crate) mod parse {
    /// `--start-at`: RFC 3339 or seconds since the epoch.
    pub fn time(s: &str) -> Result<std::time::SystemTime, String> {
        perfbase_core::clock::parse_time(s)
    }

    use std::time::Duration;

    pub fn duration(s: &str) -> Result<Duration, String> {
        perfbase_core::units::parse_duration(s).map_err(|e| e.to_string())
    }

    /// `--pacing-granularity`: 0 to 100 ms.
    pub fn pacing(s: &str) -> Result<Duration, String> {
        let g = duration(s)?;
        perfbase_engine::pacing_problem(g).map_or(Ok(g), Err)
    }

    pub fn positive_duration(s: &str) -> Result<Duration, String> {
        match duration(s)? {
            d if d.is_zero() => Err(format!("'{s}' must be longer than zero")),
            d => Ok(d),
        }
    }

    /// A request timeout: at least 1 ms, the resolution of the timer that enforces it (a
    /// shorter one would silently act as 1 ms).
    pub fn timeout(s: &str) -> Result<Duration, String> {
        match duration(s)? {
            d if d < Duration::from_millis(1) => Err(format!(
                "'{s}' is below 1ms, the resolution of request timeouts; use 1ms or more"
            )),
            d => Ok(d),
        }
    }

    pub fn threshold(s: &str) -> Result<perfbase_analysis::threshold::Threshold, String> {
        perfbase_analysis::parse_threshold(s).map_err(|e| e.to_string())
    }

    pub fn rate(s: &str) -> Result<f64, String> {
        perfbase_core::units::parse_rate(s).map_err(|e| e.to_string())
    }

    /// `5%` or `0.05`.
    pub fn ratio(s: &str) -> Result<f64, String> {
        let v = match s.trim().strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
            None => s.trim().parse::<f64>(),
        }
        .map_err(|_| format!("'{s}' is not a ratio; use 5% or 0.05"))?;
        if (0.0..=10.0).contains(&v) {
            Ok(v)
        } else {
            Err(format!("'{s}' is out of range"))
        }
    }

    /// A count of connections: at least 1 and within the process's file limit.
    pub fn connections(s: &str) -> Result<u64, String> {
        let n = count(s)?;
        crate::limits::check_connections(n)?;
        Ok(n)
    }

    pub fn count(s: &str) -> Result<u64, String> {
        match perfbase_core::units::parse_count(s) {
            Ok(0) => Err(format!("'{s}' must be at least 1")),
            Ok(n) => Ok(n),
            Err(e) => Err(e.to_string()),
        }
    }
}
