//! Change points on series with a known truth: steps found where they are, noise left alone,
//! and a run's own offset (its repetitions share it) not taken for a change.

mod common;

use common::Rng;
use perfbase_analysis::changepoint::{change_points, newest_p, Settings};

/// `n` runs of `reps` repetitions: level `base` (× `factor` from run `at` on), each run
/// offset by `run_sd` and each repetition by `rep_sd` (relative).
fn series(
    rng: &mut Rng,
    n: usize,
    reps: usize,
    at: usize,
    factor: f64,
    run_sd: f64,
    rep_sd: f64,
) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            let level = if i >= at { 100.0 * factor } else { 100.0 };
            let run = level * (1.0 + run_sd * rng.normal());
            (0..reps)
                .map(|_| run * (1.0 + rep_sd * rng.normal()))
                .collect()
        })
        .collect()
}

fn found(runs: &[Vec<f64>]) -> Vec<usize> {
    change_points(runs, &Settings::default())
        .iter()
        .map(|c| c.at)
        .collect()
}

#[test]
fn a_step_is_found_where_it_is() {
    for seed in 0..20 {
        let mut rng = Rng(seed);
        // Otava's example: 200 points, a step at 120 of 3σ (σ = 1 % here).
        let runs = series(&mut rng, 200, 1, 120, 1.03, 0.0, 0.01);
        let got = change_points(&runs, &Settings::default());
        assert_eq!(got.len(), 1, "seed {seed}: {got:?}");
        assert!(got[0].at.abs_diff(120) <= 1, "seed {seed}: {got:?}");
        assert!((got[0].relative() - 0.03).abs() < 0.005, "{got:?}");
        assert!(got[0].p < 0.001);
    }
}

#[test]
fn two_steps_both_found() {
    let mut rng = Rng(7);
    let mut runs = series(&mut rng, 100, 1, 60, 1.05, 0.0, 0.01);
    for run in runs.iter_mut().skip(30) {
        for v in run.iter_mut() {
            *v *= 0.95;
        }
    }
    let got = found(&runs);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].abs_diff(30) <= 1 && got[1].abs_diff(60) <= 1,
        "{got:?}"
    );
}

#[test]
fn noise_alone_has_no_change_point() {
    let mut false_alarms = 0;
    for seed in 100..140 {
        let mut rng = Rng(seed);
        false_alarms += found(&series(&mut rng, 200, 1, 200, 1.0, 0.0, 0.02)).len();
    }
    // 40 series of 200 points at p < 0.001, tested after the search picked its best splits.
    assert!(
        false_alarms <= 2,
        "{false_alarms} false change points in 40 series"
    );
}

#[test]
fn repetitions_locate_a_small_shift_among_runs() {
    for seed in 0..10 {
        let mut rng = Rng(seed);
        // 40 runs of 5 repetitions, +5 % from run 25: the end-to-end case of the trend test.
        let runs = series(&mut rng, 40, 5, 24, 1.05, 0.01, 0.02);
        assert_eq!(found(&runs), vec![24], "seed {seed}");
    }
}

#[test]
fn a_runs_shared_offset_is_not_a_change() {
    // Each run is offset by 5 % and its repetitions agree within 0.5 %: tested per
    // repetition, neighbouring runs would look different; tested per run they are not.
    let mut false_alarms = 0;
    for seed in 0..20 {
        let mut rng = Rng(1000 + seed);
        false_alarms += found(&series(&mut rng, 40, 10, 40, 1.0, 0.05, 0.005)).len();
    }
    assert!(
        false_alarms <= 1,
        "{false_alarms} false change points in 20 series"
    );
}

#[test]
fn exact_series_change_with_certainty() {
    let runs: Vec<Vec<f64>> = (0..10)
        .map(|i| vec![if i < 6 { 2.0 } else { 3.0 }])
        .collect();
    let got = change_points(&runs, &Settings::default());
    assert_eq!(got.len(), 1);
    assert!(got[0].at == 6 && got[0].p < 1e-12, "{got:?}");
    let flat: Vec<Vec<f64>> = (0..10).map(|_| vec![2.0]).collect();
    assert!(found(&flat).is_empty());
    assert!(found(&flat[..3]).is_empty(), "too short to split");
}

#[test]
fn a_new_run_is_judged_against_the_segment() {
    let segment = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
    assert!(newest_p(&segment, 110.0).unwrap() < 0.001);
    assert!(newest_p(&segment, 100.8).unwrap() > 0.3);
    assert_eq!(newest_p(&segment[..2], 150.0), None);
    assert_eq!(newest_p(&[5.0, 5.0, 5.0], 5.0), Some(1.0));
    assert_eq!(newest_p(&[5.0, 5.0, 5.0], 5.5), Some(0.0));
}

