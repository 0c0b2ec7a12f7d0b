//! Journeys: multi-step HTTP scenarios. An op is one iteration of a journey (chosen from a
//! weighted mix); each of its steps is one request the engine times and records on the
//! step's endpoint, asking [`Session::then`] after each whether another follows and after
//! what think time. An iteration carries its values from step to step (captures, a feeder's
//! row, the set-up's captures) and its own cookie jar; checks on each response are counted
//! by name, and a failed one makes its step an error of class `check`.

pub(crate) mod client;
mod compile;
pub(crate) mod cookies;
mod feed;
pub mod fuzz;
mod rules;
pub mod spec;
mod text;

pub use spec::*;

use crate::http::{HttpError, TlsOptions};
use crate::workload::{unit, Corpus};
use bytes::Bytes;
use client::{Client, Link, Outgoing};
use compile::{Compiled, Step};
use cookies::Jar;
use hyper::header::{HeaderValue, COOKIE};
use perfbase_core::{CheckBits, Class, Driver, Outcome, Session, Then};
use rules::Answer;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use text::Fill;

/// Checks `spec` over `corpora` as the driver will compile it (no host is resolved): for a
/// plan's reader, so that its mistakes are found when the plan is read.
pub fn check(spec: &JourneySpec, corpora: &[Arc<Corpus>]) -> Result<(), String> {
    Compiled::new(spec, corpora).map(drop)
}

struct Shared {
    plan: Compiled,
    client: Client,
    corpora: Vec<Arc<Corpus>>,
    /// Every iteration's first values: the set-up's captures (none before it ran).
    preset: OnceLock<Vec<Option<String>>>,
}

/// The journey driver: compiled steps and where to send them, shared by every session.
pub struct JourneyDriver {
    shared: Arc<Shared>,
}

impl JourneyDriver {
    /// Compiles `spec` (placeholders resolved, regexes built, names counted) over `corpora`,
    /// and resolves its host. An error names the step and what is wrong with it.
    pub fn new(
        spec: &JourneySpec,
        corpora: Vec<Arc<Corpus>>,
        tls: &TlsOptions,
    ) -> Result<JourneyDriver, HttpError> {
        let plan = Compiled::new(spec, &corpora).map_err(HttpError::Template)?;
        let client = Client::for_url(&spec.base, tls)?;
        Ok(JourneyDriver {
            shared: Arc::new(Shared {
                plan,
                client,
                corpora,
                preset: OnceLock::new(),
            }),
        })
    }

    /// Sends the set-up steps once, in order, and keeps their captures for every iteration.
    /// Captures that feed a credential (a secret-named value, an Authorization or Cookie
    /// header) are remembered, so no report shows them. An error says which step failed.
    pub async fn prepare(&self) -> Result<(), String> {
        let shared = &self.shared;
        let mut s = JourneySession::new(shared.clone());
        s.it.values = vec![None; shared.plan.values.len()];
        for (i, step) in shared.plan.setup.iter().enumerate() {
            let o = s.send(step, u64::MAX - i as u64).await;
            if o.class.is_error() {
                let why = o.detail.as_deref().map_or_else(
                    || format!("status {}", o.status),
                    |d| format!("{d} (status {})", o.status),
                );
                return Err(format!("set-up step '{}' failed: {why}", step.name));
            }
        }
        for (slot, value) in s.it.values.iter().enumerate() {
            if let Some(v) = value.as_deref().filter(|_| shared.plan.secret[slot]) {
                perfbase_core::redact::remember(v);
            }
        }
        let _ = shared.preset.set(s.it.values);
        Ok(())
    }

    /// The set-up's captured values by name, for a test or a dry run to show (secrets are
    /// remembered, so `redact` hides them).
    pub fn preset(&self) -> Vec<(String, Option<String>)> {
        let plan = &self.shared.plan;
        let values = self.shared.preset.get();
        plan.values
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), values.and_then(|v| v[i].clone())))
            .collect()
    }
}

impl Driver for JourneyDriver {
    type Session = JourneySession;

    async fn open(&self, _worker: usize) -> Result<JourneySession, Outcome> {
        Ok(JourneySession::new(self.shared.clone()))
    }

