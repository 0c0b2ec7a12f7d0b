//! Times of failed operations are never shown as the service's (issue 47, item 13): a run
//! whose every connection was refused reports its latencies as times to failure, and
//! `compare` does not call it faster (it called it "98.9 % faster").

use crate::common::*;

#[test]
fn a_run_that_only_failed_is_neither_fast_nor_comparable() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let url = format!("http://{}/", server.addr);
    let (code, _, err) = pb(dir.path(), &["http", &url, "-n", "300", "--json", a_s]);
    assert_eq!(code, 0, "{err}");
    // Port 9 (discard) is closed here: every connection is refused.
    let refused = "http://127.0.0.1:9/";
    let (code, _, err) = pb(dir.path(), &["http", refused, "-n", "300", "--json", b_s]);
    assert_eq!(code, 3, "{err}");
    let (_, out, err) = pb(dir.path(), &["report", b_s]);
    assert!(
        out.contains("time to failure (every operation failed)"),
        "{out}{err}"
    );
    assert!(!out.contains("| response time |"), "{out}");
    let (_, out, err) = pb(dir.path(), &["compare", a_s, b_s]);
    assert!(
        out.contains("cannot be compared: every operation of B failed"),
        "{out}{err}"
    );
    assert!(!out.contains("faster"), "{out}");
}
