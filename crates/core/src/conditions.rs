//! The conditions a study's figures were measured under, kept in its result beside them:
//! which scenarios ran interleaved and in what order, and how noisy the machine was.

use crate::study::Summary;
use serde::{Deserialize, Serialize};

/// Scenarios run in randomised blocks, one repetition of each per block, so drift over the
/// run and the order they run in fall on every side alike (Mytkowicz et al., ASPLOS 2009).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interleaving {
    /// The scenarios, as the plan names them.
    pub scenarios: Vec<String>,
    /// The seed the orders were drawn from (the plan's `seed`, or 0).
    pub seed: u64,
    /// Each block's order, by position in `scenarios`: `[[1, 0], [0, 1], …]` is BA, AB, ….
    pub blocks: Vec<Vec<usize>>,
}

impl Interleaving {
    /// The order as letters, A for the first scenario: `BA AB AB BA`.
    pub fn letters(&self) -> String {
        let letter = |i: usize| char::from(b'A' + (i % 26) as u8);
        let blocks: Vec<String> = self
            .blocks
            .iter()
            .map(|b| b.iter().map(|&i| letter(i)).collect())
            .collect();
        blocks.join(" ")
    }
}

/// The machine's noise during a run: how much a steady calibration load varied from run to
/// run, and the CPU that was not the load's or the services'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// The calibration scenario's throughput over its runs (a short closed loop against
    /// perfbase's own reference service, before the plan's load); none when it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_rps: Option<Summary>,
    /// Time the hypervisor gave other guests, in % of all CPU time over the run (/proc/stat).
    #[serde(with = "crate::nan::f64")]
    pub steal_pct: f64,
    /// CPU that neither perfbase nor a watched service used, in % of one core, over the run.
    #[serde(with = "crate::nan::f64")]
    pub others_cpu_pct: f64,
    /// Where the load generator or the machine, not the service, was the limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
}

impl Noise {
    /// The calibration's run-to-run variation (coefficient of variation, %), when it ran.
    pub fn floor_pct(&self) -> Option<f64> {
        self.calibration_rps
            .filter(|s| s.n >= 2 && s.mean > 0.0)
            .map(|s| s.stdev / s.mean * 100.0)
    }
}