    fn labels(&self) -> Vec<String> {
        self.shared.plan.labels.clone()
    }

    fn label(&self, op: u64) -> u16 {
        let plan = &self.shared.plan;
        plan.journeys[plan.mix.choose(op)][0].label
    }

    fn iteration_span(&self, timeout: Duration) -> Option<Duration> {
        Some(self.shared.plan.longest(timeout))
    }

    fn groups(&self) -> Vec<String> {
        self.shared.plan.groups.clone()
    }

    fn group(&self, label: u16) -> u16 {
        self.shared
            .plan
            .group_of
            .get(label as usize)
            .copied()
            .unwrap_or(0)
    }

    fn check_names(&self) -> Vec<String> {
        self.shared.plan.checks.clone()
    }

    fn admit(&self, _op: u64) -> bool {
        self.shared.plan.feed.as_ref().is_none_or(|f| f.0.admit())
    }
}

/// The iteration a session is in.
#[derive(Default)]
struct Iteration {
    op: u64,
    live: bool,
    journey: usize,
    step: usize,
    values: Vec<Option<String>>,
    jar: Jar,
}

/// One virtual user: a connection, and the iteration it is in.
pub struct JourneySession {
    shared: Arc<Shared>,
    link: Option<Link>,
    it: Iteration,
    scratch: Vec<u8>,
}

impl JourneySession {
    fn new(shared: Arc<Shared>) -> JourneySession {
        JourneySession {
            shared,
            link: None,
            it: Iteration::default(),
            scratch: Vec::new(),
        }
    }

    /// Starts op `op`'s iteration: its journey, the set-up's values, its feeder row, an
    /// empty jar.
    fn start(&mut self, op: u64) {
        let plan = &self.shared.plan;
        let it = &mut self.it;
        it.op = op;
        it.live = true;
        it.journey = plan.mix.choose(op);
        it.step = 0;
        it.values.clear();
        match self.shared.preset.get() {
            Some(p) => it.values.extend_from_slice(p),
            None => it.values.resize(plan.values.len(), None),
        }
        if let Some((feeder, slots)) = &plan.feed {
            for (slot, v) in slots.iter().zip(feeder.row(op)) {
                it.values[*slot] = Some(v.to_string());
            }
        }
        it.jar.clear();
    }

    /// Renders `step` for this iteration, sends it, and applies its checks and captures.
    async fn send(&mut self, step: &Step, op: u64) -> Outcome {
        let shared = self.shared.clone();
        let fill = Fill {
            names: &shared.plan.values,
            values: &self.it.values,
            secret: &shared.plan.secret,
            corpora: &shared.corpora,
            op,
        };
        let out = match step.render(&fill, &shared.plan.prefix, &mut self.scratch) {
            Ok(mut out) => {
                if shared.plan.cookies {
                    if let Some(c) = self.it.jar.header(shared.client.site(), out.uri.path()) {
                        out.headers.insert(COOKIE, c);
                    }
                }
                out
            }
            Err(o) => return o,
        };
        let mut reply = match shared.client.exchange(&mut self.link, &out).await {
            Ok(r) => r,
            Err(o) => return o,
        };
        if shared.plan.cookies {
            self.it
                .jar
                .store(&reply.headers, shared.client.site(), out.uri.path());
        }
        let mut o = Outcome::http(reply.status, reply.wire.0, reply.wire.1);
        o.stream = reply.stream.take();
        let mut answer = Answer::new(reply.status, &reply.headers, &reply.body, reply.size);
        self.judge(step, &mut o, &mut answer, op);
        o
    }

