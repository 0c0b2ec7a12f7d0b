//! Noise that is correlated from run to run: a machine that drifts slowly makes neighbouring
//! runs alike, so a stretch of them wanders off the level together and passes for a segment.
//! Tested as independent, AR(1) noise with φ = 0.5 gave 1.2 false change points per 100 runs.
//! Its lag-1 autocorrelation is estimated from the residuals of a pass's segments, and the
//! tests then count each segment's runs at their effective number
//! ([`super::segments::inflation`]).

/// The estimate is used when it exceeds this many standard errors (1/√n) above 0: below,
/// independent noise gives it by chance (99.9 % of the time, for normal noise), and taking it
/// would only cost power.
const SIGNIFICANT: f64 = 3.0;

/// The largest φ used: near 1 the factor grows without bound and one segment's wander is no
/// longer told from a change.
const MAX_PHI: f64 = 0.9;

/// The lag-1 autocorrelation of `values` (run means) about the means of their segments
/// (between `cuts`), with residuals beyond 4 σ (`sigma`, the run-to-run noise) clipped so
/// that a last outlier does not pass for correlation.
pub(super) fn autocorrelation(values: &[f64], cuts: &[usize], sigma: f64) -> f64 {
    let mut residuals = Vec::with_capacity(values.len());
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(values.len());
    let clip = 4.0 * sigma;
    for w in bounds.windows(2) {
        let segment = &values[w[0]..w[1]];
        let mean = segment.iter().sum::<f64>() / segment.len() as f64;
        // max and min, not clamp, which panics on a NaN bound.
        residuals.extend(segment.iter().map(|v| (v - mean).max(-clip).min(clip)));
    }
    lag1(&residuals, cuts)
}

/// Σ rᵢ·rᵢ₊₁ / Σ rᵢ² of `residuals`, leaving out the products across `cuts` (they would pair
/// residuals of two different segments); 0 when every residual is 0.
pub(super) fn lag1(residuals: &[f64], cuts: &[usize]) -> f64 {
    let square: f64 = residuals.iter().map(|r| r * r).sum();
    if square.is_nan() || square <= 0.0 {
        return 0.0;
    }
    let mut product = 0.0;
    let mut next_cut = cuts.iter().copied().peekable();
    for i in 1..residuals.len() {
        if next_cut.peek() == Some(&i) {
            next_cut.next();
            continue;
        }
        product += residuals[i - 1] * residuals[i];
    }
    product / square
}

/// The φ the tests take from an `estimate` over `n` runs: the estimate when it is clearly
/// above 0, at most [`MAX_PHI`]; else 0.
pub(super) fn used(estimate: f64, n: usize) -> f64 {
    if estimate * (n as f64).sqrt() > SIGNIFICANT {
        estimate.min(MAX_PHI)
    } else {
        0.0
    }
}
