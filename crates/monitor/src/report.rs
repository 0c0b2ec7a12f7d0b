//! The monitor's result: per target, min/mean/max per phase and the whole timeline.

// The report's data types live in the interface crate, as the result's `monitor` section, so
// every reader of a result can type it; this crate builds them.
pub use perfbase_core::monitor::{MonitorReport, PhaseStats, Sample, Stat, TargetReport};

/// Label of the target that is perfbase's own process.
pub const SELF_LABEL: &str = "perfbase (self)";
/// Phase of the samples taken before the first [`crate::Monitor::phase`] call.
pub const DEFAULT_PHASE: &str = "start";
/// perfbase's own CPU, as a share of the cores it had, above which the run is flagged.
pub const SATURATION_SHARE: f64 = 0.9;

/// `s` with min, mean and max multiplied by `factor`.
fn scaled(s: Stat, factor: f64) -> Stat {
    Stat {
        min: s.min * factor,
        mean: s.mean * factor,
        max: s.max * factor,
    }
}

/// A target's collected data, before statistics.
pub(crate) struct Collected {
    pub label: String,
    pub kind: &'static str,
    pub pids: Vec<u32>,
    pub exited_at_s: Option<f64>,
    pub timeline: Vec<Sample>,
    pub fds_denied: bool,
}

/// Statistics of the samples of one phase; `None` when the phase has none.
pub(crate) fn phase_stats(name: &str, timeline: &[Sample], cores: u32) -> Option<PhaseStats> {
    let s: Vec<&Sample> = timeline.iter().filter(|s| s.phase == name).collect();
    let stat = |f: &dyn Fn(&Sample) -> f64| Stat::of(s.iter().map(|x| f(x)));
    let cpu_pct = stat(&|x| x.cpu_pct)?;
    Some(PhaseStats {
        name: name.to_string(),
        samples: s.len(),
        cpu_pct,
        cpu_pct_machine: scaled(cpu_pct, 1.0 / f64::from(cores.max(1))),
        rss_bytes: stat(&|x| x.rss_bytes as f64)?,
        vsz_bytes: stat(&|x| x.vsz_bytes as f64)?,
        threads: stat(&|x| x.threads as f64)?,
        fds: Stat::of(s.iter().filter_map(|x| x.fds.map(|v| v as f64))),
        ctx_switches_per_s: stat(&|x| x.ctx_switches_per_s)?,
        memory_current_bytes: Stat::of(
            s.iter()
                .filter_map(|x| x.memory_current_bytes.map(|v| v as f64)),
        ),
        processes: stat(&|x| f64::from(x.processes))?,
    })
}

