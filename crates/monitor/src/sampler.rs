//! The sampler: reads every target once per tick and turns two consecutive readings into a
//! [`Sample`].
//!
//! CPU % over an interval is the CPU time the target's processes used in it / Δwall × 100,
//! in clock ticks from `/proc/PID/stat` (fields 14 + 15, utime + stime, all threads), see
//! [`interval_delta`]. Processes are identified by (pid, start time), so a reused pid is a new
//! process, and counted as follows:
//!
//! - present in both readings: Δ(utime + stime);
//! - started since the previous reading: all of its utime + stime (all spent in the interval);
//! - gone since the previous reading: the part after its last reading is recovered through the
//!   parent that reaped it. A parent's cutime + cstime (fields 16 + 17) grows by a child's
//!   total CPU time when it waits for it, so for each process present in both readings
//!   Δ(cutime + cstime) minus the last-read totals of its children that went is added (never
//!   below zero). This also counts processes that lived and died between two samples, like
//!   PostgreSQL backends of short connections. A child whose parent does not wait for it
//!   (SIGCHLD ignored) or that left the tree loses its last partial interval, which is what
//!   counting only the processes present in both readings would lose for every process.
//!
//! Zombies (exited, not yet reaped) stay in the accounting (their final times are readable)
//! but not in memory, threads, fds or the process count. perfbase's own process counts only its
//! own threads, not its children's reaped time. Context switches are Δ over processes present
//! in both readings plus all of a new process's. For a cgroup, CPU comes from the cgroup's own
//! counter (`cpu.stat` `usage_usec`, v1 `cpuacct.usage`), with the process sum as a fallback.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::cgroup;
use crate::procfs::{self, FdCount, ProcStat};
use crate::report::{Collected, Sample, DEFAULT_PHASE};

pub(crate) enum Msg {
    Phase(String),
    Stop,
}

pub(crate) enum Spec {
    /// Root processes (pid, starttime) and their descendants.
    Processes(Vec<(u32, u64)>),
    Cgroup(PathBuf),
    /// The monitoring process alone (all its threads, not its children).
    OwnProcess(u32),
}

/// (pid, starttime): one process, even after its pid is reused.
pub(crate) type Key = (u32, u64);

/// The cumulative counters of one process at one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counters {
    pub ppid: u32,
    /// utime + stime.
    pub ticks: u64,
    /// cutime + cstime: reaped children's totals.
    pub cticks: u64,
    /// voluntary + involuntary context switches.
    pub ctx: u64,
}

/// CPU ticks and context switches of an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Delta {
    pub ticks: u64,
    pub ctx: u64,
}

/// The CPU ticks and context switches a target's processes used between two readings (see the
/// module notes). `born_after` is the boot-clock tick at which the previous reading began: a
/// process missing from `prev` that started at or after it is new, one that started before
/// (missed by a race) only sets its baseline. `alive` tells whether a process missing from
/// `now` still runs elsewhere (it left the tree, nobody reaped it). `with_children` turns the
/// reaped-children accounting on.
pub(crate) fn interval_delta(
    prev: &HashMap<Key, Counters>,
    now: &HashMap<Key, Counters>,
    born_after: u64,
    alive: impl Fn(Key) -> bool,
    with_children: bool,
) -> Delta {
    let mut d = Delta::default();
    // Reaped-children budget of each process present in both readings: Δcticks, and what its
    // departed descendants were already counted for.
    let mut gained: HashMap<Key, u64> = HashMap::new();
    for (key, c) in now {
        if let Some(p) = prev.get(key) {
            d.ticks += c.ticks.saturating_sub(p.ticks);
            d.ctx += c.ctx.saturating_sub(p.ctx);
            if with_children {
                gained.insert(*key, c.cticks.saturating_sub(p.cticks));
            }
        } else if key.1 >= born_after {
            d.ticks += c.ticks + if with_children { c.cticks } else { 0 };
            d.ctx += c.ctx;
        }
    }
    if !with_children {
        return d;
    }
    let prev_by_pid: HashMap<u32, Key> = prev.keys().map(|k| (k.0, *k)).collect();
    let mut counted: HashMap<Key, u64> = HashMap::new();
    for (key, p) in prev {
        if now.contains_key(key) || alive(*key) {
            continue;
        }
        // Its reaper: the nearest ancestor still here (a parent that went too was reaped
        // by its own parent, with this one's time inside its cutime).
        let mut parent = p.ppid;
        for _ in 0..prev.len() {
            let Some(pk) = prev_by_pid.get(&parent) else {
                break;
            };
            if now.contains_key(pk) {
                *counted.entry(*pk).or_default() += p.ticks + p.cticks;
                break;
            }
            match prev.get(pk) {
                Some(pp) => parent = pp.ppid,
                None => break,
            }
        }
    }
    for (key, g) in gained {
        d.ticks += g.saturating_sub(counted.get(&key).copied().unwrap_or(0));
    }
    d
}

