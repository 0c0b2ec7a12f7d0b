//! `perfbase http` refusing bad input: one clear line and exit 2, before any load.

use super::bad;
use crate::common::*;

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let dir = tmp();
    let targets = dir.path().join("t.txt");
    std::fs::write(&targets, "GET http://127.0.0.1:1/\nthis is not a header\n").unwrap();
    let t = targets.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["http", "http://127.0.0.1:1/", "-r", "0"],
            "--rate".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-d", "ten"],
            "--duration".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-c", "5", "-r", "10"],
            "with -r (the open model) use --max-inflight".into(),
        ),
        (
            vec!["http", "127.0.0.1:8080/"],
            "give the scheme: http://127.0.0.1:8080/".into(),
        ),
        (
            vec!["run", "/nonexistent/nope.toml"],
            "/nonexistent/nope.toml: cannot read the plan: No such file".into(),
        ),
        (
            vec![
                "http",
                "https://127.0.0.1:1/",
                "--cacert",
                "/nonexistent/ca.pem",
            ],
            "--cacert /nonexistent/ca.pem".into(),
        ),
        (
            vec!["http", "ftp://127.0.0.1:1/"],
            "unsupported scheme".into(),
        ),
        (vec!["http", "not a url"], "URL 'not a url'".into()),
        (vec!["http"], "no target".into()),
        (vec!["http", "--targets", t], format!("{t}:2:")),
        (
            vec!["http", "--targets", "/nonexistent/t.txt"],
            "/nonexistent/t.txt: cannot read".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-H", "NoColon"],
            "--header".into(),
        ),
        (
            vec![
                "http",
                "http://127.0.0.1:1/",
                "--json",
                "/nonexistent/dir/r.json",
            ],
            "--json".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "--max-inflight", "5"],
            "--rate".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "--timeout", "500us"],
            "below 1ms".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-m", "GE T"],
            "invalid method 'GE T'".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-c", "99999999999"],
            "ulimit -n".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-r", "200M"],
            "above the 100M/s".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "--frobnicate"],
            "unexpected argument '--frobnicate' found".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-c"],
            "'--connections <N>'".into(),
        ),
    ];
    for (args, want) in cases {
        let (code, err) = bad(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err:?}");
        assert!(
            err.contains(&want),
            "{args:?}: expected {want:?} in {err:?}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_header_with_a_line_break_is_bad_input_without_its_value() {
    let dir = tmp();
    let r = perfbase(
        &[
            "http://127.0.0.1:1/",
            "-n",
            "1",
            "-H",
            "Authorization: Bearer s3cr3t\r\nX-Injected: 1",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let text = r.stderr();
    assert!(
        text.contains("--header 'Authorization': the header has a line break"),
        "{text}"
    );
    assert!(!text.contains("s3cr3t") && !text.contains('\r'), "{text:?}");
}
