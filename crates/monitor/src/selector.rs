//! Target selectors: parsing, and resolving them to processes or a cgroup at start.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::cgroup;
use crate::procfs::{self, ProcStat};
use crate::MonitorError;

/// What to monitor. Parse one from text with [`str::parse`]:
///
/// | text | meaning |
/// |---|---|
/// | `pid:1234` | the process 1234 |
/// | `name:postgres` | every process whose `/proc/PID/comm` is exactly `postgres` |
/// | `cmd:PATTERN` | every process whose command line (arguments joined with spaces) contains `PATTERN` |
/// | `cgroup:/sys/fs/cgroup/system.slice/postgresql.service` | the processes of a cgroup and its descendants; a relative path (`cgroup:system.slice/x.service`) is taken under `/sys/fs/cgroup` |
/// | `postgres` (a bare word) | a `name:` match, or if no process has that name, a `cmd:` match |
///
/// A process target also counts every descendant of the matched processes (forked workers,
/// PostgreSQL backends), re-discovered at every sample. When `name:`/`cmd:` match a process
/// and its descendants, only the top-most is kept as a root: the others are in its tree anyway.
/// `name:` and `cmd:` never match the monitoring process itself or its ancestors (the shell or
/// `cargo` that started it, whose command line holds the pattern too).
///
/// Details: `comm` is cut by the kernel to 15 bytes, so a longer `name:` matches a comm that is
/// its first 15 bytes. A `cgroup:` path as `/proc/PID/cgroup` prints it (`/system.slice/x`)
/// is also looked up under `/sys/fs/cgroup` (and a hybrid host's `/sys/fs/cgroup/unified`).
/// The root processes are fixed at start: a matching process started later is not added (its
/// descendants are, if it descends from a root), and a target whose roots have all exited is
/// marked exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// `pid:1234`
    Pid(u32),
    /// `name:COMM`: exact match of `/proc/PID/comm`.
    Name(String),
    /// `cmd:PATTERN`: substring of the command line.
    Cmd(String),
    /// `cgroup:PATH`: a cgroup directory (v2; v1 paths also work).
    Cgroup(PathBuf),
    /// A bare word: a name match, falling back to a command-line match.
    Auto(String),
}

impl FromStr for Selector {
    type Err = MonitorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let invalid = |reason: &str| MonitorError::InvalidSelector {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        if text.is_empty() {
            return Err(invalid("empty selector"));
        }
        let Some((kind, value)) = text.split_once(':') else {
            return Ok(Selector::Auto(text.to_string()));
        };
        let sel = match kind {
            "pid" => {
                let pid: u32 = value
                    .trim()
                    .parse()
                    .map_err(|_| invalid("pid: needs a process id, like pid:1234"))?;
                if pid == 0 {
                    return Err(invalid("pid: needs a positive process id"));
                }
                Selector::Pid(pid)
            }
            "name" => Selector::Name(value.trim().to_string()),
            "cmd" => Selector::Cmd(value.to_string()),
            "cgroup" => Selector::Cgroup(PathBuf::from(value.trim())),
            // A bare pattern may hold a colon ("postgres: checkpointer").
            _ => return Ok(Selector::Auto(text.to_string())),
        };
        let empty = match &sel {
            Selector::Name(v) | Selector::Cmd(v) => v.is_empty(),
            Selector::Cgroup(p) => p.as_os_str().is_empty(),
            _ => false,
        };
        if empty {
            return Err(invalid(&format!("{kind}: needs a value after the colon")));
        }
        Ok(sel)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Pid(p) => write!(f, "pid:{p}"),
            Selector::Name(n) => write!(f, "name:{n}"),
            Selector::Cmd(c) => write!(f, "cmd:{c}"),
            Selector::Cgroup(p) => write!(f, "cgroup:{}", p.display()),
            Selector::Auto(w) => f.write_str(w),
        }
    }
}

/// What a selector resolved to at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// Root processes as (pid, starttime): a reused pid is not the same process.
    Processes(Vec<(u32, u64)>),
    Cgroup(PathBuf),
}

