//! SQL workloads shared by the PostgreSQL and MySQL/MariaDB drivers: what op *n* runs, as a
//! pure function of *n*, so both drivers (and pgbench comparisons) run the same work.
//!
//! - **TPC-B like pgbench**: the five statements of pgbench's built-in script in one
//!   transaction, over `pgbench_accounts/tellers/branches/history` filled as `pgbench -i` does
//!   (100 000 accounts, 10 tellers and 1 branch per scale unit). Random values follow
//!   pgbench's ranges: aid 1..=100000·scale, tid 1..=10·scale, bid 1..=scale,
//!   delta −5000..=5000.
//! - **TPC-B as one function call**: `SELECT pgbench_tx(aid, tid, bid, delta)` doing the same
//!   updates and insert server-side (the workload of a published web-server × SQL-driver study).
//! - **Operation suite**: one statement kind per run, over `perfbase_items` (10 000 rows) and
//!   `perfbase_orders`, as published database baselines tabulate them.
//! - **Custom**: a statement with `$1…`/`?` parameters filled from `{{corpus}}` templates.

use crate::workload::{mix64, Corpus, Template};
use std::sync::Arc;

#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod postgres;

/// Accounts, tellers and branches per scale unit (pgbench's constants).
pub const ACCOUNTS_PER_SCALE: i64 = 100_000;
pub const TELLERS_PER_SCALE: i64 = 10;
pub const BRANCHES_PER_SCALE: i64 = 1;
/// Rows in the suite's `perfbase_items` table.
pub const SUITE_ROWS: i64 = 10_000;

crate::operations! {
    /// One operation kind of the suite.
    pub enum SuiteOp {
        /// INSERT one row into `perfbase_items` (ids above the preloaded range).
        Insert = "insert",
        /// SELECT one row by primary key.
        SelectPk = "select-pk",
        /// Full scan of the 10 000-row table (`SELECT count(*), sum(k)`, no index use).
        Scan = "scan",
        /// UPDATE one row by the indexed column `k`.
        Update = "update",
        /// DELETE one row (of those the insert step added, or a missing id: 0 rows is still ok).
        Delete = "delete",
        /// A 5-operation transaction: select, update, insert order, select, update.
        Transaction = "transaction",
        /// A 2-table join: one item with its orders.
        Join = "join",
    }
}

/// What a SQL session runs for each op.
#[derive(Debug, Clone)]
pub enum SqlWorkload {
    TpcB {
        scale: u32,
    },
    TpcBFunction {
        scale: u32,
    },
    /// pgbench's select-only script (`pgbench -S`): one account's balance by primary key.
    TpcBSelect {
        scale: u32,
    },
    Suite(SuiteOp),
    /// `sql` with parameters; `params[i]` renders parameter i+1 per op (as text).
    Custom {
        sql: String,
        params: Vec<Template>,
        corpora: Vec<Arc<Corpus>>,
    },
}

impl SqlWorkload {
    /// The TPC-B scale of the tables a TPC-B workload draws its keys over; None for others.
    pub fn tpcb_scale(&self) -> Option<u32> {
        match self {
            SqlWorkload::TpcB { scale }
            | SqlWorkload::TpcBFunction { scale }
            | SqlWorkload::TpcBSelect { scale } => Some(*scale),
            _ => None,
        }
    }

    /// This workload drawing over tables of `scale` (TPC-B workloads; others unchanged).
    pub fn with_tpcb_scale(mut self, new: u32) -> SqlWorkload {
        if let SqlWorkload::TpcB { scale }
        | SqlWorkload::TpcBFunction { scale }
        | SqlWorkload::TpcBSelect { scale } = &mut self
        {
            *scale = new;
        }
        self
    }
}

/// The random values of one TPC-B transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TpcbParams {
    pub aid: i32,
    pub tid: i32,
    pub bid: i32,
    pub delta: i32,
}

fn uniform(op: u64, salt: u64, lo: i64, hi: i64) -> i64 {
    lo + (mix64(op ^ mix64(salt)) % (hi - lo + 1) as u64) as i64
}

/// Op `op`'s TPC-B values, uniform over pgbench's ranges, deterministic per op.
pub fn tpcb_params(op: u64, scale: u32) -> TpcbParams {
    let s = scale.max(1) as i64;
    TpcbParams {
        aid: uniform(op, 1, 1, ACCOUNTS_PER_SCALE * s) as i32,
        tid: uniform(op, 2, 1, TELLERS_PER_SCALE * s) as i32,
        bid: uniform(op, 3, 1, BRANCHES_PER_SCALE * s) as i32,
        delta: uniform(op, 4, -5000, 5000) as i32,
    }
}

/// Op `op`'s key in the suite table (1..=SUITE_ROWS).
pub fn suite_key(op: u64) -> i64 {
    uniform(op, 5, 1, SUITE_ROWS)
}

/// Op `op`'s id for inserted rows: above the preloaded range, unique per op.
pub fn suite_new_id(op: u64) -> i64 {
    SUITE_ROWS + 1 + op as i64
}

/// Renders op `op`'s custom parameters as text.
pub fn custom_params(params: &[Template], corpora: &[Arc<Corpus>], op: u64) -> Vec<String> {
    params.iter().map(|t| t.render(op, corpora)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Operation;

    #[test]
    fn tpcb_values_stay_in_pgbench_ranges() {
        for op in 0..20_000 {
            let p = tpcb_params(op, 10);
            assert!((1..=1_000_000).contains(&p.aid));
            assert!((1..=100).contains(&p.tid));
            assert!((1..=10).contains(&p.bid));
            assert!((-5000..=5000).contains(&p.delta));
        }
        assert_eq!(tpcb_params(7, 10), tpcb_params(7, 10), "deterministic");
        let bids: std::collections::HashSet<i32> =
            (0..1000).map(|op| tpcb_params(op, 10).bid).collect();
        assert_eq!(bids.len(), 10, "every branch is used");
    }

    #[test]
    fn suite_names_round_trip() {
        for &op in SuiteOp::ALL {
            assert_eq!(SuiteOp::from_name(op.name()), Some(op));
        }
        assert!((1..=SUITE_ROWS).contains(&suite_key(123)));
    }
}
