//! `plans/web-stacks.toml` (seed 002: web servers × SQL drivers) against the real stacks of
//! scripts/services.sh's `stacks`: a short run writes the seed-shaped table with every column
//! filled and the error threshold judged per step, and a stack killed mid-run has its rows
//! say so while the run ends on time and the other stack's rows stay whole.

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// The shipped plan cut to `keep` (stacks by their variable's name, e.g. `GO_PGX`), the
/// ladder to `ladder`, each step to `duration` × `repetitions`.
fn cut_plan(keep: &[&str], ladder: &str, duration: &str, repetitions: u32) -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/plans/web-stacks.toml"
    ))
    .unwrap();
    let keys: Vec<String> = keep.iter().map(|s| s.to_lowercase()).collect();
    // A stack's target and workload are named by its key, its scenario by its workload.
    let of_stack = |block: &str| {
        let head = block.lines().next().unwrap_or("");
        let key = head
            .strip_prefix("[targets.")
            .or_else(|| head.strip_prefix("[workloads."))
            .map(|k| k.trim_end_matches(']').to_string())
            .or_else(|| {
                (head == "[[scenarios]]").then(|| {
                    block
                        .lines()
                        .find_map(|l| l.strip_prefix("workload = \""))
                        .unwrap_or("")
                        .trim_end_matches('"')
                        .to_string()
                })
            });
        key.map(|k| keys.contains(&k))
    };
    split_blocks(&text)
        .into_iter()
        .filter(|b| of_stack(b) != Some(false))
        .collect::<String>()
        .lines()
        .map(|l| match l.split('#').next().unwrap_or("").trim() {
            l if l.starts_with("concurrency = [") => format!("concurrency = {ladder}"),
            l if l.starts_with("duration = ") => format!("duration = \"{duration}\""),
            l if l.starts_with("repetitions = ") => format!("repetitions = {repetitions}"),
            "warmup = \"5s\"" => "warmup = \"200ms\"".into(),
            "idle = \"2s\"" => "idle = \"500ms\"".into(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The plan's text split before every table header.
fn split_blocks(text: &str) -> Vec<String> {
    let mut blocks: Vec<String> = vec![String::new()];
    for line in text.lines() {
        if line.starts_with('[') {
            blocks.push(String::new());
        }
        let last = blocks.last_mut().unwrap();
        last.push_str(line);
        last.push('\n');
    }
    blocks
}

/// The variables the cut plan reads, as the services give them now.
fn stack_env(keep: &[&str]) -> Option<Vec<(String, String)>> {
    let stacks = service("PERFBASE_STACKS")?;
    for s in keep {
        assert!(
            stacks.split_whitespace().any(|x| x.eq_ignore_ascii_case(s)),
            "stack {s} is not running (PERFBASE_STACKS={stacks}): scripts/services.sh up stacks"
        );
    }
    let mut env = vec![
        (
            "PERFBASE_PG_PID".to_string(),
            service_var("postgres", "PERFBASE_PG_PID"),
        ),
        (
            "PERFBASE_PGBOUNCER_PID".to_string(),
            service_var("pgbouncer", "PERFBASE_PGBOUNCER_PID"),
        ),
    ];
    for s in keep {
        for what in ["URL", "PID"] {
            let var = format!("PERFBASE_STACK_{s}_{what}");
            env.push((var.clone(), service_var("stacks", &var)));
        }
    }
    Some(env)
}

/// The page's Markdown in `dir` (`web-stacks-*.md`).
fn page_md(dir: &Path) -> String {
    let page = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("web-stacks-") && n.ends_with(".md")
        })
        .unwrap_or_else(|| panic!("no web-stacks-*.md in {}", dir.display()));
    std::fs::read_to_string(page).unwrap()
}

/// The matrix table's rows on the page in `dir`: cells of each `| … |` line after the head.
fn matrix_rows(dir: &Path) -> Vec<Vec<String>> {
    let md = page_md(dir);
    let at = md
        .find("\n## Web servers × SQL drivers\n")
        .unwrap_or_else(|| panic!("no matrix section:\n{md}"));
    md[at..]
        .lines()
        .skip_while(|l| !l.starts_with("| web server |"))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn observations(dir: &Path) -> String {
    let md = page_md(dir);
    let at = md
        .find("— observations")
        .expect("the matrix's observations");
    md[at..].split("\n## ").next().unwrap().to_string()
}

/// `perfbase run` of the cut plan at scale 0.02 (150 VUs → 3) with the stacks' variables.
fn run(dir: &Path, plan: &str, env: &[(String, String)]) -> Run {
    run_plan_with(dir, plan, |c| {
        c.args(["--scale", "0.02"])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .timeout(Duration::from_secs(240));
    })
}

#[test]
fn a_short_run_writes_the_seed_shaped_table_with_every_column_filled() {
    let keep = ["GO_PGX", "FASTAPI_ASYNCPG"];
    // Before the pids are read: another test may restart a stack.
    let _g = serial();
    let Some(env) = stack_env(&keep) else {
        return;
    };
    let dir = tmp();
    let plan = cut_plan(&keep, "[150, 600]", "400ms", 5);
    let r = run(dir.path(), &plan, &env);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let rows = matrix_rows(&dir.path().join("out"));
    // Grouped as the seed: each server's name once, then its driver's rows by VUs.
    let heads: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(
        heads,
        [
            ("Go net/http", "jackc/pgx", "3"),
            ("", "", "12"),
            ("FastAPI", "asyncpg", "3"),
            ("", "", "12"),
        ],
        "{rows:?}"
    );
    for row in &rows {
        assert_eq!(row.len(), 14, "{row:?}");
        let rps: f64 = row[3].replace(',', "").parse().unwrap();
        assert!(rps > 10.0, "{row:?}");
        // avg, min, max, p90, p95 in ms, in order.
        let lat: Vec<f64> = row[4..9].iter().map(|c| c.parse().unwrap()).collect();
        assert!(lat[1] <= lat[0] && lat[0] <= lat[2], "{row:?}");
        assert!(lat[3] <= lat[4] && lat[4] <= lat[2], "{row:?}");
        assert!(
            row[9].contains('%') && !row[9].starts_with('—'),
            "± {row:?}"
        );
        assert_eq!(row[10], "0.00 %", "{row:?}");
        assert_eq!(row[11], "pass", "the error threshold per step: {row:?}");
        assert!(row[12].ends_with(" %"), "app CPU {row:?}");
        assert!(row[13].ends_with("MiB"), "app RSS {row:?}");
    }
    let obs = observations(&dir.path().join("out"));
    assert!(obs.contains("Passed every step"), "{obs}");
    assert!(obs.contains("At 12 VUs, by RPS: "), "{obs}");
}

#[test]
fn a_stack_killed_mid_run_fails_its_rows_and_leaves_the_others_whole() {
    let keep = ["GO_PGX", "GO_PQ"];
    // Before the pids are read: another test may restart a stack.
    let _g = serial();
    let Some(env) = stack_env(&keep) else {
        return;
    };
    let dir = tmp();
    // pgx runs first, then lib/pq: 3 steps × 3 runs × 1 s each.
    let plan = cut_plan(&keep, "[150, 300, 600]", "1s", 3);
    let victim: i32 = env
        .iter()
        .find(|(k, _)| k == "PERFBASE_STACK_GO_PGX_PID")
        .unwrap()
        .1
        .parse()
        .unwrap();
    let started = Instant::now();
    let killer = std::thread::spawn(move || {
        // Into pgx's scenario (after the 0.5 s idle baseline and the warm-up), before its
        // last step: its 9 runs take 9 s at least.
        std::thread::sleep(Duration::from_secs(4));
        kill(victim);
    });
    let r = run(dir.path(), &plan, &env);
    killer.join().unwrap();
    let took = started.elapsed();
    // Put it back for the tests after this one, whatever happened.
    services_sh(&["up", "stacks"]);
    assert_eq!(
        r.code(),
        1,
        "a failed threshold: {}\n{}",
        r.stdout(),
        r.stderr()
    );
    // 18 s of runs, warm-ups and idle: a dead server costs no more than the run's timeout.
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let rows = matrix_rows(&dir.path().join("out"));
    assert_eq!(rows.len(), 6, "{rows:?}");
    // pgx's last step ran against a dead server; lib/pq's rows are whole.
    let last = &rows[2];
    assert!(
        last[11]
            .trim_matches('*')
            .starts_with("FAIL error_rate < 1%"),
        "{last:?}"
    );
    assert!(
        last[10].ends_with(" connect"),
        "the errors' class: {last:?}"
    );
    for row in &rows[3..] {
        assert_eq!(
            (row[10].as_str(), row[11].as_str()),
            ("0.00 %", "pass"),
            "{row:?}"
        );
    }
    let obs = observations(&dir.path().join("out"));
    assert!(obs.contains("Go net/http · jackc/pgx at"), "{obs}");
    assert!(obs.contains("× connect"), "errors by class: {obs}");
    assert!(obs.contains("its process exited"), "{obs}");
    // A dead server's fast refusals are not compared as the stack's latency.
    assert!(!obs.contains("the mean latency of jackc/pgx"), "{obs}");
}

/// SIGKILL, as a crash or the OOM killer would end the app.
fn kill(pid: i32) {
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
}