pub(crate) struct Target {
    label: String,
    kind: &'static str,
    spec: Spec,
    pids: Vec<u32>,
    prev: HashMap<Key, Counters>,
    /// Boot-clock tick at which the previous reading began.
    prev_boot_ticks: u64,
    prev_cgroup_usec: Option<u64>,
    exited_at_s: Option<f64>,
    timeline: Vec<Sample>,
    fds_denied: bool,
}

impl Target {
    pub(crate) fn new(label: String, kind: &'static str, spec: Spec, pids: Vec<u32>) -> Self {
        Target {
            label,
            kind,
            spec,
            pids,
            prev: HashMap::new(),
            prev_boot_ticks: 0,
            prev_cgroup_usec: None,
            exited_at_s: None,
            timeline: Vec::new(),
            fds_denied: false,
        }
    }

    /// Its newest sample, for live views.
    fn latest(&self) -> Option<crate::Latest> {
        let s = self.timeline.last()?;
        Some(crate::Latest {
            label: self.label.clone(),
            cpu_pct: s.cpu_pct,
            rss_bytes: s.rss_bytes,
        })
    }

    fn into_collected(self) -> Collected {
        Collected {
            label: self.label,
            kind: self.kind,
            pids: self.pids,
            exited_at_s: self.exited_at_s,
            timeline: self.timeline,
            fds_denied: self.fds_denied,
        }
    }

    /// The target's processes now, or `None` when it is gone.
    fn members(
        &self,
        scan: &HashMap<u32, ProcStat>,
        children: &HashMap<u32, Vec<u32>>,
    ) -> Option<Vec<u32>> {
        match &self.spec {
            Spec::Processes(roots) => {
                let alive: Vec<u32> = roots
                    .iter()
                    .filter(|(pid, start)| {
                        scan.get(pid)
                            .is_some_and(|st| st.starttime == *start && !st.is_dead())
                    })
                    .map(|(pid, _)| *pid)
                    .collect();
                if alive.is_empty() {
                    None
                } else {
                    Some(procfs::descendants(&alive, scan, children))
                }
            }
            Spec::Cgroup(dir) => cgroup::pids(dir).ok(),
            Spec::OwnProcess(pid) => Some(vec![*pid]),
        }
    }

