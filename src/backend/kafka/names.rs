//! Kafka's choices by the names flags and plans give them.

use clap::ValueEnum;
use perfbase_drivers::kafka::{Acks, Commit, Compression, From, Partitioner};

/// What a Kafka workload does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KafkaWorkload {
    /// Produce records; an op is one record acknowledged as --acks says
    Produce,
    /// Consume records in a consumer group; an op is one record received
    Consume,
    /// Produce, and consume apart: end-to-end latency from each record's send stamp
    E2e,
}

/// Generates a name enum of one of the driver's and its two-way mapping.
macro_rules! names {
    ($(#[$doc:meta])* $name:ident => $of:ident { $($(#[$vdoc:meta])* $v:ident $(= $n:literal)? => $d:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
        pub enum $name {
            $($(#[$vdoc])* $(#[value(name = $n)])? $v,)*
        }

        impl $name {
            pub fn get(self) -> $of {
                match self {
                    $($name::$v => $of::$d,)*
                }
            }

            pub fn of(v: $of) -> $name {
                match v {
                    $($of::$d => $name::$v,)*
                }
            }
        }
    };
}

names!(AcksName => Acks {
    /// No acknowledgement: a record counts once written
    Zero = "0" => Zero,
    /// The partition leader's
    One = "1" => One,
    /// Every in-sync replica's
    All => All,
});

names!(CompressionName => Compression {
    None => None,
    Lz4 => Lz4,
    Zstd => Zstd,
    Snappy => Snappy,
});

names!(PartitionerName => Partitioner {
    /// As the Java client: murmur2 of the key, sticky batches without one
    Default => Default,
    /// Op n to partition n mod partitions
    RoundRobin => RoundRobin,
});

names!(FromName => From {
    Earliest => Earliest,
    Latest => Latest,
});

names!(CommitName => Commit {
    /// librdkafka's periodic commit (every 5 s and at the end)
    Auto => Auto,
    /// A blocking commit after each record
    Sync => Sync,
    /// A commit after each record, not waited for
    Async => Async,
    /// No commit
    None => None,
});

/// Which key each record carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeysName {
    /// No key
    None,
    /// A key from the corpus at random
    Random,
    /// The corpus's keys in turn
    Sequential,
}
