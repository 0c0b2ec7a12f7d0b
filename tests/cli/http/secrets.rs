//! `perfbase http` keeping secrets (headers, URL passwords and tokens) out of every output and
//! error message.

use crate::common::*;

#[test]
fn secrets_never_reach_any_output() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/?token=tok3n-value&x=1", server.addr);
    let r = perfbase(
        &[
            &url,
            "-n",
            "5",
            "-c",
            "1",
            "-H",
            "Authorization: Bearer s3cr3t-value",
            "-H",
            "X-Api-Key: k3y-value",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let json = serde_json::to_string(r.json()).unwrap();
    for text in [r.stdout(), r.stderr(), json] {
        for secret in ["s3cr3t-value", "k3y-value", "tok3n-value"] {
            assert!(!text.contains(secret), "{secret} leaked into: {text}");
        }
    }
    let headers = &r.json()["config"]["protocol"]["headers"];
    assert_eq!(headers[0], "Authorization: [redacted]");
    assert!(r.json()["target"]
        .as_str()
        .unwrap()
        .contains("token=[redacted]&x=1"));
}

#[test]
fn urls_in_error_messages_are_redacted() {
    let dir = tmp();
    let targets = dir.path().join("t.txt");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["ftp://alice:pw-0@127.0.0.1/?token=tok-0".into()],
            "unsupported scheme",
        ),
        (
            vec!["--targets".into(), targets.display().to_string()],
            "expected 'METHOD URL'",
        ),
    ];
    // The secrets hold a hyphen, which no temporary folder's random name has: "T0" once
    // matched one (/tmp/.tmpGT0DoV).
    std::fs::write(&targets, "GET http://a:pw-1@127.0.0.1/?token=tok-1 extra\n").unwrap();
    for (args, what) in cases {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["-n", "1"]);
        let r = perfbase(&all, dir.path());
        assert_eq!(r.code(), 2, "{}", r.stderr());
        let text = r.stderr();
        assert!(text.contains(what), "{text}");
        // Redacted, or (a line that is no target) not shown at all.
        assert!(
            text.contains("[redacted]") || text.contains("not shown"),
            "{text}"
        );
        for secret in ["pw-0", "tok-0", "pw-1", "tok-1"] {
            assert!(!text.contains(secret), "{secret} leaked into: {text}");
        }
    }
}
