//! `perfbase-fuzz [--seconds N] [--runs N] [--seed N] [HARNESS…]`: runs each harness (all by
//! default) in a child process of its own, from the checked-in corpus in
//! `crates/fuzz/corpus/<harness>/`, and prints runs, rate and findings. A panic, an abort or
//! a hang is saved under `crates/fuzz/crashes/` and makes the exit code 1.
//! `scripts/fuzz.sh` runs it for as long as asked; `scripts/test.sh` for a few seconds each.

mod engine;
mod harnesses;
mod journeys;
mod ui;

use engine::{Current, Harness};
use harnesses::HARNESSES;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Options {
    seconds: f64,
    runs: u64,
    seed: u64,
    hang: Duration,
    child: bool,
    names: Vec<String>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        seconds: 10.0,
        runs: u64::MAX,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        hang: Duration::from_secs(2),
        child: false,
        names: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match a.as_str() {
            "--seconds" => {
                o.seconds = value("--seconds")?
                    .parse()
                    .map_err(|e| format!("--seconds: {e}"))?
            }
            "--runs" => {
                o.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--seed" => {
                o.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--hang-ms" => {
                o.hang = Duration::from_millis(
                    value("--hang-ms")?
                        .parse()
                        .map_err(|e| format!("--hang-ms: {e}"))?,
                )
            }
            "--child" => o.child = true,
            "-h" | "--help" => {
                let names: Vec<&str> = HARNESSES.iter().map(|h| h.name).collect();
                println!("perfbase-fuzz [--seconds N] [--runs N] [--seed N] [--hang-ms N] [HARNESS…]\nharnesses: {}", names.join(" "));
                std::process::exit(0);
            }
            name if HARNESSES.iter().any(|h| h.name == name) => o.names.push(name.to_string()),
            other => return Err(format!("unknown argument or harness '{other}'")),
        }
    }
    if o.names.is_empty() {
        o.names = HARNESSES.iter().map(|h| h.name.to_string()).collect();
    }
    Ok(o)
}

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn seeds(harness: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir("corpus").join(harness))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// In the child: fuzz one harness and print its one summary line.
fn child(h: &Harness, o: &Options) -> i32 {
    let current_path = dir("crashes").join(format!("{}.current", h.name));
    let _ = std::fs::create_dir_all(dir("crashes"));
    let mut current = match Current::create(&current_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("perfbase-fuzz: {}: {e}", current_path.display());
            return 2;
        }
    };
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(o.seconds);
    let report = engine::fuzz(
        h,
        seeds(h.name),
        o.seed,
        (until, o.runs),
        &mut current,
        o.hang,
        &dir("crashes"),
    );
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{:<14} {:>12} runs  {:>10.0}/s  {:>10} accepted  {} panics",
        h.name,
        report.runs,
        report.runs as f64 / secs.max(1e-9),
        report.accepted,
        report.crashes.len() as u64 + report.unsaved
    );
    for (path, message) in &report.crashes {
        println!("  panic: {} ({message})", path.display());
    }
    let _ = std::fs::remove_file(&current_path);
    i32::from(!report.crashes.is_empty())
}

fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("perfbase-fuzz: {e}");
            std::process::exit(2);
        }
    };
    if o.child {
        let h = HARNESSES
            .iter()
            .find(|h| h.name == o.names[0])
            .expect("a known harness");
        std::process::exit(child(h, &o));
    }
    println!(
        "perfbase-fuzz: seed {} ({} s per harness)",
        o.seed, o.seconds
    );
    let mut failed = false;
    for name in &o.names {
        let status = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args([
                "--child",
                name,
                "--seconds",
                &o.seconds.to_string(),
                "--runs",
                &o.runs.to_string(),
            ])
            .args([
                "--seed",
                &o.seed.to_string(),
                "--hang-ms",
                &o.hang.as_millis().to_string(),
            ])
            .status();
        match status.map(|s| s.code()) {
            Ok(Some(0)) => {}
            Ok(Some(1)) => failed = true,
            other => {
                // An abort, a signal or a hang: the input it was on is in `<harness>.current`.
                failed = true;
                let current = dir("crashes").join(format!("{name}.current"));
                let kind = if matches!(other, Ok(Some(70))) {
                    "hang"
                } else {
                    "abort"
                };
                let saved = dir("crashes").join(format!("{name}-{kind}-{}", o.seed));
                match Current::read(&current) {
                    Some(input) if std::fs::write(&saved, &input).is_ok() => {
                        println!("{name:<14} {kind}: input saved in {}", saved.display())
                    }
                    _ => println!("{name:<14} {kind} ({other:?}); its input was not recovered"),
                }
            }
        }
    }
    std::process::exit(i32::from(failed));
}
