//! Segments: N perfbase processes (agents) running one schedule together, each exactly its
//! share with no coordination while running. Op numbers stay global: segment `i/N` runs the
//! ops `n` with `n mod N = i`, so in the open model each agent's ops are an even schedule
//! at R/N and their union is the single-machine schedule at R; a count `-n C` gives the ops
//! below C, split as evenly as integers allow; and mixes and corpora, functions of the global
//! op number, send over the union exactly what one machine would have sent. The closed
//! model's connections are split as evenly as integers allow.

use std::fmt;
use std::str::FromStr;

/// Segment `index` of `count` (0-based, as Kubernetes' JOB_COMPLETION_INDEX).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub index: u32,
    pub count: u32,
}

impl Default for Segment {
    fn default() -> Self {
        Segment { index: 0, count: 1 }
    }
}

impl Segment {
    /// The whole schedule (one process).
    pub fn is_whole(self) -> bool {
        self.count <= 1
    }

    /// This segment's share of `total` things split as evenly as integers allow.
    pub fn share(self, total: u64) -> u64 {
        let (i, n) = (u64::from(self.index), u64::from(self.count.max(1)));
        total / n + u64::from(i < total % n)
    }

    /// This segment's connections of a closed-model phase of `total` connections: its share,
    /// as evenly as integers allow; but at least one when the phase is counted and this
    /// segment has ops of the count to send (a check's one connection over three agents), so
    /// the union sends exactly the count, at the agents' concurrency rather than the plan's.
    /// A duration-bound phase keeps the exact split.
    pub fn connections(self, total: u64, count: Option<u64>) -> u64 {
        let share = self.share(total);
        if share == 0 && count.is_some_and(|c| self.share(c) > 0) {
            1
        } else {
            share
        }
    }

    /// The global number of this segment's `k`-th op.
    pub fn op(self, k: u64) -> u64 {
        u64::from(self.index) + u64::from(self.count.max(1)) * k
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Segment {
    type Err = String;

    fn from_str(s: &str) -> Result<Segment, String> {
        let bad = || {
            format!(
                "'{s}' is not a segment: write I/N with 0 <= I < N, such as 0/3 (the first of three agents)"
            )
        };
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Segment { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_phase_gives_every_segment_with_ops_a_connection() {
        let all: Vec<Segment> = (0..3).map(|index| Segment { index, count: 3 }).collect();
        let counted: Vec<u64> = all.iter().map(|s| s.connections(1, Some(30))).collect();
        assert_eq!(counted, [1, 1, 1]);
        let timed: Vec<u64> = all.iter().map(|s| s.connections(1, None)).collect();
        assert_eq!(timed, [1, 0, 0]);
        // Two ops over three segments: the third has none to send, so no connection.
        let few: Vec<u64> = all.iter().map(|s| s.connections(1, Some(2))).collect();
        assert_eq!(few, [1, 1, 0]);
        assert_eq!(Segment::default().connections(4, Some(10)), 4);
    }

    #[test]
    fn segments_partition_the_ops_and_the_shares() {
        let all: Vec<Segment> = (0..3).map(|index| Segment { index, count: 3 }).collect();
        let mut ops: Vec<u64> = all.iter().flat_map(|s| (0..5).map(|k| s.op(k))).collect();
        ops.sort();
        assert_eq!(ops, (0..15).collect::<Vec<_>>());
        for total in [0, 1, 2, 3, 50, 3000, 3001] {
            assert_eq!(all.iter().map(|s| s.share(total)).sum::<u64>(), total);
        }
        assert_eq!("1/3".parse::<Segment>(), Ok(Segment { index: 1, count: 3 }));
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(bad.parse::<Segment>().unwrap_err().contains("I/N"), "{bad}");
        }
        assert!(Segment::default().is_whole());
    }
}