#[test]
fn a_wider_spread_is_found_and_an_outlier_is_not() {
    let mut found_spread = 0;
    for seed in 0..10 {
        let mut rng = Rng(500 + seed);
        // σ 1 % for 100 runs, then 5 %: the level stays.
        let runs: Vec<Vec<f64>> = (0..200)
            .map(|i| vec![100.0 * (1.0 + if i < 100 { 0.01 } else { 0.05 } * rng.normal())])
            .collect();
        let got = change_points(&runs, &Settings::default());
        eprintln!(
            "{seed}: {:?}",
            got.iter()
                .map(|c| (c.at, c.spread, c.p))
                .collect::<Vec<_>>()
        );
        if got.iter().any(|c| c.spread && c.at.abs_diff(100) <= 5) {
            found_spread += 1;
        }
    }
    assert!(found_spread >= 8, "found {found_spread} of 10");
    // One run at 3× the level among 200 steady ones is an outlier, not a change.
    let mut rng = Rng(9);
    let mut runs = series(&mut rng, 200, 1, 200, 1.0, 0.0, 0.01);
    runs[90][0] *= 3.0;
    assert!(found(&runs).is_empty(), "{:?}", found(&runs));
}

#[test]
fn a_certain_but_tiny_step_is_kept_only_when_asked() {
    for seed in 0..10 {
        let mut rng = Rng(seed);
        // 0.5 % down at run 10 with 0.05 % noise: 10σ, certain, and below the 1 % that matters.
        let runs = series(&mut rng, 40, 3, 10, 0.995, 0.0005, 0.0005);
        assert_eq!(found(&runs), Vec::<usize>::new(), "seed {seed}");
        let every = Settings {
            min_change: 0.0,
            ..Settings::default()
        };
        let got = change_points(&runs, &every);
        assert_eq!(got.len(), 1, "seed {seed}: {got:?}");
        assert_eq!(got[0].at, 10, "seed {seed}: {got:?}");
        assert!(got[0].p < 0.001, "{got:?}");
    }
}

/// A series near f64's end (values about 1e300) finds its 170× jump as a series of ordinary
/// values does, and gives its levels in its own unit; a tiny one too (issue 47's judgement
/// call: its squares overflowed and the jump passed).
#[test]
fn a_jump_is_found_at_any_scale() {
    let mut rng = Rng(47);
    let base = series(&mut rng, 40, 1, 20, 170.0, 0.02, 0.0);
    for scale in [1e298, 1e-300, 1.0] {
        let runs: Vec<Vec<f64>> = base
            .iter()
            .map(|r| r.iter().map(|v| v * scale / 100.0).collect())
            .collect();
        let found = change_points(&runs, &Settings::default());
        assert_eq!(
            found.iter().map(|c| c.at).collect::<Vec<_>>(),
            [20],
            "{scale}"
        );
        let ratio = found[0].after / found[0].before;
        assert!((150.0..190.0).contains(&ratio), "{scale}: {ratio}");
    }
}

/// `n` runs of one value: level 100 plus normal noise of σ `sd` (in % of the level), each
/// run's noise `phi` times the last one's plus a fresh shock (AR(1); σ is the noise's spread,
/// not the shock's).
fn noise(rng: &mut Rng, n: usize, sd: f64, phi: f64) -> Vec<f64> {
    let shock = sd * (1.0 - phi * phi).sqrt();
    let mut last = sd * rng.normal();
    (0..n)
        .map(|i| {
            if i > 0 {
                last = phi * last + shock * rng.normal();
            }
            100.0 + last
        })
        .collect()
}

fn runs_of(values: Vec<f64>) -> Vec<Vec<f64>> {
    values.into_iter().map(|v| vec![v]).collect()
}

/// Issue 48's first case: a step whose new segment is the newest 5 to 8 runs, the case a team
/// looks at after a merge. Welch's test between 211 runs and 6 has about 5 degrees of freedom
/// and missed it; the newest runs now borrow the long segment's variance.
#[test]
fn a_step_in_the_newest_runs_is_found() {
    // The example: 217 runs, −10.5 % at run 211 (3σ).
    for seed in 0..10 {
        let mut rng = Rng(4800 + seed);
        let mut values = noise(&mut rng, 217, 3.5, 0.0);
        for v in &mut values[211..] {
            *v -= 10.5;
        }
        let got = found(&runs_of(values));
        assert!(got.contains(&211), "seed {seed}: {got:?}");
    }
    // 3σ to 5σ in the newest 5 to 8 of 200 to 500 runs: at least 90 % found, within a run.
    let (mut hits, mut false_alarms, mut tries) = (0, 0, 0);
    for seed in 0..60u64 {
        let mut rng = Rng(4900 + seed);
        let n = 200 + 100 * (seed as usize % 4);
        let at = n - 5 - (seed as usize % 4);
        let size = [3.0, 4.0, 5.0][seed as usize % 3] * if seed % 2 == 0 { 1.0 } else { -1.0 };
        let mut values = noise(&mut rng, n, 2.0, 0.0);
        for v in &mut values[at..] {
            *v += size * 2.0;
        }
        let got = found(&runs_of(values));
        tries += 1;
        if got.iter().any(|g| g.abs_diff(at) <= 1) {
            hits += 1;
        }
        false_alarms += got.iter().filter(|g| g.abs_diff(at) > 5).count();
    }
    assert!(hits * 10 >= tries * 9, "{hits} of {tries} found");
    assert!(false_alarms <= 3, "{false_alarms} false change points");
}

