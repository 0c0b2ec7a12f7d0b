//! Parsing: run references (`42`, `latest`, `latest:KEY=VALUE`), labels, and SQL placeholders
//! rewritten for SQLite.

use super::*;
use crate::database::sqlite_placeholders;
use crate::{parse_label, RunRef};

#[test]
fn run_refs_parse_and_print() {
    assert_eq!("42".parse::<RunRef>().unwrap(), RunRef::Id(42));
    assert_eq!(" latest ".parse::<RunRef>().unwrap(), RunRef::Latest);
    let r: RunRef = "latest:service=api,env=ci".parse().unwrap();
    assert_eq!(
        r,
        RunRef::LatestWith(filter(&[("service", "api"), ("env", "ci")]))
    );
    assert_eq!(r.to_string(), "latest:service=api,env=ci");
    assert_eq!(RunRef::Id(7).to_string(), "7");
    for bad in [
        "",
        "0",
        "-3",
        "newest",
        "latest:",
        "latest:service",
        "latest:=x",
        "4x",
    ] {
        let err = bad.parse::<RunRef>().unwrap_err();
        assert!(err.to_string().contains("latest:KEY=VALUE"), "{bad}: {err}");
    }
}

#[test]
fn labels_parse() {
    assert_eq!(
        parse_label(" version = 1.4.2 ").unwrap(),
        ("version".to_string(), "1.4.2".to_string())
    );
    assert_eq!(
        parse_label("note=").unwrap(),
        ("note".to_string(), String::new())
    );
    assert!(parse_label("service").is_err());
    assert!(parse_label("=api").is_err());
    assert!(parse_label("my key=x").is_err());
    let l = Labels::from_pairs(&["service=api", "env=ci", "service=web"]).unwrap();
    assert_eq!(l, Labels::new().with("env", "ci").with("service", "web"));
    assert_eq!(
        serde_json::to_string(&l).unwrap(),
        r#"{"env":"ci","service":"web"}"#
    );
}

#[test]
fn placeholders_become_sqlite_numbered() {
    assert_eq!(
        sqlite_placeholders("SELECT a FROM t WHERE b = $1 AND c = $12 LIMIT $3"),
        "SELECT a FROM t WHERE b = ?1 AND c = ?12 LIMIT ?3"
    );
    assert_eq!(sqlite_placeholders("SELECT '$x'"), "SELECT '$x'");
}
