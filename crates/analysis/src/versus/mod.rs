//! "A vs B" over repeated runs, in the shape published studies use: for each of mean, p99,
//! max and min latency, each side's mean and variance over its runs, and B's difference from
//! A in percent, worded "B is faster" or "B is slower" when the runs resolve it.
//!
//! A difference is resolved by Welch's t-test at p < 0.05 with two runs or more on each side,
//! made on the logarithm of the per-run figures: latencies are positive and skewed, and what
//! matters is their ratio, which the log turns into a difference (a figure ≤ 0 on either side
//! leaves the test on the raw figures). With one run on a side there is no spread to weigh a
//! difference against, so it is never resolved; the sentence says so and gives the move:
//! "not resolved with 5 runs (−42.9 %, p = 0.11)", "not resolved with one run of A (+10.0 %)".
//!
//! Every A-vs-B question is answered in this module: here a plan's `[[versus]]`, in [`runs`]
//! stored runs against each other or a baseline (and rankings of several), in [`welch`](mod@welch)
//! the test both use.

pub mod runs;
pub mod welch;

use crate::stats::describe;
use crate::verdict::runs_text;
pub use perfbase_core::study::{Versus, VersusStat, VersusStep};
use welch::{p_text, pct_text, welch};

/// The statistics compared, in order.
pub const STATS: [&str; 4] = ["mean", "p99", "max", "min"];
const ALPHA: f64 = 0.05;
/// With runs that all agree on each side (no spread to test), a move beyond this share is
/// resolved: the runs say the same thing every time.
const TOLERANCE: f64 = 0.05;

/// Welch's test of `va` against `vb` on the log scale when every figure is positive, else on
/// the raw figures: its p-value and whether B's figures are the higher.
fn test(va: &[f64], vb: &[f64]) -> Option<(f64, bool)> {
    let positive = va.iter().chain(vb).all(|&v| v > 0.0);
    let w = if positive {
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
        welch(&ln(va), &ln(vb))
    } else {
        welch(va, vb)
    }?;
    // t = (A − B) / se: negative when B is higher.
    Some((w.p_value, w.t < 0.0))
}

/// One step's block: `runs_a` and `runs_b` hold each run's (mean, p99, max, min) in ms.
pub fn versus_step(
    step: &str,
    b_label: &str,
    runs_a: Vec<[f64; 4]>,
    runs_b: Vec<[f64; 4]>,
) -> Option<VersusStep> {
    let mut stats = Vec::new();
    let (na, nb) = (runs_a.len(), runs_b.len());
    for (i, stat) in STATS.iter().enumerate() {
        let va: Vec<f64> = runs_a.iter().map(|r| r[i]).collect();
        let vb: Vec<f64> = runs_b.iter().map(|r| r[i]).collect();
        let (a, b) = (describe(&va)?, describe(&vb)?);
        let delta_pct = (a.mean != 0.0).then(|| (b.mean - a.mean) / a.mean * 100.0);
        let tested = (na >= 2 && nb >= 2).then(|| test(&va, &vb));
        let p_value = tested.flatten().map(|(p, _)| p);
        let (resolved, sentence) = verdict(stat, b_label, (na, nb), delta_pct, tested);
        stats.push(VersusStat {
            stat: stat.to_string(),
            a,
            b,
            delta_pct,
            p_value,
            sentence,
            resolved,
        });
    }
    Some(VersusStep {
        step: step.to_string(),
        stats,
        runs_a,
        runs_b,
    })
}

