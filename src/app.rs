//! The wiring: typed options from flags → driver → engine → result → JSON file and terminal.
//! This is the one place that picks a protocol driver.

use crate::cli::{Cli, Command, DemoArgs, HttpArgs, RunArgs, ServeArgs};
use crate::exit::{bad_input, AppError, Exit};
use crate::load::{LoadShape, Presentation};
use crate::records::StoreOptions;
use anyhow::Context as _;
use perfbase_core::redact;
use perfbase_core::result::RunResult;
use perfbase_drivers::http::{targets::read_targets, HttpDriver, HttpOptions, HttpVersion, Target};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Default concurrency of the closed model (wrk's and hey's habit).
const DEFAULT_CONNECTIONS: u64 = 50;

/// Runs one command.
pub fn run(cli: Cli) -> Result<Exit, AppError> {
    let store = StoreOptions {
        location: cli.store.clone(),
        disabled: cli.no_store,
        labels: crate::records::parse_labels(&cli.labels)?,
    };
    match cli.command {
        Command::Http(args) => http(*args, &store),
        Command::Pg(args) => crate::sql::run(*args, crate::sql::Dialect::Postgres, &store),
        Command::Mysql(args) => crate::sql::run(*args, crate::sql::Dialect::Mysql, &store),
        Command::Redis(args) => crate::brokers::redis(*args, &store),
        Command::Amqp(args) => crate::brokers::amqp(*args, &store),
        Command::Nats(args) => crate::brokers::nats(*args, &store),
        Command::Mqtt(args) => crate::brokers::mqtt(*args, &store),
        Command::Run(args) => run_plan(args, &store),
        Command::Serve(args) => serve(args),
        Command::Demo(args) => demo(args, &store),
        Command::History(a) => crate::inspect::history(a, &store),
        Command::Show(a) => crate::inspect::show(a, &store),
        Command::Baseline(a) => crate::inspect::baseline(a, &store),
        Command::Compare(a) => crate::inspect::compare(a, &store),
        Command::Report(a) => crate::inspect::report(a, &store),
    }
}

/// A fully checked HTTP run, ready for the engine.
#[derive(Debug, Clone)]
pub struct HttpRun {
    /// What reports call the target (redacted).
    pub label: String,
    pub targets: Vec<Target>,
    pub options: HttpOptions,
    pub shape: LoadShape,
    pub json: Option<PathBuf>,
    pub progress: bool,
    pub monitor: crate::monitoring::MonitorOptions,
}

