//! AMQP's modes and acknowledgements by the names flags and plans give them.

use clap::ValueEnum;
use perfbase_drivers::amqp::{AckMode, AmqpMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AmqpModeName {
    /// Publish, then receive the same message: latency is end to end through the broker
    Roundtrip,
    /// Publish only (with --confirms: until the broker acknowledges)
    Publish,
    /// Publishers and --consumers apart on one queue, as RabbitMQ PerfTest: publish rate and
    /// latency, consume rate, end-to-end latency from the send stamp in each message
    Stream,
}

impl AmqpModeName {
    pub fn mode(self) -> AmqpMode {
        match self {
            AmqpModeName::Roundtrip => AmqpMode::RoundTrip,
            AmqpModeName::Publish => AmqpMode::Publish,
            AmqpModeName::Stream => AmqpMode::Stream,
        }
    }

    pub fn of(mode: AmqpMode) -> AmqpModeName {
        match mode {
            AmqpMode::RoundTrip => AmqpModeName::Roundtrip,
            AmqpMode::Publish => AmqpModeName::Publish,
            AmqpMode::Stream => AmqpModeName::Stream,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AckName {
    None,
    Auto,
    Manual,
}

impl AckName {
    pub fn mode(self) -> AckMode {
        match self {
            AckName::None => AckMode::None,
            AckName::Auto => AckMode::Auto,
            AckName::Manual => AckMode::Manual,
        }
    }

    pub fn of(mode: AckMode) -> AckName {
        match mode {
            AckMode::None => AckName::None,
            AckMode::Auto => AckName::Auto,
            AckMode::Manual => AckName::Manual,
        }
    }
}

