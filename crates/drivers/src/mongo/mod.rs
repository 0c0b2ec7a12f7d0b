//! MongoDB over its wire protocol, through the official `mongodb` crate (plain TCP; no TLS or
//! SRV lookups are built). No benchmark has shown the crate to be the bottleneck, so unlike
//! HTTP and Redis nothing here is hand-written.
//!
//! **Operations** ([`MongoOp`]), the table people publish for a MongoDB service, each a pure
//! function of the op number `n`, with `k` the key of `mix64(n) % keyspace` ([`key`]):
//! - `insert-one`: a document `{n, pad}` into `perfbase_inserts` (the server makes its `_id`),
//!   or the user's document template ([`DocumentTemplate`]);
//! - `find-one`: `{_id: k}` in `perfbase_docs`;
//! - `find-scan`: `{v: n mod scan_docs}` in `perfbase_scan`, whose `v` has no index, so every
//!   query scans the collection (10,000 documents by default) for its one match;
//! - `update-one`: `$inc` a counter of `{_id: k}` in `perfbase_docs`;
//! - `delete-one`: `{_id: k}` in `perfbase_deletes`;
//! - `aggregate`: 2 stages over `perfbase_scan` (`$match` one of 10 groups, `$group` a sum);
//! - `aggregate-complex`: 5 stages (`$match`, `$group`, `$sort`, `$project`, `$limit`), all
//!   supported by FerretDB; `$lookup` is not, so it is left out.
//!
//! A `find-one`, `update-one` or `delete-one` that matches nothing (a deleted or never made
//! document) succeeds and is counted apart ([`MongoDriver::misses`]), as a cache miss is. An
//! error the server returns is class `driver` with its code and name, as the server gave
//! them; a lost connection is `read` and the engine reopens the session; a server that cannot
//! be reached is `connect`.
//!
//! **Sessions**: each is a client with a pool of one connection, so `-c N` is N connections,
//! as with the other databases. `init` builds the collections first (`--init`).

mod init;

use crate::workload::mix64;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::options::{ClientOptions, ConnectionString};
use mongodb::{Client, Collection};
use perfbase_core::{redact, Class, Driver, Outcome, Session};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

pub use init::{init, refill_deletes, server_version, InitReport};

/// The collections the operations use, in the URL's database (`perfbase` without one).
pub const DOCS: &str = "perfbase_docs";
pub const SCAN: &str = "perfbase_scan";
pub const INSERTS: &str = "perfbase_inserts";
pub const DELETES: &str = "perfbase_deletes";
/// The database when the URL names none.
pub const DEFAULT_DATABASE: &str = "perfbase";
/// How long a session waits for the server to be reachable before its op is a connect error.
const SELECTION_TIMEOUT: Duration = Duration::from_secs(5);

crate::operations! {
    /// One operation of the suite, in the order it runs (deletes after the reads and updates
    /// that use the documents, inserts first so a suite leaves counts that can be checked).
    pub enum MongoOp {
        InsertOne = "insert-one",
        FindOne = "find-one",
        FindScan = "find-scan",
        UpdateOne = "update-one",
        Aggregate = "aggregate",
        AggregateComplex = "aggregate-complex",
        DeleteOne = "delete-one",
    }
}

/// A document to insert, from JSON: a string value `"{{n}}"` becomes the op number and
/// `"{{key}}"` the op's key (`k000000000042`), anywhere in the document.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentTemplate(Document);

impl DocumentTemplate {
    /// Parses a JSON object; the error says what is wrong with it.
    pub fn parse(json: &str) -> Result<DocumentTemplate, String> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
        if !value.is_object() {
            return Err("a document must be a JSON object ({…})".into());
        }
        mongodb::bson::to_document(&value)
            .map(DocumentTemplate)
            .map_err(|e| format!("not a document: {e}"))
    }

    /// The document of op `n` with key `key`.
    fn render(&self, n: u64, key: &str) -> Document {
        // `{{ n }}` as well as `{{n}}`, as every other template reads it.
        fn name(s: &str) -> Option<&str> {
            Some(s.strip_prefix("{{")?.strip_suffix("}}")?.trim())
        }
        fn fill(b: &mut Bson, n: u64, key: &str) {
            match b {
                Bson::String(s) if name(s) == Some("n") => *b = Bson::Int64(n as i64),
                Bson::String(s) if name(s) == Some("key") => *b = Bson::String(key.to_string()),
                Bson::Document(d) => d.iter_mut().for_each(|(_, v)| fill(v, n, key)),
                Bson::Array(a) => a.iter_mut().for_each(|v| fill(v, n, key)),
                _ => {}
            }
        }
        let mut d = self.0.clone();
        d.iter_mut().for_each(|(_, v)| fill(v, n, key));
        d
    }
}

