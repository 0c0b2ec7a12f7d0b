//! One outcome for a pipelined batch, shared by the drivers that pipeline through this seam
//! (PostgreSQL, AMQP).

use perfbase_core::Outcome;

/// The ops of a pipelined batch as they come back: one outcome for the batch, counting every
/// op in it (the engine records each with the batch's latency). A failed batch carries its
/// worst failure — a lost connection first, else the first error — and how many failed.
#[derive(Default)]
pub(crate) struct BatchTally {
    pub bytes_in: u64,
    failed: u64,
    worst: Option<Outcome>,
}

impl BatchTally {
    pub fn ok(&mut self, bytes_in: u64) {
        self.bytes_in += bytes_in;
    }

    /// How many of a batch of `n` ops have not failed so far.
    pub fn succeeded(&self, n: u64) -> u64 {
        n - self.failed
    }

    /// `count` ops failed with `o`.
    pub fn failed(&mut self, o: Outcome, count: u64) {
        self.failed += count;
        let replace = match &self.worst {
            None => true,
            Some(w) => o.class.breaks_session() && !w.class.breaks_session(),
        };
        if replace {
            self.worst = Some(o);
        }
    }

    /// The batch of `n` ops (`what`, for the message) that sent `out` bytes.
    pub fn outcome(self, n: u64, out: u64, what: &str) -> Outcome {
        match self.worst {
            None => Outcome::ok(self.bytes_in, out).batch_of(n as u32, n as u32),
            Some(o) => Outcome::error(
                o.class,
                format!(
                    "{} of {n} pipelined {what} failed: {}",
                    self.failed,
                    o.detail.as_deref().unwrap_or("")
                ),
            )
            .with_bytes(self.bytes_in, out)
            .batch_of(n as u32, (n - self.failed) as u32),
        }
    }
}
