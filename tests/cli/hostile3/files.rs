//! Every file perfbase reads goes through its one capped reader (issue 47, item 2): a file
//! that never ends (`/dev/zero`) is a clear exit 2 within seconds, naming the limit, for
//! every command that reads one, and no source file reads a file of the user's another way.

use crate::common::*;
use std::time::{Duration, Instant};

#[test]
fn a_file_that_never_ends_is_refused_by_every_command_that_reads_one() {
    let dir = tmp();
    let cases: [&[&str]; 4] = [
        &[
            "k8s",
            "/dev/zero",
            "--agents",
            "2",
            "--image",
            "perfbase:1",
            "--store-secret",
            "store",
        ],
        &[
            "import",
            "curl",
            "curl --data-binary @/dev/zero http://127.0.0.1:9/",
        ],
        &["trend", "--series", "/dev/zero"],
        &[
            "vault",
            "http://127.0.0.1:9",
            "--token-file",
            "/dev/zero",
            "-n",
            "1",
        ],
    ];
    for args in cases {
        let started = Instant::now();
        let (code, out, err) = pb(dir.path(), args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("256 MiB limit"), "{args:?}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
}

/// Outside the reader itself, files are opened only where the path is the machine's own
/// (`/proc`, cgroups) or a fixed-length header is read: a new `read_to_string` of a user's
/// path fails here until it goes through `perfbase_drivers::input`.
#[test]
fn no_source_reads_a_users_file_past_the_capped_reader() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let allowed = [
        "crates/drivers/src/input.rs",
        "crates/monitor/src/procfs.rs",
        "crates/monitor/src/cgroup.rs",
        "crates/drivers/src/ws/held.rs",
        "src/env.rs",
        "src/noise.rs",
        "src/page.rs",
        "src/serve.rs",
    ];
    let mut found = Vec::new();
    let mut dirs = vec![root.join("src"), root.join("crates")];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                // Tests, examples, benches and the fuzz crate read their own fixtures.
                let skip = ["tests", "examples", "benches", "fuzz", "target"];
                if !skip.iter().any(|s| rel.ends_with(s)) {
                    dirs.push(path);
                }
                continue;
            }
            if !rel.ends_with(".rs") || allowed.contains(&rel.as_str()) || rel.contains("test") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests at the end of a file read their own fixtures.
            let code = text.split("#[cfg(test)]").next().unwrap();
            for pat in ["fs::read_to_string(", "fs::read(", "File::open("] {
                if code.contains(pat) {
                    found.push(format!("{rel}: {pat}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "files read past the capped reader: {found:#?}"
    );
}
