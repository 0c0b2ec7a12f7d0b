//! How quiet the machine was while a plan ran, for a page to state beside its figures: a
//! calibration's run-to-run variation before the load (the noise floor no figure can be
//! trusted below), the CPU time the hypervisor took (steal) and the CPU neither perfbase nor a
//! watched service used, over the run (/proc/stat), and where the generator or the machine,
//! not the service, was the limit.

use perfbase_core::monitor::MonitorReport;
use perfbase_core::phase::PhaseKind;
use perfbase_core::study::Noise;
use std::time::{Duration, Instant};

/// The calibration's runs: enough for an interval of the median (5) and then some.
const CALIBRATION_RUNS: usize = 7;
/// Work per calibration run: about 20 ms on one core of this machine's class.
const CALIBRATION_WORK: u64 = 4_000_000;

/// /proc/stat's CPU line when the run started, and when.
pub struct Before {
    cpu: Option<CpuTimes>,
    at: Instant,
    calibration: Vec<f64>,
}

/// The machine's CPU time so far, in clock ticks.
#[derive(Clone, Copy)]
struct CpuTimes {
    busy: u64,
    steal: u64,
    total: u64,
}

fn cpu_times() -> Option<CpuTimes> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    // user nice system idle iowait irq softirq steal guest guest_nice; guests are already in
    // user and nice.
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    if v.len() < 8 {
        return None;
    }
    let total: u64 = v[..8].iter().sum();
    let idle = v[3] + v[4];
    Some(CpuTimes {
        busy: total - idle - v[7],
        steal: v[7],
        total,
    })
}

/// A fixed amount of CPU work, timed: runs of it per second. Its spread from run to run is
/// the machine's own, since the work never changes.
fn calibration_run() -> f64 {
    let start = Instant::now();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..CALIBRATION_WORK {
        // A xorshift step the compiler cannot fold away (its result is used below).
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_add(i);
    }
    std::hint::black_box(x);
    1.0 / start.elapsed().max(Duration::from_nanos(1)).as_secs_f64()
}

/// Calibrates, then reads /proc/stat: call just before the first load.
pub fn before() -> Before {
    let calibration = (0..CALIBRATION_RUNS).map(|_| calibration_run()).collect();
    Before {
        cpu: cpu_times(),
        at: Instant::now(),
        calibration,
    }
}

/// The run's noise, from `before` to now, with the monitor's report (perfbase's and the
/// watched services' CPU, the generator's saturation).
pub fn after(before: &Before, monitor: Option<&MonitorReport>) -> Noise {
    let wall = before.at.elapsed().as_secs_f64();
    let (mut steal_pct, mut busy_cores) = (f64::NAN, f64::NAN);
    if let (Some(a), Some(b)) = (before.cpu, cpu_times()) {
        let total = b.total.saturating_sub(a.total) as f64;
        if total > 0.0 {
            steal_pct = b.steal.saturating_sub(a.steal) as f64 / total * 100.0;
        }
        // Ticks are 1/100 s on Linux (USER_HZ): busy core-seconds over the wall time.
        if wall > 0.0 {
            busy_cores = b.busy.saturating_sub(a.busy) as f64 / 100.0 / wall;
        }
    }
    let mut limits = Vec::new();
    let mut watched_cores = 0.0;
    if let Some(m) = monitor {
        for t in &m.targets {
            // Core-seconds over the samples, as a share of the wall time: a mean of cores.
            let core_s: f64 = t
                .phases
                .iter()
                .filter(|p| p.kind() != PhaseKind::Idle)
                .map(|p| p.cpu_pct.mean / 100.0 * p.samples as f64 * m.interval_s)
                .filter(|v| v.is_finite())
                .sum();
            watched_cores += core_s / wall.max(1e-9);
        }
        if m.generator_saturated {
            limits.push(format!(
                "perfbase itself used more than 90 % of its {} cores in some phase: the load \
                 generator, not the service, may have been the limit there",
                m.cores
            ));
        }
        // The monitor warns once per phase too short to sample; a precision target's many
        // short runs would bury every other limit under them: one line says how many.
        let (short, other): (Vec<&String>, Vec<&String>) = m
            .warnings
            .iter()
            .partition(|w| w.contains("has no samples"));
        limits.extend(other.into_iter().cloned());
        if !short.is_empty() {
            limits.push(format!(
                "{} phase{} ended before the monitor's first sample ({} s apart): no CPU or \
                 memory figure for {}",
                short.len(),
                if short.len() == 1 { "" } else { "s" },
                m.interval_s,
                if short.len() == 1 { "it" } else { "them" }
            ));
        }
    }
    let cores = crate::limits::cores() as f64;
    if busy_cores >= 0.9 * cores {
        limits.push(format!(
            "the machine's {cores} cores were {:.0} % busy over the run: load generator and \
             services competed for them",
            busy_cores / cores * 100.0
        ));
    }
    Noise {
        calibration_rps: perfbase_analysis::stats::describe(&before.calibration),
        steal_pct,
        others_cpu_pct: ((busy_cores - watched_cores) * 100.0).max(0.0),
        limits,
    }
}
