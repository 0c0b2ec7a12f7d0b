//! Unit tests of the MySQL driver that need no server.

use super::config::{first_words, percent_decode};
use super::*;
use crate::Operation;

#[test]
fn urls_parse_without_keeping_the_password_in_messages() {
    let t = Target::parse("mysql://perfbase:s%40cret@127.0.0.1:53306/perfbase").unwrap();
    assert_eq!(t.shown, "127.0.0.1:53306/perfbase");
    assert_eq!(t.password.as_deref(), Some("s@cret"));
    assert_eq!(t.opts.pass(), Some("s@cret"));
    assert_eq!(t.opts.user(), Some("perfbase"));
    assert!(!t.opts.prefer_socket());
    let t = Target::parse("mariadb://u:pw@db.example/app?prefer_socket=true").unwrap();
    assert_eq!(t.shown, "db.example:3306/app");
    assert!(t.opts.prefer_socket());

    for bad in [
        "postgres://u:topsecret@h/db",
        "mysql://u:topsecret@/db",
        "mysql://u:topsecret@h:99999/db",
        "mysql://u:topsecret@h/db?nonsense=1",
    ] {
        let e = Target::parse(bad).err().unwrap().to_string();
        assert!(!e.contains("topsecret"), "{e}");
        assert!(e.contains("use mysql://"), "{e}");
    }
}

#[test]
fn scrub_and_decode() {
    let t = Target::parse("mysql://u:hunter22@h/db").unwrap();
    assert_eq!(
        t.scrub("x hunter22 y".into()),
        format!("x {} y", perfbase_core::redact::REDACTED)
    );
    // A password that is also the user's name is shown with the user anyway.
    let t = Target::parse("mysql://perfbase:perfbase@h/perfbase_x").unwrap();
    assert_eq!(t.scrub("user 'perfbase'@'%'".into()), "user 'perfbase'@'%'");
    assert_eq!(percent_decode("a%2Fb%zz%4"), "a/b%zz%4");
    assert_eq!(percent_decode("%41%42"), "AB");
}

#[test]
fn the_function_workload_is_refused_and_names_the_alternative() {
    let e = MyDriver::new(
        "mysql://u:p@127.0.0.1/db",
        SqlWorkload::TpcBFunction { scale: 1 },
    )
    .err()
    .unwrap();
    assert!(matches!(e, MyError::Unsupported(_)));
    assert!(e.to_string().contains("TPC-B workload"), "{e}");
}

#[test]
fn statements_are_named_by_their_first_words() {
    assert_eq!(
        first_words("INSERT INTO perfbase_items (id, k, v) VALUES (?, ?, ?)"),
        "INSERT INTO perfbase_items"
    );
    assert_eq!(first_words("SELECT 1"), "SELECT 1");
    for &op in SuiteOp::ALL {
        assert!(!suite_sql(op).is_empty());
    }
}

#[test]
fn sizes_follow_the_binary_protocol() {
    assert_eq!(value_size(&Value::Int(7)), 8);
    assert_eq!(value_size(&text("abc".into())), 3);
    assert_eq!(value_size(&Value::NULL), 0);
}
