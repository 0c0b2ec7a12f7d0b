//! [`Store`]: opening (and migrating) a results database and running transactions on it.
//! Saving, reading and listing runs is in `runs`, named baselines in `baselines`, reading
//! typed columns out of a row in `row`.

mod barrier;
mod baselines;
mod browse;
mod row;
mod runs;
mod trend;

pub use browse::{BrowsedRun, LiveRun, PlanRow, RunPage, RunQuery};
pub use trend::{Pruned, Trend, TrendKey, TrendPoint, TrendQuery, TrendRun};

use crate::database::{pg_err, sqlite_err, Kind, PgTx, SqliteTx, Tx, Val};
use crate::error::{chain, scrub, Cause, StoreError};
use crate::schema::{self, MIGRATIONS, SCHEMA_VERSION};
use crate::{is_postgres_url, location_secrets, redact_location};
use row::int;
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// How long SQLite waits for another writer, and how long a PostgreSQL connection attempt
/// may take (unless the URL sets `connect_timeout`).
const WAIT: Duration = Duration::from_secs(10);

enum Database {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

/// An open results database (SQLite file or PostgreSQL), at the current schema version.
pub struct Store {
    database: Database,
    /// The location with its password redacted, for messages.
    location: String,
    /// The location's passwords, scrubbed from every error text.
    secrets: Vec<String>,
    /// The schema version after opening (always [`SCHEMA_VERSION`] outside tests).
    version: u32,
    /// Test hook: make the next saves fail right after the `runs` insert.
    #[cfg(test)]
    pub(crate) fail_after_runs_insert: bool,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("database", &self.database_name())
            .field("location", &self.location)
            .field("schema_version", &self.version)
            .finish()
    }
}

impl Store {
    /// Opens the store at `location`: a `postgres://` or `postgresql://` URL, or else a file
    /// path (SQLite; the file and its parent folders are created when missing). Creates the
    /// tables and applies pending migrations. A store whose schema is newer than this
    /// perfbase's is refused with [`StoreError::NewerSchema`].
    pub fn open(location: &str) -> Result<Store, StoreError> {
        Store::open_upto(location, SCHEMA_VERSION)
    }

    /// Opens and migrates only up to `version` (tests of migrations from older layouts).
    #[cfg(test)]
    pub(crate) fn open_at_version(location: &str, version: u32) -> Result<Store, StoreError> {
        Store::open_upto(location, version)
    }

    fn open_upto(location: &str, target: u32) -> Result<Store, StoreError> {
        // Processes that open one new SQLite file at the same moment (agents on one machine)
        // can be refused at once, "database is locked", while another turns it to WAL or
        // migrates it: SQLite does not wait through the busy timeout there. Seen in 1 of 18
        // starts of three agents at once; such an open is tried again, up to WAIT.
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            match Store::connect(location).and_then(|mut s| s.migrate(target).map(|()| s)) {
                Err(e)
                    if e.to_string().contains("database is locked")
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(store) => return Ok(store),
                Err(StoreError::Db(msg)) => {
                    return Err(StoreError::Open {
                        location: redact_location(location),
                        source: Cause(format!("{msg}; {}", remedy(location))),
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn connect(location: &str) -> Result<Store, StoreError> {
        let redacted = redact_location(location);
        let secrets = location_secrets(location);
        let open_err = |msg: String| StoreError::Open {
            location: redacted.clone(),
            source: Cause(format!("{}; {}", scrub(&msg, &secrets), remedy(location))),
        };
        let database = if is_postgres_url(location) {
            let mut config: postgres::Config = location
                .trim()
                .parse()
                .map_err(|e: postgres::Error| open_err(chain(&e)))?;
            if config.get_connect_timeout().is_none() {
                config.connect_timeout(WAIT);
            }
            if config.get_application_name().is_none() {
                config.application_name("perfbase");
            }
            let client = config
                .connect(postgres::NoTls)
                .map_err(|e| open_err(chain(&e)))?;
            Database::Postgres(client)
        } else if location.contains("://") {
            return Err(open_err(
                "not a file path nor a postgres:// or postgresql:// URL".into(),
            ));
        } else if location.trim().is_empty() {
            return Err(open_err("the location is empty".into()));
        } else {
            let path = Path::new(location);
            if let Some(parent) = path.parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        open_err(format!("cannot create folder {}: {e}", parent.display()))
                    })?;
                }
            }
            let conn = rusqlite::Connection::open(path).map_err(|e| open_err(chain(&e)))?;
            conn.busy_timeout(WAIT).map_err(|e| open_err(chain(&e)))?;
            // WAL lets readers (history, reports) run while a save writes. A filesystem
            // without shared memory keeps its old journal mode; that is slower, not wrong.
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .map_err(|e| open_err(chain(&e)))?;
            conn.execute_batch("PRAGMA foreign_keys = ON;")
                .map_err(|e| open_err(chain(&e)))?;
            Database::Sqlite(conn)
        };
        Ok(Store {
            database,
            location: redacted,
            secrets,
            version: 0,
            #[cfg(test)]
            fail_after_runs_insert: false,
        })
    }

    /// The store's schema version (after opening: [`SCHEMA_VERSION`]).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(self.version)
    }

