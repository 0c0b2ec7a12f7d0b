//! Is A different from B? Welch's unequal-variance t-test over two samples, e.g. one metric of
//! repeated runs of a baseline and of a candidate.

use crate::stats::{describe, t_two_sided_p};
use serde::{Deserialize, Serialize};

/// The result of Welch's t-test of mean(a) against mean(b).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// t statistic, (mean(a) − mean(b)) / √(s²ₐ/nₐ + s²_b/n_b): negative when a's mean is lower.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// Two-sided p-value: the probability of a |t| at least this large if both means were
    /// equal. Small (e.g. < 0.05) means the difference is unlikely to be noise.
    pub p_value: f64,
}

/// Welch's t-test (Welch 1947, "The generalization of 'Student's' problem when several different
/// population variances are involved"), which does not assume equal variances.
///
/// Returns `None` when it cannot be computed:
/// - either side has fewer than 2 values (no sample variance exists): callers should collect
///   more repetitions, or report the difference of the single values without significance;
/// - both sides have zero variance (every value in a equal, every value in b equal): the test
///   has no noise to weigh the difference against. Callers should then compare the means
///   directly: equal means are "no difference", different means are a deterministic
///   difference (report it as such, not as a p-value).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let sa = describe(a)?;
    let sb = describe(b)?;
    if sa.variance == 0.0 && sb.variance == 0.0 {
        return None;
    }
    // Squared standard errors of each mean: s²/n.
    let va = sa.variance / sa.n as f64;
    let vb = sb.variance / sb.n as f64;
    // Welch 1947: t = (x̄ₐ − x̄_b) / √(s²ₐ/nₐ + s²_b/n_b).
    let t = (sa.mean - sb.mean) / (va + vb).sqrt();
    // Welch–Satterthwaite df (Satterthwaite 1946; Welch 1947):
    // ν = (s²ₐ/nₐ + s²_b/n_b)² / [ (s²ₐ/nₐ)²/(nₐ − 1) + (s²_b/n_b)²/(n_b − 1) ].
    let df =
        (va + vb) * (va + vb) / (va * va / (sa.n as f64 - 1.0) + vb * vb / (sb.n as f64 - 1.0));
    // Two-sided p from Student's t with ν df (A&S 26.7.1, via the incomplete beta).
    let p_value = t_two_sided_p(t, df);
    Some(Welch { t, df, p_value })
}