impl Selector {
    /// Finds the processes or cgroup this selector names now. `excluded` holds the monitoring
    /// process and its ancestors, which `name:`/`cmd:` never match.
    pub(crate) fn resolve(
        &self,
        scan: &HashMap<u32, ProcStat>,
        excluded: &HashSet<u32>,
    ) -> Result<Resolved, MonitorError> {
        let no_match = || MonitorError::NoMatch {
            selector: self.to_string(),
        };
        let matched: Vec<u32> = match self {
            Selector::Pid(pid) => match scan.get(pid) {
                Some(st) if !st.is_dead() => vec![*pid],
                _ => vec![],
            },
            Selector::Name(name) => match_by(scan, excluded, |pid| name_matches(pid, name)),
            Selector::Cmd(pat) => match_by(scan, excluded, |pid| cmd_matches(pid, pat)),
            Selector::Auto(word) => {
                let by_name = match_by(scan, excluded, |pid| name_matches(pid, word));
                if by_name.is_empty() {
                    match_by(scan, excluded, |pid| cmd_matches(pid, word))
                } else {
                    by_name
                }
            }
            Selector::Cgroup(path) => {
                return cgroup::resolve(path)
                    .map(Resolved::Cgroup)
                    .ok_or_else(no_match)
            }
        };
        let roots = topmost(&matched, scan);
        if roots.is_empty() {
            return Err(no_match());
        }
        Ok(Resolved::Processes(
            roots
                .into_iter()
                .filter_map(|pid| scan.get(&pid).map(|st| (pid, st.starttime)))
                .collect(),
        ))
    }
}

fn name_matches(pid: u32, name: &str) -> bool {
    let Some(comm) = procfs::read_comm(pid) else {
        return false;
    };
    if comm == name {
        return true;
    }
    // comm is cut to 15 bytes: "name:postgres-exporter-x" still finds it.
    name.len() > 15 && comm.len() == 15 && name.as_bytes().starts_with(comm.as_bytes())
}

fn cmd_matches(pid: u32, pattern: &str) -> bool {
    procfs::read_cmdline(pid).is_some_and(|c| c.contains(pattern))
}

fn match_by(
    scan: &HashMap<u32, ProcStat>,
    excluded: &HashSet<u32>,
    pred: impl Fn(u32) -> bool,
) -> Vec<u32> {
    let mut out: Vec<u32> = scan
        .values()
        .filter(|st| !st.is_dead() && !excluded.contains(&st.pid))
        .map(|st| st.pid)
        .filter(|pid| pred(*pid))
        .collect();
    out.sort_unstable();
    out
}

/// Drops every matched pid that has a matched ancestor: it is counted in that one's tree.
fn topmost(matched: &[u32], scan: &HashMap<u32, ProcStat>) -> Vec<u32> {
    let set: HashSet<u32> = matched.iter().copied().collect();
    matched
        .iter()
        .copied()
        .filter(|pid| {
            !procfs::ancestors(*pid, scan)
                .iter()
                .any(|a| set.contains(a))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Selector {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(parse("pid:1234"), Selector::Pid(1234));
        assert_eq!(parse(" pid: 12 "), Selector::Pid(12));
        assert_eq!(parse("name:postgres"), Selector::Name("postgres".into()));
        assert_eq!(
            parse("cmd:postgres -D /var/lib"),
            Selector::Cmd("postgres -D /var/lib".into())
        );
        assert_eq!(parse("cmd:a:b"), Selector::Cmd("a:b".into()));
        assert_eq!(
            parse("cgroup:/sys/fs/cgroup/system.slice"),
            Selector::Cgroup(PathBuf::from("/sys/fs/cgroup/system.slice"))
        );
        assert_eq!(
            parse("cgroup:system.slice/x.service"),
            Selector::Cgroup(PathBuf::from("system.slice/x.service"))
        );
        assert_eq!(parse("postgres"), Selector::Auto("postgres".into()));
        assert_eq!(
            parse("postgres: checkpointer"),
            Selector::Auto("postgres: checkpointer".into())
        );
    }

    #[test]
    fn rejects_bad_selectors() {
        for bad in [
            "", "  ", "pid:", "pid:abc", "pid:0", "pid:-3", "name:", "cmd:", "cgroup:",
        ] {
            match bad.parse::<Selector>() {
                Err(MonitorError::InvalidSelector { input, .. }) => assert_eq!(input, bad),
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn keeps_only_topmost_matches() {
        let mk = |pid, ppid| ProcStat {
            pid,
            state: 'S',
            ppid,
            utime: 0,
            stime: 0,
            cticks: 0,
            threads: 1,
            starttime: 0,
        };
        // postmaster 10 with backends 11, 12 (12 forked a helper 13); a second server 20.
        let scan: HashMap<u32, ProcStat> = [
            mk(1, 0),
            mk(10, 1),
            mk(11, 10),
            mk(12, 10),
            mk(13, 12),
            mk(20, 1),
        ]
        .into_iter()
        .map(|s| (s.pid, s))
        .collect();
        assert_eq!(topmost(&[10, 11, 13, 20], &scan), vec![10, 20]);
        assert_eq!(topmost(&[11, 13], &scan), vec![11, 13]);
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "pid:7",
            "name:redis-server",
            "cmd:java -jar",
            "cgroup:/sys/fs/cgroup/a",
            "nginx",
        ] {
            assert_eq!(parse(s).to_string(), s);
            assert_eq!(parse(&parse(s).to_string()), parse(s));
        }
    }
}