/// What the operations work on.
#[derive(Debug, Clone, PartialEq)]
pub struct MongoOptions {
    /// Documents in `perfbase_docs` and `perfbase_deletes` (`_id` 0 … keyspace − 1).
    pub keyspace: u64,
    /// Documents in `perfbase_scan`.
    pub scan_docs: u64,
    /// Bytes of padding in each document written.
    pub doc_size: usize,
    /// insert-one: the document to insert instead of `{n, pad}`.
    pub document: Option<DocumentTemplate>,
}

impl Default for MongoOptions {
    fn default() -> Self {
        MongoOptions {
            keyspace: 1_000,
            scan_docs: 10_000,
            doc_size: 100,
            document: None,
        }
    }
}

#[derive(Debug, Error)]
pub enum MongoError {
    /// The URL does not parse; the message never holds the password.
    #[error("invalid MongoDB URL: {0}; use mongodb://[user:password@]host:port[/database]")]
    Url(String),
    /// The server refused or failed a set-up step.
    #[error("{0}")]
    Server(String),
}

struct Shared {
    url: String,
    database: String,
    op: MongoOp,
    options: MongoOptions,
    pad: String,
    misses: AtomicU64,
}

/// A MongoDB driver for one operation.
pub struct MongoDriver {
    shared: Arc<Shared>,
}

/// The database a URL names, or [`DEFAULT_DATABASE`].
fn database_of(url: &str) -> Result<String, MongoError> {
    if !url.starts_with("mongodb://") {
        return Err(MongoError::Url(format!(
            "'{}' is not a mongodb:// URL",
            redact::url(url)
        )));
    }
    let parsed =
        ConnectionString::parse(url).map_err(|e| MongoError::Url(redact::text(&e.to_string())))?;
    Ok(parsed
        .default_database
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| DEFAULT_DATABASE.to_string()))
}

/// A client with one connection, selecting a server within [`SELECTION_TIMEOUT`].
async fn client(url: &str, pool: u32) -> Result<Client, mongodb::error::Error> {
    let mut options = ClientOptions::parse(url).await?;
    options.max_pool_size = Some(pool);
    options.server_selection_timeout = Some(SELECTION_TIMEOUT);
    options.connect_timeout = Some(SELECTION_TIMEOUT);
    options.app_name = Some("perfbase".into());
    Client::with_options(options)
}

impl MongoDriver {
    /// A driver for `url` (`mongodb://[user:password@]host:port[/database]`) running `op`.
    pub fn new(url: &str, op: MongoOp, options: MongoOptions) -> Result<MongoDriver, MongoError> {
        let database = database_of(url)?;
        Ok(MongoDriver {
            shared: Arc::new(Shared {
                url: url.to_string(),
                database,
                op,
                pad: "x".repeat(options.doc_size),
                options: MongoOptions {
                    keyspace: options.keyspace.max(1),
                    scan_docs: options.scan_docs.max(1),
                    ..options
                },
                misses: AtomicU64::new(0),
            }),
        })
    }

