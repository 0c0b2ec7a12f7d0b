//! The monitor against real processes: busy and idle children, process trees, a process that
//! dies mid-run, cgroups, perfbase's own process, and a real PostgreSQL when one is running
//! (`eval "$(scripts/services.sh env)"` sets `PERFBASE_PG_PID`).
//!
//! The CPU figures are checked against wide bands; the tests that burn CPU take a lock so they
//! do not compete with each other for the cores.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::{Duration, Instant};

use perfbase_monitor::{
    Monitor, MonitorConfig, MonitorError, MonitorReport, Selector, TargetReport, SELF_LABEL,
};

static CPU: Mutex<()> = Mutex::new(());

fn cpu_lock() -> MutexGuard<'static, ()> {
    CPU.lock().unwrap_or_else(|e| e.into_inner())
}

/// A child in its own process group; dropping it kills the whole group and reaps the child.
struct Kid(Child);

impl Kid {
    fn spawn(program: &str, args: &[&str]) -> Kid {
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
        Kid(child)
    }

    fn sh(script: &str) -> Kid {
        Kid::spawn("sh", &["-c", script])
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn kill_group(&self) {
        // SAFETY: kill(2) with a negative pid signals our child's own process group.
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        self.kill_group();
        let _ = self.0.wait();
    }
}

fn cfg(selectors: Vec<Selector>, interval_ms: u64) -> MonitorConfig {
    MonitorConfig {
        selectors,
        interval: Duration::from_millis(interval_ms),
    }
}

fn target<'a>(r: &'a MonitorReport, label: &str) -> &'a TargetReport {
    r.target(label)
        .unwrap_or_else(|| panic!("no target {label} in {r:#?}"))
}

fn timeline_mean(t: &TargetReport, f: impl Fn(&perfbase_monitor::Sample) -> f64) -> f64 {
    assert!(!t.timeline.is_empty(), "{} has no samples", t.label);
    t.timeline.iter().map(f).sum::<f64>() / t.timeline.len() as f64
}

const MB: f64 = 1_000_000.0;

