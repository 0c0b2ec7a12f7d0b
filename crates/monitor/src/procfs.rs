//! Readers for the few /proc files the monitor uses. Every reader returns `None` (or skips the
//! entry) when the process vanished in between: processes come and go while we look.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::Path;

/// The fields of `/proc/PID/stat` the monitor uses (field numbers as in proc(5)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// Field 1.
    pub pid: u32,
    /// Field 3: `R`, `S`, `D`, `Z` (zombie), `X` (dead), ...
    pub state: char,
    /// Field 4.
    pub ppid: u32,
    /// Field 14, clock ticks in user mode (all threads).
    pub utime: u64,
    /// Field 15, clock ticks in kernel mode (all threads).
    pub stime: u64,
    /// Fields 16 + 17: user + system ticks of the children this process has waited for (each
    /// child's own time plus its waited-for children's, added when it is reaped).
    pub cticks: u64,
    /// Field 20.
    pub threads: u64,
    /// Field 22, clock ticks after boot: with the pid it names one process, even after the pid
    /// is reused.
    pub starttime: u64,
}

impl ProcStat {
    /// A zombie (exited, not yet reaped by its parent) or dead process no longer runs.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }

    pub fn ticks(&self) -> u64 {
        self.utime.saturating_add(self.stime)
    }
}

/// Parses one `/proc/PID/stat` line. The command name (field 2) is in parentheses and may
/// itself hold spaces and parentheses, so the fields after it are counted from the last `)`.
pub(crate) fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3, so field n is rest[n - 3].
    let field = |n: usize| rest.get(n - 3).copied();
    let num = |n: usize| field(n).and_then(|f| f.parse::<u64>().ok());
    Some(ProcStat {
        pid,
        state: field(3)?.chars().next()?,
        ppid: field(4)?.parse().ok()?,
        utime: num(14)?,
        stime: num(15)?,
        cticks: num(16)?.saturating_add(num(17)?),
        threads: num(20)?,
        starttime: num(22)?,
    })
}

pub(crate) fn read_stat(pid: u32) -> Option<ProcStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Every process on the machine (thread-group leaders, as /proc lists them), by pid.
pub(crate) fn scan() -> io::Result<HashMap<u32, ProcStat>> {
    let mut out = HashMap::new();
    for entry in fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(stat) = read_stat(pid) {
            out.insert(pid, stat);
        }
    }
    Ok(out)
}

/// Parent pid → child pids, from one scan.
pub(crate) fn children_map(scan: &HashMap<u32, ProcStat>) -> HashMap<u32, Vec<u32>> {
    let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
    for stat in scan.values() {
        if stat.ppid != 0 && stat.ppid != stat.pid {
            map.entry(stat.ppid).or_default().push(stat.pid);
        }
    }
    map
}

/// `roots` and all their descendants, each once; zombies included (their stat holds their
/// final CPU times until they are reaped), dead roots and their subtrees not.
pub(crate) fn descendants(
    roots: &[u32],
    scan: &HashMap<u32, ProcStat>,
    children: &HashMap<u32, Vec<u32>>,
) -> Vec<u32> {
    let mut seen: HashSet<u32> = HashSet::new();
    let mut out = Vec::new();
    let mut stack: Vec<u32> = roots.to_vec();
    while let Some(pid) = stack.pop() {
        if !seen.insert(pid) {
            continue;
        }
        if scan.contains_key(&pid) {
            out.push(pid);
        } else {
            continue;
        }
        if let Some(kids) = children.get(&pid) {
            stack.extend(kids.iter().copied());
        }
    }
    out
}

/// `pid`'s ancestors up to (and including) init, nearest first.
pub(crate) fn ancestors(pid: u32, scan: &HashMap<u32, ProcStat>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut cur = pid;
    // The chain ends at pid 1 (ppid 0); the bound only guards against a corrupt scan.
    for _ in 0..scan.len() + 1 {
        let Some(stat) = scan.get(&cur).copied().or_else(|| read_stat(cur)) else {
            break;
        };
        if stat.ppid == 0 || stat.ppid == cur {
            break;
        }
        out.push(stat.ppid);
        cur = stat.ppid;
    }
    out
}

/// `/proc/PID/comm` without its newline (the kernel truncates it to 15 bytes).
pub(crate) fn read_comm(pid: u32) -> Option<String> {
    let text = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(text.trim_end_matches('\n').to_string())
}

/// `/proc/PID/cmdline` with its NUL separators turned into spaces (empty for kernel threads).
pub(crate) fn read_cmdline(pid: u32) -> Option<String> {
    let bytes = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(join_cmdline(&bytes))
}

pub(crate) fn join_cmdline(bytes: &[u8]) -> String {
    let parts: Vec<String> = bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    parts.join(" ")
}

/// `/proc/PID/statm`: (size, resident) in pages.
pub(crate) fn parse_statm(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace();
    let size = fields.next()?.parse().ok()?;
    let resident = fields.next()?.parse().ok()?;
    Some((size, resident))
}

pub(crate) fn read_statm(pid: u32) -> Option<(u64, u64)> {
    parse_statm(&fs::read_to_string(format!("/proc/{pid}/statm")).ok()?)
}

/// voluntary + involuntary context switches from a `/proc/PID/status` text.
pub(crate) fn parse_ctx_switches(status: &str) -> Option<u64> {
    let mut voluntary = None;
    let mut involuntary = None;
    for line in status.lines() {
        if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
            voluntary = v.trim().parse::<u64>().ok();
        } else if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
            involuntary = v.trim().parse::<u64>().ok();
        }
    }
    Some(voluntary?.saturating_add(involuntary?))
}

