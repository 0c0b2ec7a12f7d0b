//! Bursts: one to three neighbouring runs far off the level of the runs around them, which
//! then return to it (a noisy neighbour, a GC storm). A change point separates two segments;
//! cutting a burst out as a segment of its own put two change points at its edges, and its
//! spread, counted in the segment around it, hid a real step elsewhere. So a burst is found
//! first, reported as an outlier event, and left out of the search.
//!
//! Two ways in:
//! - [`outlying`], before the search: a Hampel filter. A run whose distance from the median
//!   of its 11 neighbours is more than [`LIMIT`] times the local robust spread (1.4826 times
//!   the median of those distances over 101 runs, so a noisier segment is judged by its own
//!   noise) is outlying; 1 to [`MAX_RUNS`] outlying runs in a row on one side are a burst.
//! - [`excursions`], after a pass: a segment of at most [`MAX_RUNS`] runs between two change
//!   points, where the segments before and after it are at one level (their test keeps
//!   nothing), was a burst too small for the filter.
//!
//! A burst must have runs on both sides: the newest runs off the level may be the start of a
//! new one, and the oldest the end of an old one. And it must stand alone: outlying runs that
//! crowd say the local spread is wrong, not that they are bursts.

use super::segments::RunMeans;

/// The longest burst, in runs: longer, it is a short regression, a segment of its own.
pub const MAX_RUNS: usize = 3;

/// How many local spreads away a run is outlying. The distances are from a median that the
/// run itself is part of, so they run short and their spread with them: at 5 over 31 runs,
/// 30 % of 200 series of 400 normal runs had an "outlier"; at 6 over 101 runs, none.
const LIMIT: f64 = 6.0;

/// The median's reach on each side of a run.
const NEAR: usize = 5;

/// The local spread's reach on each side of a run.
const WIDE: usize = 50;

