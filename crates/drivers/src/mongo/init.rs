//! `--init`: the collections the operations use, made anew; and the server's version.

use super::{
    client, database_of, failure_text, key, MongoError, MongoOptions, DELETES, DOCS, INSERTS, SCAN,
};
use mongodb::bson::{doc, Bson, Document};
use mongodb::Database;
use perfbase_core::redact;

/// Documents sent per `insertMany`.
const BATCH: u64 = 1000;

/// What `init` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitReport {
    pub database: String,
    /// Documents in `perfbase_docs` and in `perfbase_deletes` each.
    pub keyspace: u64,
    /// Documents in `perfbase_scan`.
    pub scan_docs: u64,
}

fn server(what: &str, e: &mongodb::error::Error) -> MongoError {
    MongoError::Server(redact::text(&format!("{what}: {e}")))
}

/// Inserts `count` documents made by `make` into `name`, in batches.
async fn fill(
    db: &Database,
    name: &str,
    count: u64,
    make: impl Fn(u64) -> Document,
) -> Result<(), MongoError> {
    let coll = db.collection::<Document>(name);
    let mut first = 0;
    while first < count {
        let last = (first + BATCH).min(count);
        let docs: Vec<Document> = (first..last).map(&make).collect();
        coll.insert_many(docs)
            .await
            .map_err(|e| server(&format!("filling {name}"), &e))?;
        first = last;
    }
    Ok(())
}

/// Drops and rebuilds the collections: `perfbase_docs` and `perfbase_deletes` with the keys
/// of 0 … keyspace − 1 as `_id`, `perfbase_scan` with `scan_docs` documents (`v` = its number, `g` = one of
/// 10 groups, no index but `_id`'s), and an empty `perfbase_inserts`.
pub async fn init(url: &str, options: &MongoOptions) -> Result<InitReport, MongoError> {
    let database = database_of(url)?;
    let client = client(url, 2).await.map_err(|e| server("connecting", &e))?;
    let db = client.database(&database);
    for name in [DOCS, SCAN, INSERTS, DELETES] {
        db.collection::<Document>(name)
            .drop()
            .await
            .map_err(|e| server(&format!("dropping {name}"), &e))?;
    }
    let pad = "x".repeat(options.doc_size);
    let keyed = |i: u64| doc! { "_id": key(i), "counter": 0i64, "pad": pad.as_str() };
    fill(&db, DOCS, options.keyspace, keyed).await?;
    fill(&db, DELETES, options.keyspace, keyed).await?;
    fill(&db, SCAN, options.scan_docs, |i| {
        doc! { "_id": i as i64, "v": i as i64, "g": (i % 10) as i64 }
    })
    .await?;
    db.create_collection(INSERTS)
        .await
        .map_err(|e| server(&format!("creating {INSERTS}"), &e))?;
    Ok(InitReport {
        database,
        keyspace: options.keyspace,
        scan_docs: options.scan_docs,
    })
}

/// Puts back every document of `perfbase_deletes` (0 … keyspace − 1), so a later run of
/// delete-one deletes documents, as the first did, instead of finding the ones it deleted
/// gone: each engine run numbers its operations from 0 again. Returns how many it holds.
pub async fn refill_deletes(url: &str, options: &MongoOptions) -> Result<u64, MongoError> {
    let database = database_of(url)?;
    let client = client(url, 1).await.map_err(|e| server("connecting", &e))?;
    let db = client.database(&database);
    db.collection::<Document>(DELETES)
        .drop()
        .await
        .map_err(|e| server(&format!("dropping {DELETES}"), &e))?;
    let pad = "x".repeat(options.doc_size);
    let keyed = |i: u64| doc! { "_id": key(i), "counter": 0i64, "pad": pad.as_str() };
    fill(&db, DELETES, options.keyspace, keyed).await?;
    client.shutdown().await;
    Ok(options.keyspace)
}

/// The server's product and version for a report, from `buildInfo` on `admin`: `MongoDB wire
/// protocol 7.0.14`, or `FerretDB 1.24.2 (MongoDB 7.0.42 wire protocol)` when the reply names
/// FerretDB, whose `version` is only the MongoDB version it answers as. FerretDB 1.x sends
/// `ferretdbVersion: "v1.24.2"`; a `ferretdb: {version}` sub-document is read as well.
pub async fn server_version(url: &str) -> Result<String, MongoError> {
    // Refuses what is no mongodb:// URL with the password redacted, as `init` does.
    database_of(url)?;
    let client = client(url, 1).await.map_err(|e| server("connecting", &e))?;
    let reply = client
        .database("admin")
        .run_command(doc! { "buildInfo": 1 })
        .await
        .map_err(|e| MongoError::Server(format!("buildInfo: {}", failure_text(&e))));
    client.shutdown().await;
    let reply = reply?;
    let wire = match reply.get("version") {
        Some(Bson::String(v)) if !v.is_empty() => v.clone(),
        _ => {
            return Err(MongoError::Server(
                "buildInfo: the reply has no version".into(),
            ))
        }
    };
    Ok(match ferretdb_version(&reply) {
        Some(f) => format!("FerretDB {f} (MongoDB {wire} wire protocol)"),
        None => format!("MongoDB wire protocol {wire}"),
    })
}

/// FerretDB's own version in a `buildInfo` reply, without the `v` its releases carry.
fn ferretdb_version(reply: &Document) -> Option<String> {
    let v = match reply.get("ferretdbVersion") {
        Some(Bson::String(v)) => v.as_str(),
        _ => match reply.get("ferretdb") {
            Some(Bson::Document(d)) => d.get_str("version").ok()?,
            _ => return None,
        },
    };
    let v = v.trim();
    let v = v.strip_prefix('v').unwrap_or(v);
    (!v.is_empty()).then(|| v.to_string())
}
