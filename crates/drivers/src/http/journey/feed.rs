//! A feeder: which row an iteration gets. Circular and random rows are a pure function of
//! the op number, as every other pick is; queue and shuffle give each row once over the
//! whole run (warm-up included), so the driver admits no op past the last row and the phase
//! ends there.

use super::spec::{Feed, Rows, Strategy};
use crate::workload::mix64;
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) struct Feeder {
    rows: std::sync::Arc<Rows>,
    strategy: Strategy,
    /// Shuffle: the order rows are given in.
    order: Vec<u32>,
    /// Queue and shuffle: ops admitted, and rows taken by iterations (never more).
    admitted: AtomicU64,
    taken: AtomicU64,
}

impl Feeder {
    pub(super) fn new(feed: &Feed) -> Feeder {
        let n = feed.rows.len();
        let mut order: Vec<u32> = Vec::new();
        if feed.strategy == Strategy::Shuffle {
            // Fisher–Yates on a fixed seed: the same order in every rerun.
            order = (0..n as u32).collect();
            for i in (1..n).rev() {
                let j = (mix64(i as u64 ^ 0x5eed) % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
        }
        Feeder {
            rows: feed.rows.clone(),
            strategy: feed.strategy,
            order,
            admitted: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        }
    }

    fn once(&self) -> bool {
        matches!(self.strategy, Strategy::Queue | Strategy::Shuffle)
    }

    /// Whether another iteration may start (a row is left for it).
    pub(super) fn admit(&self) -> bool {
        !self.once() || self.admitted.fetch_add(1, Ordering::Relaxed) < self.rows.len() as u64
    }

    /// The cells of op `op`'s iteration's row.
    pub(super) fn row(&self, op: u64) -> impl Iterator<Item = &str> + '_ {
        let len = self.rows.len() as u64;
        let i = match self.strategy {
            Strategy::Circular => op % len,
            Strategy::Random => mix64(op ^ 0xfeed) % len,
            // Every admitted op takes one row, and no more ops are admitted than rows: the
            // count never passes the last (the modulo only guards an op run without
            // admission, such as a check's).
            Strategy::Queue => self.taken.fetch_add(1, Ordering::Relaxed) % len,
            Strategy::Shuffle => {
                let k = self.taken.fetch_add(1, Ordering::Relaxed) % len;
                u64::from(self.order[k as usize])
            }
        };
        self.rows.row(i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(strategy: Strategy, n: usize) -> Feeder {
        let mut rows = Rows::new(1);
        for i in 0..n {
            rows.push([format!("u{i}").as_str()]).unwrap();
        }
        Feeder::new(&Feed {
            name: "users.csv".into(),
            columns: vec!["user".into()],
            rows: std::sync::Arc::new(rows),
            strategy,
        })
    }

    #[test]
    fn queue_and_shuffle_give_each_row_once_then_admit_nothing() {
        for strategy in [Strategy::Queue, Strategy::Shuffle] {
            let f = feed(strategy, 5);
            let mut seen: Vec<String> = (0..5)
                .map(|op| {
                    assert!(f.admit());
                    f.row(op).next().unwrap().to_string()
                })
                .collect();
            assert!(!f.admit() && !f.admit());
            if strategy == Strategy::Queue {
                assert_eq!(seen, ["u0", "u1", "u2", "u3", "u4"]);
            }
            seen.sort();
            assert_eq!(seen, ["u0", "u1", "u2", "u3", "u4"]);
        }
    }

    #[test]
    fn circular_and_random_never_run_out() {
        let f = feed(Strategy::Circular, 3);
        assert!((0..10).all(|_| f.admit()));
        assert_eq!(f.row(4).next(), Some("u1"));
        let r = feed(Strategy::Random, 3);
        assert!(r.row(7).eq(r.row(7)));
    }
}