    /// The collection this driver's operation reads, if any.
    fn reads(&self) -> Option<&'static str> {
        match self.shared.op {
            MongoOp::InsertOne => None,
            MongoOp::FindOne | MongoOp::UpdateOne => Some(DOCS),
            MongoOp::DeleteOne => Some(DELETES),
            MongoOp::FindScan | MongoOp::Aggregate | MongoOp::AggregateComplex => Some(SCAN),
        }
    }

    /// Before a run: the collection the operation reads holds documents. A missing one is no
    /// error to MongoDB (a find in it finds nothing), so without this a run without `--init`
    /// would measure empty reads and call them misses.
    pub async fn check(&self) -> Result<(), MongoError> {
        let Some(name) = self.reads() else {
            return Ok(());
        };
        let s = &self.shared;
        let client = client(&s.url, 1)
            .await
            .map_err(|e| MongoError::Server(failure_text(&e)))?;
        let found = client
            .database(&s.database)
            .collection::<Document>(name)
            .find_one(doc! {})
            .await
            .map_err(|e| MongoError::Server(failure_text(&e)))?;
        match found {
            Some(_) => Ok(()),
            None => Err(MongoError::Server(format!(
                "collection {name} in database {} is empty or missing: run with --init first \
                 (in a plan: init = true)",
                s.database
            ))),
        }
    }

    /// Finds, updates and deletes so far that matched no document (successes, counted apart).
    pub fn misses(&self) -> u64 {
        self.shared.misses.load(Ordering::Relaxed)
    }
}

/// One connection's client and the collections the operations use.
pub struct MongoSession {
    shared: Arc<Shared>,
    docs: Collection<Document>,
    scan: Collection<Document>,
    inserts: Collection<Document>,
    deletes: Collection<Document>,
}

/// An error from the crate in words, without secrets.
fn failure_text(e: &mongodb::error::Error) -> String {
    failure(e).detail.map(|d| d.to_string()).unwrap_or_default()
}

/// An error from the crate as an outcome: its class and a message without secrets.
fn failure(e: &mongodb::error::Error) -> Outcome {
    use mongodb::error::{ErrorKind, WriteFailure};
    let (class, text) = match e.kind.as_ref() {
        ErrorKind::Io(io) => (Class::Read, format!("connection: {io}")),
        ErrorKind::ServerSelection { .. } | ErrorKind::ConnectionPoolCleared { .. } => {
            (Class::Connect, e.to_string())
        }
        ErrorKind::Authentication { message, .. } => {
            (Class::Connect, format!("authentication failed: {message}"))
        }
        ErrorKind::Command(c) => (
            Class::ServerError,
            format!("server error {} ({}): {}", c.code, c.code_name, c.message),
        ),
        ErrorKind::Write(WriteFailure::WriteError(w)) => (
            Class::ServerError,
            format!(
                "server write error {} ({}): {}",
                w.code,
                w.code_name.as_deref().unwrap_or("-"),
                w.message
            ),
        ),
        _ => (Class::Malformed, e.to_string()),
    };
    Outcome::error(class, redact::text(&text))
}

impl Driver for MongoDriver {
    type Session = MongoSession;

    async fn open(&self, _worker: usize) -> Result<MongoSession, Outcome> {
        let s = &self.shared;
        let client = client(&s.url, 1).await.map_err(|e| failure(&e))?;
        let db = client.database(&s.database);
        // Connect now, as the other drivers do, so the first op does not pay for it.
        db.run_command(doc! { "ping": 1 })
            .await
            .map_err(|e| failure(&e))?;
        Ok(MongoSession {
            shared: s.clone(),
            docs: db.collection(DOCS),
            scan: db.collection(SCAN),
            inserts: db.collection(INSERTS),
            deletes: db.collection(DELETES),
        })
    }
}

/// Document `i`'s `_id`: `k000000000042`. A string, as FerretDB hands string `_id`s to its
/// storage as a filter, while an integer `_id` is matched document by document in its Go code
/// (13 ms against 1.9 ms per lookup at 1,000 documents).
pub fn key(i: u64) -> String {
    format!("k{i:012}")
}

/// The `$match` bound of the complex pipeline for op `n`: about half the scan collection.
fn half(n: u64, scan_docs: u64) -> i64 {
    (mix64(n) % scan_docs.div_ceil(2).max(1)) as i64
}

