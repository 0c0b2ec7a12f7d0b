//! A few store connections kept between requests: opening a PostgreSQL connection costs more
//! than a page's queries.

use perfbase_store::{Store, StoreError};
use std::sync::Mutex;

/// Idle connections kept.
const KEPT: usize = 4;

pub struct Pool {
    location: String,
    idle: Mutex<Vec<Store>>,
}

impl Pool {
    pub fn new(location: String) -> Pool {
        Pool {
            location,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// A connection: an idle one, or a new one.
    pub fn take(&self) -> Result<Store, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match idle {
            Some(s) => Ok(s),
            None => Store::open(&self.location),
        }
    }

    /// Hands a connection back, to be kept if fewer than [`KEPT`] are.
    pub fn give(&self, store: Store) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < KEPT {
            idle.push(store);
        }
    }

    /// `f` on a connection, handed back after (unless `f` failed: it may be broken).
    pub fn with<T>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut store = self.take()?;
        let r = f(&mut store);
        if r.is_ok() {
            self.give(store);
        }
        r
    }
}
