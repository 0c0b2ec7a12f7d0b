//! What this machine and process allow a run: cores for worker threads, and file
//! descriptors for connections. Flags and plans check against the same limits.

/// CPU cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How many connections this process may hold at once: its open-file limit (`ulimit -n`) less
/// room for the store, the monitor and standard streams. More would fail one by one as
/// "too many open files" mid-run, or, far beyond, exhaust memory before the first request.
/// The soft limit is first raised to the hard one, as Go's runtime does for vegeta and k6,
/// so a desktop's default 1024 does not cap a run the system allows.
pub fn connection_budget() -> u64 {
    static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read and write only the struct we pass.
        let soft = unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                1024
            } else if lim.rlim_cur < lim.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: lim.rlim_max,
                    rlim_max: lim.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    lim.rlim_max
                } else {
                    lim.rlim_cur
                }
            } else {
                lim.rlim_cur
            }
        };
        soft.saturating_sub(64).max(1)
    })
}

/// `n` sessions, each with a connection of its own, fit [`connection_budget`]; the error
/// names the limit and the remedy.
pub fn check_connections(n: u64) -> Result<(), String> {
    let budget = connection_budget();
    if n <= budget {
        Ok(())
    } else {
        Err(format!(
            "{n} connections are more than this process may open ({budget}: its file limit, \
             ulimit -n, less 64); lower it, or raise the limit with ulimit -n"
        ))
    }
}

/// An output file's folder exists and the path is not a folder itself, checked before any
/// load so a run is never lost to a typo.
pub fn check_output_path(path: &std::path::Path, flag: &str) -> Result<(), String> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => Err(format!(
            "{flag} {}: folder '{}' does not exist",
            path.display(),
            dir.display()
        )),
        _ if path.is_dir() => Err(format!(
            "{flag} {}: is a folder; give a file name",
            path.display()
        )),
        _ => Ok(()),
    }
}
