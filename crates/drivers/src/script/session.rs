//! One virtual user: its iteration's promise, what its code asked for, its connections and
//! its cookie jar. Each of its steps is what the engine times: `execute` runs the code up to
//! its first request (a step that sends nothing), then sends each request the code made;
//! `then` hands the response to the code, runs it to its next request or its end, and says
//! which, with the think time its `sleep`s added up to.

use super::host::{Request, Slot};
use super::natives::BATCH_PER_HOST;
use super::vm::{outcome_of, Vm};
use crate::http::journey::client::{Client, Link, Reply};
use crate::http::journey::cookies::Jar;
use hyper::header::COOKIE;
use perfbase_core::{Class, Outcome, Session, Then};
use rquickjs::{CatchResultExt, Ctx, Function, Persistent, Promise, Value};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the user's iteration is.
enum State {
    /// Between iterations.
    Idle,
    /// Its code waits for a request (in the slot, or in flight).
    Running(Persistent<Promise<'static>>),
    /// Its code is done: how it ended, and whether that was reported yet.
    Ended {
        failure: Option<String>,
        reported: bool,
    },
}

/// What is in flight: where its answer goes.
struct Sent {
    settle: (Persistent<Function<'static>>, Persistent<Function<'static>>),
    parts: Vec<Part>,
    /// An `http.batch`: the promise takes an array of responses.
    batch: bool,
}

/// One request in flight, and what came back.
struct Part {
    url: String,
    answer: Option<Reply>,
    /// Why it has no answer (a batch's part that failed; one request's failure is the step's).
    error: Option<String>,
    took: Duration,
}

/// One virtual user of a script.
pub struct ScriptSession {
    // JavaScript values first: they go before the runtime (`vm`, last) they live in.
    state: State,
    sent: Option<Sent>,
    slot: Slot,
    links: Vec<(Arc<Client>, Option<Link>)>,
    jar: Jar,
    vu: u64,
    /// The running iteration's number (`__ITER`, from 0); before the first, u64::MAX.
    iteration: u64,
    /// The function an iteration calls, when not the runtime's (set-up and tear-down).
    function: Option<Persistent<Function<'static>>>,
    /// Set-up's and tear-down's result, as JSON.
    result: Option<String>,
    /// What a job of this user's code threw that no promise took (an interrupt).
    thrown: Option<String>,
    vm: Rc<Vm>,
}

impl ScriptSession {
    pub(crate) fn new(vm: Rc<Vm>, vu: u64) -> ScriptSession {
        ScriptSession {
            state: State::Idle,
            sent: None,
            slot: Slot::default(),
            links: Vec::new(),
            jar: Jar::default(),
            vu,
            iteration: u64::MAX,
            function: None,
            result: None,
            thrown: None,
            vm,
        }
    }

    /// Runs `f` as this user: its slot is the thread's while its code runs.
    fn as_user<R>(&mut self, f: impl FnOnce(&Ctx<'_>) -> R) -> R {
        std::mem::swap(&mut *self.vm.host.slot.borrow_mut(), &mut self.slot);
        self.vm.host.user.set((self.vu, self.iteration));
        let (r, thrown) = self.vm.run(f);
        std::mem::swap(&mut *self.vm.host.slot.borrow_mut(), &mut self.slot);
        if thrown.is_some() {
            self.thrown = thrown;
        }
        r
    }

    /// Starts an iteration: calls the function with the set-up's data, runs it to its first
    /// request or its end.
    fn start(&mut self) {
        self.jar.clear();
        self.slot = Slot::default();
        // Numbered before its code runs: every part of it, before and after each await,
        // reads the same __ITER.
        self.iteration = self.iteration.wrapping_add(1);
        let function = self.function.clone().or_else(|| self.vm.function.clone());
        let data = self.vm.data.clone();
        let started = self.as_user(|ctx| -> Result<Persistent<Promise<'static>>, String> {
            let f = function
                .ok_or("the script has no function to run")?
                .restore(ctx)
                .map_err(|e| e.to_string())?;
            let data = data.restore(ctx).map_err(|e| e.to_string())?;
            let value: Value = f
                .call((data,))
                .catch(ctx)
                .map_err(|e| super::vm::describe(&e, None))?;
            let promise = match value.as_promise() {
                Some(p) => p.clone(),
                None => {
                    // A function that is not async: its value, as if it were.
                    let (p, resolve, _) = ctx.promise().map_err(|e| e.to_string())?;
                    resolve.call::<_, ()>((value,)).map_err(|e| e.to_string())?;
                    p
                }
            };
            Ok(Persistent::save(ctx, promise))
        });
        self.state = match started {
            Ok(p) => State::Running(p),
            Err(failure) => State::Ended {
                failure: Some(failure),
                reported: false,
            },
        };
        self.settle();
    }

