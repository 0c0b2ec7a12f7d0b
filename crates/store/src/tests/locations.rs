//! Opening a store's location: a SQLite file (its folders made, WAL mode on; a folder or a
//! file that is no database refused) or a PostgreSQL URL, with its password kept out of every
//! error.

use super::*;
use crate::StoreError;

#[test]
fn sqlite_creates_folders_and_uses_wal() {
    let (dir, loc) = sqlite_location();
    let mut s = Store::open(&loc).unwrap();
    assert!(std::path::Path::new(&loc).is_file());
    assert_eq!(s.database_name(), "sqlite");
    assert_eq!(s.location(), loc);
    let mode = s
        .raw(|db| db.query("PRAGMA journal_mode", &[]))
        .unwrap()
        .remove(0)
        .remove(0);
    assert_eq!(mode, Val::text("wal"));
    drop(s);
    // A folder where the file should be is an Open error naming the location.
    let folder = dir.path().join("a-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let err = Store::open(folder.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
    assert!(err.to_string().contains("a-folder"), "{err}");
}

#[test]
fn sqlite_not_a_database_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.json");
    std::fs::write(
        &path,
        "{\"schema\": \"perfbase.result/v1\"} and more text to fill a page",
    )
    .unwrap();
    let err = Store::open(path.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
}

#[test]
fn postgres_wrong_password_is_not_shown() {
    let Some(url) = pg_url() else { return };
    // Same server and user, another password.
    let (scheme, rest) = url.split_once("://").unwrap();
    let (userinfo, host) = rest.rsplit_once('@').unwrap();
    let user = userinfo.split(':').next().unwrap();
    let secret = "Wr0ngS3cretPassw0rd";
    let bad = format!("{scheme}://{user}:{secret}@{host}");
    let err = Store::open(&bad).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
    let text = format!("{err} {err:?}");
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(text.contains("password authentication failed"), "{text}");
    // The right password opens (in a schema of its own, leaving the server's public one be).
    let schema = PgSchema::new(&url);
    let good = Store::open(&schema.location).unwrap();
    assert_eq!(good.database_name(), "postgres");
    assert!(!format!("{good:?}").contains(secret));
}

#[test]
fn redact_location_hides_passwords() {
    let r = redact_location("postgres://u:secret@127.0.0.1/db");
    assert!(!r.contains("secret"), "{r}");
    assert_eq!(r, "postgres://u:[redacted]@127.0.0.1/db");
    let r = redact_location(
        "postgresql://bench:s3cr%40t@db.internal:5432/perf?password=other1&sslmode=disable",
    );
    assert!(!r.contains("s3cr") && !r.contains("other1"), "{r}");
    assert!(r.contains("sslmode=disable"), "{r}");
    assert_eq!(
        redact_location(".perfbase/results.db"),
        ".perfbase/results.db"
    );
}

#[test]
fn bad_postgres_urls_keep_passwords_out_of_errors() {
    for loc in [
        // Nothing listens on port 1: connection refused.
        "postgres://u:secret@127.0.0.1:1/db",
        "postgresql://u:secret@127.0.0.1:1/db?connect_timeout=2",
        // Does not parse.
        "postgres://u:secret@127.0.0.1:notaport/db",
        "postgres://u@127.0.0.1:1/db?password=secret&connect_timeout=2",
        "postgres://u:secret@127.0.0.1:1/db?sslmode=bogus",
    ] {
        let err = Store::open(loc).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{loc}: {err}");
        let text = format!("{err} | {err:?}");
        assert!(!text.contains("secret"), "{loc}: {text}");
        assert!(text.contains("127.0.0.1"), "{loc}: {text}");
    }
    let err = Store::open("mysql://u:secret@127.0.0.1/db").unwrap_err();
    assert!(!err.to_string().contains("secret"), "{err}");
    assert!(err.to_string().contains("postgres://"), "{err}");
}
