//! What goes on the wire and what comes back: request splitting, echoed secrets, framing.

use super::*;
use crate::common::*;
use assert_cmd::Command;
use std::time::Duration;

/// Item 4: a corpus value or a literal path holding CR LF was written raw into the request
/// line, so one counted request sent a header and a second request to the server. Now the
/// path and its values are percent-encoded (HTTP/1.1 and HTTP/2 alike): the server answers
/// exactly the requests counted. A corpus or a literal value that would split a header is
/// refused at exit 2, naming the corpus and its row but never the value.
#[test]
fn plan_values_cannot_split_a_request() {
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let dir = tmp();
    let plan = |http2: bool, extra: &str| {
        format!(
            "[targets.svc]\nurl = \"http://{addr}\"\nhttp2 = {http2}\n\
             [corpora.v]\nvalues = [\"k HTTP/1.1\\r\\nX-Smuggled: 1\\r\\n\\r\\nGET /health\", \"a b#c\"]\n\
             pick = \"sequential\"\n\
             [workloads.w]\ntarget = \"svc\"\nok_status = [404]\n{extra}\n\
             [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 1\nrequests = 10\n"
        )
    };
    for http2 in [false, true] {
        for path in [
            "path = \"/lookup/{{v}}\"",
            "path = \"/lookup/x y\\r\\nX-Evil: 1#z\"",
        ] {
            let before = answered(&addr);
            let r = run_plan_with(dir.path(), &plan(http2, path), |c| {
                c.arg("--no-store");
            });
            assert_eq!(r.code(), 0, "{path}: {}", r.stderr());
            let after = answered(&addr);
            // The /stats request before is counted once it is answered: one more than the 10.
            assert_eq!(
                after - before,
                11,
                "http2 {http2}, {path}: the server saw more requests"
            );
            let v = r.json();
            assert_eq!(v["requests"], 10, "{v}");
            assert_eq!(v["status"]["404"], 10, "{v}");
        }
    }
    server.stop();

    // A value that would split a header: the corpus's row, not the value, in the message.
    let r = run_plan_with(
        dir.path(),
        &plan(false, "headers = { X-Key = \"{{v}}\" }"),
        |_| {},
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("corpus 'v', value 1: it fills a header"),
        "{}",
        r.stderr()
    );
    assert!(!r.stderr().contains("Smuggled"), "{}", r.stderr());
    let r = run_plan_with(
        dir.path(),
        &plan(false, "headers = { X-Key = \"a\\r\\nX-Smuggled: s3cr3t\" }"),
        |_| {},
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("workloads.w.headers.X-Key: the value has a line break"),
        "{}",
        r.stderr()
    );
    assert!(!r.stderr().contains("s3cr3t"), "{}", r.stderr());
}

/// Items 5 and 6: a server whose error body echoes the request head put the Vault token into
/// the error message; a token file of two lines printed the token in the "invalid header"
/// error. Every secret perfbase sends is remembered and scrubbed from what a server says, and
/// a token that cannot be sent is refused without being shown.
#[test]
fn a_server_echoing_the_token_never_shows_it() {
    let echo =
        perfbase_reference::faulty::spawn_faulty(perfbase_reference::faulty::Fault::EchoHead)
            .unwrap();
    let url = format!("http://{}", echo.addr);
    let token = "hvs.s3cr3t-T0KEN-echoed";
    // In the load: every answer is a 500 whose message, the echo, is kept as a sample.
    let (code, text, v) = pb_env(
        &["vault", &url, "-w", "health", "-n", "5"],
        &[("VAULT_TOKEN", token)],
    );
    assert_eq!(code, 3, "no request succeeded: {text}");
    assert!(
        v["error_samples"]
            .to_string()
            .contains("cannot handle the request"),
        "the server's echo is kept: {v}"
    );
    assert!(
        !text.contains("s3cr3t") && !v.to_string().contains("s3cr3t"),
        "{text} {v}"
    );
    // Before the load: the error that stops the run quotes the echo.
    let (code, text, _) = pb_env(
        &["vault", &url, "-w", "encrypt", "-n", "5"],
        &[("VAULT_TOKEN", token)],
    );
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("cannot handle the request"),
        "the server's echo is shown: {text}"
    );
    assert!(!text.contains("s3cr3t"), "{text}");
    // HTTP: a bearer token in -H, a key in the query, both echoed in samples they never reach.
    let (code, text, v) = pb_env(
        &[
            "http",
            &format!("{url}/?sig=abcdef123&n=1"),
            "-H",
            "Authorization: Bearer s3cr3t-bearer",
            "-H",
            "Ocp-Apim-Subscription-Key: s3cr3t-key",
            "-n",
            "5",
        ],
        &[],
    );
    assert_eq!(code, 3, "{text}");
    for secret in ["s3cr3t", "abcdef123"] {
        assert!(!text.contains(secret), "{text}");
        assert!(!v.to_string().contains(secret), "{v}");
    }
    echo.stop();

    // A token with a line break inside, from a file or the environment.
    let dir = tmp();
    let file = dir.path().join("token");
    std::fs::write(&file, "hvs.s3cr3t-line1\nsecond-line\n").unwrap();
    let (code, text, _) = pb_env(
        &[
            "vault",
            "http://127.0.0.1:1",
            "--token-file",
            file.to_str().unwrap(),
            "-n",
            "1",
        ],
        &[],
    );
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("holds a line break"), "{text}");
    assert!(!text.contains("s3cr3t"), "{text}");
    let (code, text, _) = pb_env(
        &["vault", "http://127.0.0.1:1", "-n", "1"],
        &[("VAULT_TOKEN", "hvs.s3cr3t\r\nX-Evil: 1")],
    );
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("from VAULT_TOKEN holds a line break"),
        "{text}"
    );
    assert!(!text.contains("s3cr3t"), "{text}");
}

