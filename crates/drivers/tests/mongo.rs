//! The MongoDB driver against a real server of its wire protocol: FerretDB, started by
//! `eval "$(scripts/services.sh up mongodb)"`, which exports `PERFBASE_MONGODB_URL`. Without it
//! the tests print a note and pass, unless `PERFBASE_REQUIRE_SERVICES=1`, which makes them
//! fail. Every test works in a database of its own, so they may run at once.
#![cfg(feature = "mongo")]

use mongodb::bson::{doc, Document};
use mongodb::Client;
use perfbase_core::{Class, Driver, Outcome, Session};
use perfbase_drivers::mongo::{self, key, MongoDriver, MongoOp, MongoOptions};
use perfbase_drivers::workload::mix64;
use std::future::Future;

fn server() -> Option<String> {
    match std::env::var("PERFBASE_MONGODB_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
                panic!("PERFBASE_MONGODB_URL is not set: run eval \"$(scripts/services.sh up mongodb)\"");
            }
            eprintln!("note: PERFBASE_MONGODB_URL is not set; skipping the MongoDB test");
            None
        }
    }
}

/// The server's URL with database `db` instead of its own.
fn in_database(url: &str, db: &str) -> String {
    let base = url.trim_end_matches('/');
    let base = match base.rsplit_once('/') {
        Some((b, last)) if !last.contains(':') && !b.ends_with('/') => b.to_string(),
        _ => base.to_string(),
    };
    format!("{base}/{db}")
}

/// Runs `f` on a current-thread runtime inside a LocalSet, as the engine's workers do.
fn local<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&rt, f)
}

fn options() -> MongoOptions {
    MongoOptions {
        keyspace: 50,
        scan_docs: 300,
        doc_size: 10,
        document: None,
    }
}

fn assert_ok(o: &Outcome) {
    assert_eq!(o.class, Class::Ok, "{o:?}");
}

async fn count(url: &str, db: &str, coll: &str, filter: Document) -> u64 {
    let client = Client::with_uri_str(url).await.unwrap();
    client
        .database(db)
        .collection::<Document>(coll)
        .count_documents(filter)
        .await
        .unwrap()
}

#[test]
fn the_suite_does_what_it_says_with_exact_counts() {
    let Some(url) = server() else { return };
    let db = "perfbase_test_suite";
    let url = in_database(&url, db);
    local(async {
        let report = mongo::init(&url, &options()).await.unwrap();
        assert_eq!((report.database.as_str(), report.keyspace), (db, 50));
        assert_eq!(count(&url, db, mongo::DOCS, doc! {}).await, 50);
        assert_eq!(count(&url, db, mongo::SCAN, doc! {}).await, 300);
        assert_eq!(count(&url, db, mongo::INSERTS, doc! {}).await, 0);

        let run = |op: MongoOp, n: u64| {
            let url = url.clone();
            async move {
                let driver = MongoDriver::new(&url, op, options()).unwrap();
                let mut s = driver.open(0).await.unwrap();
                for i in 0..n {
                    assert_ok(&s.execute(i).await);
                }
                driver.misses()
            }
        };
        // 37 inserts: 37 documents.
        assert_eq!(run(MongoOp::InsertOne, 37).await, 0);
        assert_eq!(count(&url, db, mongo::INSERTS, doc! {}).await, 37);
        // Every key exists: no misses.
        assert_eq!(run(MongoOp::FindOne, 40).await, 0);
        assert_eq!(run(MongoOp::FindScan, 10).await, 0);
        assert_eq!(run(MongoOp::Aggregate, 10).await, 0);
        assert_eq!(run(MongoOp::AggregateComplex, 10).await, 0);
        // 20 updates: the counters add up to 20.
        assert_eq!(run(MongoOp::UpdateOne, 20).await, 0);
        let client = Client::with_uri_str(&url).await.unwrap();
        let docs = client.database(db).collection::<Document>(mongo::DOCS);
        let mut total = 0;
        for i in 0..50 {
            let d = docs
                .find_one(doc! { "_id": key(i) })
                .await
                .unwrap()
                .unwrap();
            total += d.get_i64("counter").unwrap();
        }
        assert_eq!(total, 20);
        // 30 deletes of random keys: the distinct ones are gone, the repeats are misses.
        let distinct: std::collections::HashSet<u64> = (0..30).map(|n| mix64(n) % 50).collect();
        let misses = run(MongoOp::DeleteOne, 30).await;
        assert_eq!(misses, 30 - distinct.len() as u64);
        assert_eq!(
            count(&url, db, mongo::DELETES, doc! {}).await,
            50 - distinct.len() as u64
        );
        // A later repetition starts from the whole pool again, so it deletes as this one did.
        assert_eq!(mongo::refill_deletes(&url, &options()).await.unwrap(), 50);
        assert_eq!(count(&url, db, mongo::DELETES, doc! {}).await, 50);
        assert_eq!(run(MongoOp::DeleteOne, 30).await, misses);
    });
}

