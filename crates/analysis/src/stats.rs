//! Descriptive statistics of repeated runs and the Student t distribution behind their
//! confidence intervals and behind [`crate::compare::welch`].
//!
//! The t distribution's CDF is computed from the regularised incomplete beta function, which
//! is evaluated with its continued fraction (modified Lentz) and a Lanczos log-gamma. All of it
//! is implemented here so the crate needs no numeric dependency.

use std::f64::consts::PI;

// Part of the result's `study` section, so it lives in the interface crate; re-exported here.
pub use perfbase_core::study::Summary;

/// Summarises `values`; `None` when there are none.
///
/// Values are expected to be finite; a NaN makes mean, variance and CI NaN.
pub fn describe(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let nf = n as f64;
    // Two-pass algorithm with the compensating term of Chan, Golub & LeVeque (1983, "Algorithms
    // for computing the sample variance"): mean first, then squared deviations from it; the
    // second sum of deviations corrects rounding in the first mean.
    let rough = values.iter().sum::<f64>() / nf;
    let dev_sum: f64 = values.iter().map(|x| x - rough).sum();
    let mean = rough + dev_sum / nf;
    let variance = if n < 2 {
        0.0
    } else {
        // Sample (Bessel-corrected) variance: Σ(x − x̄)² / (n − 1).
        let ss: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
        ss / (nf - 1.0)
    };
    let stdev = variance.sqrt();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ci95 = if n < 2 {
        (mean, mean)
    } else {
        // Student t interval for the mean (Student 1908): x̄ ± t₀.₉₇₅,ₙ₋₁ · s / √n.
        let half = t_quantile_975(nf - 1.0) * stdev / nf.sqrt();
        (mean - half, mean + half)
    };
    Some(Summary {
        n,
        mean,
        variance,
        stdev,
        min,
        max,
        ci95,
    })
}

/// t₀.₉₇₅ for df = 1..=30, the two-sided 95 % critical values of Student's t (standard
/// "Student t quantiles" tables, e.g. NIST/SEMATECH e-Handbook §1.3.6.7.2), to 9 digits.
const T975: [f64; 30] = [
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
];

/// The standard normal's 0.975 quantile, the limit of t₀.₉₇₅ as df → ∞.
const Z975: f64 = 1.959_963_984_540_054;

/// Largest df used in t computations; beyond it t and the normal distribution agree to ~1e-8
/// and the continued fraction would only get slower.
const DF_CAP: f64 = 1e7;

/// The two-sided 95 % critical value of Student's t with `df` degrees of freedom, i.e. the
/// t with P(T ≤ t) = 0.975.
///
/// Whole df in 1..=30 come from a table; any other df (fractional, as Welch's df is, or above
/// 30) is found by inverting [`student_t_cdf`] numerically (bisection to ~1e-12). Returns NaN for
/// df ≤ 0 or NaN, and the normal quantile 1.959964 for df = ∞.
pub fn t_quantile_975(df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df.is_infinite() {
        return Z975;
    }
    if df.fract() == 0.0 && (1.0..=30.0).contains(&df) {
        // In range and whole, so the index is 0..=29.
        return T975[df as usize - 1];
    }
    t_quantile_975_numeric(df)
}

/// Solves two_sided_p(t, df) = 0.05 for t by bisection. The two-sided p-value falls strictly
/// as t grows, and t₀.₉₇₅ always exceeds the normal quantile, so [Z975, hi] brackets the root
/// once hi is doubled past it.
fn t_quantile_975_numeric(df: f64) -> f64 {
    let mut lo = Z975;
    let mut hi = 4.0;
    let mut doublings = 0;
    while t_two_sided_p(hi, df) > 0.05 && doublings < 2000 {
        lo = hi;
        hi *= 2.0;
        doublings += 1;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_two_sided_p(mid, df) > 0.05 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The CDF of Student's t with `df` degrees of freedom: P(T ≤ t).
///
/// Uses the identity P(|T| > |t|) = I_x(df/2, 1/2) with x = df / (df + t²) (Abramowitz &
/// Stegun 26.5.27 / 26.7.1), where I is the regularised incomplete beta function. Returns NaN for
/// NaN input or df ≤ 0; df above 1e7 is treated as 1e7 (indistinguishable from the normal).
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t == 0.0 {
        return 0.5;
    }
    let upper_tail = 0.5 * t_two_sided_p(t, df);
    if t > 0.0 {
        1.0 - upper_tail
    } else {
        upper_tail
    }
}

/// Two-sided tail probability P(|T| ≥ |t|) of Student's t (A&S 26.7.1 via 26.5.27):
/// I_x(df/2, 1/2) with x = df / (df + t²). 1 at t = 0, 0 at |t| = ∞.
pub(crate) fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    let df = df.min(DF_CAP);
    let t2 = t * t;
    if !t2.is_finite() {
        return 0.0;
    }
    // x and 1 − x computed separately so neither loses precision to cancellation.
    let x = df / (df + t2);
    let y = t2 / (df + t2);
    reg_inc_beta(0.5 * df, 0.5, x, y)
}

