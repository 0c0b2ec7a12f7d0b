//! Unit tests of the PostgreSQL driver that need no server.

use super::init::push_int;
use super::*;

#[test]
fn redaction_hides_passwords() {
    assert_eq!(
        redacted("postgres://u:s3cret@h:5432/db"),
        "postgres://u:[redacted]@h:5432/db"
    );
    assert_eq!(
        redacted("postgres://u:p@ss/w@rd@h/db"),
        "postgres://u:[redacted]@h/db"
    );
    assert_eq!(redacted("postgres://u@h/db"), "postgres://u@h/db");
    assert_eq!(
        redacted("postgres://u@h/db?password=s3cret&sslmode=disable"),
        "postgres://u@h/db?password=[redacted]&sslmode=disable"
    );
    assert_eq!(
        redacted("host=h user=u password=s3cret dbname=d"),
        "host=h user=u password=[redacted] dbname=d"
    );
    assert_eq!(
        redacted("host=h password = 'a b\\' c' dbname=d"),
        "host=h password = [redacted] dbname=d"
    );
}

#[test]
fn bad_urls_and_options_are_refused_without_the_password() {
    let bad = PgDriver::new(
        "postgres://u:s3cret@h:notaport/db",
        SqlWorkload::Suite(SuiteOp::SelectPk),
        PgOptions::default(),
    );
    let msg = match bad {
        Err(e @ PgError::Url { .. }) => e.to_string(),
        other => panic!("{:?}", other.err()),
    };
    assert!(!msg.contains("s3cret"), "{msg}");
    let url = "postgres://u:s3cret@127.0.0.1:5432/db";
    for (workload, pipeline) in [
        (SqlWorkload::Suite(SuiteOp::Transaction), 2),
        (SqlWorkload::Suite(SuiteOp::SelectPk), 0),
        (
            SqlWorkload::Custom {
                sql: "SELECT * FROM t WHERE id = ?".into(),
                params: vec![crate::workload::Template::parse("1", &[]).unwrap()],
                corpora: Vec::new(),
            },
            1,
        ),
    ] {
        assert!(matches!(
            PgDriver::new(url, workload, PgOptions { pipeline }),
            Err(PgError::Unsupported(_))
        ));
    }
    let d = PgDriver::new(
        url,
        SqlWorkload::TpcBFunction { scale: 1 },
        PgOptions { pipeline: 8 },
    )
    .unwrap();
    assert_eq!(d.ops_per_execute(), 8);
    assert_eq!(d.target(), "postgres://u@127.0.0.1:5432/db");
}

#[test]
fn integers_format_like_display() {
    for n in [0, 7, -7, 10, 99_999, i64::MAX, i64::MIN] {
        let mut b = Vec::new();
        push_int(&mut b, n);
        assert_eq!(String::from_utf8(b).unwrap(), n.to_string());
    }
}

#[test]
fn suite_values_are_32_characters() {
    assert_eq!(suite_value(3).len(), 32);
    assert!((1..=10).contains(&suite_qty(5)));
}