    /// Reads the target; records a sample when `record` (else the reading is only the baseline
    /// of the next interval).
    /// Each member's counters now (by pid and start time, so a reused pid is another
    /// process), and the group's memory, threads, descriptors and live processes.
    fn read(&mut self, members: &[u32], tick: &Tick<'_>) -> (HashMap<Key, Counters>, Totals) {
        let mut now: HashMap<Key, Counters> = HashMap::with_capacity(members.len());
        let mut t = Totals {
            fds: Some(0),
            ..Totals::default()
        };
        for &pid in members {
            let Some(st) = tick.scan.get(&pid) else {
                continue;
            };
            // A failed read means the process exited since the scan.
            let Some(ctx) = procfs::read_ctx_switches(pid) else {
                continue;
            };
            let counters = Counters {
                ppid: st.ppid,
                ticks: st.ticks(),
                cticks: st.cticks,
                ctx,
            };
            if st.is_dead() {
                // A zombie: counted for CPU until reaped, but it has no memory or threads.
                now.insert((pid, st.starttime), counters);
                continue;
            }
            let Some((size, resident)) = procfs::read_statm(pid) else {
                continue;
            };
            match procfs::count_fds(pid) {
                FdCount::Count(n) => t.fds = t.fds.map(|f| f + n),
                FdCount::Denied => {
                    t.fds = None;
                    self.fds_denied = true;
                }
                FdCount::Gone => continue,
            }
            t.rss_pages += resident;
            t.vsz_pages += size;
            t.threads += st.threads;
            t.processes += 1;
            now.insert((pid, st.starttime), counters);
        }
        (now, t)
    }

    fn observe(&mut self, tick: &Tick<'_>, record: bool) {
        if self.exited_at_s.is_some() {
            return;
        }
        let Some(members) = self.members(tick.scan, tick.children) else {
            self.exited_at_s = Some(tick.t_s);
            self.prev.clear();
            return;
        };
        let (now, totals) = self.read(&members, tick);
        let with_children = !matches!(self.spec, Spec::OwnProcess(_));
        let delta = interval_delta(
            &self.prev,
            &now,
            self.prev_boot_ticks,
            |(pid, start)| {
                tick.scan
                    .get(&pid)
                    .is_some_and(|st| st.starttime == start && !st.is_dead())
            },
            with_children,
        );
        let (cgroup_usec, memory_current) = match &self.spec {
            Spec::Cgroup(dir) => (cgroup::cpu_usage_usec(dir), cgroup::memory_current(dir)),
            _ => (None, None),
        };
        let prev_cgroup_usec = std::mem::replace(&mut self.prev_cgroup_usec, cgroup_usec);
        self.prev = now;
        self.prev_boot_ticks = tick.boot_ticks;
        if !record || tick.dt_s <= 0.0 {
            return;
        }
        let cpu_s = match (prev_cgroup_usec, cgroup_usec) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6,
            _ => delta.ticks as f64 / tick.clk_tck,
        };
        self.timeline.push(Sample {
            t_s: tick.t_s,
            phase: tick.phase.to_string(),
            cpu_pct: cpu_s / tick.dt_s * 100.0,
            rss_bytes: totals.rss_pages * tick.page_size,
            vsz_bytes: totals.vsz_pages * tick.page_size,
            threads: totals.threads,
            fds: totals.fds,
            ctx_switches_per_s: delta.ctx as f64 / tick.dt_s,
            memory_current_bytes: memory_current,
            processes: totals.processes,
        });
    }
}

/// What a group's members add up to at one sample.
#[derive(Default)]
struct Totals {
    rss_pages: u64,
    vsz_pages: u64,
    threads: u64,
    /// None once any member's descriptors could not be counted.
    fds: Option<u64>,
    processes: u32,
}

struct Tick<'a> {
    scan: &'a HashMap<u32, ProcStat>,
    children: &'a HashMap<u32, Vec<u32>>,
    t_s: f64,
    dt_s: f64,
    /// Boot-clock tick at which this reading began.
    boot_ticks: u64,
    phase: &'a str,
    clk_tck: f64,
    page_size: u64,
}

/// The sampler thread's state.
pub(crate) struct Sampler {
    pub targets: Vec<Target>,
    pub interval: Duration,
    pub phase: String,
    /// Phase names in the order first marked.
    pub phase_order: Vec<String>,
    start: Instant,
    last: Option<Instant>,
    clk_tck: f64,
    page_size: u64,
    /// Each target's newest sample, for live views; written after every sample.
    pub latest: std::sync::Arc<std::sync::Mutex<Vec<crate::Latest>>>,
}