/// The judgement calls of issue 30, each decided and kept by a test: a replaced result keeps
/// its mode; perfbase frames bodies itself (a Transfer-Encoding or a wrong Content-Length is
/// refused); `user:pw@` is sent as Basic credentials; contradictory flags are refused or
/// warned about; `${VAR}` is expanded in a path and refused in a name.
#[test]
fn judgement_calls_are_decided() {
    use std::os::unix::fs::PermissionsExt as _;
    let _g = serial();
    let (child, line) = serve(&[]);
    let server = Served(Some(child));
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let url = format!("http://{addr}/");
    let dir = tmp();
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("perfbase")
            .unwrap()
            .args(args)
            .env("PERFBASE_STORE", dir.path().join("results.db"))
            .current_dir(dir.path())
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // The mode of a replaced --json.
    for mode in [0o600, 0o444] {
        let json = dir.path().join(format!("r{mode:o}.json"));
        std::fs::write(&json, "{}").unwrap();
        std::fs::set_permissions(&json, std::fs::Permissions::from_mode(mode)).unwrap();
        let (code, err) = run(&[
            "http",
            &url,
            "-n",
            "2",
            "--no-store",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let kept = std::fs::metadata(&json).unwrap().permissions().mode() & 0o777;
        assert_eq!(kept, mode, "{mode:o}");
    }
    // Framing, contradictions and warnings: each case's flags after `http URL --no-store`,
    // its exit code and what its message must say.
    let cases: [(&[&str], i32, &str); 11] = [
        (
            &["-n", "1", "-H", "Transfer-Encoding: chunked", "-b", "x"],
            2,
            "'Transfer-Encoding'",
        ),
        (
            &["-n", "1", "-H", "Content-Length: 5"],
            2,
            "the body is 0 bytes",
        ),
        (&["-n", "1", "--label", "a=b"], 2, "--no-store with --label"),
        (
            &["-n", "1", "--store", "x.db"],
            2,
            "--no-store with --store",
        ),
        (
            &["-n", "1", "--json", "same.json", "--jsonl", "same.json"],
            2,
            "both name",
        ),
        (
            &["-n", "1", "--metrics-linger", "5s"],
            2,
            "--metrics-linger",
        ),
        (
            &["-n", "1", "--hdr-log", "same.json", "--json", "./same.json"],
            2,
            "both name",
        ),
        (&["-n", "1", "-k"], 0, "-k has no effect"),
        (
            &["-n", "1", "--metrics-listen", "0.0.0.0:0"],
            0,
            "to any host that can reach this one",
        ),
        (
            &["-n", "5", "--jsonl", "/dev/full"],
            4,
            "--jsonl /dev/full: cannot write",
        ),
        (&["-n", "1"], 0, ""),
    ];
    for (extra, want, says) in cases {
        let mut args = vec!["http", url.as_str(), "--no-store"];
        args.extend_from_slice(extra);
        let (code, err) = run(&args);
        assert_eq!(code, want, "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    // ${VAR}: expanded in a path (the endpoint keeps it as written), refused in a name.
    let plan = format!(
        "[targets.svc]\nurl = \"http://{addr}\"\n[workloads.w]\ntarget = \"svc\"\n\
         path = \"/status/${{PB_STATUS}}\"\nok_status = [418]\n\
         [[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 1\nrequests = 3\n"
    );
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.env("PB_STATUS", "418").arg("--no-store");
    });
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["status"]["418"], 3, "{}", r.json());
    assert!(r.json().to_string().contains("/status/${PB_STATUS}"));
    let r = run_plan_with(
        dir.path(),
        &plan.replace("name = \"s\"", "name = \"s ${PB_STATUS}\""),
        |c| {
            c.env("PB_STATUS", "418");
        },
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("not expanded in names"),
        "{}",
        r.stderr()
    );
    server.stop();

    // Credentials in the URL are sent as Basic (the echo shows the header, redacted).
    let echo =
        perfbase_reference::faulty::spawn_faulty(perfbase_reference::faulty::Fault::EchoHead)
            .unwrap();
    let (_, text, v) = pb_env(
        &[
            "vault",
            &format!("http://alice:s3cr3t-pw@{}", echo.addr),
            "-w",
            "health",
            "-n",
            "1",
        ],
        &[("VAULT_TOKEN", "hvs.token-for-the-echo")],
    );
    let samples = v["error_samples"].to_string();
    assert!(
        samples.contains("Authorization: [redacted]"),
        "{samples} {text}"
    );
    assert!(
        !text.contains("s3cr3t") && !v.to_string().contains("s3cr3t"),
        "{text}"
    );
    echo.stop();
}
