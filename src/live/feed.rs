//! One run's live figures for the pages that follow it: the newest frame (swapped in by the
//! run, or by a follower reading the store), whether the run has ended, and its report. The
//! dashboard has one; `perfbase ui` one per run a page watches. A page's thread waits on it
//! and writes the newest frame when there is one, so a slow page skips seconds and never
//! holds up whoever publishes.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A comment line this often keeps proxies and browsers from closing a quiet stream.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

#[derive(Default)]
pub(super) struct State {
    /// Bumped with every new frame.
    pub(super) seq: u64,
    pub(super) frame: Option<Arc<String>>,
    pub(super) report: Option<Arc<String>>,
    pub(super) ended: bool,
    /// The server stops accepting.
    pub(super) closing: bool,
    /// Pages following `/events` now, those that were when the run ended, and reports served.
    pub(super) following: usize,
    pub(super) following_at_end: usize,
    pub(super) reports_served: usize,
}

/// The state pages wait on.
#[derive(Default)]
pub struct Feed {
    state: Mutex<State>,
    pub(super) changed: Condvar,
}

impl Feed {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest frame, as JSON; pages get it at their next write.
    pub fn publish(&self, frame_json: String) {
        let mut st = self.lock();
        st.seq += 1;
        st.frame = Some(Arc::new(frame_json));
        drop(st);
        self.changed.notify_all();
    }

    /// The run is over: pages are told so, and `report` is its report from now on.
    pub fn end(&self, report: String) {
        let mut st = self.lock();
        st.report = Some(Arc::new(report));
        st.ended = true;
        st.following_at_end = st.following;
        drop(st);
        self.changed.notify_all();
    }

    /// The newest frame, if any.
    pub fn frame(&self) -> Option<Arc<String>> {
        self.lock().frame.clone()
    }

    /// The report the feed ended on, once it has.
    pub fn report(&self) -> Option<Arc<String>> {
        self.lock().report.clone()
    }

    /// Whether the run has ended.
    pub fn ended(&self) -> bool {
        self.lock().ended
    }

    /// How many pages follow the events now.
    pub fn following(&self) -> usize {
        self.lock().following
    }
}

/// The event stream of one page: the newest frame whenever there is a new one, then `end`.
pub fn events(out: &mut impl Write, shared: &Feed) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
    if out
        .write_all(head.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return;
    }
    shared.lock().following += 1;
    let mut seen = 0;
    loop {
        let mut st = shared.lock();
        while st.seq == seen && !st.ended {
            st = match shared.changed.wait_timeout(st, KEEP_ALIVE) {
                Ok((g, t)) if t.timed_out() => {
                    drop(g);
                    if out
                        .write_all(b": still running\n\n")
                        .and_then(|_| out.flush())
                        .is_err()
                    {
                        return left(shared);
                    }
                    shared.lock()
                }
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        let (frame, ended) = (st.frame.clone().filter(|_| st.seq != seen), st.ended);
        seen = st.seq;
        drop(st);
        let mut text = String::new();
        if let Some(f) = frame {
            text = format!("event: frame\ndata: {f}\n\n");
        }
        if ended {
            text.push_str("event: end\ndata: {}\n\n");
        }
        if out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
            || ended
        {
            return left(shared);
        }
    }
}

fn left(shared: &Feed) {
    let mut st = shared.lock();
    st.following = st.following.saturating_sub(1);
    drop(st);
    shared.changed.notify_all();
}
