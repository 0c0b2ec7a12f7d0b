//! Typed reads of one column of a result row; a missing column or a value of the wrong type
//! is a corrupt store.

use crate::database::{Row, Val};
use crate::error::StoreError;

fn column<'r>(row: &'r Row, i: usize, what: &str) -> Result<&'r Val, StoreError> {
    row.get(i)
        .ok_or_else(|| StoreError::Corrupt(format!("{what} is missing from the row")))
}

pub(super) fn int(row: &Row, i: usize, what: &str) -> Result<i64, StoreError> {
    match column(row, i, what)? {
        Val::Int(n) => Ok(*n),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not an integer"
        ))),
    }
}

pub(super) fn real(row: &Row, i: usize, what: &str) -> Result<f64, StoreError> {
    match column(row, i, what)? {
        Val::Real(f) => Ok(*f),
        // SQLite may hand back a whole REAL as an integer; it is exact below 2^53.
        Val::Int(n) => Ok(*n as f64),
        // An undefined figure, as the SQLite database writes it (see its `ToSql`).
        Val::Text(t) if t == "NaN" => Ok(f64::NAN),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not a number"
        ))),
    }
}

pub(super) fn text(row: &Row, i: usize, what: &str) -> Result<String, StoreError> {
    match column(row, i, what)? {
        Val::Text(s) => Ok(s.clone()),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not text"
        ))),
    }
}

/// [`text`], moved out of the row rather than copied: for reads of many rows, each read once.
pub(super) fn take_text(row: &mut Row, i: usize, what: &str) -> Result<String, StoreError> {
    match row.get_mut(i) {
        Some(Val::Text(s)) => Ok(std::mem::take(s)),
        _ => text(row, i, what),
    }
}

pub(super) fn boolean(row: &Row, i: usize, what: &str) -> Result<bool, StoreError> {
    match column(row, i, what)? {
        Val::Bool(b) => Ok(*b),
        Val::Int(0) => Ok(false),
        Val::Int(1) => Ok(true),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not a boolean"
        ))),
    }
}