/// The report in brief, for failure messages: a line per target × phase. (Its tables are
/// perfbase-report's, which this crate must not depend on; they are tested there.)
fn brief(r: &MonitorReport) -> String {
    let mut out = String::new();
    for t in &r.targets {
        for p in &t.phases {
            out.push_str(&format!(
                "{} (exited at {:?}) {}: {} samples, CPU % {:.1} ({:.1}–{:.1}), RSS {:.1} MB, \
                 {} processes\n",
                t.label,
                t.exited_at_s,
                p.name,
                p.samples,
                p.cpu_pct.mean,
                p.cpu_pct.min,
                p.cpu_pct.max,
                p.rss_bytes.mean / MB,
                p.processes.mean
            ));
        }
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// CPU bands hold on a machine with the cores free; other work on a shared machine (builds) can
/// take them for a moment, so a band is given up to three tries. Anything structural fails at
/// once.
fn with_retries(what: &str, mut run: impl FnMut() -> Result<(), String>) {
    let mut errors = Vec::new();
    for attempt in 1..=3 {
        match run() {
            Ok(()) => return,
            Err(e) => {
                println!("{what}: attempt {attempt}: {e}");
                errors.push(e);
            }
        }
    }
    panic!("{what}: out of band in 3 attempts:\n{}", errors.join("\n"));
}

#[test]
fn busy_and_idle_children_with_phases() {
    let _cpu = cpu_lock();
    with_retries("busy and idle children", busy_and_idle_once);
}

fn busy_and_idle_once() -> Result<(), String> {
    let busy = Kid::sh("while :; do :; done");
    let idle = Kid::spawn("sleep", &["30"]);
    let m = Monitor::start(cfg(
        vec![Selector::Pid(busy.pid()), Selector::Pid(idle.pid())],
        250,
    ))
    .expect("start");
    m.phase("first");
    sleep(Duration::from_millis(1250));
    m.phase("second");
    sleep(Duration::from_millis(1250));
    let r = m.stop();
    let table = brief(&r);
    println!("{table}");

    let b = target(&r, &format!("pid:{}", busy.pid()));
    let i = target(&r, &format!("pid:{}", idle.pid()));
    assert_eq!(b.kind, "process");
    assert_eq!(b.pids, vec![busy.pid()]);
    for t in [b, i] {
        let names: Vec<&str> = t.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, vec!["first", "second"], "{table}");
        for p in &t.phases {
            assert!(
                p.samples >= 3,
                "{}: {} samples in {}",
                t.label,
                p.samples,
                p.name
            );
            assert!(
                p.rss_bytes.min > 0.0 && p.rss_bytes.max < 200.0 * MB,
                "{p:?}"
            );
            assert!(p.vsz_bytes.min >= p.rss_bytes.min);
            assert!(p.threads.min >= 1.0);
            assert!(p.fds.is_some_and(|f| f.min >= 1.0), "{p:?}");
            assert_eq!(p.processes.max, 1.0);
            assert!(p.memory_current_bytes.is_none());
            assert!((p.cpu_pct_machine.mean - p.cpu_pct.mean / f64::from(r.cores)).abs() < 1e-9);
        }
        assert!(t.exited_at_s.is_none());
        assert!(t.timeline.windows(2).all(|w| w[0].t_s < w[1].t_s));
        assert!(
            t.timeline.len() >= 7 && t.timeline.len() <= 12,
            "{:?}",
            t.timeline
        );
    }
    assert!(r.generator().is_some());
    let idle_cpu = timeline_mean(i, |s| s.cpu_pct);
    assert!(idle_cpu < 5.0, "idle child at {idle_cpu} %\n{table}");
    let busy_cpu = timeline_mean(b, |s| s.cpu_pct);
    let band = 60.0..=105.0;
    if !band.contains(&busy_cpu) || !b.phases.iter().all(|p| band.contains(&p.cpu_pct.mean)) {
        return Err(format!("busy child at {busy_cpu} % of a core\n{table}"));
    }
    Ok(())
}

#[test]
fn phases_shorter_than_half_an_interval_keep_their_cpu() {
    let _cpu = cpu_lock();
    with_retries("short phases", short_phases_once);
}

/// A suite of operations 150 ms each under a 1 s interval: no phase is long enough for its own
/// sample, but the busy process's CPU must still be in the samples (charged to the phase a
/// sample ends in), not dropped with every phase change.
fn short_phases_once() -> Result<(), String> {
    let busy = Kid::sh("while :; do :; done");
    let m = Monitor::start(cfg(vec![Selector::Pid(busy.pid())], 1000)).expect("start");
    let started = Instant::now();
    for k in 0..20 {
        m.phase(&format!("op {k}"));
        sleep(Duration::from_millis(150));
    }
    let r = m.stop();
    let elapsed = started.elapsed().as_secs_f64();
    let b = target(&r, &format!("pid:{}", busy.pid()));
    let covered: f64 = b.timeline.iter().map(|s| s.t_s).fold(0.0, f64::max);
    // The samples span the whole run, and the process was busy through it.
    if covered < elapsed - 0.2 {
        return Err(format!(
            "samples end at {covered:.2} s of {elapsed:.2} s: {:?}",
            b.timeline
        ));
    }
    let cpu = timeline_mean(b, |s| s.cpu_pct);
    if !(60.0..=105.0).contains(&cpu) {
        return Err(format!("busy child at {cpu} % over {:?}", b.timeline));
    }
    Ok(())
}

#[test]
fn children_are_counted_with_their_parent() {
    let _cpu = cpu_lock();
    with_retries("tree of two busy children", children_once);
}

fn children_once() -> Result<(), String> {
    let tree = Kid::sh("yes > /dev/null & yes > /dev/null & wait");
    sleep(Duration::from_millis(200));
    let m = Monitor::start(cfg(vec![Selector::Pid(tree.pid())], 250)).expect("start");
    m.phase("load");
    sleep(Duration::from_millis(2000));
    let r = m.stop();
    let table = brief(&r);
    println!("{table}");
    let t = target(&r, &format!("pid:{}", tree.pid()));
    let p = t.phase("load").expect("load phase");
    assert!(p.processes.min >= 3.0, "{p:?}");
    assert!(t.timeline.iter().all(|s| s.processes >= 3));
    assert!(p.threads.min >= 3.0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let floor = if cores >= 2 { 120.0 } else { 60.0 };
    if p.cpu_pct.mean <= floor {
        return Err(format!(
            "tree of two `yes` at {} % of a core ({cores} cores)\n{table}",
            p.cpu_pct.mean
        ));
    }
    Ok(())
}

/// A parent that runs one short busy child after another (each lives ~30 ms, never seen by
/// two samples): their CPU is counted through the parent's reaped-children time.
#[test]
fn short_lived_children_are_counted() {
    let _cpu = cpu_lock();
    with_retries("short-lived busy children", short_lived_once);
}

fn short_lived_once() -> Result<(), String> {
    let tree =
        Kid::sh("while :; do sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'; done");
    let m = Monitor::start(cfg(vec![Selector::Pid(tree.pid())], 250)).expect("start");
    m.phase("load");
    sleep(Duration::from_millis(1500));
    let r = m.stop();
    let table = brief(&r);
    println!("{table}");
    let p = target(&r, &format!("pid:{}", tree.pid()))
        .phase("load")
        .expect("load phase")
        .clone();
    // A child's CPU is counted when it is reaped, so one sample may hold a little of the
    // interval before it: a spike past the bound is tried again, a steady one fails.
    if p.cpu_pct.max >= 115.0 {
        return Err(format!("one process at a time, yet {p:?}\n{table}"));
    }
    if p.cpu_pct.mean < 60.0 {
        return Err(format!(
            "short-lived children at {} %\n{table}",
            p.cpu_pct.mean
        ));
    }
    Ok(())
}

#[test]
fn a_process_that_exits_is_marked_not_fatal() {
    let kid = Kid::spawn("sleep", &["30"]);
    let label = format!("pid:{}", kid.pid());
    let m = Monitor::start(cfg(vec![Selector::Pid(kid.pid())], 200)).expect("start");
    m.phase("run");
    sleep(Duration::from_millis(700));
    // Killed but not yet reaped: a zombie still has a /proc entry and must count as exited.
    kid.kill_group();
    sleep(Duration::from_millis(700));
    let t0 = Instant::now();
    let r = m.stop();
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "stop took {:?}",
        t0.elapsed()
    );
    drop(kid);
    let t = target(&r, &label);
    let at = t.exited_at_s.expect("exited_at_s");
    assert!((0.6..=1.2).contains(&at), "exited at {at}");
    assert!(t.timeline.iter().all(|s| s.t_s < at));
    assert!(!t.timeline.is_empty());
    assert!(r.warnings.iter().any(|w| w.contains("exited at")));
    assert!(r.generator().is_some_and(|g| g.exited_at_s.is_none()));
}

#[test]
fn a_selector_matching_nothing_fails_at_start() {
    let sel: Selector = "name:definitely-no-such-process".parse().expect("parses");
    match Monitor::start(cfg(vec![sel], 1000)) {
        Err(e @ MonitorError::NoMatch { .. }) => {
            let MonitorError::NoMatch { selector } = &e else {
                unreachable!()
            };
            assert_eq!(selector, "name:definitely-no-such-process");
            let msg = e.to_string();
            assert!(msg.contains("name:definitely-no-such-process"), "{msg}");
            assert!(msg.contains("ps -eo pid,comm,args"), "{msg}");
        }
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("matched something"),
    }
    for sel in [
        "pid:4000000000",
        "cgroup:/sys/fs/cgroup/no/such/group",
        "cmd:no-such-cmd-xyzzy",
    ] {
        let s: Selector = sel.parse().expect("parses");
        assert!(
            matches!(Monitor::start(cfg(vec![s], 1000)), Err(MonitorError::NoMatch { ref selector }) if selector == sel),
            "{sel}"
        );
    }
    assert!(matches!(
        Monitor::start(cfg(vec![], 0)),
        Err(MonitorError::InvalidInterval(_))
    ));
}

#[test]
fn name_and_cmd_never_match_the_monitor_itself() {
    let exe = std::env::current_exe().expect("current_exe");
    let cmd = Selector::Cmd(exe.display().to_string());
    assert!(
        matches!(
            Monitor::start(cfg(vec![cmd], 1000)),
            Err(MonitorError::NoMatch { .. })
        ),
        "cmd: matched the test binary itself"
    );
    let comm = std::fs::read_to_string("/proc/self/comm").expect("comm");
    let name = Selector::Name(comm.trim_end().to_string());
    assert!(
        matches!(
            Monitor::start(cfg(vec![name], 1000)),
            Err(MonitorError::NoMatch { .. })
        ),
        "name: matched the test process itself"
    );
}

#[test]
fn name_and_bare_word_selectors_find_a_process() {
    // A symlink gives the child a comm no other process has.
    let dir = std::env::temp_dir().join(format!("perfbase-monitor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let comm = format!("pbm{}", std::process::id());
    let link = dir.join(&comm);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/bin/sleep", &link).expect("symlink");
    let named = Kid::spawn(&link.display().to_string(), &["30"]);
    let by_cmd = Kid::spawn("sleep", &["37.125"]);
    sleep(Duration::from_millis(100));
    let sels: Vec<Selector> = [format!("name:{comm}"), "sleep 37.125".to_string()]
        .iter()
        .map(|s| s.parse().expect("parses"))
        .collect();
    let m = Monitor::start(cfg(sels, 200)).expect("start");
    sleep(Duration::from_millis(500));
    let r = m.stop();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(target(&r, &format!("name:{comm}")).pids, vec![named.pid()]);
    assert_eq!(target(&r, "sleep 37.125").pids, vec![by_cmd.pid()]);
}

#[test]
fn own_process_is_always_a_target() {
    let _cpu = cpu_lock();
    let m = Monitor::start(cfg(vec![], 200)).expect("start with no selectors");
    m.phase("spin");
    let until = Instant::now() + Duration::from_millis(1000);
    let mut x = 0u64;
    while Instant::now() < until {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }
    let r = m.stop();
    assert_eq!(r.targets.len(), 1);
    let g = target(&r, SELF_LABEL);
    assert_eq!(g.kind, "self");
    assert_eq!(g.pids, vec![std::process::id()]);
    let p = g.phase("spin").expect("spin phase");
    assert!(p.rss_bytes.min > 0.0);
    assert!(p.threads.min >= 2.0, "the sampler thread is ours too");
    assert!(
        p.cpu_pct.mean > 30.0,
        "spinning test thread at {} %",
        p.cpu_pct.mean
    );
    assert!(r.cores >= 1);
    // One spinning thread cannot saturate more than one core.
    if r.cores >= 2 {
        assert!(!r.generator_saturated, "{:?}", r.warnings);
    }
}

/// The machine's own cgroup: memory.current (v2). On a host whose /sys/fs/cgroup is not a v2
/// hierarchy this prints a note; the v1 test below covers the fallback there.
#[test]
fn cgroup_v2_own_group_reports_memory_current() {
    if !perfbase_monitor::is_v2_root() {
        println!("note: /sys/fs/cgroup is not cgroup v2 (no cgroup.controllers): skipped");
        return;
    }
    let path = perfbase_monitor::v2_path_of(std::process::id()).expect("0:: line");
    let dir = format!("/sys/fs/cgroup{}", if path == "/" { "" } else { &path });
    if !std::path::Path::new(&dir).join("memory.current").is_file() {
        // The host's root cgroup (a process not in any child group) has no memory.current.
        println!("note: {dir} has no memory.current (the root cgroup): skipped");
        return;
    }
    let sel: Selector = format!("cgroup:{dir}").parse().expect("parses");
    let m = Monitor::start(cfg(vec![sel.clone()], 200)).expect("start");
    sleep(Duration::from_millis(700));
    let r = m.stop();
    let t = target(&r, &sel.to_string());
    assert_eq!(t.kind, "cgroup");
    let mem = t
        .timeline
        .iter()
        .filter_map(|s| s.memory_current_bytes)
        .max()
        .unwrap_or(0);
    assert!(mem > 0, "memory.current of {dir}: {:?}", t.timeline);
    assert!(t.timeline.iter().all(|s| s.processes >= 1));
}

/// A cgroup v2 group of our own (needs root and a writable v2 hierarchy: /sys/fs/cgroup, or
/// /sys/fs/cgroup/unified on a hybrid host), with a busy shell in it, selected by a path
/// relative to the hierarchy: CPU comes from its cpu.stat usage_usec.
#[test]
fn cgroup_v2_group_of_our_own() {
    let _cpu = cpu_lock();
    let hierarchy = if perfbase_monitor::is_v2_root() {
        "/sys/fs/cgroup"
    } else {
        "/sys/fs/cgroup/unified"
    };
    let name = format!("perfbase-monitor-test-{}", std::process::id());
    let dir = std::path::Path::new(hierarchy).join(&name);
    if !std::path::Path::new(hierarchy)
        .join("cgroup.controllers")
        .is_file()
        || std::fs::create_dir(&dir).is_err()
    {
        println!(
            "note: cannot create a cgroup under {hierarchy} (not root, or no cgroup v2): skipped"
        );
        return;
    }
    let procs = dir.join("cgroup.procs");
    let result = std::panic::catch_unwind(|| {
        with_retries("busy shell in a cgroup", || {
            let kid = Kid::sh(&format!(
                "echo $$ > {} && while :; do :; done",
                procs.display()
            ));
            sleep(Duration::from_millis(200));
            let sel: Selector = format!("cgroup:{name}").parse().expect("parses");
            let m = Monitor::start(cfg(vec![sel.clone()], 250)).expect("start");
            m.phase("busy");
            sleep(Duration::from_millis(1500));
            let r = m.stop();
            drop(kid);
            let table = brief(&r);
            let t = target(&r, &sel.to_string());
            assert_eq!(t.kind, "cgroup");
            let p = t.phase("busy").expect("busy phase");
            assert!(p.processes.min >= 1.0 && p.rss_bytes.min > 0.0, "{table}");
            if dir.join("memory.current").is_file() {
                assert!(
                    p.memory_current_bytes.is_some_and(|m| m.min > 0.0),
                    "{table}"
                );
            }
            if !(60.0..=105.0).contains(&p.cpu_pct.mean) {
                return Err(format!("cgroup at {} %\n{table}", p.cpu_pct.mean));
            }
            Ok(())
        })
    });
    // The group empties once the shell is reaped; removal may need a moment.
    for _ in 0..50 {
        if std::fs::remove_dir(&dir).is_ok() {
            break;
        }
        sleep(Duration::from_millis(20));
    }
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// v1 (or hybrid) hosts: the same through the memory controller's hierarchy.
#[test]
fn cgroup_v1_memory_hierarchy_fallback() {
    let own = std::fs::read_to_string("/proc/self/cgroup").expect("/proc/self/cgroup");
    let Some(path) = own
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_string()))
    else {
        println!("note: no cgroup v1 memory hierarchy here: skipped");
        return;
    };
    let dir = format!(
        "/sys/fs/cgroup/memory{}",
        if path == "/" { "" } else { &path }
    );
    if !std::path::Path::new(&dir)
        .join("memory.usage_in_bytes")
        .is_file()
    {
        println!("note: {dir} has no memory.usage_in_bytes: skipped");
        return;
    }
    let sel = Selector::Cgroup(dir.clone().into());
    let m = Monitor::start(cfg(vec![sel.clone()], 200)).expect("start");
    sleep(Duration::from_millis(700));
    let r = m.stop();
    let t = target(&r, &sel.to_string());
    assert_eq!(t.kind, "cgroup");
    assert!(t.pids.contains(&std::process::id()), "{:?}", t.pids);
    let p = &t.phases[0];
    assert!(p.memory_current_bytes.is_some_and(|s| s.min > 0.0), "{p:?}");
    assert!(p.rss_bytes.min > 0.0 && p.processes.min >= 1.0);
}

/// The postmaster's pid: `exported`, unless an earlier test stopped and restarted the server
/// (tests/cli/sql.rs does), in which case scripts/services.sh knows the new one.
fn current_pg_pid(exported: &str) -> String {
    if std::path::Path::new(&format!("/proc/{exported}")).exists() {
        return exported.to_string();
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = std::process::Command::new(format!("{root}/scripts/services.sh"))
        .args(["env", "postgres"])
        .current_dir(root)
        .output()
        .expect("scripts/services.sh runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("export PERFBASE_PG_PID="))
        .map(|p| p.trim().to_string())
        .unwrap_or_else(|| exported.to_string())
}

/// A real PostgreSQL from scripts/services.sh: the postmaster and its background workers.
#[test]
fn postgres_server() {
    let Ok(pid) = std::env::var("PERFBASE_PG_PID") else {
        if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
            panic!(
                "PERFBASE_PG_PID is not set but PERFBASE_REQUIRE_SERVICES=1: run scripts/services.sh up \
                 and eval \"$(scripts/services.sh env)\""
            );
        }
        println!("note: PERFBASE_PG_PID not set (run scripts/services.sh up): skipped");
        return;
    };
    let pid = current_pg_pid(pid.trim());
    let sel: Selector = format!("pid:{pid}").parse().expect("PERFBASE_PG_PID");
    let m = Monitor::start(cfg(vec![sel.clone()], 250)).expect("postgres running");
    m.phase("idle");
    sleep(Duration::from_millis(2000));
    let r = m.stop();
    println!("{}", brief(&r));
    let t = target(&r, &sel.to_string());
    let p = t.phase("idle").expect("idle phase");
    assert!(p.rss_bytes.mean > 5.0 * MB, "{p:?}");
    assert!(p.processes.min >= 2.0, "postmaster and workers: {p:?}");
    assert!(p.cpu_pct.mean < 50.0, "{p:?}");
    assert!(t.exited_at_s.is_none());
}
