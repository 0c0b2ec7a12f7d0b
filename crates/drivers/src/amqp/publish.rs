//! Publishing for [`AmqpSession`]: the message bodies with their op and send stamp, the
//! publish options, what a publisher confirm says, and a pipeline's batch of publishes.

use super::{op_error, reply_name, AmqpSession, HEADER};
use crate::batch::BatchTally;
use futures_util::future::join_all;
use lapin::options::BasicPublishOptions;
use lapin::types::ShortString;
use lapin::{BasicProperties, Confirmation};
use perfbase_core::{Class, Outcome};
use std::time::{SystemTime, UNIX_EPOCH};

/// A publish's options: `mandatory` (an unroutable message comes back) only with confirms,
/// the one place a session looks at returned messages. Without confirms a deleted queue shows
/// otherwise (a cancelled consumer, messages not consumed), and `mandatory` is not free: with
/// it, RabbitMQ spent 38.7 µs of CPU per message of perfbase's stream, against 33 µs for
/// PerfTest's, which does not set it; without it, 33–35 µs.
fn publish_options(confirms: bool) -> BasicPublishOptions {
    BasicPublishOptions {
        mandatory: confirms,
        immediate: false,
    }
}

impl AmqpSession {
    /// Writes the op and the send stamp into each body: op `op` alone, or ops `N·op …
    /// N·op+N−1` of a pipeline of N.
    pub(super) fn stamp(&mut self, op: u64) {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let n = self.bodies.len() as u64;
        for (i, body) in self.bodies.iter_mut().enumerate() {
            let op = if n == 1 {
                op
            } else {
                op.wrapping_mul(n).wrapping_add(i as u64)
            };
            body[..8].copy_from_slice(&op.to_le_bytes());
            body[8..HEADER].copy_from_slice(&stamp.to_le_bytes());
        }
    }

    /// Publishes op `op`'s one message and, with confirms, waits for the broker's answer.
    /// The bytes sent, or the op's failed outcome (the session marked broken when the failure
    /// breaks it).
    pub(super) async fn publish_one(&mut self, op: u64) -> Result<u64, Outcome> {
        self.stamp(op);
        let sent = self.bodies[0].len() as u64;
        let confirm = match self
            .channel
            .basic_publish(
                ShortString::from(""),
                self.queue.clone(),
                publish_options(self.confirms),
                &self.bodies[0],
                self.properties(),
            )
            .await
        {
            Ok(c) => c,
            Err(e) => return Err(self.fail(op_error(&e))),
        };
        if self.confirms {
            if let Some(failure) = self.confirmation(confirm.await) {
                return Err(self.fail(failure.with_bytes(0, sent)));
            }
        }
        if let Some(gate) = &self.gate {
            gate.published(1);
        }
        Ok(sent)
    }

    pub(super) fn properties(&self) -> BasicProperties {
        let props = BasicProperties::default();
        if self.persistent {
            props.with_delivery_mode(2)
        } else {
            props
        }
    }

    /// What a publisher confirm says, when it is not a plain ack.
    pub(super) fn confirmation(&self, answer: lapin::Result<Confirmation>) -> Option<Outcome> {
        match answer {
            Ok(Confirmation::Ack(None)) | Ok(Confirmation::NotRequested) => None,
            // Our queue is gone (deleted by someone else): reopening redeclares it.
            Ok(Confirmation::Ack(Some(returned))) => Some(Outcome::error(
                Class::Read,
                format!(
                    "AMQP {} {}: {} (message returned: queue {} no longer exists)",
                    returned.reply_code,
                    reply_name(returned.reply_code),
                    returned.reply_text,
                    self.queue
                ),
            )),
            Ok(Confirmation::Nack(_)) => Some(Outcome::error(
                Class::ServerError,
                "AMQP nack: the broker could not store the message",
            )),
            Err(e) => Some(op_error(&e)),
        }
    }

    /// The messages of a pipeline (ops `N·op …`), handed to the connection together so they
    /// go out together; with confirms, the broker's answers are awaited together too. One
    /// outcome for the batch ([`BatchTally`]); the stream's lag gate counts those published.
    pub(super) async fn publish_batch(&mut self, op: u64) -> Outcome {
        self.stamp(op);
        let n = self.bodies.len() as u64;
        let out = n * self.bodies[0].len() as u64;
        let props = self.properties();
        let published = join_all(self.bodies.iter().map(|body| {
            self.channel.basic_publish(
                ShortString::from(""),
                self.queue.clone(),
                publish_options(self.confirms),
                body,
                props.clone(),
            )
        }))
        .await;
        let mut tally = BatchTally::default();
        let mut confirms = Vec::with_capacity(published.len());
        for p in published {
            match p {
                Ok(c) => confirms.push(c),
                Err(e) => tally.failed(op_error(&e), 1),
            }
        }
        if self.confirms {
            for answer in join_all(confirms).await {
                if let Some(o) = self.confirmation(answer) {
                    tally.failed(o, 1);
                }
            }
        }
        if let Some(gate) = &self.gate {
            gate.published(tally.succeeded(n));
        }
        let outcome = tally.outcome(n, out, "messages");
        self.fail(outcome)
    }
}