/// Natural log of the gamma function for x > 0, by the Lanczos approximation (Lanczos 1964,
/// g = 7, 9 coefficients as tabulated by Godfrey; relative error < 1e-15), with Euler's
/// reflection formula Γ(x)Γ(1 − x) = π / sin(πx) for x < 1/2.
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (PI / (PI * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let z = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (z + i as f64);
    }
    let t = z + G + 0.5;
    // ln Γ(z + 1) = ½ ln 2π + (z + ½) ln t − t + ln A_g(z).
    0.5 * (2.0 * PI).ln() + (z + 0.5) * t.ln() - t + sum.ln()
}

/// The regularised incomplete beta function I_x(a, b), given x and y = 1 − x (passed separately
/// for precision). Numerical Recipes (3rd ed.) §6.4: the prefactor
/// xᵃ yᵇ / (a B(a, b)) times the continued fraction, which converges fast for
/// x < (a + 1)/(a + b + 2); otherwise the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) is used.
pub(crate) fn reg_inc_beta(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if y <= 0.0 {
        return 1.0;
    }
    // ln[xᵃ yᵇ / B(a, b)], B(a, b) = Γ(a)Γ(b)/Γ(a + b).
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * y.ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        (front * beta_cf(a, b, x) / a).clamp(0.0, 1.0)
    } else {
        (1.0 - front * beta_cf(b, a, y) / b).clamp(0.0, 1.0)
    }
}