fn parse_header(h: &str) -> Result<(String, String), AppError> {
    match h.split_once(':') {
        Some((n, v)) if !n.trim().is_empty() && !n.trim().contains(char::is_whitespace) => {
            Ok((n.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(bad_input(format!(
            "--header '{}': expected 'Name: value'",
            redact::header_line(h.split(':').next().unwrap_or(""), "…")
        ))),
    }
}

pub(crate) fn check_output_path(path: &Path, flag: &str) -> Result<(), AppError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => Err(bad_input(format!(
            "{flag} {}: folder '{}' does not exist",
            path.display(),
            dir.display()
        ))),
        _ if path.is_dir() => Err(bad_input(format!(
            "{flag} {}: is a folder; give a file name",
            path.display()
        ))),
        _ => Ok(()),
    }
}

impl HttpRun {
    /// Checks the flags and builds the run; every error names its flag or file.
    pub fn from_args(a: HttpArgs) -> Result<HttpRun, AppError> {
        let headers = a
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        let targets = match (&a.targets, &a.url) {
            (Some(_), Some(url)) => {
                return Err(bad_input(format!(
                    "give either a URL ('{}') or --targets, not both",
                    redact::url(url)
                )))
            }
            (None, None) => {
                return Err(bad_input(
                    "no target: give a URL (e.g. http://127.0.0.1:8080/) or --targets FILE",
                ))
            }
            (Some(file), None) => read_targets(file).map_err(|e| bad_input(e.to_string()))?,
            (None, Some(raw)) => {
                let url = Url::parse(raw)
                    .map_err(|e| bad_input(format!("URL '{}': {e}", redact::url(raw))))?;
                let body: Vec<u8> = match (&a.body, &a.body_file) {
                    (Some(b), _) => b.clone().into_bytes(),
                    (None, Some(f)) => std::fs::read(f).map_err(|e| {
                        bad_input(format!("--body-file {}: cannot read: {e}", f.display()))
                    })?,
                    (None, None) => Vec::new(),
                };
                vec![Target {
                    method: a.method.clone(),
                    url,
                    headers: Vec::new(),
                    body: body.into(),
                }]
            }
        };
        if let Some(j) = &a.load.json {
            check_output_path(j, "--json")?;
        }
        let label = match (&a.targets, &a.url) {
            (Some(f), _) => format!(
                "{} (targets: {})",
                redact::url(targets[0].url.as_str()),
                f.display()
            ),
            (_, Some(u)) => redact::url(u),
            _ => String::new(),
        };
        let presentation =
            Presentation::from_args(&a.load, label.clone(), "http", Default::default());
        let version = match a.http2 {
            false => HttpVersion::Http1,
            true => HttpVersion::Http2 {
                streams: a.streams as usize,
            },
        };
        Ok(HttpRun {
            label,
            targets,
            options: HttpOptions {
                keepalive: !a.no_keepalive,
                headers,
                tls: perfbase_drivers::http::TlsOptions {
                    insecure: a.insecure,
                    ca_file: a.cacert.clone(),
                },
                version,
                ok_status: a.ok_status.clone(),
                ..HttpOptions::default()
            },
            shape: LoadShape::from_args(
                &a.load,
                DEFAULT_CONNECTIONS,
                crate::load::DEFAULT_MAX_INFLIGHT,
            )
            .with_streams(version),
            json: a.load.json.clone(),
            progress: presentation.progress,
            monitor: presentation.monitor,
        })
    }

    /// The HTTP part of the result's `config` (headers redacted).
    fn settings(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        let mut protocol = std::collections::BTreeMap::new();
        let first = &self.targets[0];
        protocol.insert("method".into(), first.method.clone().into());
        protocol.insert("keepalive".into(), self.options.keepalive.into());
        if let HttpVersion::Http2 { streams } = self.options.version {
            protocol.insert("version".into(), "HTTP/2".into());
            protocol.insert("streams_per_connection".into(), streams.into());
        }
        if !self.options.ok_status.is_empty() {
            protocol.insert("ok_status".into(), self.options.ok_status.clone().into());
        }
        protocol.insert("targets".into(), self.targets.len().into());
        protocol.insert("body_bytes".into(), first.body.len().into());
        let headers: Vec<serde_json::Value> = self
            .options
            .headers
            .iter()
            .chain(first.headers.iter())
            .map(|(n, v)| redact::header_line(n, v).into())
            .collect();
        protocol.insert("headers".into(), headers.into());
        protocol
    }

    /// Runs the load and returns the result; `interrupt` stops it early (partial result).
    pub fn execute(&self, interrupt: Arc<AtomicBool>) -> Result<RunResult, AppError> {
        let driver =
            HttpDriver::new(&self.targets, &self.options).map_err(|e| bad_input(e.to_string()))?;
        let presentation = Presentation {
            label: self.label.clone(),
            protocol: "http",
            progress: self.progress,
            monitor: self.monitor.clone(),
            settings: self.settings(),
        };
        crate::load::execute(Arc::new(driver), &self.shape, &presentation, interrupt)
    }
}

/// The monitor's table (services watched) or its warnings (perfbase alone).
pub(crate) fn print_monitor(result: &RunResult) {
    if let Some(report) = result
        .monitor
        .as_ref()
        .and_then(|v| serde_json::from_value::<perfbase_monitor::MonitorReport>(v.clone()).ok())
    {
        out!(
            "{}",
            crate::monitoring::render(&report, report.targets.len() > 1)
        );
    }
}

fn http(args: HttpArgs, store: &StoreOptions) -> Result<Exit, AppError> {
    let run = HttpRun::from_args(args)?;
    let interrupt = crate::interrupt::install();
    let result = run.execute(interrupt)?;
    crate::records::save(store, "http", &result, &Default::default());
    crate::load::finish(&result, run.json.as_deref())
}

fn runtime() -> Result<tokio::runtime::Runtime, AppError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(AppError::from)
}