/// Context switches of every thread of a process. `/proc/PID/status` holds only the main
/// thread's counters, which for a multi-threaded server (tokio, PostgreSQL's parallel
/// workers) is a small fraction of the truth, so the threads under `/proc/PID/task` are summed.
pub(crate) fn read_ctx_switches(pid: u32) -> Option<u64> {
    let tasks = match fs::read_dir(format!("/proc/{pid}/task")) {
        Ok(t) => t,
        Err(_) => {
            return parse_ctx_switches(&fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
        }
    };
    let mut total = None;
    for task in tasks.flatten() {
        let path = task.path().join("status");
        // A thread that ended between the listing and the read is simply not counted.
        if let Some(n) = fs::read_to_string(path)
            .ok()
            .and_then(|t| parse_ctx_switches(&t))
        {
            total = Some(total.unwrap_or(0) + n);
        }
    }
    total
}

/// Open file descriptors of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FdCount {
    Count(u64),
    /// `/proc/PID/fd` is readable only by the process's user (and root).
    Denied,
    /// The process exited meanwhile.
    Gone,
}

pub(crate) fn count_fds(pid: u32) -> FdCount {
    count_dir_entries(Path::new(&format!("/proc/{pid}/fd")))
}

fn count_dir_entries(dir: &Path) -> FdCount {
    match fs::read_dir(dir) {
        Ok(entries) => FdCount::Count(entries.filter(|e| e.is_ok()).count() as u64),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => FdCount::Denied,
        Err(_) => FdCount::Gone,
    }
}

/// Clock ticks per second for the utime/stime fields.
pub(crate) fn clock_ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions; it only reads a system constant.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as f64
    } else {
        100.0
    }
}

/// Clock ticks since boot (CLOCK_BOOTTIME, the clock of the stat `starttime` field).
pub(crate) fn boot_ticks(clk_tck: f64) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid, exclusive pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    if rc != 0 {
        return 0;
    }
    let secs = ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9;
    (secs * clk_tck).floor() as u64
}

pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions; it only reads a system constant.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_awkward_comm() {
        let line = "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 1 0 0 0 \
                    250 75 3 4 20 0 9 0 123456 1000000 300 18446744073709551615";
        let st = parse_stat(line).expect("parses");
        assert_eq!(st.pid, 4242);
        assert_eq!(st.state, 'S');
        assert_eq!(st.ppid, 17);
        assert_eq!(st.utime, 250);
        assert_eq!(st.stime, 75);
        assert_eq!(st.ticks(), 325);
        assert_eq!(st.cticks, 7);
        assert_eq!(st.threads, 9);
        assert_eq!(st.starttime, 123456);
        assert!(!st.is_dead());
        assert!(parse_stat("12 (x) Z 1").is_none());
    }

    #[test]
    fn reads_own_process() {
        let me = std::process::id();
        let st = read_stat(me).expect("own stat");
        assert_eq!(st.pid, me);
        assert!(st.threads >= 1);
        let (size, rss) = read_statm(me).expect("own statm");
        assert!(size >= rss && rss > 0);
        assert!(read_ctx_switches(me).is_some());
        // Every thread counts: a thread that sleeps 20 times adds at least 20 switches.
        let before = read_ctx_switches(me).unwrap();
        std::thread::spawn(|| {
            for _ in 0..20 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            // Read while the thread still exists.
            read_ctx_switches(std::process::id()).unwrap()
        })
        .join()
        .map(|during| assert!(during >= before + 20, "{before} -> {during}"))
        .unwrap();
        assert!(matches!(count_fds(me), FdCount::Count(n) if n >= 3));
        assert!(read_cmdline(me).is_some_and(|c| !c.is_empty()));
        assert!(read_comm(me).is_some_and(|c| !c.is_empty() && !c.ends_with('\n')));
        let scan = scan().expect("scan");
        assert!(scan.contains_key(&me));
        assert!(ancestors(me, &scan).contains(&1) || me == 1);
    }

    #[test]
    fn starttime_is_on_the_boot_clock() {
        let clk = clock_ticks_per_s();
        let before = boot_ticks(clk);
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let st = read_stat(child.id());
        let after = boot_ticks(clk);
        let _ = child.kill();
        let _ = child.wait();
        let start = st.expect("child stat").starttime;
        assert!(
            before <= start && start <= after + 1,
            "{before} {start} {after}"
        );
    }

    #[test]
    fn statm_status_and_cmdline() {
        assert_eq!(parse_statm("1000 250 100 1 0 300 0\n"), Some((1000, 250)));
        assert_eq!(parse_statm("1000"), None);
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t40\nnonvoluntary_ctxt_switches:\t2\n";
        assert_eq!(parse_ctx_switches(status), Some(42));
        assert_eq!(parse_ctx_switches("Name:\tx\n"), None);
        assert_eq!(join_cmdline(b"sh\0-c\0sleep 3\0"), "sh -c sleep 3");
        assert_eq!(join_cmdline(b""), "");
    }

    #[test]
    fn tree_walk() {
        let mk = |pid, ppid, state| ProcStat {
            pid,
            state,
            ppid,
            utime: 0,
            stime: 0,
            cticks: 0,
            threads: 1,
            starttime: 0,
        };
        let scan: HashMap<u32, ProcStat> = [
            mk(1, 0, 'S'),
            mk(10, 1, 'S'),
            mk(11, 10, 'R'),
            mk(12, 11, 'S'),
            mk(13, 10, 'Z'),
            mk(20, 1, 'S'),
        ]
        .into_iter()
        .map(|s| (s.pid, s))
        .collect();
        let children = children_map(&scan);
        let mut tree = descendants(&[10], &scan, &children);
        tree.sort_unstable();
        assert_eq!(tree, vec![10, 11, 12, 13], "the zombie 13 is in the tree");
        assert_eq!(ancestors(12, &scan), vec![11, 10, 1]);
    }
}