    /// The location, password redacted.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// `sqlite` or `postgres`.
    pub fn database_name(&self) -> &'static str {
        match self.database {
            Database::Sqlite(_) => "sqlite",
            Database::Postgres(_) => "postgres",
        }
    }

    /// Runs `f` in one transaction, committed when it returns `Ok` and rolled back otherwise
    /// (also when the process dies before the commit). Writes take SQLite's write lock up
    /// front, so two writers queue (up to the busy timeout) instead of failing on upgrade;
    /// PostgreSQL reads run in read-only transactions.
    pub(crate) fn tx<T>(
        &mut self,
        write: bool,
        f: impl FnOnce(&mut dyn Tx) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match &mut self.database {
            Database::Sqlite(conn) => {
                let behavior = if write {
                    rusqlite::TransactionBehavior::Immediate
                } else {
                    rusqlite::TransactionBehavior::Deferred
                };
                let tx = conn
                    .transaction_with_behavior(behavior)
                    .map_err(|e| sqlite_err(&e))?;
                let mut tx = SqliteTx(tx);
                let out = f(&mut tx)?;
                tx.0.commit().map_err(|e| sqlite_err(&e))?;
                Ok(out)
            }
            Database::Postgres(client) => {
                let secrets = self.secrets.as_slice();
                let tx = client
                    .build_transaction()
                    .read_only(!write)
                    .start()
                    .map_err(|e| pg_err(&e, secrets))?;
                let mut tx = PgTx { tx, secrets };
                let out = f(&mut tx)?;
                tx.tx.commit().map_err(|e| pg_err(&e, secrets))?;
                Ok(out)
            }
        }
    }

    /// Brings the schema up to `target`: first a read-only look (so an up-to-date store on
    /// read-only media opens, and a newer one is refused before anything is written), then one
    /// transaction per pending migration.
    fn migrate(&mut self, target: u32) -> Result<(), StoreError> {
        let found = self.tx(false, read_version)?;
        if found > SCHEMA_VERSION {
            return Err(newer(found));
        }
        self.version = found;
        while self.version < target {
            self.version = self.tx(true, |db| {
                let (meta, lock) = match db.kind() {
                    Kind::Sqlite => (schema::META_SQLITE, None),
                    Kind::Postgres => (schema::META_POSTGRES, Some(schema::PG_MIGRATION_LOCK)),
                };
                if let Some(lock) = lock {
                    db.batch(lock)?;
                }
                db.batch(meta)?;
                // Read again under the lock: another process may have migrated meanwhile.
                let v = read_version(db)?;
                if v > SCHEMA_VERSION {
                    return Err(newer(v));
                }
                if v >= target {
                    return Ok(v);
                }
                let m = MIGRATIONS
                    .iter()
                    .find(|m| m.version == v + 1)
                    .ok_or_else(|| {
                        StoreError::Corrupt(format!("no migration from schema version {v}"))
                    })?;
                db.batch(match db.kind() {
                    Kind::Sqlite => m.sqlite,
                    Kind::Postgres => m.postgres,
                })?;
                match m.fill {
                    Some(schema::Fill::TrendFigures) => trend::backfill(db)?,
                    Some(schema::Fill::PlanAndOutcome) => browse::backfill(db)?,
                    None => {}
                }
                db.execute(
                    "UPDATE perfbase_meta SET schema_version = $1 WHERE id = 1",
                    &[Val::Int(i64::from(m.version))],
                )?;
                Ok(m.version)
            })?;
        }
        Ok(())
    }
}

/// What to check when a store does not open, for the kind of location given.
fn remedy(location: &str) -> &'static str {
    if is_postgres_url(location) {
        "check that the PostgreSQL server runs and accepts connections, and that the URL's \
         host, port, user, password and database are right"
    } else if location.contains("://") {
        "give a file path (e.g. .perfbase/results.db) or a postgres:// or postgresql:// URL"
    } else {
        "check that the path names a file (not a folder) in a writable folder, and that the \
         file is a perfbase results database"
    }
}

fn newer(found: u32) -> StoreError {
    StoreError::NewerSchema {
        found,
        supported: SCHEMA_VERSION,
    }
}

/// The recorded schema version; 0 for a database perfbase has not set up yet.
pub(crate) fn read_version(db: &mut dyn Tx) -> Result<u32, StoreError> {
    let has_meta = match db.kind() {
        Kind::Sqlite => schema::HAS_META_SQLITE,
        Kind::Postgres => schema::HAS_META_POSTGRES,
    };
    let rows = db.query(has_meta, &[])?;
    let tables = rows
        .first()
        .map(|r| int(r, 0, "table count"))
        .transpose()?
        .unwrap_or(0);
    if tables == 0 {
        return Ok(0);
    }
    let rows = db.query("SELECT schema_version FROM perfbase_meta WHERE id = 1", &[])?;
    match rows.first() {
        None => Ok(0),
        Some(r) => {
            let v = int(r, 0, "perfbase_meta.schema_version")?;
            u32::try_from(v)
                .map_err(|_| StoreError::Corrupt(format!("schema version {v} is not a version")))
        }
    }
}

#[cfg(test)]
impl Store {
    /// Test access to the raw database (one transaction).
    pub(crate) fn raw<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.tx(true, f)
    }

    /// The version recorded in the database itself (not the one cached at open).
    pub(crate) fn stored_version(&mut self) -> Result<u32, StoreError> {
        self.tx(false, read_version)
    }
}
