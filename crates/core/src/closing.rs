//! What a protocol says after its tables (pgbench's block, a cluster's replies per node, the
//! messages a stream moved), as figures: the protocol picks the words and the numbers, the
//! report lays them out and formats the numbers (`perfbase_report::closing`).

use crate::result::Measurement;

/// One thing a protocol closes with.
#[derive(Debug, Clone)]
pub enum Closing {
    /// A line of its own (`Messages: 1,204 sent, 1,204 received`).
    Line(Vec<Part>),
    /// A line under the run's tables, indented as their details are.
    Detail(Vec<Part>),
    /// A block of other closings under its title (`pgbench, step 1:`), if any: on a page, a
    /// block of its own.
    Block {
        title: Option<String>,
        body: Vec<Closing>,
    },
    /// A side measured apart from the load (a stream's consumers): what they took, at what
    /// rate and end-to-end latency, by how many, and how many were `left` unconsumed.
    Consumed {
        measurement: Box<Measurement>,
        consumers: u64,
        left: u64,
    },
}

/// A piece of a closing line.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// The protocol's words, as they are.
    Words(String),
    /// A count, with thousands separators.
    Count(u64),
    /// A number with this many decimals.
    Fixed(f64, usize),
}

impl From<&str> for Part {
    fn from(words: &str) -> Part {
        Part::Words(words.to_string())
    }
}

impl From<String> for Part {
    fn from(words: String) -> Part {
        Part::Words(words)
    }
}

impl From<u64> for Part {
    fn from(n: u64) -> Part {
        Part::Count(n)
    }
}
