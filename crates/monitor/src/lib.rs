//! perfbase-monitor: measures what the service under load costs while perfbase loads it — CPU,
//! RSS, VSZ, threads, open file descriptors, context switches and (for cgroups) memory.current
//! — with an idle baseline and figures per phase, plus perfbase's own CPU and memory so a run
//! limited by the load generator is flagged. It samples `/proc` and cgroup files from one plain
//! thread (no async runtime) and is Linux-only.
//!
//! This crate must not depend on the engine, the drivers or the reports: the CLI starts a
//! [`Monitor`] beside the load, marks phases, and hands the [`MonitorReport`] to whatever
//! renders it (perfbase-report's `monitor` module draws its tables). The report's data
//! types are defined in perfbase-core's `monitor` module (the result's `monitor` section) and
//! re-exported here; perfbase-core is the only perfbase crate this one depends on.
//!
//! ```no_run
//! use perfbase_monitor::{Monitor, MonitorConfig};
//! use std::time::Duration;
//!
//! let cfg = MonitorConfig {
//!     selectors: vec!["name:postgres".parse()?],
//!     interval: Duration::from_secs(1),
//! };
//! let monitor = Monitor::start(cfg)?; // fails now if nothing matches
//! monitor.phase("idle");
//! std::thread::sleep(Duration::from_secs(5));
//! monitor.phase("measure");
//! // ... run the load ...
//! let report = monitor.stop();
//! println!("{report:?}");
//! # Ok::<(), perfbase_monitor::MonitorError>(())
//! ```
//!
//! Selector syntax: see [`Selector`] (`pid:1234`, `name:postgres`, `cmd:PATTERN`,
//! `cgroup:PATH`, or a bare word). How CPU % is computed, and which processes count toward an
//! interval: see [`Monitor`].

mod cgroup;
mod procfs;
mod report;
mod sampler;
mod selector;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use cgroup::{is_v2_root, v2_path_of, CGROUP_ROOT};
pub use report::{
    MonitorReport, PhaseStats, Sample, Stat, TargetReport, DEFAULT_PHASE, SATURATION_SHARE,
    SELF_LABEL,
};
pub use selector::Selector;

use sampler::{Msg, Sampler, Spec, Target};
use selector::Resolved;

/// What can go wrong before sampling starts. Once started the monitor never fails: a target
/// that exits is marked, not fatal.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    #[error(
        "invalid target selector `{input}`: {reason} (use pid:PID, name:COMM, cmd:PATTERN, \
         cgroup:PATH or a bare process name)"
    )]
    InvalidSelector { input: String, reason: String },
    #[error(
        "target selector `{selector}` matches nothing; list candidate processes with \
         `ps -eo pid,comm,args` (name: is the COMMAND column exactly, cmd: a substring of \
         ARGS) and a process's cgroup with `cat /proc/PID/cgroup` (paths under /sys/fs/cgroup)"
    )]
    NoMatch { selector: String },
    #[error("the sampling interval must be positive, got {0:?}")]
    InvalidInterval(Duration),
    #[error("cannot read {}: {source} (the monitor needs Linux's /proc)", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the monitor's sampler thread: {0}")]
    Spawn(std::io::Error),
}

/// A target's newest sample, as a live view shows it while the run goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Latest {
    /// The selector as written, or `perfbase (self)`.
    pub label: String,
    /// CPU over the last interval, % of one core.
    pub cpu_pct: f64,
    pub rss_bytes: u64,
}

/// A live view's handle on the monitor's newest samples.
#[derive(Debug, Clone, Default)]
pub struct LatestSamples {
    slot: std::sync::Arc<std::sync::Mutex<Vec<Latest>>>,
    /// Cores perfbase's workers can use: where its own CPU means the generator is the limit.
    pub capacity: u32,
}

impl LatestSamples {
    /// Each target's newest sample, perfbase's own last.
    pub fn read(&self) -> Vec<Latest> {
        self.slot.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// What to monitor and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorConfig {
    /// The targets. perfbase's own process is always added as `perfbase (self)`.
    pub selectors: Vec<Selector>,
    /// Time between samples (1 s by default).
    pub interval: Duration,
}

impl MonitorConfig {
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

    /// These selectors, sampled every second.
    pub fn new(selectors: Vec<Selector>) -> Self {
        MonitorConfig {
            selectors,
            interval: Self::DEFAULT_INTERVAL,
        }
    }
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig::new(Vec::new())
    }
}

/// A running monitor: owns the sampler thread.
///
/// Each sample covers the interval since the previous one. CPU % = CPU time of the target's
/// process tree in the interval (`/proc/PID/stat` utime + stime, fields 14 and 15, in clock
/// ticks) / Δwall × 100, as % of one core. A process present in both readings counts with its
/// Δ; one started since the previous reading with all its time; one that exited is recovered
/// through its parent's cutime + cstime (fields 16 and 17), which grow by a child's total when
/// the parent reaps it, so short-lived children (one PostgreSQL backend per connection) count
/// even if no sample saw them. Only a child nobody in the tree waits for loses its last partial
/// interval (counting only processes present in both readings would lose it for all of them).
/// Descendants are re-discovered at every sample. RSS and VSZ are sums over the tree's
/// processes, so memory they share (PostgreSQL's shared buffers) counts once per process that
/// touched it; a cgroup's `memory.current` counts it once.
///
/// A phase change (or stop) closes the running interval with a sample in the old phase; if
/// that interval is shorter than half the sampling interval it is dropped (its CPU % would be
/// mostly clock-tick rounding) and the next interval starts from there.
pub struct Monitor {
    tx: Sender<Msg>,
    handle: Option<JoinHandle<Sampler>>,
    interval: Duration,
    cores: u32,
    /// Cores perfbase's worker threads can use (at most `cores`): what its own CPU is judged
    /// against when deciding the generator was saturated.
    capacity: std::sync::atomic::AtomicU32,
    /// Whether the user named targets; perfbase's own figures alone are no reason to warn
    /// about phases too short to sample.
    selected: bool,
    /// Each target's newest sample, written by the sampler thread.
    latest: std::sync::Arc<std::sync::Mutex<Vec<Latest>>>,
}

