//! What holding connections costs: the process's resident memory when the most connections
//! were open, against what it was before the first, sampled four times a second on a thread
//! of its own (a read of /proc/self/statm, nothing on the load's threads).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const EVERY: Duration = Duration::from_millis(250);

/// Connections open now, and the samples.
#[derive(Debug, Default)]
pub(crate) struct Held {
    pub(crate) open: AtomicU64,
    started: AtomicBool,
    stop: AtomicBool,
    figures: Mutex<Memory>,
}

/// The resident memory figures of a run that held connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    /// RSS (bytes) before the first connection.
    pub before: u64,
    /// The most connections open at one sample, and the RSS then.
    pub peak_open: u64,
    pub rss_at_peak: u64,
    /// The largest RSS sampled.
    pub max_rss: u64,
}

impl Memory {
    /// Bytes of RSS each open connection added, at the peak; None before any was held.
    pub fn per_connection(&self) -> Option<u64> {
        (self.peak_open > 0).then(|| self.rss_at_peak.saturating_sub(self.before) / self.peak_open)
    }
}

impl Held {
    /// Starts the sampler once, before the first connection opens.
    pub(crate) fn start(self: &Arc<Self>) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let rss = rss_bytes().unwrap_or(0);
        if let Ok(mut f) = self.figures.lock() {
            f.before = rss;
            f.max_rss = rss;
        }
        let held = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("perfbase-ws-rss".into())
            .spawn(move || {
                while let Some(h) = held.upgrade() {
                    if h.stop.load(Ordering::Acquire) {
                        break;
                    }
                    h.sample();
                    drop(h);
                    std::thread::sleep(EVERY);
                }
            });
        // Without the thread the figures stay those of the first sample: said as none held.
        drop(spawned);
    }

    fn sample(&self) {
        let open = self.open.load(Ordering::Relaxed);
        let Some(rss) = rss_bytes() else { return };
        if let Ok(mut f) = self.figures.lock() {
            f.max_rss = f.max_rss.max(rss);
            if open > f.peak_open || (open == f.peak_open && rss > f.rss_at_peak) {
                f.peak_open = open;
                f.rss_at_peak = rss;
            }
        }
    }

    /// The figures so far, with one last sample.
    pub(crate) fn memory(&self) -> Memory {
        if self.started.load(Ordering::Acquire) {
            self.sample();
        }
        self.figures.lock().map(|f| *f).unwrap_or_default()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// This process's resident set size, from /proc/self/statm (pages × the page size).
fn rss_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions; _SC_PAGESIZE is always supported on Linux.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|p| *p > 0).unwrap_or(4096))
}