/// The continued fraction for the incomplete beta function (Numerical Recipes §6.4, eq.
/// 6.4.5–6.4.6), evaluated with the modified Lentz method (Lentz 1976; Thompson & Barnett 1986).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const MAX_ITER: usize = 20_000;
    const EPS: f64 = 1e-15;
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=MAX_ITER {
        let m = m as f64;
        let m2 = 2.0 * m;
        // Even step: d_{2m} = m (b − m) x / ((a + 2m − 1)(a + 2m)).
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / guard(1.0 + aa * d);
        c = guard(1.0 + aa / c);
        h *= d * c;
        // Odd step: d_{2m+1} = −(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / guard(1.0 + aa * d);
        c = guard(1.0 + aa / c);
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn describe_textbook_sample() {
        let s = describe(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0, 1e-12));
        // Σ(x − 5)² = 9 + 1 + 1 + 1 + 0 + 0 + 4 + 16 = 32; sample variance 32 / 7.
        assert!(close(s.variance, 32.0 / 7.0, 1e-12));
        assert!(close(s.stdev, (32.0f64 / 7.0).sqrt(), 1e-12));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // By hand: s = √(32/7) = 2.138089935, s/√8 = 0.755928946,
        // half width = t₀.₉₇₅,₇ · s/√8 = 2.364624252 × 0.755928946 = 1.787487919,
        // CI = (3.212512081, 6.787487919).
        assert!(close(s.ci95.0, 3.212512081, 1e-8), "{:?}", s.ci95);
        assert!(close(s.ci95.1, 6.787487919, 1e-8), "{:?}", s.ci95);
    }

    #[test]
    fn describe_edges() {
        assert_eq!(describe(&[]), None);
        let one = describe(&[3.5]).unwrap();
        assert_eq!(one.n, 1);
        assert_eq!((one.mean, one.variance, one.stdev), (3.5, 0.0, 0.0));
        assert_eq!(one.ci95, (3.5, 3.5));
        let flat = describe(&[7.0; 5]).unwrap();
        assert_eq!(flat.variance, 0.0);
        assert_eq!(flat.ci95, (7.0, 7.0));
    }

    #[test]
    fn t_quantiles_match_known_values() {
        for (df, want) in [
            (1.0, 12.706205),
            (2.0, 4.302653),
            (10.0, 2.228139),
            (30.0, 2.042272),
            (100.0, 1.983972),
            (1000.0, 1.962339),
        ] {
            let got = t_quantile_975(df);
            assert!(close(got, want, 1e-3), "df {df}: {got} vs {want}");
            // The numeric inversion agrees much more tightly than required.
            assert!(close(got, want, 2e-6), "df {df}: {got} vs {want}");
        }
        assert!(close(t_quantile_975(f64::INFINITY), 1.959964, 1e-6));
        assert!(t_quantile_975(0.0).is_nan());
        assert!(t_quantile_975(-3.0).is_nan());
        assert!(t_quantile_975(f64::NAN).is_nan());
    }

    #[test]
    fn table_agrees_with_numeric_inversion() {
        for df in 1..=30 {
            let table = T975[df - 1];
            let numeric = t_quantile_975_numeric(df as f64);
            assert!(close(table, numeric, 1e-8), "df {df}: {table} vs {numeric}");
        }
        // Fractional df lie between their whole neighbours.
        let q = t_quantile_975(7.5);
        assert!(q < T975[6] && q > T975[7], "{q}");
    }

    #[test]
    fn t_cdf_known_points() {
        for df in [0.5, 1.0, 3.0, 10.0, 1e3, 1e9] {
            assert_eq!(student_t_cdf(0.0, df), 0.5);
        }
        assert!(close(student_t_cdf(2.228139, 10.0), 0.975, 1e-6));
        assert!(close(student_t_cdf(-2.228139, 10.0), 0.025, 1e-6));
        // df = 1 is the Cauchy distribution: F(t) = ½ + atan(t)/π.
        for t in [-10.0, -1.0, 0.3, 2.0, 50.0] {
            let cauchy = 0.5 + f64::atan(t) / PI;
            assert!(close(student_t_cdf(t, 1.0), cauchy, 1e-12), "t {t}");
        }
        // df = 2 has a closed form: F(t) = ½ + t / (2√(2 + t²)).
        for t in [-4.0f64, -0.5, 1.0, 3.0] {
            let closed = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!(close(student_t_cdf(t, 2.0), closed, 1e-12), "t {t}");
        }
        // Huge df approaches the normal: Φ(1.959964) = 0.975, and standard Φ values.
        assert!(close(student_t_cdf(1.959964, 1e12), 0.975, 1e-6));
        for (t, phi) in [
            (0.5, 0.691_462_461_274_013_1),
            (1.0, 0.841_344_746_068_542_9),
            (1.7, 0.955_434_537_241_456_9),
            (2.0, 0.977_249_868_051_820_8),
            (3.0, 0.998_650_101_968_369_9),
            (6.0, 0.999_999_999_013_412_4),
        ] {
            for df in [2e6, 1e7, f64::INFINITY] {
                let got = student_t_cdf(t, df);
                assert!(close(got, phi, 1e-6), "t {t} df {df}: {got} vs {phi}");
            }
        }
        assert_eq!(student_t_cdf(f64::INFINITY, 5.0), 1.0);
        assert_eq!(student_t_cdf(f64::NEG_INFINITY, 5.0), 0.0);
        assert!(student_t_cdf(1.0, 0.0).is_nan());
    }

    #[test]
    fn ln_gamma_known_values() {
        // Γ(n) = (n − 1)!, Γ(½) = √π.
        assert!(close(ln_gamma(1.0), 0.0, 1e-13));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-13));
        assert!(close(ln_gamma(0.5), PI.sqrt().ln(), 1e-13));
        assert!(close(ln_gamma(0.25), 3.625_609_908_221_908f64.ln(), 1e-12));
        assert!(close(ln_gamma(171.0), 706.573_062_245_787_4, 1e-9));
    }

    #[test]
    fn incomplete_beta_special_cases() {
        // I_x(1, 1) = x; I_x(a, 1) = xᵃ; I_x(1, b) = 1 − (1 − x)ᵇ.
        for x in [0.01, 0.3, 0.5, 0.77, 0.99] {
            assert!(close(reg_inc_beta(1.0, 1.0, x, 1.0 - x), x, 1e-13));
            assert!(close(
                reg_inc_beta(3.5, 1.0, x, 1.0 - x),
                x.powf(3.5),
                1e-12
            ));
            let want = 1.0 - (1.0 - x).powf(2.5);
            assert!(close(reg_inc_beta(1.0, 2.5, x, 1.0 - x), want, 1e-12));
        }
        assert_eq!(reg_inc_beta(2.0, 3.0, 0.0, 1.0), 0.0);
        assert_eq!(reg_inc_beta(2.0, 3.0, 1.0, 0.0), 1.0);
    }

    proptest! {
        #[test]
        fn t_cdf_is_symmetric_and_monotone(t in -50.0f64..50.0, dt in 0.001f64..5.0, df in 0.5f64..500.0) {
            let f = student_t_cdf(t, df);
            prop_assert!((0.0..=1.0).contains(&f));
            prop_assert!((f + student_t_cdf(-t, df) - 1.0).abs() < 1e-12);
            prop_assert!(student_t_cdf(t + dt, df) >= f);
        }

        #[test]
        fn ci_contains_mean_and_narrows_with_more_copies(xs in proptest::collection::vec(-1e3f64..1e3, 2..40)) {
            let s = describe(&xs).unwrap();
            prop_assert!(s.ci95.0 <= s.mean && s.mean <= s.ci95.1);
            prop_assert!(s.min <= s.mean + 1e-9 && s.mean <= s.max + 1e-9);
            let doubled: Vec<f64> = xs.iter().chain(xs.iter()).copied().collect();
            let d = describe(&doubled).unwrap();
            prop_assert!(d.ci95.1 - d.ci95.0 <= s.ci95.1 - s.ci95.0 + 1e-9);
        }
    }
}
