//! `perfbase serve`: the reference service on a loopback port; `perfbase demo`: the service
//! in-process and plans/demo.toml run against it.

use crate::cli::{DemoArgs, ServeArgs};
use crate::exit::{bad_input, AppError, Exit};
use crate::store::StoreOptions;
use anyhow::Context as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

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

/// The reference service has no authentication and is made to be loaded: it listens only on
/// loopback unless `--allow-remote` says otherwise, and then with a warning.
fn check_host(host: &str, allow_remote: bool) -> Result<(), AppError> {
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match (loopback, allow_remote) {
        (true, _) => Ok(()),
        (false, true) => {
            errln!(
                "perfbase: warning: serving on {host}, reachable from other machines; the \
                 reference service has no authentication"
            );
            Ok(())
        }
        (false, false) => Err(bad_input(format!(
            "--host {host}: not a loopback address; the reference service has no \
             authentication, so give --allow-remote to serve other machines"
        ))),
    }
}

pub fn serve(args: ServeArgs) -> Result<Exit, AppError> {
    let interrupt = crate::interrupt::install();
    let config = perfbase_reference::Config {
        workers: args.workers,
        lookup_cpu: args.lookup_cpu,
        lookup_delay: args.lookup_delay,
        lookup_drift: args.lookup_drift,
        corpus_size: args.corpus_size,
        health_concurrent: args.health_concurrent,
        rate_limit: (args.rate_limit > 0).then_some(perfbase_reference::RateLimit {
            limit: args.rate_limit,
            window: Duration::from_secs(60),
        }),
        api_token: args.api_token.clone().unwrap_or_default(),
        first_token: args.first_token,
        token_gap: args.token_gap,
        ..perfbase_reference::Config::default()
    };
    check_host(&args.host, args.allow_remote)?;
    let cert_out = args.cert_out();
    let tls = match cert_out {
        Some(path) => {
            crate::limits::check_output_path(path, "--tls-cert-out").map_err(bad_input)?;
            let made = perfbase_reference::tls::self_signed()
                .context("cannot make a self-signed certificate")?;
            write_certificate(path, &made.cert_pem)?;
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
        if let Some(path) = cert_out {
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

/// The demo plan, run against the reference service started in-process.
pub const DEMO_PLAN: &str = include_str!("../plans/demo.toml");

pub fn demo(args: DemoArgs, store: &StoreOptions) -> Result<Exit, AppError> {
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
    let options =
        crate::runner::RunOptions::plan_file(args.out.clone(), None, args.quiet, store, "demo");
    let ran = crate::runner::run(&plan, &options, interrupt);
    server.stop();
    ran.map(|(exit, _)| exit)
}

/// The first line of every certificate `perfbase serve` writes: text before a PEM block is
/// ignored by PEM readers, and it tells a file this command made (and may replace) from any
/// other.
const CERT_MARK: &str = "# self-signed certificate written by perfbase serve (--tls-cert-out)";

/// Writes the certificate to `path` without ever overwriting what `perfbase serve` did not
/// write: a new file is created exclusively (a symbolic link planted there is not followed);
/// an existing one is replaced only when it is a regular file that starts with [`CERT_MARK`].
fn write_certificate(path: &std::path::Path, pem: &str) -> Result<(), AppError> {
    use std::io::Write as _;
    let text = format!("{CERT_MARK}\n{pem}");
    let refuse = |why: String| bad_input(format!("--tls-cert-out {}: {why}", path.display()));
    match std::fs::symlink_metadata(path) {
        Err(_) => std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| refuse(e.to_string())),
        Ok(m) if m.is_file() && ours(path) => {
            perfbase_report::json::write_text_atomic(path, &text).map_err(|e| refuse(e.to_string()))
        }
        Ok(_) => Err(refuse(
            "exists and was not written by perfbase serve; it is an output, so name a new \
             file (or remove this one)"
                .into(),
        )),
    }
}

/// Whether the file at `path` starts with [`CERT_MARK`].
fn ours(path: &std::path::Path) -> bool {
    use std::io::Read as _;
    let mut head = vec![0u8; CERT_MARK.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| head == CERT_MARK.as_bytes())
}