/// Issue 48's second case: bursts of 1 to 3 runs at 1.5 to 5 times the level (a noisy
/// neighbour, a GC storm) are outlier events, not segments, and do not hide a real step.
#[test]
fn a_burst_is_an_outlier_event_and_hides_no_step() {
    let (mut false_alarms, mut runs, mut bursts, mut named) = (0, 0, 0, 0);
    let mut steps_found = 0;
    for seed in 0..40u64 {
        let mut rng = Rng(5000 + seed);
        let n = 300;
        let mut values = noise(&mut rng, n, 2.0, 0.0);
        let step = 40 + (seed as usize * 7) % 60;
        if seed % 2 == 1 {
            // Half the series also step by 4σ, 15 runs or more from any burst.
            for v in &mut values[step..] {
                *v += 8.0;
            }
        }
        let mut placed = Vec::new();
        for k in 0..3 {
            let at = 130 + 50 * k + (seed as usize % 9);
            let width = 1 + (seed as usize + k) % 3;
            let factor = 1.5 + 3.5 * rng.uniform();
            for v in &mut values[at..at + width] {
                *v *= factor;
            }
            placed.push(at..at + width);
        }
        let found = perfbase_analysis::changepoint::search(&runs_of(values), &Settings::default());
        let cuts: Vec<usize> = found.changes.iter().map(|c| c.at).collect();
        runs += n;
        if seed % 2 == 1 {
            steps_found += usize::from(cuts.iter().any(|c| c.abs_diff(step) <= 1));
            false_alarms += cuts.iter().filter(|c| c.abs_diff(step) > 5).count();
        } else {
            false_alarms += cuts.len();
        }
        bursts += placed.len();
        named += placed.iter().filter(|p| found.bursts.contains(p)).count();
    }
    let per_100 = 100.0 * false_alarms as f64 / runs as f64;
    assert!(
        per_100 <= 0.1,
        "{false_alarms} false change points in {runs} runs"
    );
    assert_eq!(steps_found, 20, "every step found beside the bursts");
    assert!(
        named * 10 >= bursts * 9,
        "{named} of {bursts} bursts named exactly"
    );
}

/// Issue 48's third case: AR(1) noise with φ = 0.5 (a machine that drifts slowly) made 1.2
/// false change points per 100 runs; its autocorrelation is now estimated and the runs
/// counted at their effective number. A real step still shows.
#[test]
fn correlated_noise_is_counted_as_fewer_runs() {
    let (mut false_alarms, mut runs, mut estimates) = (0, 0, Vec::new());
    for seed in 0..40u64 {
        let mut rng = Rng(5100 + seed);
        let n = 300;
        let found = perfbase_analysis::changepoint::search(
            &runs_of(noise(&mut rng, n, 2.0, 0.5)),
            &Settings::default(),
        );
        false_alarms += found.changes.len();
        runs += n;
        estimates.push(found.autocorrelation);
        assert!(found.phi > 0.0, "seed {seed}: {found:?}");
        assert!(found.effective_runs(n) < 0.5 * n as f64, "{found:?}");
    }
    let per_100 = 100.0 * false_alarms as f64 / runs as f64;
    assert!(
        per_100 <= 0.3,
        "{false_alarms} false change points in {runs} runs"
    );
    let mean = estimates.iter().sum::<f64>() / estimates.len() as f64;
    assert!((0.35..0.6).contains(&mean), "mean estimate {mean}");
    // Independent noise is left as it is.
    let mut rng = Rng(5200);
    let independent = perfbase_analysis::changepoint::search(
        &runs_of(noise(&mut rng, 300, 2.0, 0.0)),
        &Settings::default(),
    );
    assert_eq!(independent.phi, 0.0, "{independent:?}");
    // A 6σ step in the same noise is still found.
    for seed in 0..10 {
        let mut rng = Rng(5300 + seed);
        let mut values = noise(&mut rng, 300, 2.0, 0.5);
        for v in &mut values[150..] {
            *v += 12.0;
        }
        let got = found(&runs_of(values));
        assert!(
            got.iter().any(|g| g.abs_diff(150) <= 2),
            "seed {seed}: {got:?}"
        );
    }
}

/// Runs of NaN (a store holds an undefined figure as "NaN") or of infinities do not panic the
/// search, wherever they sit.
#[test]
fn undefined_runs_do_not_panic() {
    let mut rng = Rng(5400);
    let base = noise(&mut rng, 120, 2.0, 0.0);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for every in [1, 2, 7, 60] {
            let runs: Vec<Vec<f64>> = base
                .iter()
                .enumerate()
                .map(|(i, &v)| vec![if i % every == 0 { bad } else { v }])
                .collect();
            let _ = perfbase_analysis::changepoint::search(&runs, &Settings::default());
        }
    }
    let all: Vec<Vec<f64>> = (0..50).map(|_| vec![f64::NAN]).collect();
    let _ = perfbase_analysis::changepoint::search(&all, &Settings::default());
}