    /// After the code ran: still waiting for its request, or ended (and how).
    fn settle(&mut self) {
        if self.slot.pending.is_some() {
            return;
        }
        let State::Running(p) = &self.state else {
            return;
        };
        let p = p.clone();
        let keep = self.function.is_some();
        let thrown = self.thrown.take();
        let mut result = None;
        let ended = self.vm.ctx.with(|ctx| match p.restore(&ctx) {
            Ok(p) => {
                if keep {
                    result = p
                        .result::<Value>()
                        .and_then(Result::ok)
                        .and_then(|v| ctx.json_stringify(v).ok().flatten())
                        .and_then(|s| s.to_string().ok());
                }
                outcome_of(&p).unwrap_or_else(|| {
                    thrown.or(Some(
                        "the iteration waits for something that is not a request (only \
                         requests and sleep move a script on): is a promise never settled?"
                            .into(),
                    ))
                })
            }
            Err(e) => Some(e.to_string()),
        });
        self.result = result;
        self.state = State::Ended {
            failure: ended,
            reported: false,
        };
    }

    /// Sends what the code asked for: one request on this user's connection to its origin,
    /// or a batch's together.
    async fn send(&mut self) -> Outcome {
        let Some(p) = self.slot.pending.take() else {
            return Outcome::nothing(None);
        };
        let parts = p.requests.iter().map(|r| Part {
            url: r.url.clone(),
            answer: None,
            error: None,
            took: Duration::ZERO,
        });
        self.sent = Some(Sent {
            settle: p.settle,
            parts: parts.collect(),
            batch: p.batch,
        });
        let mut requests = p.requests;
        for r in &mut requests {
            if let Some(c) = self.jar.header(r.client.site(), &r.path) {
                r.out.headers.insert(COOKIE, c);
            }
        }
        if p.batch {
            return self.send_batch(requests).await;
        }
        let r = requests.pop().expect("one request");
        let i = self.lane(&r.client, 0);
        let t0 = Instant::now();
        let result = r.client.exchange(&mut self.links[i].1, &r.out).await;
        let took = t0.elapsed();
        let (o, _) = self.answer(0, &r, result, took);
        o
    }

    /// The `nth` (from 0) of this user's connections to `client`'s origin, added if missing.
    fn lane(&mut self, client: &Arc<Client>, nth: usize) -> usize {
        let mut seen = 0;
        for (i, (c, _)) in self.links.iter().enumerate() {
            if Arc::ptr_eq(c, client) {
                if seen == nth {
                    return i;
                }
                seen += 1;
            }
        }
        self.links.push((client.clone(), None));
        self.links.len() - 1
    }

    /// Keeps part `i`'s answer for the code; the outcome the engine records for it.
    fn answer(
        &mut self,
        i: usize,
        r: &Request,
        result: Result<Reply, Outcome>,
        took: Duration,
    ) -> (Outcome, bool) {
        let part = &mut self.sent.as_mut().expect("set by send").parts[i];
        part.took = took;
        match result {
            Ok(mut reply) => {
                self.jar.store(&reply.headers, r.client.site(), &r.path);
                let mut o = Outcome::http(reply.status, reply.wire.0, reply.wire.1);
                o.stream = reply.stream.take();
                part.answer = Some(reply);
                (o.with_label(r.label), true)
            }
            Err(o) => {
                part.error = Some(o.detail.as_deref().unwrap_or(o.class.name()).to_string());
                (o.with_label(r.label), false)
            }
        }
    }