impl Sampler {
    pub(crate) fn new(targets: Vec<Target>, interval: Duration, start: Instant) -> Self {
        Sampler {
            targets,
            interval,
            phase: DEFAULT_PHASE.to_string(),
            phase_order: vec![DEFAULT_PHASE.to_string()],
            start,
            last: None,
            clk_tck: procfs::clock_ticks_per_s(),
            page_size: procfs::page_size(),
            latest: Default::default(),
        }
    }

    /// Shortest interval recorded as a sample: a phase change or stop right after a tick
    /// leaves a sliver whose CPU % is mostly clock-tick rounding (a tick is 10 ms), so a sliver
    /// shorter than half an interval only resets the baseline.
    fn min_record_s(&self) -> f64 {
        self.interval.as_secs_f64() / 2.0
    }

    /// Reads every target; the first call only sets the baselines.
    pub(crate) fn sample(&mut self) {
        let boot_ticks = procfs::boot_ticks(self.clk_tck);
        let Ok(scan) = procfs::scan() else {
            return;
        };
        let children = procfs::children_map(&scan);
        let now = Instant::now();
        let dt_s = self
            .last
            .map_or(0.0, |l| now.duration_since(l).as_secs_f64());
        let record = self.last.is_some() && dt_s >= self.min_record_s();
        let tick = Tick {
            scan: &scan,
            children: &children,
            t_s: now.duration_since(self.start).as_secs_f64(),
            dt_s,
            boot_ticks,
            phase: &self.phase,
            clk_tck: self.clk_tck,
            page_size: self.page_size,
        };
        for target in &mut self.targets {
            target.observe(&tick, record);
        }
        self.last = Some(now);
        if record {
            let latest = self.targets.iter().filter_map(Target::latest).collect();
            if let Ok(mut slot) = self.latest.lock() {
                *slot = latest;
            }
        }
    }

    fn set_phase(&mut self, name: String) {
        if !self.phase_order.contains(&name) {
            self.phase_order.push(name.clone());
        }
        self.phase = name;
    }

