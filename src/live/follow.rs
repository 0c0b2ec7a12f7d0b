//! `perfbase merge --run-id ID --wait-for N --dashboard ADDR`: the agents' run, live, while the
//! merge waits for their results. Each agent publishes its step so far in the shared store
//! once a second, histograms included; a thread here reads them, merges the agents on the step
//! most of them are in (exactly, as the final merge does), and shows the merged figures.

use super::dashboard::Dashboard;
use super::feed::Feed;
use super::frame::Frames;
use perfbase_core::merge::merge_concurrent;
use perfbase_core::result::{decode_histogram, Measurement};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The follower thread; [`Follow::stop`] ends it.
pub struct Follow {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Says, each second, whether the followed run has ended: then the report the feed ends on.
pub type Ended = Box<dyn FnMut(&mut perfbase_store::Store) -> Option<String> + Send>;

impl Follow {
    /// Follows run `run` in `store`, publishing its merged figures on `feed` each second;
    /// with `ended`, until that says the run is over (the feed is then ended on its report).
    pub fn start(
        mut store: perfbase_store::Store,
        run: String,
        feed: Arc<Feed>,
        mut ended: Option<Ended>,
    ) -> Follow {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let thread = std::thread::Builder::new()
            .name("perfbase-follow".into())
            .spawn(move || {
                let mut frames = Frames::new(None, Default::default(), None);
                frames.charts = true;
                while !d.load(Ordering::Relaxed) {
                    if let Some(json) = merged_second(&mut store, &run, &mut frames) {
                        feed.publish(json);
                    }
                    if let Some(report) = ended.as_mut().and_then(|e| e(&mut store)) {
                        feed.end(report);
                        return;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            })
            .ok();
        Follow { done, thread }
    }

    pub fn stop(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The agents' figures merged on the step most of them are in, as a frame's JSON; None
/// before any agent published, or when the store cannot be read this second.
fn merged_second(
    store: &mut perfbase_store::Store,
    run: &str,
    frames: &mut Frames,
) -> Option<String> {
    let rows = store.live_all(run).ok()?;
    let mut by_phase: BTreeMap<String, Vec<Measurement>> = BTreeMap::new();
    for (_, phase, figures) in rows {
        if let Ok(m) = serde_json::from_str::<Measurement>(&figures) {
            by_phase.entry(phase).or_default().push(m);
        }
    }
    let (phase, parts) = by_phase.into_iter().max_by_key(|(_, parts)| parts.len())?;
    let agents = parts.len();
    let merged = merge_concurrent(&parts.iter().collect::<Vec<_>>());
    let response = decode_histogram(&merged.histogram.response).ok()?;
    let at = Duration::from_secs_f64(merged.duration_s.max(0.0));
    let scenario = format!("{agents} agent(s) of run {run}");
    let frame = frames.frame((&scenario, &phase, true), (at, None), &merged, &response);
    serde_json::to_string(&frame).ok()
}

/// A merge that shows its run live: the dashboard and its follower.
pub struct Watching {
    dashboard: Arc<Dashboard>,
    follow: Follow,
}

impl Watching {
    /// `--dashboard ADDR` on `perfbase merge --run-id ID`: binds the page and follows the
    /// agents through the store (its own connection).
    pub fn start(
        args: &super::DashboardArgs,
        store: &crate::store::StoreOptions,
        run: &str,
    ) -> Result<Option<Watching>, crate::exit::AppError> {
        let Some(addr) = args.address()? else {
            return Ok(None);
        };
        let dashboard = Dashboard::start(addr, &format!("perfbase: run {run}")).map_err(|e| {
            crate::exit::bad_input(format!("--dashboard {addr}: cannot listen: {e}"))
        })?;
        errln!("perfbase: dashboard at http://{}/", dashboard.addr);
        let dashboard = Arc::new(dashboard);
        let follow = Follow::start(
            crate::store::open(store)?,
            run.to_string(),
            dashboard.feed(),
            None,
        );
        Ok(Some(Watching { dashboard, follow }))
    }

    /// The merge is done: the page turns into the merged run's report, which an open page gets
    /// before the process exits.
    pub fn end(self, merged: &perfbase_core::result::RunResult) {
        self.follow.stop();
        self.dashboard
            .end(perfbase_report::html::render(std::slice::from_ref(merged)));
        if let Ok(d) = Arc::try_unwrap(self.dashboard) {
            d.finish();
        }
    }
}
