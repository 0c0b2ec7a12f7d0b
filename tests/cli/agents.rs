//! Agents on one machine: N `perfbase` processes, each running one segment of the same
//! schedule against the reference service, merged by `perfbase merge` into exactly the run
//! one process would have made.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `args` as segments 0..n at the same time; their result files.
pub(crate) fn agents(dir: &Path, n: u32, args: &[&str]) -> Vec<String> {
    let children: Vec<(std::process::Child, String)> = (0..n)
        .map(|i| {
            let json = dir
                .join(format!("agent-{i}.json"))
                .to_str()
                .unwrap()
                .to_string();
            let child = Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
                .args(args)
                .args([
                    "--segment",
                    &format!("{i}/{n}"),
                    "--json",
                    &json,
                    "-q",
                    "--no-store",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (child, json)
        })
        .collect();
    children
        .into_iter()
        .map(|(child, json)| {
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            json
        })
        .collect()
}

fn read(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn histogram(v: &Value) -> hdrhistogram::Histogram<u64> {
    perfbase_core::result::decode_histogram(v["histogram"]["response"].as_str().unwrap()).unwrap()
}

#[test]
fn three_segments_of_a_counted_mix_merge_to_exactly_one_machines_counts() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let a = server.addr;
    let mut text = String::new();
    for _ in 0..9 {
        text.push_str(&format!("GET http://{a}/\n"));
    }
    text.push_str(&format!("GET http://{a}/status/500\n"));
    let targets = dir.path().join("targets.txt");
    std::fs::write(&targets, text).unwrap();
    let files = agents(
        dir.path(),
        3,
        &[
            "http",
            "--targets",
            targets.to_str().unwrap(),
            "-n",
            "3000",
            "-c",
            "4",
        ],
    );
    let parts: Vec<Value> = files.iter().map(|f| read(f)).collect();
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p["segment"], format!("{i}/3"));
        assert_eq!(p["requests"], 1000, "segment {i}");
    }
    let merged = dir.path().join("merged.json");
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().cloned());
    args.extend(["--json".into(), merged.to_str().unwrap().into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = pb(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    let m = read(merged.to_str().unwrap());
    validate(&m);
    assert!(m.get("segment").is_none());
    assert_eq!(m["requests"], 3000);
    assert_eq!(m["status"]["200"], 2700);
    assert_eq!(m["status"]["500"], 300);
    assert_eq!(server.stats.requests(), 3000);
    // The merged histogram is the union of the agents'.
    let mut union = histogram(&parts[0]);
    for p in &parts[1..] {
        union.add(histogram(p)).unwrap();
    }
    assert_eq!(histogram(&m), union);
    assert!(stdout.contains("Requests      3,000"), "{stdout}");

    // A segment missing, or given twice: refused, named.
    let (code, _, stderr) = pb(dir.path(), &["merge", &files[0], &files[1]]);
    assert_eq!(code, 2);
    assert!(stderr.contains("segment 2/3 is missing"), "{stderr}");
    let (code, _, stderr) = pb(dir.path(), &["merge", &files[0], &files[1], &files[1]]);
    assert_eq!(code, 2);
    assert!(stderr.contains("segment 1/3 is given twice"), "{stderr}");

    // A run without segments merged with itself, or with a copy of itself (issue 47, item
    // 16): refused, not counted twice.
    let one = dir.path().join("one.json");
    let copy = dir.path().join("copy.json");
    let url = format!("http://{a}/");
    let (code, _, stderr) = pb(
        dir.path(),
        &[
            "http",
            &url,
            "-n",
            "30",
            "-q",
            "--no-store",
            "--json",
            one.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    std::fs::copy(&one, &copy).unwrap();
    for pair in [[&one, &one], [&one, &copy]] {
        let (code, _, stderr) = pb(
            dir.path(),
            &[
                "merge",
                pair[0].to_str().unwrap(),
                pair[1].to_str().unwrap(),
            ],
        );
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("are the same result"), "{stderr}");
    }
}

#[test]
fn an_open_rate_split_over_three_agents_is_achieved_together() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    // Started at one wall-clock second, two from now, wherever each process is by then.
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 2;
    let at_text = at.to_string();
    let files = agents(
        dir.path(),
        3,
        &[
            "http",
            &url,
            "-r",
            "900",
            "-d",
            "3s",
            "--start-at",
            &at_text,
        ],
    );
    let mut starts = Vec::new();
    for f in &files {
        let p = read(f);
        let started = perfbase_core::clock::parse_time(p["started_at"].as_str().unwrap()).unwrap();
        starts.push(
            started
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs_f64(),
        );
        let o = &p["open_model"];
        assert!(
            (o["requested_rate"].as_f64().unwrap() - 300.0).abs() < 1e-9,
            "{o}"
        );
        assert_eq!(p["requests"], 900, "each agent sends its third of 2,700");
    }
    for s in &starts {
        assert!(
            *s >= at as f64 && *s < at as f64 + 0.1,
            "started {s}, asked {at}"
        );
    }
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--json", "-"]);
    let (code, stdout, stderr) = pb(dir.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    let m: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(m["requests"], 2700);
    let rps = m["rps"].as_f64().unwrap();
    assert!((rps / 900.0 - 1.0).abs() < 0.01, "{rps}/s merged for 900/s");
    assert!((m["open_model"]["requested_rate"].as_f64().unwrap() - 900.0).abs() < 1e-6);
    assert_eq!(server.stats.requests(), 2700);
}

#[test]
fn a_bad_segment_is_refused_before_any_load() {
    let dir = tmp();
    for (args, says) in [
        (
            vec!["http", "http://127.0.0.1:9/", "--segment", "3/3"],
            "I/N",
        ),
        (
            vec!["http", "http://127.0.0.1:9/", "--segments", "3"],
            "JOB_COMPLETION_INDEX",
        ),
    ] {
        let (code, _, stderr) = pb(dir.path(), &args);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn an_agent_killed_mid_run_makes_its_missing_steps_invalid_and_is_named() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = dir.path().join("ladder.toml");
    std::fs::write(
        &plan,
        format!(
            "[plan]\nname = \"ladder\"\n[targets.ref]\nurl = \"http://{}\"\n[workloads.w]\n\
             target = \"ref\"\npath = \"/\"\n[[scenarios]]\nname = \"rates\"\nworkload = \"w\"\n\
             rate = [100, 200, 300]\nduration = \"1s\"\n",
            server.addr
        ),
    )
    .unwrap();
    let spawn = |i: u32| {
        Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .args([
                "run",
                plan.to_str().unwrap(),
                "--segment",
                &format!("{i}/2"),
                "--out",
            ])
            .arg(dir.path().join(format!("out{i}")))
            .args(["-q", "--no-store"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut whole, mut killed) = (spawn(0), spawn(1));
    // Killed (no chance to save anything more) after its first step was saved.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(whole.wait().unwrap().code(), Some(0));
    let files: Vec<String> = (0..2)
        .map(|i| {
            dir.path()
                .join(format!("out{i}/result.json"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(read(&files[1])["phases"].as_array().unwrap().len(), 1);
    let merged = dir.path().join("merged.json");
    let (code, _, stderr) = pb(
        dir.path(),
        &[
            "merge",
            &files[0],
            &files[1],
            "--json",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 130, "a partial merge: {stderr}");
    assert!(
        stderr.contains("step 'rates 200/s' is invalid: no result from")
            && stderr.contains("(segment 1/2)")
            && stderr.contains("step 'rates 300/s' is invalid"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("step 'rates 100/s' is invalid"),
        "{stderr}"
    );
    let m = read(merged.to_str().unwrap());
    assert_eq!(m["interrupted"], true);
    // The first step has both halves: 100/s for 1 s.
    assert_eq!(m["phases"][0]["requests"], 100);
}

/// Network namespaces made for one test: a server namespace with a bridge at 10.213.0.1/24
/// and one namespace per agent, each joined to the bridge by a veth pair at 10.213.0.(10+i).
/// Deleted (with their links) when dropped.
struct Namespaces {
    server: String,
    agents: Vec<String>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl Namespaces {
    fn new(agents: u32) -> Result<Namespaces, String> {
        let id = std::process::id() % 100_000;
        let mut ns = Namespaces {
            server: format!("pbs{id}"),
            agents: Vec::new(),
        };
        let s = ns.server.clone();
        ip(&["netns", "add", &s])?;
        ip(&["-n", &s, "link", "set", "lo", "up"])?;
        ip(&["-n", &s, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &s, "addr", "add", "10.213.0.1/24", "dev", "br0"])?;
        ip(&["-n", &s, "link", "set", "br0", "up"])?;
        for i in 0..agents {
            let a = format!("pba{i}x{id}");
            ip(&["netns", "add", &a])?;
            ns.agents.push(a.clone());
            let (va, vb) = (format!("pv{i}a{id}"), format!("pv{i}b{id}"));
            ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb])?;
            ip(&["link", "set", &va, "netns", &a])?;
            ip(&["link", "set", &vb, "netns", &s])?;
            ip(&["-n", &s, "link", "set", &vb, "master", "br0"])?;
            ip(&["-n", &s, "link", "set", &vb, "up"])?;
            ip(&["-n", &a, "link", "set", "lo", "up"])?;
            ip(&[
                "-n",
                &a,
                "addr",
                "add",
                &format!("10.213.0.{}/24", 10 + i),
                "dev",
                &va,
            ])?;
            ip(&["-n", &a, "link", "set", &va, "up"])?;
        }
        Ok(ns)
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in self.agents.iter().chain([&self.server]) {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

/// Three `perfbase agent` processes, each in its own network namespace with its own address,
/// load the reference service in a fourth (a test host made here, not the machine's network),
/// and save to one store under one run id; `perfbase merge --run-id` gives exactly one
/// machine's counts of a 9:1 mix (2,700 / 300 of 3,000) and the union of their histograms.
#[test]
fn agents_in_their_own_network_namespaces_merge_to_one_machines_counts() {
    let ns = match Namespaces::new(3) {
        Ok(ns) => ns,
        Err(e) => {
            assert!(
                std::env::var("PERFBASE_REQUIRE_SERVICES").is_err(),
                "network namespaces are needed (run as root with iproute2): {e}"
            );
            eprintln!("note: no network namespaces ({e}); skipping");
            return;
        }
    };
    let _g = serial();
    let dir = tmp();
    let bin = assert_cmd::cargo::cargo_bin("perfbase");
    let mut server = Command::new("ip")
        .args(["netns", "exec", &ns.server])
        .arg(&bin)
        .args([
            "serve",
            "--host",
            "10.213.0.1",
            "--allow-remote",
            "--port",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://10.213.0.1:"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .trim_end_matches('/')
        .to_string();
    let plan = dir.path().join("mix.toml");
    std::fs::write(
        &plan,
        format!(
            "[targets.api]\nurl = \"{url}\"\n[workloads.w]\ntarget = \"api\"\n\
             [[workloads.w.mix]]\npath = \"/\"\nweight = 9\n\
             [[workloads.w.mix]]\npath = \"/status/500\"\nweight = 1\n\
             [[scenarios]]\nname = \"mix\"\nworkload = \"w\"\nconcurrency = 3\nrequests = 3000\n\
             thresholds = [\"error_rate < 11%\"]\n\
             [[checks]]\nname = \"the mix\"\nworkload = \"w\"\nrequests = 30\n\
             expect = {{ 200 = 27, 500 = 3 }}\n"
        ),
    )
    .unwrap();
    let store = dir.path().join("shared.db");
    let agents: Vec<std::process::Child> = ns
        .agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            Command::new("ip")
                .args(["netns", "exec", a])
                .arg(&bin)
                .arg("agent")
                .arg(&plan)
                .args(["--segment", &format!("{i}/3"), "--run-id", "netns-1", "-q"])
                .arg("--store")
                .arg(&store)
                .arg("--out")
                .arg(dir.path().join(format!("agent-{i}")))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for a in agents {
        let out = a.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = server.kill();
    let _ = server.wait();
    let merged = dir.path().join("merged.json");
    let (code, stdout, stderr) = pb(
        dir.path(),
        &[
            "merge",
            "--run-id",
            "netns-1",
            "--wait-for",
            "3",
            "--wait-timeout",
            "5s",
            "--store",
            store.to_str().unwrap(),
            "--plan",
            plan.to_str().unwrap(),
            "--json",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let m = read(merged.to_str().unwrap());
    validate(&m);
    assert_eq!(m["requests"], 3030);
    let mix = find(&m["phases"], "scenario", "mix");
    assert_eq!(mix["requests"], 3000);
    assert_eq!(mix["status"]["200"], 2700);
    assert_eq!(mix["status"]["500"], 300);
    // Judged on the merged run: the check's 30 requests over three agents are exactly the
    // 27 / 3 one machine sends (each agent alone saw 10 and could not pass it).
    let check = &m["study"]["checks"][0];
    assert_eq!(check["passed"], true, "{check}");
    assert_eq!(check["actual"], serde_json::json!({"200": 27, "500": 3}));
    assert_eq!(m["study"]["scenarios"][0]["thresholds"][0]["passed"], true);
    assert_eq!(m["study"]["scenarios"][0]["steps"][0]["success_ratio"], 0.9);
    let parts: Vec<Value> = (0..3)
        .map(|i| {
            read(
                dir.path()
                    .join(format!("agent-{i}/result.json"))
                    .to_str()
                    .unwrap(),
            )
        })
        .collect();
    let mut union = histogram(&parts[0]);
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p["segment"], format!("{i}/3"));
        assert_eq!(p["requests"], 1010);
        if i > 0 {
            union.add(histogram(p)).unwrap();
        }
    }
    assert_eq!(histogram(&m), union);
    // A check the merged run fails makes merge exit 1, naming it.
    let text = std::fs::read_to_string(&plan).unwrap();
    std::fs::write(&plan, text.replace("200 = 27, 500 = 3", "200 = 30")).unwrap();
    let (code, stdout, _) = pb(
        dir.path(),
        &[
            "merge",
            "--run-id",
            "netns-1",
            "--store",
            store.to_str().unwrap(),
            "--plan",
            plan.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("check the mix: expected 30 × 200; got 27 × 200, 3 × 500 — FAIL"),
        "{stdout}"
    );
    // A fourth agent never came: the wait gives up, naming the count.
    let (code, _, stderr) = pb(
        dir.path(),
        &[
            "merge",
            "--run-id",
            "netns-1",
            "--wait-for",
            "4",
            "--wait-timeout",
            "1s",
            "--store",
            store.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("run netns-1: 3 of 4 agents saved their results within 1s"),
        "{stderr}"
    );
}

/// `perfbase agent --barrier`: three agents started a second apart meet in the store and
/// begin their load together (their results' start times within 100 ms), each recording its
/// clock's offset from the store's (this machine's own, for a SQLite file: near 0); one
/// waiting for a fourth that never comes gives up, naming who came.
#[test]
fn agents_meet_at_the_store_barrier_and_start_together() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        format!(
            "[targets.api]\nurl = \"http://{}\"\n[workloads.w]\ntarget = \"api\"\npath = \"/\"\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 3\nrequests = 300\n",
            server.addr
        ),
    )
    .unwrap();
    let store = dir.path().join("shared.db");
    let agent = |i: u32, n: u32, run: &str, timeout: &str| {
        Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .arg("agent")
            .arg(&plan)
            .args([
                "--segment",
                &format!("{i}/{n}"),
                "--run-id",
                run,
                "--barrier",
            ])
            .args(["--barrier-timeout", timeout, "-q", "--store"])
            .arg(&store)
            .arg("--out")
            .arg(dir.path().join(format!("{run}-{i}")))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut children = Vec::new();
    for i in 0..3 {
        children.push(agent(i, 3, "b1", "30s"));
        std::thread::sleep(std::time::Duration::from_millis(1000));
    }
    let mut starts = Vec::new();
    for (i, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains("all 3 agents arrived"), "{err}");
        let r = read(
            dir.path()
                .join(format!("b1-{i}/result.json"))
                .to_str()
                .unwrap(),
        );
        let offset = r["clock_offset_ms"].as_f64().unwrap();
        assert!(
            offset.abs() < 50.0,
            "a SQLite store's clock is this machine's: {offset}"
        );
        let at = r["started_at"].as_str().unwrap().to_string();
        let started = perfbase_core::clock::parse_time(&at).unwrap();
        // The result starts when the load did, at the agreed time, not before its wait.
        let agreed = err
            .split("starting at ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no start in {err}"));
        let agreed = perfbase_core::clock::parse_time(agreed).unwrap();
        assert!(
            started >= agreed - std::time::Duration::from_millis(5),
            "started_at {at} is before the agreed start"
        );
        starts.push(started);
    }
    let first = *starts.iter().min().unwrap();
    for s in &starts {
        let apart = s.duration_since(first).unwrap();
        // Without the barrier they start seconds apart. With it, each sleeps to the same
        // instant; on 2 cores under the whole suite one woke 101 ms late, so 250 ms.
        assert!(
            apart < std::time::Duration::from_millis(250),
            "{apart:?} apart: {starts:?}"
        );
    }
    // The last agent arrived 2 s after the first; all started 2 s after it.
    let (code, stdout, stderr) = pb(
        dir.path(),
        &[
            "merge",
            "--run-id",
            "b1",
            "--store",
            store.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Requests      300"), "{stdout}");
    assert!(
        stderr.contains("the agents' clocks against the store's"),
        "{stderr}"
    );

    let lonely = agent(0, 2, "b2", "1s").wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&lonely.stderr);
    assert_eq!(lonely.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--barrier: run b2: 1 of 2 agents arrived within 1s (0/2)"),
        "{err}"
    );
}
