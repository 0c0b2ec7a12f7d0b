//! The `monitor` section of a result: what the measured services (and perfbase itself) cost
//! while perfbase loaded them — per target, min/mean/max per phase and the whole timeline.
//!
//! Only the data lives here, so every crate that reads a result can type it; perfbase-monitor
//! samples and builds it and re-exports these types. Figures that can be undefined are NaN in
//! memory and `null` in JSON, through [`crate::nan`].

use crate::phase::PhaseKind;
use serde::{Deserialize, Serialize};

/// Everything the monitor saw.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct MonitorReport {
    /// Sampling interval, seconds.
    #[serde(with = "crate::nan::f64")]
    pub interval_s: f64,
    /// Cores perfbase had (`available_parallelism`); `cpu_pct_machine` divides by this.
    pub cores: u32,
    /// The selected targets in selector order, then `perfbase (self)`.
    pub targets: Vec<TargetReport>,
    /// perfbase's own CPU averaged over some phase exceeded 90 % of its cores.
    pub generator_saturated: bool,
    pub warnings: Vec<String>,
}

/// One monitored target.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct TargetReport {
    /// The selector text, or `perfbase (self)`.
    pub label: String,
    /// `process`, `cgroup` or `self`.
    pub kind: String,
    /// The root pids matched at start (for a cgroup: its processes at start).
    pub pids: Vec<u32>,
    /// Seconds after the monitor started at which the target was first seen gone.
    pub exited_at_s: Option<f64>,
    /// Phases in the order they were first marked; only phases with samples.
    pub phases: Vec<PhaseStats>,
    /// Every sample, in time order.
    pub timeline: Vec<Sample>,
}

/// min/mean/max of each metric over the samples of one phase.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PhaseStats {
    pub name: String,
    pub samples: usize,
    /// CPU, % of one core (200 = two cores busy).
    pub cpu_pct: Stat,
    /// CPU, % of the cores perfbase had (`cpu_pct / cores`).
    pub cpu_pct_machine: Stat,
    pub rss_bytes: Stat,
    pub vsz_bytes: Stat,
    pub threads: Stat,
    /// `None` when no sample could count them (permission denied).
    pub fds: Option<Stat>,
    pub ctx_switches_per_s: Stat,
    /// cgroup targets only.
    pub memory_current_bytes: Option<Stat>,
    /// Processes in the target (root, descendants, or cgroup members).
    pub processes: Stat,
}

/// min, mean and max of one metric over some samples.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    #[serde(with = "crate::nan::f64")]
    pub min: f64,
    #[serde(with = "crate::nan::f64")]
    pub mean: f64,
    #[serde(with = "crate::nan::f64")]
    pub max: f64,
}

impl Stat {
    /// `None` for no values.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Stat> {
        let mut n = 0usize;
        let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        for v in values {
            n += 1;
            min = min.min(v);
            max = max.max(v);
            sum += v;
        }
        (n > 0).then(|| Stat {
            min,
            mean: sum / n as f64,
            max,
        })
    }
}

/// One sample: the interval that ended at `t_s`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Sample {
    /// Seconds after the monitor started.
    #[serde(with = "crate::nan::f64")]
    pub t_s: f64,
    pub phase: String,
    /// % of one core over the interval.
    #[serde(with = "crate::nan::f64")]
    pub cpu_pct: f64,
    pub rss_bytes: u64,
    pub vsz_bytes: u64,
    pub threads: u64,
    pub fds: Option<u64>,
    #[serde(with = "crate::nan::f64")]
    pub ctx_switches_per_s: f64,
    pub memory_current_bytes: Option<u64>,
    pub processes: u32,
}

impl MonitorReport {
    /// The target with this label (a selector's text, or `perfbase (self)`).
    pub fn target(&self, label: &str) -> Option<&TargetReport> {
        self.targets.iter().find(|t| t.label == label)
    }

    /// perfbase's own process, always present.
    pub fn generator(&self) -> Option<&TargetReport> {
        self.targets.iter().find(|t| t.kind == "self")
    }
}

impl TargetReport {
    /// The statistics of the phase with this name, if it has samples.
    pub fn phase(&self, name: &str) -> Option<&PhaseStats> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The idle baseline, if it was sampled.
    pub fn idle(&self) -> Option<&PhaseStats> {
        self.phases.iter().find(|p| p.kind() == PhaseKind::Idle)
    }

    /// The phases with load running: warm-ups and measured steps.
    pub fn loaded(&self) -> impl Iterator<Item = &PhaseStats> {
        self.phases.iter().filter(|p| p.kind().under_load())
    }

    /// `f` of the loaded phases, their mean weighted by samples (`None` without a sample).
    pub fn loaded_mean(&self, f: impl Fn(&PhaseStats) -> f64) -> Option<f64> {
        let n: usize = self.loaded().map(|p| p.samples).sum();
        (n > 0).then(|| self.loaded().map(|p| f(p) * p.samples as f64).sum::<f64>() / n as f64)
    }

    /// The highest `f` of the loaded phases (NaN without one).
    pub fn loaded_peak(&self, f: impl Fn(&PhaseStats) -> f64) -> f64 {
        self.loaded().map(f).fold(f64::NAN, f64::max)
    }
}

impl PhaseStats {
    /// What the phase was for.
    pub fn kind(&self) -> PhaseKind {
        PhaseKind::of(&self.name)
    }
}