    /// The thread body: samples every interval; a phase change first closes the running
    /// interval with a sample in the old phase (unless it is a sliver, see below); stop takes
    /// a last sample and returns.
    pub(crate) fn run(mut self, rx: Receiver<Msg>) -> Self {
        let mut next = Instant::now() + self.interval;
        loop {
            let wait = next.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(Msg::Phase(name)) => {
                    let since = self
                        .last
                        .map_or(f64::INFINITY, |l| l.elapsed().as_secs_f64());
                    if since >= self.min_record_s() {
                        self.sample();
                        next = Instant::now() + self.interval;
                    }
                    // Else a sliver since the last sample: it stays in the running interval,
                    // which the next sample charges to the new phase. Sampling now would drop
                    // it, and a suite of phases shorter than half an interval (13 Redis
                    // commands of 0.35 s each) would then have no CPU at all.
                    self.set_phase(name);
                }
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => {
                    self.sample();
                    return self;
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.sample();
                    next += self.interval;
                    let now = Instant::now();
                    if next <= now {
                        // Fell behind (a stalled machine): skip the missed ticks.
                        next = now + self.interval;
                    }
                }
            }
        }
    }

    /// Phases that were marked but got no sample in any target.
    pub(crate) fn empty_phases(&self) -> Vec<String> {
        let used: HashSet<&str> = self
            .targets
            .iter()
            .flat_map(|t| t.timeline.iter().map(|s| s.phase.as_str()))
            .collect();
        self.phase_order
            .iter()
            .filter(|p| p.as_str() != DEFAULT_PHASE && !used.contains(p.as_str()))
            .cloned()
            .collect()
    }

    pub(crate) fn into_collected(self) -> Vec<Collected> {
        self.targets
            .into_iter()
            .map(Target::into_collected)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(ppid: u32, ticks: u64, cticks: u64) -> Counters {
        Counters {
            ppid,
            ticks,
            cticks,
            ctx: ticks,
        }
    }

    fn map(entries: &[(Key, Counters)]) -> HashMap<Key, Counters> {
        entries.iter().copied().collect()
    }

    const BORN: u64 = 1000;

    fn gone(_: Key) -> bool {
        false
    }

    #[test]
    fn present_in_both_new_and_missed() {
        let prev = map(&[((10, 5), c(1, 100, 0))]);
        let now = map(&[
            ((10, 5), c(1, 130, 0)),
            // Started since the previous reading: all of it.
            ((11, 1005), c(10, 7, 2)),
            // Started long before but not read last time: baseline only.
            ((12, 500), c(10, 400, 0)),
        ]);
        let d = interval_delta(&prev, &now, BORN, gone, true);
        assert_eq!(d.ticks, 30 + 7 + 2);
        assert_eq!(d.ctx, 30 + 7);
        let own = interval_delta(&prev, &now, BORN, gone, false);
        assert_eq!(own.ticks, 30 + 7, "without children, cutime is not ours");
    }

    #[test]
    fn reaped_children_are_recovered_through_the_parent() {
        // Parent 10; child 11 read at 30 ticks, then ran 20 more and was reaped (its total 50
        // joins 10's cutime); a child that lived and died between the readings used 40.
        let prev = map(&[((10, 5), c(1, 100, 0)), ((11, 900), c(10, 30, 0))]);
        let now = map(&[((10, 5), c(1, 110, 50 + 40))]);
        let d = interval_delta(&prev, &now, BORN, gone, true);
        assert_eq!(d.ticks, 10 + 20 + 40);
        // Counting only processes present in both would give 10.
        assert_eq!(interval_delta(&prev, &now, BORN, gone, false).ticks, 10);
    }

    #[test]
    fn a_departed_subtree_is_charged_to_the_surviving_ancestor() {
        // P 10 ← C 11 ← G 12. G read at 10, ends at 15, reaped by C; C read at 20, ends at 25,
        // reaped by P: P's cutime grows by 25 + 15.
        let prev = map(&[
            ((10, 5), c(1, 100, 0)),
            ((11, 900), c(10, 20, 0)),
            ((12, 950), c(11, 10, 0)),
        ]);
        let now = map(&[((10, 5), c(1, 100, 40))]);
        let d = interval_delta(&prev, &now, BORN, gone, true);
        assert_eq!(d.ticks, (25 - 20) + (15 - 10));
    }

    #[test]
    fn zombies_and_leavers() {
        // A zombie (still in `now`, final times readable) counts as present; when it is
        // reaped next interval its parent's Δcutime equals what was already counted.
        let prev = map(&[((10, 5), c(1, 100, 0)), ((11, 900), c(10, 30, 0))]);
        let zombie = map(&[((10, 5), c(1, 100, 0)), ((11, 900), c(10, 35, 0))]);
        assert_eq!(interval_delta(&prev, &zombie, BORN, gone, true).ticks, 5);
        let reaped = map(&[((10, 5), c(1, 100, 35))]);
        assert_eq!(interval_delta(&zombie, &reaped, BORN, gone, true).ticks, 0);
        // A child that left the tree alive (reparented) is not subtracted from anyone.
        let left = map(&[((10, 5), c(1, 100, 8))]);
        let still_alive = |k: Key| k == (11, 900);
        assert_eq!(
            interval_delta(&prev, &left, BORN, still_alive, true).ticks,
            8
        );
        // A parent that does not wait (SIGCHLD ignored) gains no cutime: never below zero.
        let auto_reaped = map(&[((10, 5), c(1, 104, 0))]);
        assert_eq!(
            interval_delta(&prev, &auto_reaped, BORN, gone, true).ticks,
            4
        );
    }
}
