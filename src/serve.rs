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
        ..perfbase_reference::Config::default()
    };
    check_host(&args.host, args.allow_remote)?;
    let tls = match &args.tls_cert {
        Some(path) => {
            crate::limits::check_output_path(path, "--tls-cert").map_err(bad_input)?;
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
        crate::runner::StudyOptions::plan_file(args.out.clone(), None, args.quiet, store, "demo");
    let ran = crate::runner::run(&plan, &options, interrupt);
    server.stop();
    ran.map(|(exit, _)| exit)
}
