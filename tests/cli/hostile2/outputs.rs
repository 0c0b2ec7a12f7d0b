//! What reports and commands write: FIFOs, Markdown, certificates.

use super::*;
use crate::common::*;
use assert_cmd::Command;
use std::time::Duration;

/// Item 2: `--json`, `--jsonl` or `--hdr-log` naming a FIFO with no reader blocked the run for
/// minutes (a plain open waits for a reader), and SIGTERM could not end it. Now an output
/// waits at most 5 s for its reader, then is refused by name; the run is still stored. With
/// a reader, the FIFO gets the output as before.
#[test]
fn a_fifo_with_no_reader_never_hangs_the_run() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let url = format!("http://{}/", line.trim().rsplit("http://").next().unwrap());
    let dir = tmp();
    let fifo = dir.path().join("f");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for (flag, code) in [("--json", 4), ("--jsonl", 2), ("--hdr-log", 4)] {
        let started = std::time::Instant::now();
        let out = Command::cargo_bin("perfbase")
            .unwrap()
            .args(["http", &url, "-r", "50", "-d", "1s", flag])
            .arg(&fifo)
            .env("PERFBASE_STORE", dir.path().join("results.db"))
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{flag}: {stderr}");
        assert!(
            stderr.contains("a FIFO with no reader for 5 s"),
            "{flag}: {stderr}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{flag}: {:?}",
            started.elapsed()
        );
    }
    // The two runs that measured were stored all the same.
    let (_, history, _) = pb(dir.path(), &["history"]);
    assert_eq!(
        history.lines().filter(|l| l.contains("http://")).count(),
        2,
        "{history}"
    );
    // With a reader, the FIFO gets the whole result.
    let reader = std::process::Command::new("cat")
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["http", &url, "-n", "5", "--no-store", "--json"])
        .arg(&fifo)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = reader.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
    assert_eq!(v["requests"], 5);
    server.stop();
}

/// Item 8: a hostile name went raw into the Markdown report: a link, raw HTML, emphasis, or
/// (with a `|`) a split table row. Now every outside text is escaped in Markdown as in HTML.
#[test]
fn hostile_names_stay_text_in_the_markdown_report() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let dir = tmp();
    let plan = format!(
        "[targets.svc]\nurl = \"http://{addr}\"\n[workloads.w]\ntarget = \"svc\"\n\
         [[scenarios]]\nname = \"[all passed](http://evil.example) <img src=x> *ok* | cell\"\n\
         workload = \"w\"\nconcurrency = 1\nrequests = 5\n"
    );
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.arg("--no-store");
    });
    server.stop();
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(
        md.contains("\\[all passed](http://evil.example) \\<img src=x> \\*ok\\* \\| cell"),
        "{md}"
    );
    // Everywhere the name shows (summary, heading, findings), escaped.
    assert_eq!(
        md.matches("[all passed]").count(),
        md.matches("\\[all passed]").count(),
        "{md}"
    );
    assert!(md.matches("\\[all passed]").count() >= 2, "{md}");
}

/// Item 10: `serve --tls-cert FILE` read like an input and overwrote FILE, following symbolic
/// links. It is `--tls-cert-out` now (the old spelling warns), and it never overwrites what an
/// earlier `perfbase serve` did not write.
#[test]
fn serve_never_overwrites_a_file_it_did_not_write() {
    let dir = tmp();
    let precious = dir.path().join("precious.pem");
    std::fs::write(&precious, "my own key\n").unwrap();
    let link = dir.path().join("link.pem");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    for path in [&precious, &link] {
        let out = Command::cargo_bin("perfbase")
            .unwrap()
            .args(["serve", "--port", "0", "--tls-cert-out"])
            .arg(path)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("was not written by perfbase serve"),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "my own key\n");
    }
    // A new file is written; a second serve replaces its own; the old spelling warns.
    let cert = dir.path().join("cert.pem");
    for flag in ["--tls-cert-out", "--tls-cert-out", "--tls-cert"] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
            .args(["serve", "--port", "0", flag])
            .arg(&cert)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("https://"), "{flag}: {line}");
        interrupt_keeping(&mut child);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.contains("--tls-cert is now --tls-cert-out"),
            flag == "--tls-cert",
            "{stderr}"
        );
        assert!(std::fs::read_to_string(&cert)
            .unwrap()
            .contains("BEGIN CERTIFICATE"));
    }
}
