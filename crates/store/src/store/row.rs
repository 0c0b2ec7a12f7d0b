//! Typed reads of one column of a result row, owned (`Val`s) or borrowed ([`Cell`]s); a
//! missing column or a value of the wrong type is a corrupt store.

use crate::database::{AsCell, Cell};
use crate::error::StoreError;

fn column<'r, C: AsCell>(row: &'r [C], i: usize, what: &str) -> Result<Cell<'r>, StoreError> {
    row.get(i)
        .map(AsCell::cell)
        .ok_or_else(|| StoreError::Corrupt(format!("{what} is missing from the row")))
}

fn wrong(what: &str, value: Cell<'_>, not: &str) -> StoreError {
    StoreError::Corrupt(format!("{what} is {:?}, not {not}", value.owned()))
}

pub(super) fn int<C: AsCell>(row: &[C], i: usize, what: &str) -> Result<i64, StoreError> {
    match column(row, i, what)? {
        Cell::Int(n) => Ok(n),
        other => Err(wrong(what, other, "an integer")),
    }
}

pub(super) fn real<C: AsCell>(row: &[C], i: usize, what: &str) -> Result<f64, StoreError> {
    match column(row, i, what)? {
        Cell::Real(f) => Ok(f),
        // SQLite may hand back a whole REAL as an integer; it is exact below 2^53.
        Cell::Int(n) => Ok(n as f64),
        // An undefined figure, as the SQLite database writes it (see its `ToSql`).
        Cell::Text("NaN") => Ok(f64::NAN),
        other => Err(wrong(what, other, "a number")),
    }
}

/// A text column, borrowed from the row.
pub(super) fn str<'r, C: AsCell>(
    row: &'r [C],
    i: usize,
    what: &str,
) -> Result<&'r str, StoreError> {
    match column(row, i, what)? {
        Cell::Text(s) => Ok(s),
        other => Err(wrong(what, other, "text")),
    }
}

pub(super) fn text<C: AsCell>(row: &[C], i: usize, what: &str) -> Result<String, StoreError> {
    str(row, i, what).map(str::to_owned)
}

pub(super) fn boolean<C: AsCell>(row: &[C], i: usize, what: &str) -> Result<bool, StoreError> {
    match column(row, i, what)? {
        Cell::Bool(b) => Ok(b),
        Cell::Int(0) => Ok(false),
        Cell::Int(1) => Ok(true),
        other => Err(wrong(what, other, "a boolean")),
    }
}