/// Whether the runs resolve B's move `delta_pct` in `stat`, and the sentence that says so;
/// `tested` is Welch's test on the log scale (None: fewer than two runs a side; Some(None):
/// no spread on either side).
fn verdict(
    stat: &str,
    b_label: &str,
    (na, nb): (usize, usize),
    delta_pct: Option<f64>,
    tested: Option<Option<(f64, bool)>>,
) -> (bool, String) {
    match (delta_pct, tested) {
        (None, _) => (
            false,
            format!("{b_label}: no difference in percent (A's {stat} is 0)"),
        ),
        // Fewer than two runs on a side: no spread to weigh the move against.
        (Some(d), None) => (
            false,
            format!(
                "not resolved {} ({})",
                runs_text(na, nb, b_label),
                pct_text(d)
            ),
        ),
        (Some(d), Some(Some((p, b_higher)))) => {
            // The test (on the log scale, a ratio of typical runs) and the difference of
            // means could point different ways on skewed runs; then nothing is resolved.
            let agree = d != 0.0 && (d > 0.0) == b_higher;
            if p < ALPHA && agree {
                let how = if d < 0.0 { "faster" } else { "slower" };
                (
                    true,
                    format!("{b_label} is {:.1} % {how} ({})", d.abs(), p_text(p)),
                )
            } else {
                (
                    false,
                    format!(
                        "not resolved {} ({}, {})",
                        runs_text(na, nb, b_label),
                        pct_text(d),
                        p_text(p)
                    ),
                )
            }
        }
        // Two runs or more a side, all alike on each: the move is the same every time.
        (Some(d), Some(None)) if d.abs() > TOLERANCE * 100.0 => {
            let how = if d < 0.0 { "faster" } else { "slower" };
            (
                true,
                format!("{b_label} is {:.1} % {how} (every run alike)", d.abs()),
            )
        }
        (Some(d), Some(None)) => (
            false,
            format!(
                "not resolved {} ({}, every run alike)",
                runs_text(na, nb, b_label),
                pct_text(d)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolved_difference_is_worded_in_percent_with_its_p() {
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
        // ln-scale Welch: ln 10, ln 11, ln 10.5 against ln 8, ln 8.2, ln 7.9: t = 9.02 on 2.62 df, p = 0.0048.
        assert!(mean.resolved);
        assert_eq!(mean.sentence, "OpenBao is 23.5 % faster (p = 0.0048)");
        assert!(mean.p_value.unwrap() < 0.05);
        let p99 = &s.stats[1];
        assert!(!p99.resolved);
        assert!(
            p99.sentence
                .starts_with("not resolved with 3 runs (+0.0 %, p = "),
            "{p99:?}"
        );
        // Equal runs on both sides: nothing to test, no move.
        assert!(!s.stats[3].resolved);
        assert_eq!(
            s.stats[3].sentence,
            "not resolved with 3 runs (+0.0 %, every run alike)"
        );
        for st in &s.stats {
            assert!(!st.sentence.contains("within noise") && !st.sentence.contains("0.000"));
        }
    }

    #[test]
    fn a_large_move_five_runs_cannot_resolve_is_named_so() {
        // A 43 % drop whose runs scatter widely: the example, never "within noise".
        let a: Vec<[f64; 4]> = [10.0, 30.0, 12.0, 40.0, 8.0]
            .iter()
            .map(|&v| [v; 4])
            .collect();
        let b: Vec<[f64; 4]> = [6.0, 9.0, 30.0, 4.0, 8.0].iter().map(|&v| [v; 4]).collect();
        let s = versus_step("x", "B", a.clone(), b).unwrap();
        let st = &s.stats[0];
        assert!((st.delta_pct.unwrap() - -43.0).abs() < 1e-9, "{st:?}");
        assert!(!st.resolved);
        let p = st.p_value.unwrap();
        assert!(p > 0.05, "{p}");
        assert_eq!(
            st.sentence,
            format!("not resolved with 5 runs (\u{2212}43.0 %, {})", p_text(p))
        );
        // Different run counts are both named.
        let b7: Vec<[f64; 4]> = [9.0, 31.0, 11.0, 38.0, 9.0, 20.0, 15.0]
            .iter()
            .map(|&v| [v; 4])
            .collect();
        let s = versus_step("x", "B", a, b7).unwrap();
        assert!(
            s.stats[0]
                .sentence
                .starts_with("not resolved with 5 and 7 runs ("),
            "{:?}",
            s.stats[0]
        );
    }

    #[test]
    fn the_test_is_made_on_the_log_scale() {
        // Runs spread proportionally to their size (a ratio of 2 everywhere): on the log scale
        // both sides have the same spread, and the test is of that ratio.
        let a: Vec<[f64; 4]> = [1.0, 1.1, 0.9, 1.05].iter().map(|&v| [v; 4]).collect();
        let b: Vec<[f64; 4]> = [2.0, 2.2, 1.8, 2.1].iter().map(|&v| [v; 4]).collect();
        let s = versus_step("x", "B", a, b).unwrap();
        let ln = |v: &[f64]| v.iter().map(|x: &f64| x.ln()).collect::<Vec<_>>();
        let want = welch(&ln(&[1.0, 1.1, 0.9, 1.05]), &ln(&[2.0, 2.2, 1.8, 2.1])).unwrap();
        assert_eq!(s.stats[0].p_value, Some(want.p_value));
        assert!(s.stats[0].resolved);
        assert!(s.stats[0].sentence.starts_with("B is 100.0 % slower (p"));
        // A figure of 0 leaves the log undefined: the raw figures are tested.
        let a: Vec<[f64; 4]> = [0.0, 1.0, 0.5]
            .iter()
            .map(|&v| [1.0, 1.0, 1.0, v])
            .collect();
        let b: Vec<[f64; 4]> = [2.0, 3.0, 2.5]
            .iter()
            .map(|&v| [1.0, 1.0, 1.0, v])
            .collect();
        let s = versus_step("x", "B", a, b).unwrap();
        let raw = welch(&[0.0, 1.0, 0.5], &[2.0, 3.0, 2.5]).unwrap();
        assert_eq!(s.stats[3].p_value, Some(raw.p_value));
    }

    #[test]
    fn single_runs_are_never_resolved() {
        let s = versus_step("x", "B", vec![[10.0; 4]], vec![[11.0; 4]]).unwrap();
        assert_eq!(
            s.stats[0].sentence,
            "not resolved with one run a side (+10.0 %)"
        );
        assert!(!s.stats[0].resolved);
        assert!(s.stats[0].p_value.is_none());
        let s = versus_step("x", "B", vec![[10.0; 4]], vec![[11.0; 4], [12.0; 4]]).unwrap();
        assert_eq!(
            s.stats[0].sentence,
            "not resolved with one run of A (+15.0 %)"
        );
        let s = versus_step("x", "B", vec![[10.0; 4], [12.0; 4]], vec![[11.0; 4]]).unwrap();
        assert_eq!(
            s.stats[0].sentence,
            "not resolved with one run of B (+0.0 %)"
        );
        assert!(versus_step("x", "B", vec![], vec![[1.0; 4]]).is_none());
    }
}