/// The runs of the bursts `outlying` finds in `values` (run means), ascending.
///
/// Also the residuals from the running median, those of the bursts' runs set to 0 and the
/// others clipped at 3 local spreads: what the noise's autocorrelation is first estimated
/// from, before any segment is known (empty when the series is too short to screen).
pub(super) fn outlying(values: &[f64]) -> (Vec<usize>, Vec<f64>) {
    let n = values.len();
    if n < 2 * NEAR + 1 {
        return (Vec::new(), Vec::new());
    }
    let centres = running_medians(values, NEAR);
    let residuals: Vec<f64> = values.iter().zip(&centres).map(|(v, m)| v - m).collect();
    let distances: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    let spreads = block_medians(&distances, WIDE);
    let off: Vec<i8> = (0..n)
        .map(|i| {
            if distances[i] > LIMIT * 1.4826 * spreads[i] && distances[i] > 0.0 {
                residuals[i].signum() as i8
            } else {
                0
            }
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if off[i] == 0 {
            i += 1;
            continue;
        }
        let side = off[i];
        let from = i;
        while i < n && off[i] == side {
            i += 1;
        }
        // Runs on both sides, and no other outlying run among the NEAR on either side: where
        // they crowd, the local spread is wrong, not the runs (a segment after a 170× jump,
        // its noise 170× too, was "bursts" from end to end).
        let quiet = off[from.saturating_sub(NEAR)..from]
            .iter()
            .chain(&off[i..(i + NEAR).min(n)])
            .all(|&o| o == 0);
        if i - from <= MAX_RUNS && from >= 2 && i + 2 <= n && quiet {
            out.extend(from..i);
        }
    }
    let residuals = residuals
        .iter()
        .zip(&spreads)
        .enumerate()
        .map(|(i, (r, s))| {
            let clip = 3.0 * 1.4826 * s;
            if out.binary_search(&i).is_ok() {
                0.0
            } else {
                // max and min, not clamp: a spread of NaN (a series of NaN runs) clips nothing
                // rather than panicking.
                r.max(-clip).min(clip)
            }
        })
        .collect();
    (out, residuals)
}

/// The median (the upper one of an even count) of `values[i − reach ..= i + reach]`, cut at
/// the ends, for every i. The window is kept sorted as it slides, an insertion and a removal
/// per step: a selection per window was a fifth of the whole search's time.
fn running_medians(values: &[f64], reach: usize) -> Vec<f64> {
    let n = values.len();
    let place = |window: &[f64], v: f64| window.partition_point(|w| w.total_cmp(&v).is_lt());
    let mut window: Vec<f64> = Vec::with_capacity(2 * reach + 2);
    for &v in &values[..(reach + 1).min(n)] {
        window.insert(place(&window, v), v);
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(window[window.len() / 2]);
        if let Some(&v) = values.get(i + 1 + reach) {
            window.insert(place(&window, v), v);
        }
        if i >= reach {
            let v = values[i - reach];
            window.remove(place(&window, v));
        }
    }
    out
}

/// How many neighbouring runs share one local spread: it changes slowly over 101 runs, and a
/// selection of 101 values for every run was most of the screen's time.
const BLOCK: usize = 25;

/// The median of the `reach` runs either side of each block of [`BLOCK`] runs' middle, given
/// to every run of the block.
fn block_medians(values: &[f64], reach: usize) -> Vec<f64> {
    let mut buffer = Vec::with_capacity(2 * reach + 1);
    let mut out = Vec::with_capacity(values.len());
    for start in (0..values.len()).step_by(BLOCK) {
        let end = (start + BLOCK).min(values.len());
        let middle = (start + end) / 2;
        buffer.clear();
        buffer.extend_from_slice(
            &values[middle.saturating_sub(reach)..(middle + reach + 1).min(values.len())],
        );
        let half = buffer.len() / 2;
        let median = *buffer.select_nth_unstable_by(half, f64::total_cmp).1;
        out.extend(std::iter::repeat_n(median, end - start));
    }
    out
}

/// The runs (positions in `means`) of each segment of at most [`MAX_RUNS`] runs between two
/// of the `cuts`, where the segments on either side are at one level: their level test gives
/// p of `max_p` or more, or a change under `min_change`.
pub(super) fn excursions(
    means: &RunMeans,
    cuts: &[usize],
    max_p: f64,
    min_change: f64,
) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, w) in cuts.windows(2).enumerate() {
        let (from, to) = (w[0], w[1]);
        if to - from > MAX_RUNS {
            continue;
        }
        let before = if i == 0 { 0 } else { cuts[i - 1] };
        let after = cuts.get(i + 2).copied().unwrap_or(means.runs());
        let (p, change) = means.apart((before, from), (to, after));
        if p >= max_p || change.abs() < min_change {
            out.extend(from..to);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{outlying, running_medians};

    #[test]
    fn the_sliding_median_is_each_windows_median() {
        let values: Vec<f64> = (0..60)
            .map(|i| ((i * 37) % 23) as f64 - (i % 5) as f64)
            .collect();
        for reach in [0, 1, 5, 30, 70] {
            let got = running_medians(&values, reach);
            for (i, m) in got.iter().enumerate() {
                let mut w = values[i.saturating_sub(reach)..(i + reach + 1).min(60)].to_vec();
                w.sort_by(f64::total_cmp);
                assert_eq!(*m, w[w.len() / 2], "reach {reach}, run {i}");
            }
        }
    }

    #[test]
    fn a_burst_stands_alone_and_has_runs_on_both_sides() {
        let mut values: Vec<f64> = (0..40).map(|i| 100.0 + (i % 3) as f64).collect();
        values[20] = 500.0;
        values[21] = 480.0;
        assert_eq!(outlying(&values).0, vec![20, 21]);
        // The newest run may start a new level: not a burst.
        values[39] = 500.0;
        assert_eq!(outlying(&values).0, vec![20, 21]);
        // Four in a row are a short segment, not a burst.
        values[22] = 490.0;
        values[23] = 470.0;
        assert!(outlying(&values).0.is_empty());
    }
}