async fn until(flag: Arc<AtomicBool>) {
    while !flag.load(std::sync::atomic::Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn serve(args: ServeArgs) -> Result<Exit, AppError> {
    let interrupt = crate::interrupt::install();
    let config = perfbase_reference::Config {
        workers: args.workers,
        lookup_cpu: args.lookup_cpu,
        lookup_delay: args.lookup_delay,
        corpus_size: args.corpus_size,
        health_concurrent: args.health_concurrent,
        rate_limit: (args.rate_limit > 0).then_some(perfbase_reference::RateLimit {
            limit: args.rate_limit,
            window: Duration::from_secs(60),
        }),
        ..perfbase_reference::Config::default()
    };
    let tls = match &args.tls_cert {
        Some(path) => {
            check_output_path(path, "--tls-cert")?;
            let made = perfbase_reference::tls::self_signed()
                .context("cannot make a self-signed certificate")?;
            std::fs::write(path, &made.cert_pem)
                .map_err(|e| bad_input(format!("--tls-cert {}: {e}", path.display())))?;
            Some(made.config)
        }
        None => None,
    };
    let rt = runtime()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .map_err(|e| {
                bad_input(format!(
                    "--host {} --port {}: cannot listen: {e}",
                    args.host, args.port
                ))
            })?;
        let addr = listener
            .local_addr()
            .context("listening socket has no address")?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        outln!("perfbase reference service listening on {scheme}://{addr}");
        if let Some(path) = &args.tls_cert {
            outln!(
                "  self-signed certificate in {} (perfbase http --cacert {0})",
                path.display()
            );
        }
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let stats = perfbase_reference::Stats::default();
        match tls {
            Some(tls) => {
                perfbase_reference::serve_tls_with(listener, config, stats, tls, until(interrupt))
                    .await
            }
            None => perfbase_reference::serve_with(listener, config, stats, until(interrupt)).await,
        }
        .context("the reference service failed")?;
        Ok(Exit::Success)
    })
}

pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `.perfbase/runs/<plan>-<UTC time>`.
fn default_out(name: &str) -> PathBuf {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let stamp: String = crate::env::rfc3339(std::time::SystemTime::now())
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .take(15)
        .collect();
    PathBuf::from(".perfbase/runs").join(format!("{}-{stamp}Z", slug.trim_matches('-')))
}

fn study_options(out: PathBuf, threads: Option<u64>, quiet: bool) -> crate::study::StudyOptions {
    crate::study::StudyOptions {
        out,
        threads: threads.map(|t| t as usize),
        progress: !quiet && std::io::stderr().is_terminal(),
        color: std::io::stdout().is_terminal(),
    }
}

fn run_plan(a: RunArgs, store: &StoreOptions) -> Result<Exit, AppError> {
    let mut plan = crate::plan::load(&a.plan, a.scale).map_err(|e| bad_input(e.to_string()))?;
    if !a.monitor.is_empty() {
        let m = &mut plan.monitor;
        if m.selectors.is_empty() {
            // No [monitor] in the plan: the same idle baseline as --monitor elsewhere.
            m.idle = crate::monitoring::DEFAULT_IDLE;
        }
        m.selectors.extend(a.monitor.iter().cloned());
    }
    if a.dry_run {
        out!("{}", crate::plan::describe(&plan));
        return Ok(Exit::Success);
    }
    let out = a.out.clone().unwrap_or_else(|| default_out(&plan.name));
    let interrupt = crate::interrupt::install();
    let (exit, result) =
        crate::study::run(&plan, &study_options(out, a.threads, a.quiet), interrupt)?;
    crate::records::save(store, "plan", &result, &plan.labels);
    Ok(exit)
}

/// The demo plan, run against the reference service started in-process.
pub const DEMO_PLAN: &str = include_str!("../plans/demo.toml");

fn demo(args: DemoArgs, store: &StoreOptions) -> Result<Exit, AppError> {
    let interrupt = crate::interrupt::install();
    let config = perfbase_reference::Config {
        workers: Some(4),
        lookup_delay: Duration::from_millis(10),
        ..perfbase_reference::Config::default()
    };
    let server =
        perfbase_reference::spawn_with(0, config).context("cannot start the reference service")?;
    outln!(
        "perfbase demo: reference service on http://{} (4 workers, 10 ms per lookup: ~400 lookups/s)\n",
        server.addr
    );
    // The plan names its target as ${PERFBASE_DEMO_URL}, like any plan keeps a URL or secret
    // out of the file.
    std::env::set_var("PERFBASE_DEMO_URL", format!("http://{}", server.addr));
    let plan = crate::plan::parse(DEMO_PLAN, "plans/demo.toml", Path::new("."), args.scale)
        .map_err(|e| bad_input(e.to_string()))?;
    let ran = crate::study::run(
        &plan,
        &study_options(args.out.clone(), None, args.quiet),
        interrupt,
    );
    server.stop();
    let (exit, result) = ran?;
    crate::records::save(store, "demo", &result, &plan.labels);
    Ok(exit)
}
