//! Do the 95 % intervals `describe` reports hold the truth 95 % of the time?
//!
//! Synthetic runs are drawn from distributions whose median is known in closed form — normal,
//! log-normal (skewed, as latencies are) and heavy-tailed (Pareto with infinite variance, and
//! a mixture with rare stalls) — and for each run count the share of 1,000 samples whose
//! reported interval holds the population median is counted. It must lie in 93–97 %, or the
//! interval must be refused (NaN) in every sample, as it is below
//! `MIN_RUNS_FOR_INTERVAL`. Seeds are fixed so the figures, and the table printed with
//! `--nocapture`, are the same on every machine.

mod common;

use common::Rng;
use perfbase_analysis::stats::describe;
use perfbase_core::study::MIN_RUNS_FOR_INTERVAL;
use statrs::distribution::{ContinuousCDF, Normal};

/// A distribution runs are drawn from, with its population median.
struct Dist {
    name: &'static str,
    draw: fn(&mut Rng) -> f64,
    median: f64,
}

const PARETO_XM: f64 = 50.0;
const PARETO_ALPHA: f64 = 1.5;
/// Share of runs that hit a stall in the mixture.
const STALL: f64 = 0.1;

fn dists() -> Vec<Dist> {
    // The mixture's median m solves (1 − s)·Φ((m − 100)/10) = ½, since every stall lies
    // above it: m = 100 + 10·Φ⁻¹(½ / (1 − s)).
    let stall_median = 100.0 + 10.0 * Normal::standard().inverse_cdf(0.5 / (1.0 - STALL));
    vec![
        Dist {
            name: "normal(100, 15)",
            draw: |r| 100.0 + 15.0 * r.normal(),
            median: 100.0,
        },
        Dist {
            // Median e^μ = 100.
            name: "log-normal(ln 100, 0.5)",
            draw: |r| (100f64.ln() + 0.5 * r.normal()).exp(),
            median: 100.0,
        },
        Dist {
            // Inverse CDF x_m·U^(−1/α); median x_m·2^(1/α). α = 1.5: no finite variance.
            name: "Pareto(50, α 1.5)",
            draw: |r| PARETO_XM * r.uniform().powf(-1.0 / PARETO_ALPHA),
            median: PARETO_XM * 2f64.powf(1.0 / PARETO_ALPHA),
        },
        Dist {
            // A service that mostly answers in ~100 ms and now and then stalls 0.5–5 s.
            name: "normal(100, 10) + 10 % stalls",
            draw: |r| {
                if r.uniform() < STALL {
                    500.0 * (10f64).powf(r.uniform())
                } else {
                    100.0 + 10.0 * r.normal()
                }
            },
            median: stall_median,
        },
    ]
}

const TRIALS: usize = 1000;
const RUNS: [usize; 4] = [3, 5, 10, 30];

/// What the trials of one distribution and run count found.
struct Cell {
    refused: usize,
    covered: usize,
    /// Intervals that reached outside the sample's [min, max].
    outside: usize,
}

fn trials(d: &Dist, n: usize, seed: u64) -> Cell {
    let mut rng = Rng(seed);
    let mut cell = Cell {
        refused: 0,
        covered: 0,
        outside: 0,
    };
    for _ in 0..TRIALS {
        let xs: Vec<f64> = (0..n).map(|_| (d.draw)(&mut rng)).collect();
        let s = describe(&xs).unwrap();
        let (lo, hi) = s.ci95;
        if lo.is_nan() || hi.is_nan() {
            cell.refused += 1;
            continue;
        }
        if lo < s.min || hi > s.max || lo > hi {
            cell.outside += 1;
        }
        if lo <= d.median && d.median <= hi {
            cell.covered += 1;
        }
    }
    cell
}

#[test]
fn intervals_cover_the_median_95_percent_of_the_time_or_are_refused() {
    let mut failures = Vec::new();
    let mut table = format!(
        "coverage of the median by the reported 95 % interval, {TRIALS} trials each\n{:<32}",
        "distribution"
    );
    for n in RUNS {
        table.push_str(&format!("{:>12}", format!("n = {n}")));
    }
    table.push('\n');
    for (di, d) in dists().iter().enumerate() {
        table.push_str(&format!("{:<32}", d.name));
        for (ni, n) in RUNS.into_iter().enumerate() {
            let seed = 0x5EED_0000 + (di as u64) * 16 + ni as u64;
            let c = trials(d, n, seed);
            let shown = if c.refused == TRIALS {
                "refused".to_string()
            } else {
                format!(
                    "{:.1} %",
                    c.covered as f64 / (TRIALS - c.refused) as f64 * 100.0
                )
            };
            table.push_str(&format!("{shown:>12}"));
            if c.outside > 0 {
                failures.push(format!(
                    "{} n={n}: {} intervals outside the sample's range",
                    d.name, c.outside
                ));
            }
            if n < MIN_RUNS_FOR_INTERVAL {
                if c.refused != TRIALS {
                    failures.push(format!(
                        "{} n={n}: an interval was given in {} of {TRIALS} trials with too few runs",
                        d.name,
                        TRIALS - c.refused
                    ));
                }
                continue;
            }
            if c.refused > 0 {
                failures.push(format!("{} n={n}: {} refused", d.name, c.refused));
            }
            let coverage = c.covered as f64 / TRIALS as f64;
            if !(0.93..=0.97).contains(&coverage) {
                failures.push(format!("{} n={n}: coverage {coverage}", d.name));
            }
        }
        table.push('\n');
    }
    eprintln!("{table}");
    assert!(failures.is_empty(), "{failures:#?}\n{table}");
}

#[test]
fn intervals_never_hold_a_value_no_run_had() {
    // Shapes that push an interpolated interval hardest: one huge outlier, ties, values near
    // zero, a step. Whatever the runs, the interval stays inside their range, so positive
    // figures never get a negative (impossible) bound.
    let mut samples: Vec<Vec<f64>> = vec![
        vec![0.001, 0.002, 0.002, 0.003, 10_000.0],
        vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1e9],
        vec![0.0, 0.0, 0.0, 0.0, 5.0, 5.0, 5.0, 5.0],
        vec![1e-9, 2e-9, 1.0, 1e6, 1e12, 1e12, 1e12, 1e12, 1e12, 1e12],
    ];
    let mut rng = Rng(0x0BAD_5EED);
    for n in 5..=60 {
        for _ in 0..50 {
            // Log-uniform over twelve decades: wildly spread, always positive.
            samples.push(
                (0..n)
                    .map(|_| 10f64.powf(12.0 * rng.uniform() - 6.0))
                    .collect(),
            );
        }
    }
    for xs in &samples {
        let s = describe(xs).unwrap();
        let (lo, hi) = s.ci95;
        assert!(
            s.min <= lo && lo <= s.median && s.median <= hi && hi <= s.max,
            "{xs:?}: {s:?}"
        );
        assert!(lo >= 0.0, "{xs:?}: {s:?}");
    }
}
