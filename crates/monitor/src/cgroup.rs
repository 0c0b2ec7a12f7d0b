//! Control-group readers. cgroup v2 is the target (`memory.current`, `cpu.stat`'s
//! `usage_usec`); on a v1 or hybrid host the v1 equivalents (`memory.usage_in_bytes`,
//! `cpuacct.usage`) are read when the v2 files are not there, so a v1 path works too.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Where cgroup hierarchies are mounted; relative selector paths are taken from here.
pub const CGROUP_ROOT: &str = "/sys/fs/cgroup";
/// Where a hybrid (v1 + v2) host mounts its v2 hierarchy.
pub const CGROUP_UNIFIED: &str = "/sys/fs/cgroup/unified";

/// True when `/sys/fs/cgroup` itself is a cgroup v2 hierarchy (it has `cgroup.controllers`).
pub fn is_v2_root() -> bool {
    Path::new(CGROUP_ROOT).join("cgroup.controllers").is_file()
}

/// The candidate directories a selector path may mean, most literal first: the path itself,
/// then (for a relative path, or an absolute one as `/proc/PID/cgroup` prints it) the same path
/// under `/sys/fs/cgroup` and under a hybrid host's `/sys/fs/cgroup/unified`.
pub(crate) fn candidates(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if path.is_absolute() {
        out.push(path.to_path_buf());
        if path.starts_with(CGROUP_ROOT) {
            return out;
        }
    }
    let rel = path.strip_prefix("/").unwrap_or(path);
    out.push(Path::new(CGROUP_ROOT).join(rel));
    out.push(Path::new(CGROUP_UNIFIED).join(rel));
    out
}

/// The cgroup directory a selector path names, if one exists (it must hold `cgroup.procs`).
pub(crate) fn resolve(path: &Path) -> Option<PathBuf> {
    candidates(path)
        .into_iter()
        .find(|dir| dir.join("cgroup.procs").is_file())
}

/// The pids of every process in the cgroup and its descendant cgroups.
pub(crate) fn pids(dir: &Path) -> io::Result<Vec<u32>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut first = true;
    while let Some(d) = stack.pop() {
        match fs::read_to_string(d.join("cgroup.procs")) {
            Ok(text) => out.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok())),
            // A child cgroup may be removed while we walk; the selected one must exist.
            Err(e) if first => return Err(e),
            Err(_) => {}
        }
        first = false;
        if let Ok(entries) = fs::read_dir(&d) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(entry.path());
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn read_u64(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `memory.current` (v2) or `memory.usage_in_bytes` (v1), in bytes. The root cgroup has
/// neither.
pub(crate) fn memory_current(dir: &Path) -> Option<u64> {
    read_u64(&dir.join("memory.current")).or_else(|| read_u64(&dir.join("memory.usage_in_bytes")))
}

/// `usage_usec` from a `cpu.stat` text.
pub(crate) fn parse_usage_usec(cpu_stat: &str) -> Option<u64> {
    cpu_stat
        .lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|v| v.trim().parse().ok())
}

/// CPU time used by the cgroup since it was created, in microseconds: `cpu.stat` `usage_usec`
/// (v2) or `cpuacct.usage` / 1000 (v1). Unlike a sum over processes, it keeps the time of
/// processes that already exited.
pub(crate) fn cpu_usage_usec(dir: &Path) -> Option<u64> {
    fs::read_to_string(dir.join("cpu.stat"))
        .ok()
        .and_then(|t| parse_usage_usec(&t))
        .or_else(|| read_u64(&dir.join("cpuacct.usage")).map(|ns| ns / 1000))
}

/// The cgroup v2 path of a process, from its `/proc/PID/cgroup` (`0::/some/path`).
pub fn v2_path_of(pid: u32) -> Option<String> {
    let text = fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    parse_v2_line(&text)
}

pub(crate) fn parse_v2_line(proc_cgroup: &str) -> Option<String> {
    proc_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_paths() {
        assert_eq!(
            candidates(Path::new("/sys/fs/cgroup/system.slice")),
            vec![PathBuf::from("/sys/fs/cgroup/system.slice")]
        );
        assert_eq!(
            candidates(Path::new("system.slice/x.service")),
            vec![
                PathBuf::from("/sys/fs/cgroup/system.slice/x.service"),
                PathBuf::from("/sys/fs/cgroup/unified/system.slice/x.service"),
            ]
        );
        assert_eq!(
            candidates(Path::new("/user.slice")),
            vec![
                PathBuf::from("/user.slice"),
                PathBuf::from("/sys/fs/cgroup/user.slice"),
                PathBuf::from("/sys/fs/cgroup/unified/user.slice"),
            ]
        );
    }

    #[test]
    fn parses_cpu_stat_and_proc_cgroup() {
        let stat = "usage_usec 1302489374\nuser_usec 1103079315\nsystem_usec 199410059\n";
        assert_eq!(parse_usage_usec(stat), Some(1_302_489_374));
        assert_eq!(parse_usage_usec("user_usec 1\n"), None);
        let v1 = "4:memory:/a/b\n1:cpu:/\n0::/system.slice/x.service\n";
        assert_eq!(
            parse_v2_line(v1).as_deref(),
            Some("/system.slice/x.service")
        );
        assert_eq!(parse_v2_line("4:memory:/a\n"), None);
    }
}
