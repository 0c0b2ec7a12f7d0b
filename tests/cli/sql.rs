//! `perfbase pg` / `perfbase mysql` and SQL workloads in plans, end to end against the real
//! PostgreSQL and MariaDB started by scripts/services.sh.

use crate::common::*;
use assert_cmd::Command;
use serde_json::Value;
use std::time::Duration;

fn pb(args: &[&str]) -> (i32, String, String, Option<Value>, tempfile::TempDir) {
    let dir = tmp();
    let json = dir.path().join("r.json");
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("-q")
        .env("PERFBASE_STORE", dir.path().join("results.db"))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let v = std::fs::read_to_string(&json)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        v,
        dir,
    )
}

fn init(cmd: &str, url: &str, workload: &str) {
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([cmd, url, "--init", "-w", workload, "--no-store"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn postgres_tpcb_counts_exactly_and_reports_like_pgbench() {
    let Some(url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    let _g = serial();
    init("pg", &url, "tpcb");
    let (code, out, err, v, _d) = pb(&["pg", &url, "-w", "tpcb", "-n", "300", "-c", "4"]);
    assert_eq!(code, 0, "{err}");
    let v = v.unwrap();
    assert_eq!(v["requests"], 300);
    assert_eq!(v["success_ratio"], 1.0);
    assert_eq!(v["protocol"], "postgres");
    assert!(
        !v["target"].as_str().unwrap().contains(":perfbase@"),
        "password redacted: {}",
        v["target"]
    );
    // pgbench's closing block, with the figures of the result.
    for line in [
        "transaction type: TPC-B (sort of), pgbench's built-in script",
        "scaling factor: 1",
        "query mode: prepared",
        "number of clients: 4",
        "number of transactions actually processed: 300",
        "number of failed transactions: 0 (0.000%)",
        "tps = ",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    let tps: f64 = out
        .split("tps = ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let expected = 300.0 / v["duration_s"].as_f64().unwrap();
    assert!(
        (tps - expected).abs() < 1e-3 * expected,
        "{tps} vs {expected}"
    );
    validate(&v);
    // As pgbench, a run takes the scale of the tables it finds, and says so when -s differs.
    let (code, _, err, v, _d) = pb(&["pg", &url, "-w", "tpcb", "-s", "4", "-n", "20"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("scale 4 ignored"), "{err}");
    assert_eq!(v.unwrap()["config"]["protocol"]["scale"], 1);
    // Plans too: a TPC-B workload's scale that disagrees with the tables is named.
    let dir = tmp();
    let plan = format!(
        "[targets.db]\nurl = \"{url}\"\n[workloads.tx]\ntarget = \"db\"\nbuiltin = \"tpcb\"\nscale = 5\n[[scenarios]]\nname = \"tpcb\"\nworkload = \"tx\"\nconcurrency = 2\nrequests = 40\n"
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stderr().contains("scale 5 ignored"), "{}", r.stderr());
    assert_eq!(r.json()["requests"], 40);
    assert_eq!(r.json()["success_ratio"], 1.0);
    // The function variant, pipelined: each execute sends 8 statements, and all are counted.
    let (code, _, err, v, _d) = pb(&[
        "pg",
        &url,
        "-w",
        "tpcb-function",
        "--pipeline",
        "8",
        "-n",
        "50",
        "-c",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v.unwrap()["requests"], 400, "50 batches of 8");
    // The open model on the hand-framed path: pgbench -S's query at a fixed rate, each op
    // timed from its intended start, and the same pipelined (8 per send, all counted).
    for (pipeline, ops) in [("1", 100), ("8", 800)] {
        let (code, _, err, v, _d) = pb(&[
            "pg",
            &url,
            "-w",
            "select-only",
            "--pipeline",
            pipeline,
            "-r",
            "200",
            "-n",
            "100",
        ]);
        assert_eq!(code, 0, "{err}");
        let v = v.unwrap();
        assert_eq!(v["model"], "open");
        assert_eq!(v["requests"], ops, "{v}");
        assert_eq!(v["success_ratio"], 1.0);
    }
}

#[test]
fn database_faults_are_counted_with_their_codes_and_never_leak_the_password() {
    let Some(url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    let _g = serial();
    // Each fault: nothing succeeds (exit 3), every op is counted in its class, the server's
    // code is named, and the password is shown nowhere.
    let expect = |args: &[&str], class: &str, n: u64, code: &str| {
        let (exit, out, err, v, _d) = pb(args);
        assert_eq!(exit, 3, "{args:?}: nothing succeeded: {err}");
        let v = v.unwrap();
        assert_eq!(v["errors"][class], n, "{args:?}: {}", v["errors"]);
        let text = format!("{out}{err}{v}");
        assert!(text.contains(code), "{args:?}: {code} in {text}");
        assert!(!text.contains("wrong-s3cret"), "password leaked: {text}");
    };
    let mut servers = vec![("pg", url, ["28P01", "3D000", "42P01"])];
    if let Some(my) = service("PERFBASE_MYSQL_URL") {
        servers.push(("mysql", my, ["1045", "1049", "1146"]));
    }
    for (cmd, url, [login, database, table]) in &servers {
        let wrong = url.replace(":perfbase@", ":wrong-s3cret@");
        expect(
            &[cmd, &wrong, "-w", "select-pk", "-n", "10", "-c", "1"],
            "connect",
            10,
            login,
        );
        let missing = format!("{}/perfbase_no_such_db", url.rsplit_once('/').unwrap().0);
        expect(
            &[cmd, &missing, "-w", "select-pk", "-n", "5"],
            "connect",
            5,
            database,
        );
        // A statement that fails: driver errors with the server's code, and the run goes on.
        let sql = "SELECT * FROM perfbase_missing_table";
        expect(
            &[cmd, url, "--sql", sql, "-n", "20", "-c", "2"],
            "driver",
            20,
            table,
        );
    }
}

#[test]
fn the_mysql_suite_gives_one_row_per_operation() {
    let Some(url) = service("PERFBASE_MYSQL_URL") else {
        return;
    };
    let _g = serial();
    init("mysql", &url, "suite");
    let (code, out, err, v, _d) = pb(&["mysql", &url, "-w", "suite", "-c", "2", "-d", "300ms"]);
    assert_eq!(code, 0, "{err}");
    let v = v.unwrap();
    let names: Vec<&str> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "insert",
            "select-pk",
            "scan",
            "update",
            "delete",
            "transaction",
            "join"
        ]
    );
    for p in v["phases"].as_array().unwrap() {
        assert!(p["requests"].as_u64().unwrap() > 0, "{}", p["name"]);
        assert_eq!(
            p["success_ratio"], 1.0,
            "{}: {}",
            p["name"], p["error_samples"]
        );
    }
    let total: u64 = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(v["requests"].as_u64().unwrap(), total);
    assert!(out.contains("select-pk") && out.contains("ops/s"), "{out}");
    validate(&v);
}

#[test]
fn plans_sweep_custom_sql_with_corpora_on_both_databases() {
    let (Some(pg), Some(my)) = (
        service("PERFBASE_POSTGRES_URL"),
        service("PERFBASE_MYSQL_URL"),
    ) else {
        return;
    };
    let _g = serial();
    init("pg", &pg, "suite");
    init("mysql", &my, "suite");
    let dir = tmp();
    let plan = format!(
        r#"
[targets.pg]
url = "{pg}"
[targets.my]
url = "{my}"
[corpora.ids]
generate = {{ pattern = "{{n}}", count = 10000, start = 1 }}
[workloads.pg_lookup]
target = "pg"
sql = "SELECT v FROM perfbase_items WHERE id = $1"
params = ["{{{{ids}}}}"]
[workloads.my_lookup]
target = "my"
sql = "SELECT v FROM perfbase_items WHERE id = ?"
params = ["{{{{ids}}}}"]
[workloads.pg_tx]
target = "pg"
builtin = "transaction"
[[scenarios]]
name = "pg ladder"
workload = "pg_lookup"
rate = [100, 200]
duration = "500ms"
[[scenarios]]
name = "my repeated"
workload = "my_lookup"
concurrency = 2
requests = 200
repetitions = 2
[[scenarios]]
name = "pg tx"
workload = "pg_tx"
concurrency = 2
duration = "300ms"
thresholds = ["error_rate < 1%"]
"#
    );
    let file = dir.path().join("db.toml");
    std::fs::write(&file, plan).unwrap();
    let out_dir = dir.path().join("out");
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args([
            "run",
            file.to_str().unwrap(),
            "-q",
            "--no-store",
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("result.json")).unwrap())
            .unwrap();
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 5, "2 ladder steps + 2 repetitions + 1");
    for p in phases {
        assert_eq!(
            p["success_ratio"], 1.0,
            "{}: {}",
            p["name"], p["error_samples"]
        );
    }
    let ladder = &v["study"]["scenarios"][0];
    assert_eq!(ladder["kind"], "rate ladder");
    let achieved = ladder["steps"][1]["achieved_rps"].as_f64().unwrap();
    assert!((150.0..=230.0).contains(&achieved), "{achieved}");
    assert_eq!(v["study"]["scenarios"][1]["repetition_stats"][0]["runs"], 2);
    assert_eq!(phases[2]["requests"], 200);
    let label = v["study"]["scenarios"][0]["target"].as_str().unwrap();
    assert!(
        label.contains("[redacted]") && !label.contains(":perfbase@"),
        "{label}"
    );
    validate(&v);
}

#[test]
fn connections_killed_by_the_server_mid_run_are_counted_and_the_run_goes_on() {
    let Some(url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    let _g = serial();
    init("pg", &url, "suite");
    let dir = tmp();
    let json = dir.path().join("r.json");
    // The load tags its sessions with an application name of its own.
    let tagged = format!("{url}?application_name=perfbase_victim");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args([
            "pg",
            &tagged,
            "-w",
            "select-pk",
            "-c",
            "4",
            "-d",
            "3s",
            "-q",
            "--no-store",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    // perfbase itself as the SQL client: terminate every session of the load.
    let kill = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'perfbase_victim'";
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["pg", &url, "--sql", kill, "-n", "1", "-q", "--no-store"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the run goes on: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let read = v["errors"]["read"].as_u64().unwrap_or(0);
    assert!(
        (1..=8).contains(&read),
        "each killed session fails once, then reconnects: {}",
        v["errors"]
    );
    assert!(
        v["status"]["0"].as_u64().unwrap() > read * 100,
        "most requests succeeded after the reconnect"
    );
    assert!(
        v["error_samples"].to_string().contains("57P01"),
        "{}",
        v["error_samples"]
    );
    validate(&v);
}

/// Runs `perfbase CMD URL -w select-pk` for 6 s, stops the server (scripts/services.sh down)
/// 1.5 s in and starts it again 1.5 s later: the stop is counted, the run goes on and recovers.
fn server_stopped_mid_run(cmd: &str, url: &str, service: &str) {
    init(cmd, url, "suite");
    let args = [
        cmd,
        url,
        "-w",
        "select-pk",
        "-c",
        "2",
        "-d",
        "6s",
        "--timeout",
        "1s",
    ];
    stopped_mid_run(&args, service);
}

#[test]
fn a_database_server_stopped_mid_run_is_counted_and_the_run_recovers() {
    let (Some(pg), Some(my)) = (
        service("PERFBASE_POSTGRES_URL"),
        service("PERFBASE_MYSQL_URL"),
    ) else {
        return;
    };
    let _g = serial();
    server_stopped_mid_run("pg", &pg, "postgres");
    server_stopped_mid_run("mysql", &my, "mariadb");
}

#[test]
fn pipelining_is_refused_for_mysql_on_the_command_line_and_in_plans() {
    // Refused before any connection: no server is needed, and none is at port 9.
    let (code, _, err, _, _) = pb(&[
        "mysql",
        "mysql://u:pw@127.0.0.1:9/db",
        "--pipeline",
        "4",
        "-n",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--pipeline: PostgreSQL only"), "{err}");
    let plan = r#"
[targets.db]
url = "mysql://u:pw@127.0.0.1:9/db"
[workloads.q]
target = "db"
sql = "SELECT 1"
pipeline = 8
[[scenarios]]
name = "s"
workload = "q"
concurrency = 1
requests = 1
"#;
    let dir = tmp();
    let r = run_plan_with(dir.path(), plan, |_| {});
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("plan.toml:7: workloads.q.pipeline: PostgreSQL only"),
        "{}",
        r.stderr()
    );
}

#[test]
fn the_monitor_sees_postgresql_idle_and_under_load() {
    let Some(url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    let _g = serial();
    init("pg", &url, "suite");
    let pid = service_var("postgres", "PERFBASE_PG_PID");
    let selector = format!("pid:{pid}");
    let (code, _, err, v, _d) = pb(&[
        "pg",
        &url,
        "-w",
        "select-pk",
        "-c",
        "4",
        "-d",
        "3s",
        "--monitor",
        &selector,
        "--monitor-idle",
        "1500ms",
        "--monitor-interval",
        "250ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let v = v.unwrap();
    let pg = &v["monitor"]["targets"][0];
    assert_eq!(pg["label"], selector.as_str());
    let idle = find(&pg["phases"], "name", "idle");
    let load = find(&pg["phases"], "name", "measure");
    let cpu = |p: &Value| p["cpu_pct"]["mean"].as_f64().unwrap();
    // Idle, the postmaster and its helpers barely run; 4 sessions of point selects keep their
    // backends busy (the server's whole tree counts: backends are the postmaster's children).
    assert!(cpu(idle) < 20.0, "idle {} %", cpu(idle));
    assert!(cpu(load) > 20.0, "under load {} %", cpu(load));
    assert!(cpu(load) > 3.0 * cpu(idle).max(1.0), "{idle} vs {load}");
    // Idle's fewest processes (another test's passing connection to the shared server raises
    // a phase's maximum: idle once held 7, the server's own 6 plus one) against the load's
    // mean: on a busy machine the load's first sample can come before its 4 sessions have
    // connected (a fresh suite run saw 6, 10, 10, …: mean 9.7).
    let (fewest, mean) = (
        idle["processes"]["min"].as_f64().unwrap(),
        load["processes"]["mean"].as_f64().unwrap(),
    );
    assert!(
        mean >= fewest + 3.0,
        "one backend per session: {idle} vs {load}"
    );
    let rss = load["rss_bytes"]["mean"].as_f64().unwrap();
    assert!((5e6..2e9).contains(&rss), "RSS {rss}");
    validate(&v);
}

#[test]
fn plans_run_suites_of_every_database_kind_one_step_per_operation() {
    let (Some(pg), Some(my), Some(redis), Some(mongo)) = (
        service("PERFBASE_POSTGRES_URL"),
        service("PERFBASE_MYSQL_URL"),
        service("PERFBASE_REDIS_URL"),
        service("PERFBASE_MONGODB_URL"),
    ) else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // Set-up (tables, collections, prefill) comes from the plan itself, once per suite.
    let plan = format!(
        r#"
[targets.pg]
url = "{pg}"
[targets.my]
url = "{my}"
[targets.redis]
url = "{redis}"
[targets.mongo]
url = "{mongo}"
[workloads.pg_ops]
target = "pg"
builtin = "suite"
init = true
[workloads.my_ops]
target = "my"
builtin = "suite"
operations = ["insert", "select-pk", "join"]
init = true
[workloads.redis_ops]
target = "redis"
command = "suite"
operations = ["set", "get", "incr"]
keyspace = 500
prefill = true
[workloads.mongo_ops]
target = "mongo"
command = "suite"
operations = ["insert-one", "find-one", "aggregate"]
keyspace = 200
init = true
[[scenarios]]
name = "postgresql"
workload = "pg_ops"
concurrency = 2
requests = 60
repetitions = 2
[[scenarios]]
name = "mariadb"
workload = "my_ops"
concurrency = 2
requests = 60
[[scenarios]]
name = "redis"
workload = "redis_ops"
concurrency = 2
requests = 60
[[scenarios]]
name = "mongodb"
workload = "mongo_ops"
concurrency = 2
requests = 60
"#
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let expected: [(&str, &[&str], u64); 4] = [
        (
            "postgresql",
            &[
                "insert",
                "select-pk",
                "scan",
                "update",
                "delete",
                "transaction",
                "join",
            ],
            120,
        ),
        ("mariadb", &["insert", "select-pk", "join"], 60),
        ("redis", &["set", "get", "incr"], 60),
        ("mongodb", &["insert-one", "find-one", "aggregate"], 60),
    ];
    for (i, (name, ops, requests)) in expected.into_iter().enumerate() {
        let s = &r.json()["study"]["scenarios"][i];
        assert_eq!(
            (s["name"].as_str(), s["kind"].as_str()),
            (Some(name), Some("suite"))
        );
        let steps = s["steps"].as_array().unwrap();
        let names: Vec<&str> = steps
            .iter()
            .map(|st| st["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ops, "{name}");
        for (k, op) in ops.iter().enumerate() {
            let runs: Vec<&Value> = r.json()["phases"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["scenario"] == name && p["step"] == k as u64)
                .collect();
            let sent: u64 = runs.iter().map(|p| p["requests"].as_u64().unwrap()).sum();
            assert_eq!(sent, requests, "{name} {op}");
            for p in runs {
                assert_eq!(
                    p["success_ratio"], 1.0,
                    "{name} {op}: {}",
                    p["error_samples"]
                );
            }
        }
        if name == "postgresql" {
            assert_eq!(s["repetition_stats"].as_array().unwrap().len(), 7);
        }
    }
    // Each suite set up once: the tables and collections, and the keys.
    let err = r.stderr();
    assert_eq!(
        err.matches("initialised the suite's tables").count(),
        2,
        "{err}"
    );
    assert_eq!(err.matches("prefilled 500 keys").count(), 1, "{err}");
    assert_eq!(err.matches("perfbase_docs").count(), 1, "{err}");
    validate(r.json());
}

#[test]
fn a_plan_tpcb_scenario_closes_with_pgbench_block() {
    let Some(url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    let plan = format!(
        "[targets.pg]\nurl = \"{url}\"\n[workloads.tpcb]\ntarget = \"pg\"\nbuiltin = \"tpcb\"\ninit = true\n\
         [[scenarios]]\nname = \"tpc-b\"\nworkload = \"tpcb\"\nconcurrency = 2\nrequests = 200\n"
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    assert!(
        r.stderr().contains("initialised pgbench tables at scale 1"),
        "{}",
        r.stderr()
    );
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    for text in [r.stdout(), report] {
        for line in [
            "pgbench, tpc-b:",
            "transaction type: TPC-B (sort of), pgbench's built-in script",
            "scaling factor: 1",
            "number of clients: 2",
            "number of transactions actually processed: 200",
            "number of failed transactions: 0 (0.000%)",
            "tps = ",
        ] {
            assert!(text.contains(line), "{line:?} missing from:\n{text}");
        }
    }
}
