//! `perfbase http --threshold`: thresholds in k6's or perfbase's words gate the exit code.

use super::bad;
use crate::common::*;

#[test]
fn thresholds_on_the_command_line_in_k6_or_perfbase_words_gate_the_exit_code() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/delay/2", server.addr);
    let base = [url.as_str(), "-n", "100", "-c", "2"];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        perfbase(&args, dir.path())
    };
    // Every request takes 2 ms or more and none fails.
    let r = with(&[
        "--threshold",
        "p(95)<2000",
        "--threshold",
        "http_req_failed<0.01",
        "--threshold",
        "rps > 1",
    ]);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    assert!(
        r.stdout().contains("Threshold     p(95)<2000: "),
        "{}",
        r.stdout()
    );
    let verdicts = &r.json()["study"]["scenarios"][0]["thresholds"];
    assert_eq!(verdicts.as_array().unwrap().len(), 3, "{verdicts}");
    validate(r.json());
    // One that cannot hold: exit 1, said, and kept in the result.
    let r = with(&["--threshold", "avg<1", "--threshold", "p(99)<5000"]);
    assert_eq!(r.code(), 1, "{}", r.stdout());
    let failed = r
        .stdout()
        .lines()
        .find(|l| l.contains("avg<1"))
        .unwrap()
        .to_string();
    assert!(
        failed.ends_with("FAIL") && failed.contains(" ms"),
        "{failed}"
    );
    assert_eq!(
        r.json()["study"]["scenarios"][0]["thresholds"][0]["passed"],
        false
    );
    assert_eq!(r.json()["study"]["passed"], false);
    // A threshold that does not parse: exit 2 before any load, naming it.
    let (code, err) = bad(&["http", &url, "--threshold", "p(97)<200"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'p(97)<200'") && err.contains("--threshold"),
        "{err}"
    );
}
