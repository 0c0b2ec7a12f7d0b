//! The two databases behind one small interface, so the store's logic is written once.
//!
//! Statements use PostgreSQL's numbered placeholders (`$1`, `$2`); for SQLite they become
//! `?1`, `?2`, which SQLite binds the same way. Everything else the store sends is SQL both
//! understand (`RETURNING`, `ON CONFLICT ... DO UPDATE`), except the migrations, which carry
//! one text per database. Every call runs inside a transaction ([`Tx`]).

use crate::error::{chain, scrub, StoreError};
use postgres::types::{ToSql, Type};

/// Which database a store lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Sqlite,
    Postgres,
}

/// One SQL value, passed as a parameter or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
}

impl Val {
    pub(crate) fn text(s: impl Into<String>) -> Val {
        Val::Text(s.into())
    }
}

/// A row as read: one value per selected column.
pub(crate) type Row = Vec<Val>;

/// One SQL value as read, its text borrowed from the database's row: for reads of many rows,
/// where copying each text would cost more than the query (a 10,000-run trend reads 200,000).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Bool(bool),
}

impl Cell<'_> {
    pub(crate) fn owned(self) -> Val {
        match self {
            Cell::Null => Val::Null,
            Cell::Int(i) => Val::Int(i),
            Cell::Real(f) => Val::Real(f),
            Cell::Text(t) => Val::Text(t.to_owned()),
            Cell::Bool(b) => Val::Bool(b),
        }
    }
}

/// A value of a row, owned or borrowed, as the typed readers of `store::row` take it.
pub(crate) trait AsCell {
    fn cell(&self) -> Cell<'_>;
}

impl AsCell for Val {
    fn cell(&self) -> Cell<'_> {
        match self {
            Val::Null => Cell::Null,
            Val::Int(i) => Cell::Int(*i),
            Val::Real(f) => Cell::Real(*f),
            Val::Text(t) => Cell::Text(t),
            Val::Bool(b) => Cell::Bool(*b),
        }
    }
}

impl AsCell for Cell<'_> {
    fn cell(&self) -> Cell<'_> {
        *self
    }
}

/// What [`Tx::each`] hands each row to.
pub(crate) type EachRow<'f> = dyn FnMut(&[Cell<'_>]) -> Result<(), StoreError> + 'f;

/// Hands `each` one row of `columns` cells made by `cell`: on the stack for up to 16 columns
/// (every query the store makes), so reading 200,000 rows allocates nothing per row.
fn row_of<'a>(
    columns: usize,
    mut cell: impl FnMut(usize) -> Result<Cell<'a>, StoreError>,
    each: &mut EachRow<'_>,
) -> Result<(), StoreError> {
    const STACK: usize = 16;
    if columns > STACK {
        let cells = (0..columns).map(cell).collect::<Result<Vec<_>, _>>()?;
        return each(&cells);
    }
    let mut cells = [Cell::Null; STACK];
    for (i, c) in cells.iter_mut().take(columns).enumerate() {
        *c = cell(i)?;
    }
    each(&cells[..columns])
}

/// An open transaction on either database. Dropping it without [`Tx::commit`] rolls back.
pub(crate) trait Tx {
    fn kind(&self) -> Kind;
    /// Runs one statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64, StoreError>;
    /// Runs one statement and hands each row to `row`, borrowed; an error from `row` stops
    /// the query and is returned.
    fn each(&mut self, sql: &str, params: &[Val], row: &mut EachRow<'_>) -> Result<(), StoreError>;
    /// Runs one statement and returns its rows.
    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Row>, StoreError> {
        let mut out = Vec::new();
        self.each(sql, params, &mut |cells| {
            out.push(cells.iter().map(|c| c.owned()).collect());
            Ok(())
        })?;
        Ok(out)
    }
    /// Runs several `;`-separated statements without parameters (migrations).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
}

/// `$1` → `?1`: PostgreSQL's placeholders in SQLite's spelling.
pub(crate) fn sqlite_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|n| n.is_ascii_digit()) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

// ---- SQLite ----

pub(crate) struct SqliteTx<'c>(pub(crate) rusqlite::Transaction<'c>);

pub(crate) fn sqlite_err(e: &rusqlite::Error) -> StoreError {
    StoreError::Db(chain(e))
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match self {
            Val::Null => ToSqlOutput::Owned(Value::Null),
            Val::Int(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            // SQLite stores a NaN REAL as NULL, which the summary columns of schema v1
            // (`p50_ms … NOT NULL`) refuse, and an empty run's latencies are NaN. A REAL
            // column keeps the text instead; `row::real` reads it back as NaN. (PostgreSQL's
            // DOUBLE PRECISION holds NaN itself.)
            Val::Real(f) if f.is_nan() => ToSqlOutput::Borrowed(ValueRef::Text(b"NaN")),
            Val::Real(f) => ToSqlOutput::Owned(Value::Real(*f)),
            Val::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Val::Bool(b) => ToSqlOutput::Owned(Value::Integer(i64::from(*b))),
        })
    }
}