    /// Applies `step`'s checks (each counted) and, when the answer succeeded, its captures.
    fn judge(&mut self, step: &Step, o: &mut Outcome, answer: &mut Answer<'_>, op: u64) {
        let shared = self.shared.clone();
        let fill = Fill {
            names: &shared.plan.values,
            values: &self.it.values,
            secret: &shared.plan.secret,
            corpora: &shared.corpora,
            op,
        };
        let mut bits = CheckBits::default();
        let mut failure = None;
        for t in &step.tests {
            if t.accepts_status(o.status) == Some(true) {
                // A status the plan's check expects is no HTTP error (a planned 404).
                o.class = Class::Ok;
            }
            match t.apply(answer, &fill) {
                Ok(()) => bits.passed |= 1 << t.bit,
                Err(why) => {
                    bits.failed |= 1 << t.bit;
                    failure.get_or_insert(why);
                }
            }
        }
        o.checks = bits;
        if o.class.is_error() {
            // An error answer has none of the values a success would carry.
            return;
        }
        // Captured even when a check failed: with on_failure = "continue" the later steps
        // still get what this answer gave.
        for take in &step.takes {
            match take.apply(answer) {
                Ok(v) => self.it.values[take.slot] = Some(v),
                Err(why) => {
                    failure.get_or_insert(why);
                    o.class = Class::Capture;
                }
            }
        }
        if bits.failed != 0 {
            // A failed check is the step's first fault, and its class.
            o.class = Class::Check;
        }
        if let Some(why) = failure {
            o.detail = Some(format!("step '{}': {why}", step.name).into_boxed_str());
        }
    }
}

impl Session for JourneySession {
    async fn execute(&mut self, op: u64) -> Outcome {
        if !self.it.live || self.it.op != op {
            self.start(op);
        }
        let shared = self.shared.clone();
        let step = &shared.plan.journeys[self.it.journey][self.it.step];
        self.send(step, op).await
    }

    fn then(&mut self, last: &mut Outcome) -> Then {
        if last.class.breaks_session() {
            // Its connection is in an unknown state (the engine may have dropped the request
            // half-way): the next step opens a new one.
            self.link = None;
        }
        let plan = &self.shared.plan;
        let steps = &plan.journeys[self.it.journey];
        let stop = last.class.is_error() && plan.on_failure == OnFailure::Stop;
        self.it.step += 1;
        if !self.it.live || stop || self.it.step >= steps.len() {
            self.it.live = false;
            return Then::Done;
        }
        let next = &steps[self.it.step];
        let think = match next.think {
            Think::None => Duration::ZERO,
            Think::Fixed(d) => d,
            Think::Uniform(a, b) => {
                let u = unit(self.it.op, self.it.step as u64 ^ 0x0074_6869_6e6b);
                a + (b.saturating_sub(a)).mul_f64(u)
            }
        };
        Then::Next {
            think,
            label: next.label,
        }
    }
}

impl Step {
    /// This step's request for the iteration's values, or the outcome of a step that
    /// cannot be sent (a value its capture did not find, a value no header can hold).
    fn render(
        &self,
        fill: &Fill<'_>,
        prefix: &str,
        scratch: &mut Vec<u8>,
    ) -> Result<Outgoing, Outcome> {
        let missing = |name: &str| {
            Outcome::error(
                Class::Capture,
                format!(
                    "step '{}': '{{{{{name}}}}}' has no value (its capture failed earlier in \
                     the iteration)",
                    self.name
                ),
            )
        };
        scratch.clear();
        scratch.extend_from_slice(prefix.as_bytes());
        self.path.render(fill, scratch).map_err(missing)?;
        let uri = hyper::Uri::try_from(scratch.as_slice()).map_err(|e| {
            Outcome::error(
                Class::ServerError,
                format!("step '{}': the path is no request target: {e}", self.name),
            )
        })?;
        let mut headers = hyper::HeaderMap::new();
        for (name, text) in &self.headers {
            scratch.clear();
            text.render(fill, scratch).map_err(missing)?;
            let value = HeaderValue::from_bytes(scratch).map_err(|_| {
                Outcome::error(
                    Class::ServerError,
                    format!(
                        "step '{}': header {name}: a value holds a line break or another \
                         control character",
                        self.name
                    ),
                )
            })?;
            headers.append(name, value);
        }
        let body = match &self.body {
            Some(b) => {
                scratch.clear();
                b.render(fill, scratch).map_err(missing)?;
                Bytes::copy_from_slice(scratch)
            }
            None => Bytes::new(),
        };
        Ok(Outgoing {
            method: self.method.clone(),
            uri,
            headers,
            body,
        })
    }
}
