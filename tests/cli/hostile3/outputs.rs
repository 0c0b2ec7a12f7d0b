//! Commands whose product is what they print: a standard output that cannot be written (a
//! full disk) is exit 4, never a silent 0 (issue 47, item 5).

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// `perfbase ARGS` with its standard output on /dev/full: its exit code and stderr.
fn to_full(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(args)
        .env("PERFBASE_STORE", dir.join("results.db"))
        .stdin(Stdio::null())
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_product_that_cannot_reach_standard_output_is_exit_4() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let result = dir.path().join("r.json");
    let (code, _, err) = pb(
        dir.path(),
        &[
            "http",
            &url,
            "-n",
            "5",
            "-q",
            "--json",
            result.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        "[plan]\nname = \"p\"\n[targets.api]\nurl = \"http://127.0.0.1:9\"\n\
         [workloads.w]\ntarget = \"api\"\npath = \"/\"\n[[scenarios]]\nname = \"s\"\n\
         workload = \"w\"\nrate = 10\nduration = \"1s\"\n",
    )
    .unwrap();
    let r = result.to_str().unwrap();
    let cases: [&[&str]; 6] = [
        &["import", "curl", "curl http://127.0.0.1:9/items"],
        &["report", r],
        &["report", r, "--format", "md"],
        &["show", r],
        &["history"],
        &[
            "k8s",
            plan.to_str().unwrap(),
            "--agents",
            "2",
            "--image",
            "perfbase:1",
            "--store-secret",
            "store",
        ],
    ];
    for args in cases {
        let (code, err) = to_full(dir.path(), args);
        assert_eq!(code, Some(4), "{args:?}: {err}");
        assert!(err.contains("could not be written"), "{args:?}: {err}");
    }
    // The same commands on a writable output still succeed.
    let (code, _, err) = pb(dir.path(), &["history"]);
    assert_eq!(code, 0, "{err}");
}

/// `import … -o FIFO --force` goes through the one output writer: a FIFO nobody reads is
/// given up on after 5 s, naming it (it used to hang for ever; issue 47, item 6).
#[test]
fn an_import_into_a_fifo_without_a_reader_gives_up() {
    let dir = tmp();
    let fifo = dir.path().join("plan.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args([
            "import",
            "curl",
            "curl http://127.0.0.1:9/",
            "--force",
            "-o",
        ])
        .arg(&fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut err = String::new();
    use std::io::Read as _;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = status.expect("import into a FIFO without a reader hung");
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("no reader"), "{err}");
}