impl Sample {
    /// What the phase it was taken in was for.
    pub fn kind(&self) -> PhaseKind {
        PhaseKind::of(&self.phase)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(a: f64) -> Stat {
        Stat {
            min: a,
            mean: a + 0.5,
            max: a + 1.0,
        }
    }

    fn sample(t_s: f64, cpu_pct: f64, fds: Option<u64>, memory: Option<u64>) -> Sample {
        Sample {
            t_s,
            phase: "idle".into(),
            cpu_pct,
            rss_bytes: 100,
            vsz_bytes: 200,
            threads: 4,
            fds,
            ctx_switches_per_s: cpu_pct * 4.0,
            memory_current_bytes: memory,
            processes: 1,
        }
    }

    fn report() -> MonitorReport {
        MonitorReport {
            interval_s: 1.0,
            cores: 4,
            targets: vec![
                TargetReport {
                    label: "pid:1".into(),
                    kind: "process".into(),
                    pids: vec![1, 2],
                    exited_at_s: Some(4.5),
                    phases: vec![PhaseStats {
                        name: "idle".into(),
                        samples: 2,
                        cpu_pct: st(1.0),
                        cpu_pct_machine: st(0.25),
                        rss_bytes: st(100.0),
                        vsz_bytes: st(200.0),
                        threads: st(4.0),
                        fds: Some(st(10.0)),
                        ctx_switches_per_s: st(50.0),
                        memory_current_bytes: None,
                        processes: st(1.0),
                    }],
                    timeline: vec![
                        sample(1.0, 12.5, Some(10), None),
                        sample(2.0, 0.0, None, Some(4096)),
                    ],
                },
                TargetReport {
                    label: "perfbase (self)".into(),
                    kind: "self".into(),
                    pids: vec![3],
                    exited_at_s: None,
                    phases: vec![],
                    timeline: vec![],
                },
            ],
            generator_saturated: false,
            warnings: vec!["w".into()],
        }
    }

    /// The JSON of finite figures, as written before these types moved here (and before the
    /// NaN adapter): same fields, same order, same numbers.
    const FINITE_JSON: &str = r#"{"interval_s":1.0,"cores":4,"targets":[{"label":"pid:1","kind":"process","pids":[1,2],"exited_at_s":4.5,"phases":[{"name":"idle","samples":2,"cpu_pct":{"min":1.0,"mean":1.5,"max":2.0},"cpu_pct_machine":{"min":0.25,"mean":0.75,"max":1.25},"rss_bytes":{"min":100.0,"mean":100.5,"max":101.0},"vsz_bytes":{"min":200.0,"mean":200.5,"max":201.0},"threads":{"min":4.0,"mean":4.5,"max":5.0},"fds":{"min":10.0,"mean":10.5,"max":11.0},"ctx_switches_per_s":{"min":50.0,"mean":50.5,"max":51.0},"memory_current_bytes":null,"processes":{"min":1.0,"mean":1.5,"max":2.0}}],"timeline":[{"t_s":1.0,"phase":"idle","cpu_pct":12.5,"rss_bytes":100,"vsz_bytes":200,"threads":4,"fds":10,"ctx_switches_per_s":50.0,"memory_current_bytes":null,"processes":1},{"t_s":2.0,"phase":"idle","cpu_pct":0.0,"rss_bytes":100,"vsz_bytes":200,"threads":4,"fds":null,"ctx_switches_per_s":0.0,"memory_current_bytes":4096,"processes":1}]},{"label":"perfbase (self)","kind":"self","pids":[3],"exited_at_s":null,"phases":[],"timeline":[]}],"generator_saturated":false,"warnings":["w"]}"#;

    #[test]
    fn finite_report_json_is_unchanged() {
        let r = report();
        assert_eq!(serde_json::to_string(&r).expect("serialises"), FINITE_JSON);
        let back: MonitorReport = serde_json::from_str(FINITE_JSON).expect("reads");
        assert_eq!(back, r);
    }

    #[test]
    fn nan_figures_read_back() {
        let mut r = report();
        r.targets[0].phases[0].cpu_pct = Stat {
            min: f64::NAN,
            mean: f64::NAN,
            max: 3.0,
        };
        r.targets[0].timeline[0].cpu_pct = f64::NAN;
        r.targets[0].timeline[0].ctx_switches_per_s = f64::INFINITY;
        let value = serde_json::to_value(&r).expect("serialises");
        assert_eq!(
            value["targets"][0]["timeline"][0]["cpu_pct"],
            serde_json::Value::Null
        );
        let back: MonitorReport = serde_json::from_value(value).expect("reads");
        let t = &back.targets[0];
        assert!(t.phases[0].cpu_pct.min.is_nan() && t.phases[0].cpu_pct.mean.is_nan());
        assert_eq!(t.phases[0].cpu_pct.max, 3.0);
        assert!(t.timeline[0].cpu_pct.is_nan() && t.timeline[0].ctx_switches_per_s.is_nan());
        assert_eq!(t.timeline[1], r.targets[0].timeline[1]);
    }

    #[test]
    fn lookups_and_stat_of() {
        let r = report();
        assert_eq!(r.target("pid:1").map(|t| t.pids.len()), Some(2));
        assert!(r.target("pid:9").is_none());
        assert_eq!(
            r.generator().map(|g| g.label.as_str()),
            Some("perfbase (self)")
        );
        let t = r.target("pid:1").expect("target");
        assert_eq!(t.phase("idle").map(|p| p.samples), Some(2));
        assert!(t.phase("measure").is_none());

        assert_eq!(Stat::of([]), None);
        let s = Stat::of([2.0, 4.0, 9.0]).expect("three values");
        assert_eq!((s.min, s.mean, s.max), (2.0, 5.0, 9.0));
    }
}
