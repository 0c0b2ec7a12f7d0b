//! Watching a run as it goes: the terminal view (`--tui`) and the web dashboard
//! (`--dashboard ADDR`), both drawn each second from one [`frame::Frame`] made from the step's
//! figures so far. Both are one sink of the run ([`Live`]), told what the others are told.

pub mod dashboard;
pub mod feed;
pub mod follow;
pub mod frame;
mod tui;

use crate::exit::{bad_input, AppError};
use perfbase_core::result::{Measurement, PhaseResult, RunResult};
use perfbase_core::Recorder;
use perfbase_engine::{PhaseOutcome, PhaseSpec};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::time::Duration;

/// Runs planned at least this long get the terminal view by default on a terminal.
const TUI_FROM: Duration = Duration::from_secs(30);

/// `--tui`, `--no-tui`, `--dashboard ADDR`, `--allow-remote`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LiveArgs {
    /// Show the run on the whole terminal (the default on a terminal for runs planned to take
    /// 30 s or more; q stops the run and saves it)
    #[arg(long, overrides_with = "no_tui")]
    pub tui: bool,

    /// Keep the one-line progress even on a terminal
    #[arg(long)]
    pub no_tui: bool,

    #[command(flatten)]
    pub web: DashboardArgs,
}

/// `--dashboard ADDR`, `--allow-remote`: on the load commands and `perfbase merge`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DashboardArgs {
    /// Serve a live web dashboard of the run at this address (127.0.0.1:PORT; port 0 picks
    /// one), updated each second; it turns into the run's HTML report at the end
    #[arg(long, value_name = "ADDR")]
    pub dashboard: Option<String>,

    /// Let --dashboard listen on an address other than loopback
    #[arg(long, requires = "dashboard")]
    pub allow_remote: bool,
}

/// The live views a run asked for.
#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    /// Some(true) `--tui`, Some(false) `--no-tui`, None: decided by the terminal and the
    /// plan's length.
    pub tui: Option<bool>,
    pub dashboard: Option<SocketAddr>,
}

impl DashboardArgs {
    /// `--dashboard`'s address, checked (exit 2 naming the flag).
    pub fn address(&self) -> Result<Option<SocketAddr>, AppError> {
        Ok(match &self.dashboard {
            None => None,
            Some(text) => {
                let addr: SocketAddr = text.parse().map_err(|_| {
                    bad_input(format!(
                        "--dashboard {text:?}: not an address; give IP:PORT, such as 127.0.0.1:8089"
                    ))
                })?;
                if !addr.ip().is_loopback() && !self.allow_remote {
                    return Err(bad_input(format!(
                        "--dashboard {addr}: not a loopback address; the dashboard shows the run to anyone who can reach it, so add --allow-remote to mean it"
                    )));
                }
                Some(addr)
            }
        })
    }
}

impl LiveArgs {
    /// The options, with `--dashboard`'s address checked (exit 2 naming the flag).
    pub fn options(&self) -> Result<LiveOptions, AppError> {
        let dashboard = self.web.address()?;
        let tui = match (self.tui, self.no_tui) {
            (_, true) => Some(false),
            (true, false) => Some(true),
            _ => None,
        };
        Ok(LiveOptions { tui, dashboard })
    }
}

impl LiveOptions {
    /// Whether a view is on for `plan`, so the engine must hand over each second's figures
    /// (`progress`: the progress line would be on).
    pub fn enabled(&self, progress: bool, plan: &crate::plan::Plan) -> bool {
        self.dashboard.is_some() || self.tui_on(!progress, crate::plan::planned_duration(plan))
    }

    /// Whether the terminal view is shown: asked for, or by default on an interactive
    /// terminal (both outputs, and not in CI) for a run planned to take [`TUI_FROM`] or more.
    pub fn tui_on(&self, quiet: bool, planned: Option<Duration>) -> bool {
        match self.tui {
            Some(on) => on,
            None => {
                !quiet
                    && std::env::var_os("CI").is_none()
                    && std::io::stdout().is_terminal()
                    && std::io::stderr().is_terminal()
                    && planned.is_some_and(|d| d >= TUI_FROM)
            }
        }
    }
}