impl MongoSession {
    async fn run(&mut self, n: u64) -> Result<bool, mongodb::error::Error> {
        let s = &self.shared;
        let key = key(mix64(n) % s.options.keyspace);
        let found = match s.op {
            MongoOp::InsertOne => {
                let d = match &s.options.document {
                    Some(t) => t.render(n, &key),
                    None => doc! { "n": n as i64, "pad": s.pad.as_str() },
                };
                self.inserts.insert_one(d).await?;
                true
            }
            MongoOp::FindOne => self.docs.find_one(doc! { "_id": key }).await?.is_some(),
            MongoOp::FindScan => {
                let v = (n % s.options.scan_docs) as i64;
                let mut cursor = self.scan.find(doc! { "v": v }).await?;
                let mut any = false;
                while cursor.try_next().await?.is_some() {
                    any = true;
                }
                any
            }
            MongoOp::UpdateOne => {
                let r = self
                    .docs
                    .update_one(doc! { "_id": key }, doc! { "$inc": { "counter": 1 } })
                    .await?;
                r.matched_count > 0
            }
            MongoOp::DeleteOne => {
                let r = self.deletes.delete_one(doc! { "_id": key }).await?;
                r.deleted_count > 0
            }
            MongoOp::Aggregate => {
                let pipeline = [
                    doc! { "$match": { "g": (n % 10) as i64 } },
                    doc! { "$group": { "_id": null, "total": { "$sum": "$v" } } },
                ];
                let mut cursor = self.scan.aggregate(pipeline).await?;
                while cursor.try_next().await?.is_some() {}
                true
            }
            MongoOp::AggregateComplex => {
                let pipeline = [
                    doc! { "$match": { "v": { "$gte": half(n, s.options.scan_docs) } } },
                    // $sum only: FerretDB v1 has no $avg ("not implemented yet", code 238).
                    doc! { "$group": { "_id": "$g", "n": { "$sum": 1 }, "total": { "$sum": "$v" } } },
                    doc! { "$sort": { "n": -1, "_id": 1 } },
                    doc! { "$project": { "_id": 1, "n": 1, "total": 1 } },
                    doc! { "$limit": 5 },
                ];
                let mut cursor = self.scan.aggregate(pipeline).await?;
                while cursor.try_next().await?.is_some() {}
                true
            }
        };
        Ok(found)
    }
}

impl Session for MongoSession {
    async fn execute(&mut self, n: u64) -> Outcome {
        match self.run(n).await {
            Ok(found) => {
                if !found {
                    self.shared.misses.fetch_add(1, Ordering::Relaxed);
                }
                // The crate does not expose wire sizes: bytes are not counted for MongoDB.
                Outcome::ok(0, 0)
            }
            Err(e) => failure(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Operation;

    #[test]
    fn a_document_template_fills_n_and_key_anywhere() {
        let t = DocumentTemplate::parse(
            r#"{"user": "{{key}}", "seq": "{{ n }}", "tags": ["a", "{{n}}"], "at": {"n": "{{n}}"}, "v": 1.5}"#,
        )
        .unwrap();
        let d = t.render(7, "k000000000003");
        assert_eq!(d.get_str("user").unwrap(), "k000000000003");
        assert_eq!(d.get_i64("seq").unwrap(), 7);
        assert_eq!(d.get_array("tags").unwrap()[1], Bson::Int64(7));
        assert_eq!(d.get_document("at").unwrap().get_i64("n").unwrap(), 7);
        assert_eq!(d.get_f64("v").unwrap(), 1.5);
        assert!(DocumentTemplate::parse("[1]")
            .unwrap_err()
            .contains("JSON object"));
        assert!(DocumentTemplate::parse("{\"a\": ")
            .unwrap_err()
            .starts_with("not JSON"));
    }

    #[test]
    fn names_round_trip_and_urls_are_checked_without_showing_the_password() {
        for &op in MongoOp::ALL {
            assert_eq!(MongoOp::from_name(op.name()), Some(op));
        }
        assert_eq!(MongoOp::from_name("findOne"), None);
        assert_eq!(database_of("mongodb://127.0.0.1:1/").unwrap(), "perfbase");
        assert_eq!(database_of("mongodb://127.0.0.1:1/shop").unwrap(), "shop");
        let e = database_of("postgres://u:s3cret@h/db")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not a mongodb:// URL") && !e.contains("s3cret"),
            "{e}"
        );
        let e = database_of("mongodb://u:s3cret@h:notaport/db")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
