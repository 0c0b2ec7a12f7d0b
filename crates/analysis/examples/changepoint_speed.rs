//! The change-point search alone, best of 7 passes over a series file, for tuning its speed
//! without building the whole binary:
//!
//!   cargo run --release -p perfbase-analysis --example changepoint_speed -- \
//!       bench/out/trend/series.jsonl [OUT.json]
//!
//! OUT.json gets the change points in `perfbase trend --json`'s shape, which
//! bench/trend/score.py scores.

use perfbase_analysis::changepoint::{change_points, Settings};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let input = args.next().expect("give a series file (JSON lines)");
    let output = args.next();
    let text = std::fs::read_to_string(&input).expect("the series file reads");
    let series: Vec<Vec<Vec<f64>>> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| vec![x.as_f64().unwrap()])
                .collect()
        })
        .collect();
    let mut best = f64::INFINITY;
    let mut n = 0;
    for _ in 0..7 {
        let t = Instant::now();
        n = 0;
        for s in &series {
            n += change_points(s, &Settings::default()).len();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    let out: Vec<serde_json::Value> = text
        .lines()
        .zip(&series)
        .map(|(l, s)| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let cps: Vec<serde_json::Value> = change_points(s, &Settings::default())
                .iter()
                .map(|c| serde_json::json!({"index": c.at, "spread": c.spread, "p": c.p}))
                .collect();
            serde_json::json!({"name": v["name"], "change_points": cps, "compute_us": 0.0})
        })
        .collect();
    if let Some(path) = output {
        std::fs::write(path, serde_json::json!({"series": out}).to_string()).expect("written");
    }
    println!(
        "{} series, best of 7: {:.3} ms per series ({n})",
        series.len(),
        best * 1e3 / series.len() as f64
    );
    // Per shape (the name up to its noise, "step-s2-00" -> "step"): where the time goes.
    let mut shapes: Vec<(String, f64, usize)> = Vec::new();
    for (l, s) in text.lines().zip(&series) {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let name = v["name"].as_str().unwrap_or("");
        let shape = name.rsplitn(3, '-').last().unwrap_or(name).to_string();
        let t = Instant::now();
        for _ in 0..7 {
            change_points(s, &Settings::default());
        }
        let dt = t.elapsed().as_secs_f64() / 7.0;
        match shapes.iter_mut().find(|x| x.0 == shape) {
            Some(x) => {
                x.1 += dt;
                x.2 += 1;
            }
            None => shapes.push((shape, dt, 1)),
        }
    }
    for (shape, t, k) in shapes {
        println!("  {shape:<12} {:.3} ms per series", t * 1e3 / k as f64);
    }
}
