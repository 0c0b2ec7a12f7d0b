//! Live Prometheus exports beside the load: `--metrics-listen` serves the figures to a
//! scraper, `--prometheus-remote-write` pushes them, both from threads of their own. Both are
//! set up before any load (a port in use or a bad URL is bad input, exit 2) and see every
//! phase about once a second and exactly at its end.

use crate::exit::{bad_input, AppError};
use perfbase_core::Recorder;
use perfbase_engine::{Load, PhaseSpec};
use perfbase_metrics::remote_write::{self, Endpoint, Pusher};
use perfbase_metrics::serve::Server;
use perfbase_metrics::{Board, Update};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How often the figures are pushed during a run.
const PUSH_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Default)]
pub struct MetricsOptions {
    pub listen: Option<SocketAddr>,
    pub remote_write: Option<String>,
    /// After the run, keep serving until a scrape reads the final figures, at most this long.
    pub linger: Duration,
}

impl MetricsOptions {
    pub fn enabled(&self) -> bool {
        self.listen.is_some() || self.remote_write.is_some()
    }
}

pub struct Exporter {
    run_id: String,
    board: Board,
    server: Option<Server>,
    pusher: Option<(Pusher, String)>,
    linger: Duration,
}

/// A run id unique on this machine: the start in µs since the epoch and the process id, in
/// hex. It labels every series and is kept in the result (`run_id`).
pub fn new_run_id(started: std::time::SystemTime) -> String {
    let us = started
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    format!("{us:x}-{:x}", std::process::id())
}

/// Binds the listener and checks the remote-write URL; None when neither is asked for.
pub fn start(o: &MetricsOptions, run_id: String) -> Result<Option<Exporter>, AppError> {
    if !o.enabled() {
        return Ok(None);
    }
    let board = Board::new(&run_id);
    let server = match o.listen {
        Some(addr) => {
            let listener = std::net::TcpListener::bind(addr)
                .map_err(|e| bad_input(format!("--metrics-listen {addr}: cannot listen: {e}")))?;
            Some(
                perfbase_metrics::serve::serve(listener, board.clone())
                    .map_err(|e| bad_input(format!("--metrics-listen {addr}: {e}")))?,
            )
        }
        None => None,
    };
    let pusher = match &o.remote_write {
        Some(url) => {
            let to = Endpoint::parse(url)
                .map_err(|e| bad_input(format!("--prometheus-remote-write {e}")))?;
            let pusher = remote_write::start(to, board.clone(), PUSH_EVERY).map_err(|e| {
                bad_input(format!(
                    "--prometheus-remote-write {url}: cannot start: {e}"
                ))
            })?;
            Some((pusher, url.clone()))
        }
        None => None,
    };
    Ok(Some(Exporter {
        run_id,
        board,
        server,
        pusher,
        linger: o.linger,
    }))
}

/// The open model's requested rate over the last second of `elapsed`.
fn requested_rate(phase: &PhaseSpec, elapsed: Duration) -> Option<f64> {
    let Load::Open { pacer, .. } = &phase.load else {
        return None;
    };
    let window = Duration::from_secs(1).min(elapsed);
    if window.is_zero() {
        return Some(pacer.final_rate());
    }
    let n = pacer.ops_before(elapsed) - pacer.ops_before(elapsed - window);
    Some(n as f64 / window.as_secs_f64())
}

impl Exporter {
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// A phase's figures so far (live) or final (at its end, `in_flight` 0).
    pub fn update(
        &self,
        scenario: &str,
        phase: &PhaseSpec,
        so_far: &Recorder,
        elapsed: Duration,
        in_flight: u64,
    ) {
        let requested = match phase.duration {
            // At a timed phase's end, its rate as planned at its last second.
            Some(d) if elapsed >= d => requested_rate(phase, d),
            _ => requested_rate(phase, elapsed),
        };
        self.board.update(Update {
            scenario,
            step: &phase.name,
            so_far,
            elapsed,
            in_flight,
            requested_rate: requested,
        });
    }

    /// The run is over: pushes the final figures, lets a scraper read them (up to the
    /// linger), and closes. A failed push is a warning: the result is saved regardless.
    pub fn finish(self) {
        self.board.finish();
        if let Some((pusher, url)) = self.pusher {
            let pushed = pusher.finish();
            if let Some(e) = pushed.last_error {
                errln!(
                    "perfbase: warning: --prometheus-remote-write {url}: {} of {} pushes failed, the final one too: {e}",
                    pushed.failures,
                    pushed.pushes
                );
            } else if pushed.failures > 0 {
                errln!(
                    "perfbase: warning: --prometheus-remote-write {url}: {} of {} pushes failed; the final one went through",
                    pushed.failures,
                    pushed.pushes
                );
            }
        }
        if let Some(server) = self.server {
            let until = Instant::now() + self.linger;
            while Instant::now() < until && !self.board.final_scraped() {
                std::thread::sleep(Duration::from_millis(20));
            }
            server.stop();
        }
    }
}