/// The live views of one run: one sink.
pub struct Live {
    frames: frame::Frames,
    tui: Option<tui::Tui>,
    dashboard: Option<dashboard::Dashboard>,
}

impl Live {
    /// Starts what `tui` and `dashboard` ask for (the dashboard's port is bound now, so a port
    /// in use is exit 2 before any load); None when neither is.
    pub fn start(
        plan: &crate::plan::Plan,
        tui: bool,
        dashboard: Option<SocketAddr>,
    ) -> Result<Option<Live>, AppError> {
        if !tui && dashboard.is_none() {
            return Ok(None);
        }
        let title = format!("perfbase: {}", plan.name);
        let dashboard = match dashboard {
            Some(addr) => {
                let d = dashboard::Dashboard::start(addr, &title)
                    .map_err(|e| bad_input(format!("--dashboard {addr}: cannot listen: {e}")))?;
                errln!("perfbase: dashboard at http://{}/", d.addr);
                Some(d)
            }
            None => None,
        };
        let tui = if tui {
            Some(tui::Tui::start(&title).map_err(|e| {
                bad_input(format!(
                    "--tui: cannot take the terminal over: {e}; use --no-tui"
                ))
            })?)
        } else {
            None
        };
        use perfbase_analysis::threshold::{Metric, Stat};
        let slo = plan
            .slo
            .iter()
            .find(|t| t.metric == Metric::LatencyMs(Stat::P99))
            .map(|t| t.value);
        let mut frames = frame::Frames::new(crate::plan::planned_duration(plan), plan.knee, slo);
        frames.charts = dashboard.is_some();
        Ok(Some(Live {
            frames,
            tui,
            dashboard,
        }))
    }

    /// The monitor's newest samples go into every frame from now on.
    pub fn watch(&mut self, monitor: perfbase_monitor::LatestSamples) {
        self.frames.watch(monitor);
    }

    fn show(&mut self, frame: &frame::Frame) {
        if let Some(t) = &mut self.tui {
            t.draw(frame);
        }
        if let Some(d) = &self.dashboard {
            if let Ok(json) = serde_json::to_string(frame) {
                d.publish(json);
            }
        }
    }

    /// About once a second: the step so far, `at` into it.
    pub fn second(&mut self, scenario: &str, phase: &PhaseSpec, so_far: &Recorder, at: Duration) {
        let m = Measurement::from_recorder(so_far, at, None);
        let f = self.frames.frame(
            (scenario, &phase.name, phase.record),
            (at, phase.duration),
            &m,
            &so_far.response,
        );
        self.show(&f);
    }

    /// A phase ended: its whole figures as the last frame of the step (so the views end on
    /// what the result holds), and a ladder's next point.
    pub fn phase_done(
        &mut self,
        scenario: &str,
        phase: &PhaseOutcome,
        saved: Option<&PhaseResult>,
    ) {
        if let Some(saved) = saved {
            self.frames.step_done(scenario, saved);
        }
        let m = saved.map_or_else(|| phase.measurement(), |s| s.measurement.clone());
        let spec = &phase.spec;
        let f = self.frames.frame(
            (scenario, &spec.name, spec.record),
            (phase.elapsed, spec.duration),
            &m,
            &phase.recorder.response,
        );
        self.show(&f);
    }

    /// The run's result is made: the terminal is given back (the reports follow), and the
    /// dashboard turns into the HTML report.
    pub fn ended(&mut self, result: &RunResult) {
        if let Some(t) = self.tui.take() {
            // PERFBASE_TUI_HOLD_MS keeps the last screen that long (its test reads it).
            let hold = std::env::var("PERFBASE_TUI_HOLD_MS")
                .ok()
                .and_then(|v| v.parse().ok());
            std::thread::sleep(Duration::from_millis(hold.unwrap_or(0)));
            drop(t);
        }
        if let Some(d) = &self.dashboard {
            d.end(perfbase_report::html::render(std::slice::from_ref(result)));
        }
    }

    /// After the reports: an open page gets its report before the process exits.
    pub fn finish(mut self) {
        self.tui = None;
        if let Some(d) = self.dashboard.take() {
            d.finish();
        }
    }
}
