//! Text from outside never reaches a terminal raw: a series' name, a label (read back from the
//! store), whatever command prints it (issue 47, item 11).

use crate::common::*;

const ESC: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J";

#[test]
fn names_and_labels_from_outside_are_escaped_everywhere_they_are_printed() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let series = dir.path().join("s.jsonl");
    let line = serde_json::json!({ "name": format!("api{ESC}"), "values": [1.0, 1.1, 0.9, 1.0] });
    std::fs::write(&series, format!("{line}\n")).unwrap();
    let (code, out, err) = pb(
        dir.path(),
        &["trend", "--series", series.to_str().unwrap(), "--check"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains('\u{1b}') && !err.contains('\u{1b}'),
        "{out:?}"
    );
    assert!(out.contains("api\\x1b]0;pwned"), "{out}");

    let url = format!("http://{}/", server.addr);
    let label = format!("team=ops{ESC}");
    let (code, _, err) = pb(
        dir.path(),
        &["http", &url, "-n", "5", "-q", "--label", &label],
    );
    assert_eq!(code, 0, "{err}");
    for args in [&["history"][..], &["history", "--label", &label][..]] {
        let (code, out, err) = pb(dir.path(), args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            !out.contains('\u{1b}') && !err.contains('\u{1b}'),
            "{args:?}: {out:?}"
        );
    }
}