/// A p-value as a report prints it: "p < 0.001" below 0.001 (smaller figures are beyond what
/// a handful of runs and the t approximation can vouch for, and "p = 0.000" reads as
/// certainty), otherwise "p = 0.043", "p = 0.11", "p = 0.5" — two significant digits, trailing
/// zeros dropped; "p unknown" for NaN (no test could be made).
pub fn p_text(p: f64) -> String {
    if !p.is_finite() {
        return "p unknown".into();
    }
    if p < 0.001 {
        return "p < 0.001".into();
    }
    // Decimals for two significant digits: 0.043 needs 3, 0.11 needs 2, 0.5 needs 2 (0.50).
    let decimals = (1 - p.log10().floor() as i32).max(0) as usize;
    let text = format!("{p:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("p = {text}")
}

/// A signed percentage as reports print it, "+10.0 %" or "−42.9 %", with a true minus sign.
pub(crate) fn pct_text(pct: f64) -> String {
    format!("{pct:+.1} %").replacen('-', "\u{2212}", 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn welch_on_known_data() {
        let a = [19.1, 20.3, 18.7, 21.0, 19.9];
        let b = [22.4, 23.1, 21.8, 24.0, 22.9];
        // By hand:
        //   a: Σ = 99.0, x̄ = 19.8; deviations −0.7, 0.5, −1.1, 1.2, 0.1;
        //      squares 0.49 + 0.25 + 1.21 + 1.44 + 0.01 = 3.40; s² = 3.40 / 4 = 0.85.
        //   b: Σ = 114.2, x̄ = 22.84; deviations −0.44, 0.26, −1.04, 1.16, 0.06;
        //      squares 0.1936 + 0.0676 + 1.0816 + 1.3456 + 0.0036 = 2.692; s² = 0.673.
        //   s²ₐ/nₐ = 0.17, s²_b/n_b = 0.1346, sum 0.3046, √ = 0.5519058...
        //   t = (19.8 − 22.84) / 0.5519058 = −3.04 / 0.5519058 = −5.508186.
        //   df = 0.3046² / (0.17²/4 + 0.1346²/4) = 0.09278116 / (0.007225 + 0.00452929)
        //      = 0.09278116 / 0.01175429 = 7.893387.
        //   p = I_{df/(df+t²)}(df/2, ½) = 0.00059530 (checked against direct numerical
        //      integration of the t density: 2∫_{5.508}^∞ f(u; 7.893) du = 0.000595300).
        let w = welch(&a, &b).unwrap();
        assert!((w.t - -5.508186470).abs() < 1e-6, "{w:?}");
        assert!((w.df - 7.893387010).abs() < 1e-6, "{w:?}");
        assert!((w.p_value - 0.000595299640).abs() < 1e-9, "{w:?}");
        // Swapping the sides flips t only.
        let back = welch(&b, &a).unwrap();
        assert!((back.t + w.t).abs() < 1e-12);
        assert!((back.df - w.df).abs() < 1e-12);
        assert!((back.p_value - w.p_value).abs() < 1e-15);
    }

    #[test]
    fn welch_not_computable() {
        assert_eq!(welch(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch(&[1.0, 2.0], &[]), None);
        assert_eq!(welch(&[3.0, 3.0, 3.0], &[4.0, 4.0]), None);
        // One side constant is fine: the other side's variance carries the test.
        let w = welch(&[3.0, 3.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!(w.t < 0.0 && w.p_value > 0.0 && w.p_value < 1.0);
        // Here df is exactly n_b − 1.
        assert!((w.df - 2.0).abs() < 1e-12);
    }

    #[test]
    fn clearly_equal_samples_have_large_p() {
        let a = [10.0, 11.0, 9.0, 10.5, 9.5];
        let b = [10.2, 10.8, 9.1, 10.4, 9.6];
        let w = welch(&a, &b).unwrap();
        assert!(w.p_value > 0.5, "{w:?}");
    }

    #[test]
    fn p_values_are_worded_to_two_significant_digits() {
        for (p, want) in [
            (0.0, "p < 0.001"),
            (0.000_595, "p < 0.001"),
            (0.000_999_9, "p < 0.001"),
            (0.001, "p = 0.001"),
            (0.001_23, "p = 0.0012"),
            (0.012_3, "p = 0.012"),
            (0.043, "p = 0.043"),
            (0.049_96, "p = 0.05"),
            (0.11, "p = 0.11"),
            (0.114_9, "p = 0.11"),
            (0.5, "p = 0.5"),
            (0.999, "p = 1"),
            (1.0, "p = 1"),
            (f64::NAN, "p unknown"),
        ] {
            assert_eq!(p_text(p), want, "{p}");
        }
    }

    proptest! {
        #[test]
        fn welch_of_a_sample_with_itself_is_null(xs in proptest::collection::vec(-1e4f64..1e4, 2..30)) {
            let s = describe(&xs).unwrap();
            prop_assume!(s.variance > 0.0);
            let w = welch(&xs, &xs).unwrap();
            prop_assert_eq!(w.t, 0.0);
            prop_assert_eq!(w.p_value, 1.0);
            // Equal variances and sizes: df = 2(n − 1).
            prop_assert!((w.df - 2.0 * (xs.len() as f64 - 1.0)).abs() < 1e-9 * w.df);
        }

        #[test]
        fn p_value_is_a_probability(
            a in proptest::collection::vec(-1e3f64..1e3, 2..20),
            b in proptest::collection::vec(-1e3f64..1e3, 2..20),
        ) {
            if let Some(w) = welch(&a, &b) {
                prop_assert!((0.0..=1.0).contains(&w.p_value));
                prop_assert!(w.df >= 1.0 - 1e-9);
            }
        }
    }
}