#[test]
fn a_server_error_is_named_and_a_dead_server_is_a_connect_error() {
    let Some(url) = server() else { return };
    let db = "perfbase_test_errors";
    let url = in_database(&url, db);
    local(async {
        mongo::init(&url, &options()).await.unwrap();
        // A counter that is no number: the server refuses the $inc, by code and name.
        let client = Client::with_uri_str(&url).await.unwrap();
        let k = key(mix64(0) % 50);
        client
            .database(db)
            .collection::<Document>(mongo::DOCS)
            .update_one(doc! { "_id": &k }, doc! { "$set": { "counter": "text" } })
            .await
            .unwrap();
        let driver = MongoDriver::new(&url, MongoOp::UpdateOne, options()).unwrap();
        let mut s = driver.open(0).await.unwrap();
        let o = s.execute(0).await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        let detail = o.detail.clone().unwrap_or_default();
        assert!(detail.starts_with("server write error"), "{detail}");
        // Nothing listens on port 1: opening a session is a connect error, with no password.
        let dead = MongoDriver::new(
            "mongodb://perfbase:s3cret@127.0.0.1:1/x",
            MongoOp::FindOne,
            options(),
        )
        .unwrap();
        let o = dead.open(0).await.err().unwrap();
        assert_eq!(o.class, Class::Connect, "{o:?}");
        assert!(!o.detail.unwrap_or_default().contains("s3cret"));
    });
}

#[test]
fn insert_one_inserts_the_document_template_filled_per_op() {
    let Some(url) = server() else { return };
    let db = "perfbase_test_template";
    let url = in_database(&url, db);
    local(async {
        mongo::init(&url, &options()).await.unwrap();
        let template = mongo::DocumentTemplate::parse(
            r#"{"user": "{{key}}", "seq": "{{n}}", "kind": "order"}"#,
        )
        .unwrap();
        let opts = MongoOptions {
            document: Some(template),
            ..options()
        };
        let driver = MongoDriver::new(&url, MongoOp::InsertOne, opts).unwrap();
        let mut s = driver.open(0).await.unwrap();
        for n in 0..12 {
            assert_ok(&s.execute(n).await);
        }
        assert_eq!(
            count(&url, db, mongo::INSERTS, doc! { "kind": "order" }).await,
            12
        );
        let client = Client::with_uri_str(&url).await.unwrap();
        let d = client
            .database(db)
            .collection::<Document>(mongo::INSERTS)
            .find_one(doc! { "seq": 5i64 })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(d.get_str("user").unwrap(), key(mix64(5) % 50));
    });
}

#[test]
fn server_version_names_the_product_and_hides_a_wrong_password() {
    let Some(url) = server() else { return };
    local(async {
        let v = mongo::server_version(&url).await.unwrap();
        eprintln!("server version: {v}");
        assert!(
            v.starts_with("MongoDB ") || v.starts_with("FerretDB "),
            "{v}"
        );
        assert!(v.chars().any(|c| c.is_ascii_digit()), "{v}");
        // The service's URL has no user: give it one with a wrong password.
        let secret = "Wr0ngSecret-pw";
        let mut wrong = url::Url::parse(&url).unwrap();
        if wrong.username().is_empty() {
            wrong.set_username("perfbase").unwrap();
        }
        wrong.set_password(Some(secret)).unwrap();
        let e = mongo::server_version(wrong.as_str())
            .await
            .unwrap_err()
            .to_string();
        eprintln!("wrong password: {e}");
        assert!(e.contains("authentication"), "{e}");
        assert!(!e.contains(secret), "{e}");
    });
}