impl Monitor {
    /// Resolves the selectors now (an error if one matches nothing, so it surfaces before
    /// the load starts), takes the baseline reading and starts sampling.
    pub fn start(cfg: MonitorConfig) -> Result<Monitor, MonitorError> {
        if cfg.interval.is_zero() {
            return Err(MonitorError::InvalidInterval(cfg.interval));
        }
        let scan = procfs::scan().map_err(|source| MonitorError::Io {
            path: PathBuf::from("/proc"),
            source,
        })?;
        let own = std::process::id();
        let mut excluded: HashSet<u32> = procfs::ancestors(own, &scan).into_iter().collect();
        excluded.insert(own);

        let selected = !cfg.selectors.is_empty();
        let mut targets = Vec::with_capacity(cfg.selectors.len() + 1);
        for sel in &cfg.selectors {
            let target = match sel.resolve(&scan, &excluded)? {
                Resolved::Processes(roots) => {
                    let pids = roots.iter().map(|(p, _)| *p).collect();
                    Target::new(sel.to_string(), "process", Spec::Processes(roots), pids)
                }
                Resolved::Cgroup(dir) => {
                    let pids = cgroup::pids(&dir).map_err(|source| MonitorError::Io {
                        path: dir.clone(),
                        source,
                    })?;
                    Target::new(sel.to_string(), "cgroup", Spec::Cgroup(dir), pids)
                }
            };
            targets.push(target);
        }
        targets.push(Target::new(
            SELF_LABEL.to_string(),
            "self",
            Spec::OwnProcess(own),
            vec![own],
        ));

        let cores = std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .unwrap_or(1);
        let mut sampler = Sampler::new(targets, cfg.interval, Instant::now());
        sampler.sample();
        let latest = sampler.latest.clone();
        let (tx, rx) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("perfbase-monitor".into())
            .spawn(move || sampler.run(rx))
            .map_err(MonitorError::Spawn)?;
        Ok(Monitor {
            capacity: std::sync::atomic::AtomicU32::new(cores),
            selected,
            latest,
            tx,
            handle: Some(handle),
            interval: cfg.interval,
            cores,
        })
    }

    /// Samples from now on belong to phase `name` (the running interval is closed first, in
    /// the old phase). Phases with the same name are pooled. Never blocks.
    pub fn phase(&self, name: &str) {
        // The sampler only hangs up after stop(), which consumes self: a send cannot fail
        // while `self` exists, short of the sampler thread having panicked.
        let _ = self.tx.send(Msg::Phase(name.to_string()));
    }

    /// The load runs on `threads` worker threads: perfbase counts as saturated near
    /// `min(threads, cores)` cores, not near all of them.
    pub fn set_worker_threads(&self, threads: usize) {
        let t = u32::try_from(threads)
            .unwrap_or(u32::MAX)
            .clamp(1, self.cores.max(1));
        self.capacity.store(t, std::sync::atomic::Ordering::Relaxed);
    }

    /// A handle on each target's newest sample (perfbase's own last), for live views; it
    /// stays readable after [`Monitor::stop`].
    pub fn latest(&self) -> LatestSamples {
        LatestSamples {
            slot: self.latest.clone(),
            capacity: self.capacity.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Cores perfbase has (`available_parallelism`).
    pub fn cores(&self) -> u32 {
        self.cores
    }

    /// Stops sampling (at once: a last sample closes the running interval) and returns
    /// everything.
    pub fn stop(mut self) -> MonitorReport {
        let _ = self.tx.send(Msg::Stop);
        let interval_s = self.interval.as_secs_f64();
        let capacity = self.capacity.load(std::sync::atomic::Ordering::Relaxed);
        let Some(handle) = self.handle.take() else {
            return report::build(
                interval_s,
                self.cores,
                capacity,
                &[],
                Vec::new(),
                Vec::new(),
            );
        };
        match handle.join() {
            Ok(sampler) => {
                let empty = if self.selected {
                    sampler.empty_phases()
                } else {
                    Vec::new()
                };
                let warnings = empty
                    .into_iter()
                    .map(|p| {
                        format!(
                            "phase \"{p}\" lasted less than half a sampling interval \
                             ({:.2} s) and has no samples",
                            interval_s / 2.0
                        )
                    })
                    .collect();
                let order = sampler.phase_order.clone();
                report::build(
                    interval_s,
                    self.cores,
                    capacity,
                    &order,
                    sampler.into_collected(),
                    warnings,
                )
            }
            Err(_) => report::build(
                interval_s,
                self.cores,
                capacity,
                &[],
                Vec::new(),
                vec!["the monitor's sampler thread panicked: no resource figures".to_string()],
            ),
        }
    }
}

impl Drop for Monitor {
    /// A monitor dropped without [`Monitor::stop`] still ends its thread.
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            let _ = self.tx.send(Msg::Stop);
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_can_be_shared_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Monitor>();
        assert_send_sync::<MonitorReport>();
    }

    #[test]
    fn config_defaults() {
        let c = MonitorConfig::default();
        assert!(c.selectors.is_empty());
        assert_eq!(c.interval, Duration::from_secs(1));
    }
}
