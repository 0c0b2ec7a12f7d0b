//! "A vs B" over repeated runs, in the shape published studies use: for each of mean, p99,
//! max and min latency, each side's mean and variance over its runs, and B's difference from
//! A in percent, worded "B is faster" or "B is slower" when it is real.
//!
//! A difference is real by the rule of [`crate::comparison`]: Welch's t-test at p < 0.05 with
//! two runs or more on each side; with one run on a side, a move beyond 5 %.

use crate::compare::welch;
use crate::stats::describe;
pub use perfbase_core::study::{Versus, VersusStat, VersusStep};

/// The statistics compared, in order.
pub const STATS: [&str; 4] = ["mean", "p99", "max", "min"];
const ALPHA: f64 = 0.05;
const TOLERANCE: f64 = 0.05;

/// One step's block: `runs_a` and `runs_b` hold each run's (mean, p99, max, min) in ms.
pub fn versus_step(
    step: &str,
    b_label: &str,
    runs_a: Vec<[f64; 4]>,
    runs_b: Vec<[f64; 4]>,
) -> Option<VersusStep> {
    let mut stats = Vec::new();
    for (i, stat) in STATS.iter().enumerate() {
        let va: Vec<f64> = runs_a.iter().map(|r| r[i]).collect();
        let vb: Vec<f64> = runs_b.iter().map(|r| r[i]).collect();
        let (a, b) = (describe(&va)?, describe(&vb)?);
        let delta_pct = (a.mean != 0.0).then(|| (b.mean - a.mean) / a.mean * 100.0);
        let p_value = welch(&va, &vb).map(|w| w.p_value);
        let real = match (va.len() >= 2 && vb.len() >= 2, p_value) {
            (true, Some(p)) => p < ALPHA,
            // No spread to test against: a move beyond the tolerance is real.
            _ => delta_pct.is_some_and(|d| d.abs() > TOLERANCE * 100.0),
        };
        let sentence = match delta_pct {
            Some(d) if real && d < 0.0 => format!("{b_label} is {:.1} % faster", -d),
            Some(d) if real => format!("{b_label} is {d:.1} % slower"),
            Some(d) => format!("{b_label} is within noise ({d:+.1} %)"),
            None => format!("{b_label}: no difference in percent (A's {stat} is 0)"),
        };
        stats.push(VersusStat {
            stat: stat.to_string(),
            a,
            b,
            delta_pct,
            p_value,
            sentence,
        });
    }
    Some(VersusStep {
        step: step.to_string(),
        stats,
        runs_a,
        runs_b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_difference_is_worded_in_percent_and_noise_is_named() {
        let a = vec![
            [10.0, 20.0, 40.0, 1.0],
            [11.0, 21.0, 60.0, 1.0],
            [10.5, 19.0, 50.0, 1.0],
        ];
        let b = vec![
            [8.0, 20.5, 45.0, 1.0],
            [8.2, 19.5, 55.0, 1.0],
            [7.9, 20.0, 52.0, 1.0],
        ];
        let s = versus_step("encrypt", "OpenBao", a, b).unwrap();
        assert_eq!(s.stats.len(), 4);
        let mean = &s.stats[0];
        assert_eq!(mean.stat, "mean");
        assert!((mean.a.mean - 10.5).abs() < 1e-9 && (mean.a.variance - 0.25).abs() < 1e-9);
        assert_eq!(mean.sentence, "OpenBao is 23.5 % faster");
        assert!(mean.p_value.unwrap() < 0.05);
        assert!(
            s.stats[1]
                .sentence
                .starts_with("OpenBao is within noise (+"),
            "{:?}",
            s.stats[1]
        );
        // Equal runs on both sides: nothing to test, no move.
        assert_eq!(s.stats[3].sentence, "OpenBao is within noise (+0.0 %)");
    }

    #[test]
    fn single_runs_fall_back_to_the_tolerance() {
        let s = versus_step("x", "B", vec![[10.0; 4]], vec![[11.0; 4]]).unwrap();
        assert_eq!(s.stats[0].sentence, "B is 10.0 % slower");
        assert!(s.stats[0].p_value.is_none());
        assert!(versus_step("x", "B", vec![], vec![[1.0; 4]]).is_none());
    }
}