    /// Sends a batch's requests together, at most [`BATCH_PER_HOST`] at a time to one
    /// origin, each on a connection of this user's; one step whose parts are the requests.
    async fn send_batch(&mut self, requests: Vec<Request>) -> Outcome {
        // Each request's lane: the connections to its origin in turn.
        let mut lanes: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut per_origin: Vec<(Arc<Client>, usize)> = Vec::new();
        for (k, r) in requests.iter().enumerate() {
            let n = match per_origin
                .iter_mut()
                .find(|(c, _)| Arc::ptr_eq(c, &r.client))
            {
                Some((_, n)) => n,
                None => {
                    per_origin.push((r.client.clone(), 0));
                    &mut per_origin.last_mut().expect("pushed").1
                }
            };
            let link = self.lane(&r.client, *n % BATCH_PER_HOST);
            *n += 1;
            match lanes.iter_mut().find(|(l, _)| *l == link) {
                Some((_, parts)) => parts.push(k),
                None => lanes.push((link, vec![k])),
            }
        }
        let requests = &requests;
        let runs = lanes.into_iter().map(|(link, parts)| {
            let mut conn = self.links[link].1.take();
            async move {
                let mut answers = Vec::with_capacity(parts.len());
                for k in parts {
                    let r = &requests[k];
                    let t0 = Instant::now();
                    let result = r.client.exchange(&mut conn, &r.out).await;
                    answers.push((k, result, t0.elapsed(), Instant::now()));
                }
                (link, conn, answers)
            }
        });
        let done = futures_util::future::join_all(runs).await;
        let mut parts = Vec::with_capacity(requests.len());
        for (link, conn, answers) in done {
            self.links[link].1 = conn;
            for (k, result, took, end) in answers {
                let (o, _) = self.answer(k, &requests[k], result, took);
                parts.push((k, o, end));
            }
        }
        parts.sort_by_key(|(k, _, _)| *k);
        let mut step = Outcome::nothing(None);
        step.parts = Some(Box::new(
            parts.into_iter().map(|(_, o, e)| (o, e)).collect(),
        ));
        step
    }

    /// Gives the code the response to its request (or what went wrong with it) and runs it
    /// on; the checks it made on the way are added to `last`.
    fn answered(&mut self, last: &mut Outcome) {
        let Some(sent) = self.sent.take() else {
            return;
        };
        if last.class.breaks_session() {
            // The connection is in an unknown state (the engine may have dropped the request
            // half-way): the next request opens a new one.
            for (_, link) in &mut self.links {
                *link = None;
            }
        }
        let make = self.vm.make_response.clone();
        // What failed the step (a timeout the engine imposed included) is the error of each
        // request that has no answer and no error of its own.
        let step_error = last.class.is_error().then(|| {
            last.detail
                .as_deref()
                .unwrap_or(last.class.name())
                .to_string()
        });
        let failed = self.as_user(|ctx| {
            let mut responses = Vec::with_capacity(sent.parts.len());
            for part in &sent.parts {
                let error = match (&part.answer, &part.error) {
                    (Some(_), _) => None,
                    (None, Some(e)) => Some(e.as_str()),
                    (None, None) => step_error.as_deref(),
                };
                responses.push(response(ctx, &make, part, error)?);
            }
            let value = if sent.batch {
                let list = rquickjs::Array::new(ctx.clone()).map_err(|e| e.to_string())?;
                for (i, r) in responses.into_iter().enumerate() {
                    list.set(i, r).map_err(|e| e.to_string())?;
                }
                list.into_value()
            } else {
                responses.pop().ok_or("no response")?
            };
            let resolve = sent
                .settle
                .0
                .clone()
                .restore(ctx)
                .map_err(|e| e.to_string())?;
            resolve
                .call::<_, ()>((value,))
                .catch(ctx)
                .map_err(|e| super::vm::describe(&e, None))
        });
        if let Err(why) = failed {
            self.state = State::Ended {
                failure: Some(why),
                reported: false,
            };
        }
        self.settle();
    }