fn sqlite_cell(v: rusqlite::types::ValueRef<'_>) -> Result<Cell<'_>, StoreError> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(t) => Cell::Text(
            std::str::from_utf8(t)
                .map_err(|_| StoreError::Corrupt("a text column is not UTF-8".into()))?,
        ),
        ValueRef::Blob(_) => {
            return Err(StoreError::Corrupt(
                "a column holds binary data where text or a number belongs".into(),
            ))
        }
    })
}

impl Tx for SqliteTx<'_> {
    fn kind(&self) -> Kind {
        Kind::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64, StoreError> {
        let n = self
            .0
            .execute(
                &sqlite_placeholders(sql),
                rusqlite::params_from_iter(params.iter()),
            )
            .map_err(|e| sqlite_err(&e))?;
        Ok(n as u64)
    }

    fn each(
        &mut self,
        sql: &str,
        params: &[Val],
        each: &mut EachRow<'_>,
    ) -> Result<(), StoreError> {
        let mut stmt = self
            .0
            .prepare(&sqlite_placeholders(sql))
            .map_err(|e| sqlite_err(&e))?;
        let columns = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(|e| sqlite_err(&e))?;
        while let Some(row) = rows.next().map_err(|e| sqlite_err(&e))? {
            let cell = |i| sqlite_cell(row.get_ref(i).map_err(|e| sqlite_err(&e))?);
            row_of(columns, cell, each)?;
        }
        Ok(())
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.0.execute_batch(sql).map_err(|e| sqlite_err(&e))
    }
}

// ---- PostgreSQL ----

pub(crate) struct PgTx<'c> {
    pub(crate) tx: postgres::Transaction<'c>,
    /// The connection's password(s), scrubbed from every error message.
    pub(crate) secrets: &'c [String],
}

pub(crate) fn pg_err(e: &postgres::Error, secrets: &[String]) -> StoreError {
    StoreError::Db(scrub(&chain(e), secrets))
}

/// A typed NULL for parameters; the store never binds one today, but [`Val`] can carry it.
const PG_NULL: Option<String> = None;

fn pg_params(params: &[Val]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|v| -> &(dyn ToSql + Sync) {
            match v {
                Val::Null => &PG_NULL,
                Val::Int(i) => i,
                Val::Real(f) => f,
                Val::Text(s) => s,
                Val::Bool(b) => b,
            }
        })
        .collect()
}

/// Column `i` of a PostgreSQL row, borrowed.
fn pg_cell(row: &postgres::Row, i: usize) -> Result<Cell<'_>, postgres::Error> {
    let ty = row.columns()[i].type_();
    let v = if *ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i)?.map(Cell::Int)
    } else if *ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)?
            .map(|n| Cell::Int(i64::from(n)))
    } else if *ty == Type::INT2 {
        row.try_get::<_, Option<i16>>(i)?
            .map(|n| Cell::Int(i64::from(n)))
    } else if *ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i)?.map(Cell::Real)
    } else if *ty == Type::FLOAT4 {
        row.try_get::<_, Option<f32>>(i)?
            .map(|f| Cell::Real(f64::from(f)))
    } else if *ty == Type::BOOL {
        row.try_get::<_, Option<bool>>(i)?.map(Cell::Bool)
    } else {
        // TEXT, VARCHAR, NAME and anything else readable as a string; other types make
        // try_get fail with a message naming the column and its type.
        row.try_get::<_, Option<&str>>(i)?.map(Cell::Text)
    };
    Ok(v.unwrap_or(Cell::Null))
}

impl Tx for PgTx<'_> {
    fn kind(&self) -> Kind {
        Kind::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64, StoreError> {
        self.tx
            .execute(sql, &pg_params(params))
            .map_err(|e| pg_err(&e, self.secrets))
    }

    fn each(
        &mut self,
        sql: &str,
        params: &[Val],
        each: &mut EachRow<'_>,
    ) -> Result<(), StoreError> {
        let rows = self
            .tx
            .query(sql, &pg_params(params))
            .map_err(|e| pg_err(&e, self.secrets))?;
        let secrets = self.secrets;
        for r in &rows {
            let cell = |i| pg_cell(r, i).map_err(|e| pg_err(&e, secrets));
            row_of(r.len(), cell, each)?;
        }
        Ok(())
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.tx
            .batch_execute(sql)
            .map_err(|e| pg_err(&e, self.secrets))
    }
}