/// Turns the collected timelines into the report: phase statistics in the order the phases
/// were marked, the generator-saturation verdict and the warnings.
pub(crate) fn build(
    interval_s: f64,
    cores: u32,
    capacity: u32,
    phase_order: &[String],
    collected: Vec<Collected>,
    mut warnings: Vec<String>,
) -> MonitorReport {
    let mut targets = Vec::with_capacity(collected.len());
    let mut generator_saturated = false;
    for c in collected {
        let phases: Vec<PhaseStats> = phase_order
            .iter()
            .filter_map(|p| phase_stats(p, &c.timeline, cores))
            .collect();
        if c.kind == "self" {
            // Judged against the cores its worker threads could use: one thread (-t 1)
            // saturates at one core, however many the machine has.
            let usable = capacity.clamp(1, cores.max(1));
            for p in &phases {
                let share = p.cpu_pct.mean / (100.0 * f64::from(usable));
                if share > SATURATION_SHARE {
                    generator_saturated = true;
                    warnings.push(format!(
                        "perfbase itself used {:.0} % of the {} core(s) its worker threads \
                         could use: the figures may be limited by the load generator, not the \
                         target (phase \"{}\")",
                        share * 100.0,
                        usable,
                        p.name
                    ));
                }
            }
        } else {
            if let Some(t) = c.exited_at_s {
                warnings.push(format!(
                    "{} exited at {t:.1} s; its figures cover only the time before",
                    c.label
                ));
            }
            if c.fds_denied {
                warnings.push(format!(
                    "open file descriptors of {} could not be counted (permission denied): run \
                     perfbase as root or as the service's user",
                    c.label
                ));
            }
        }
        targets.push(TargetReport {
            label: c.label,
            kind: c.kind.to_string(),
            pids: c.pids,
            exited_at_s: c.exited_at_s,
            phases,
            timeline: c.timeline,
        });
    }
    MonitorReport {
        interval_s,
        cores,
        targets,
        generator_saturated,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, phase: &str, cpu_pct: f64, rss: u64) -> Sample {
        Sample {
            t_s,
            phase: phase.to_string(),
            cpu_pct,
            rss_bytes: rss,
            vsz_bytes: rss * 2,
            threads: 4,
            fds: Some(10),
            ctx_switches_per_s: 100.0,
            memory_current_bytes: None,
            processes: 1,
        }
    }

    #[test]
    fn stat_of_values() {
        assert_eq!(Stat::of([]), None);
        let s = Stat::of([2.0, 4.0, 9.0]).expect("three values");
        assert_eq!((s.min, s.mean, s.max), (2.0, 5.0, 9.0));
    }

    #[test]
    fn phases_and_saturation() {
        let timeline = vec![
            sample(1.0, "idle", 10.0, 100),
            sample(2.0, "idle", 20.0, 300),
            sample(3.0, "measure", 190.0, 500),
            sample(4.0, "measure", 186.0, 500),
        ];
        let collected = vec![
            Collected {
                label: "pid:1".into(),
                kind: "process",
                pids: vec![1],
                exited_at_s: Some(4.5),
                timeline: timeline.clone(),
                fds_denied: false,
            },
            Collected {
                label: SELF_LABEL.into(),
                kind: "self",
                pids: vec![2],
                exited_at_s: None,
                timeline,
                fds_denied: false,
            },
        ];
        let order = vec![
            DEFAULT_PHASE.to_string(),
            "idle".to_string(),
            "measure".to_string(),
        ];
        let r = build(1.0, 2, 2, &order, collected, vec![]);
        let t = r.target("pid:1").expect("target");
        assert_eq!(t.phases.len(), 2, "the empty start phase is left out");
        let idle = t.phase("idle").expect("idle");
        assert_eq!(idle.samples, 2);
        assert_eq!(idle.cpu_pct.mean, 15.0);
        assert_eq!(idle.cpu_pct_machine.mean, 7.5);
        assert_eq!(idle.rss_bytes.max, 300.0);
        assert_eq!(idle.fds.map(|f| f.mean), Some(10.0));
        assert!(idle.memory_current_bytes.is_none());
        // 188 % of one core on 2 cores is 94 % of the machine: saturated in "measure" only.
        assert!(r.generator_saturated);
        assert_eq!(r.generator().map(|g| g.label.as_str()), Some(SELF_LABEL));
        let sat: Vec<&String> = r.warnings.iter().filter(|w| w.contains("itself")).collect();
        assert_eq!(sat.len(), 1);
        assert!(sat[0].starts_with("perfbase itself used 94 % of the 2 core(s) its worker threads could use: the figures may be limited by the load generator, not the target"), "{}", sat[0]);
        assert!(sat[0].contains("measure"));
        assert!(r.warnings.iter().any(|w| w.contains("exited at 4.5 s")));

        let own = |cpu: f64| {
            vec![Collected {
                label: SELF_LABEL.into(),
                kind: "self",
                pids: vec![2],
                exited_at_s: None,
                timeline: vec![sample(1.0, "measure", cpu, 1)],
                fds_denied: false,
            }]
        };
        // 190 % of one core with 4 worker threads on 4 cores: not saturated…
        let r4 = build(1.0, 4, 4, &order, own(190.0), vec![]);
        assert!(!r4.generator_saturated);
        assert!(r4.warnings.is_empty());
        // …but one worker thread (-t 1) at 95 % of its core is, whatever the machine has.
        let r1 = build(1.0, 4, 1, &order, own(95.0), vec![]);
        assert!(r1.generator_saturated);
        assert!(
            r1.warnings[0].contains("95 % of the 1 core(s)"),
            "{:?}",
            r1.warnings
        );
    }
}