    /// What follows: the next request, the end (after its last think time), or done.
    fn next(&mut self) -> Then {
        let think = std::mem::take(&mut self.slot.think);
        match &self.state {
            State::Running(_) => match &self.slot.pending {
                Some(p) => Then::Next {
                    think,
                    label: p.requests.first().map_or(0, |r| r.label),
                },
                None => Then::Done,
            },
            State::Ended {
                failure,
                reported: false,
            } if failure.is_some() || !think.is_zero() => Then::Next { think, label: 0 },
            _ => {
                self.state = State::Idle;
                Then::Done
            }
        }
    }

    /// Runs `function` to its end as one iteration, unmeasured (set-up, tear-down): its
    /// result as JSON, or why it failed.
    pub(crate) async fn complete(
        &mut self,
        function: Persistent<Function<'static>>,
    ) -> Result<Option<String>, String> {
        self.function = Some(function);
        let mut outcome = self.execute(0).await;
        loop {
            let then = self.then(&mut outcome);
            if let (true, Some(why)) = (outcome.is_nothing(), outcome.detail.as_deref()) {
                return Err(why.to_string());
            }
            match then {
                Then::Done => break,
                Then::Next { think, .. } => {
                    tokio::time::sleep(think).await;
                    outcome = self.execute(0).await;
                }
            }
        }
        Ok(self.result.take())
    }
}

/// The response object the code gets: status, headers, body, url, error, timings.
fn response<'js>(
    ctx: &Ctx<'js>,
    make: &Persistent<Function<'static>>,
    sent: &Part,
    error: Option<&str>,
) -> Result<Value<'js>, String> {
    let make = make.clone().restore(ctx).map_err(|e| e.to_string())?;
    // The headers as one `Name: value` line each: the object is made only when the code
    // reads `headers` (most read the status and the body).
    let (status, head, body) = match &sent.answer {
        Some(r) => {
            let mut head = String::new();
            for (name, value) in &r.headers {
                head.push_str(&canonical(name.as_str()));
                head.push_str(": ");
                head.push_str(&String::from_utf8_lossy(value.as_bytes()));
                head.push('\n');
            }
            (
                r.status,
                head,
                String::from_utf8_lossy(&r.body).into_owned(),
            )
        }
        None => (0, String::new(), String::new()),
    };
    let ms = sent.took.as_secs_f64() * 1000.0;
    make.call((
        status,
        head,
        body,
        sent.url.as_str(),
        error.unwrap_or(""),
        ms,
    ))
    .catch(ctx)
    .map_err(|e| super::vm::describe(&e, None))
}

/// `content-type` as `Content-Type`, the spelling scripts written for k6 read.
fn canonical(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        out.push(if upper { c.to_ascii_uppercase() } else { c });
        upper = c == '-';
    }
    out
}

impl Session for ScriptSession {
    async fn execute(&mut self, _op: u64) -> Outcome {
        match &mut self.state {
            State::Idle => {
                self.start();
                Outcome::nothing(None)
            }
            State::Running(_) => self.send().await,
            State::Ended { failure, reported } => {
                *reported = true;
                Outcome::nothing(failure.take().map(|w| (Class::Script, w)))
            }
        }
    }

    fn then(&mut self, last: &mut Outcome) -> Then {
        if !last.is_nothing() || self.sent.is_some() {
            self.answered(last);
        }
        let checks = std::mem::take(&mut self.slot.checks);
        last.checks.passed |= checks.passed;
        last.checks.failed |= checks.failed;
        if !self.slot.samples.is_empty() {
            let samples = std::mem::take(&mut self.slot.samples);
            match last.samples.as_mut() {
                Some(s) => s.0.extend(samples),
                None => last.samples = Some(Box::new(perfbase_core::metric::Samples(samples))),
            }
        }
        self.next()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_names_read_as_k6_spells_them() {
        assert_eq!(super::canonical("content-type"), "Content-Type");
        assert_eq!(super::canonical("x-request-id"), "X-Request-Id");
    }
}
