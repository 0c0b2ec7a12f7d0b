//! A journey plan compiled once: every placeholder resolved to a value slot or a corpus,
//! every value used only after a step (or the set-up, or the feeder) can have given it,
//! regexes and header names built, step endpoints and check names numbered. Each error
//! names the step and the field.

use super::feed::Feeder;
use super::rules::{Take, Test};
use super::spec::{JourneySpec, OnFailure, StepSpec, Think};
use super::text::{Names, Text};
use crate::workload::{Corpus, Mix};
use hyper::header::HeaderName;
use hyper::Method;
use perfbase_core::recorder::MAX_LABELS;
use perfbase_core::MAX_CHECKS;
use std::sync::Arc;
use std::time::Duration;

/// Headers hyper writes from the request itself; a plan's own would contradict them. (And
/// `Cookie`, while the cookie jar writes it.)
const OWN_HEADERS: [&str; 4] = ["host", "content-length", "transfer-encoding", "connection"];

pub(super) struct Step {
    /// What messages call it: its name, or `METHOD path`.
    pub(super) name: String,
    /// Its endpoint (1-based); 0 for a set-up step, which no recorder sees.
    pub(super) label: u16,
    pub(super) method: Method,
    pub(super) path: Text,
    pub(super) headers: Vec<(HeaderName, Text)>,
    pub(super) body: Option<Text>,
    pub(super) tests: Vec<Test>,
    pub(super) takes: Vec<Take>,
    pub(super) think: Think,
}

pub(super) struct Compiled {
    pub(super) journeys: Vec<Vec<Step>>,
    pub(super) mix: Mix,
    pub(super) setup: Vec<Step>,
    /// The names of an iteration's value slots: set-up captures, feeder columns, captures.
    pub(super) values: Vec<String>,
    /// Per slot: a credential (a secret name, or it fills a credential header).
    pub(super) secret: Vec<bool>,
    /// The feeder and the slot of each of its columns.
    pub(super) feed: Option<(Feeder, Vec<usize>)>,
    pub(super) on_failure: OnFailure,
    pub(super) cookies: bool,
    pub(super) labels: Vec<String>,
    /// Per label (1-based, index 0 unused), its group (1-based, 0 for none).
    pub(super) group_of: Vec<u16>,
    pub(super) groups: Vec<String>,
    pub(super) checks: Vec<String>,
    /// The base URL's path, before every step's.
    pub(super) prefix: String,
}

/// Numbers names in order of first appearance, up to `max`.
fn number(names: &mut Vec<String>, name: &str, max: usize, what: &str) -> Result<usize, String> {
    if let Some(i) = names.iter().position(|n| n == name) {
        return Ok(i);
    }
    if names.len() >= max {
        return Err(format!(
            "at most {max} {what} are counted apart; '{name}' is one too many"
        ));
    }
    names.push(name.to_string());
    Ok(names.len() - 1)
}

impl Compiled {
    pub(super) fn new(spec: &JourneySpec, corpora: &[Arc<Corpus>]) -> Result<Compiled, String> {
        if spec.journeys.iter().all(|j| j.steps.is_empty()) {
            return Err("a journey needs at least one step".into());
        }
        let mut values: Vec<String> = Vec::new();
        let add = |name: &str, values: &mut Vec<String>| -> Result<usize, String> {
            if corpora.iter().any(|c| c.name == name) {
                return Err(format!(
                    "'{name}' is the name of a corpus too: give the capture or column another"
                ));
            }
            number(values, name, usize::MAX, "values")
        };
        for s in &spec.setup {
            for c in &s.captures {
                add(&c.name, &mut values)?;
            }
        }
        let from_setup = values.len();
        let mut feed_slots = Vec::new();
        if let Some(f) = &spec.feed {
            if f.rows.is_empty() {
                return Err(format!("feeder '{}' has no rows", f.name));
            }
            for c in &f.columns {
                feed_slots.push(add(c, &mut values)?);
            }
        }
        for j in &spec.journeys {
            for s in &j.steps {
                for c in &s.captures {
                    add(&c.name, &mut values)?;
                }
            }
        }
        let mut cx = Context {
            jar: spec.cookies,
            corpora,
            values: &values,
            labels: Vec::new(),
            group_of: vec![0],
            groups: Vec::new(),
            checks: Vec::new(),
            secret: values
                .iter()
                .map(|v| perfbase_core::redact::is_secret_name(v))
                .collect(),
        };
        // The set-up's steps see only what earlier set-up steps captured.
        let mut known: Vec<bool> = vec![false; values.len()];
        let setup = cx.steps(&spec.setup, ("setup", None, true), &mut known)?;
        let mut journeys = Vec::new();
        for j in &spec.journeys {
            let mut known: Vec<bool> = (0..values.len())
                .map(|i| i < from_setup || feed_slots.contains(&i))
                .collect();
            let prefix = (spec.journeys.len() > 1).then_some(j.name.as_str());
            journeys.push(cx.steps(&j.steps, (&j.name, prefix, false), &mut known)?);
        }
        let weights: Vec<u64> = spec.journeys.iter().map(|j| j.weight).collect();
        Ok(Compiled {
            journeys,
            mix: Mix::new(&weights)?,
            setup,
            secret: cx.secret,
            feed: spec.feed.as_ref().map(|f| (Feeder::new(f), feed_slots)),
            on_failure: spec.on_failure,
            cookies: spec.cookies,
            labels: cx.labels,
            group_of: cx.group_of,
            groups: cx.groups,
            checks: cx.checks,
            prefix: spec.base.path().trim_end_matches('/').to_string(),
            values,
        })
    }

    /// The longest an iteration may take when each request may take `timeout`.
    pub(super) fn longest(&self, timeout: Duration) -> Duration {
        self.journeys
            .iter()
            .map(|steps| {
                steps.iter().fold(Duration::ZERO, |sum, s| {
                    sum.saturating_add(timeout)
                        .saturating_add(s.think.longest())
                })
            })
            .max()
            .unwrap_or(timeout)
    }
}

struct Context<'a> {
    /// The cookie jar writes `Cookie`.
    jar: bool,
    corpora: &'a [Arc<Corpus>],
    values: &'a [String],
    labels: Vec<String>,
    group_of: Vec<u16>,
    groups: Vec<String>,
    checks: Vec<String>,
    secret: Vec<bool>,
}

impl Context<'_> {
    /// Compiles `steps` of journey `journey` (the set-up's when `setup`) in order; `known`
    /// says which values are set before each step, and grows with its captures. `prefix`
    /// (the journey's name) goes before the endpoint names of a mix of journeys.
    fn steps(
        &mut self,
        steps: &[StepSpec],
        (journey, prefix, setup): (&str, Option<&str>, bool),
        known: &mut [bool],
    ) -> Result<Vec<Step>, String> {
        let mut out = Vec::new();
        let mut closed: Vec<&str> = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let name = s.label();
            // A group is consecutive steps: one that starts again later would be two.
            let previous = i.checked_sub(1).and_then(|p| steps[p].group.as_deref());
            if previous.is_some() && previous != s.group.as_deref() {
                closed.extend(previous);
            }
            if let Some(g) = s.group.as_deref().filter(|g| closed.contains(g)) {
                return Err(format!(
                    "{journey} step {} ('{name}') group: the steps of group '{g}' must follow \
                     one another",
                    i + 1
                ));
            }
            let at = |field: &str, e: String| {
                format!("{journey} step {} ('{name}') {field}: {e}", i + 1)
            };
            let step = self
                .step(s, &name, setup, prefix)
                .map_err(|(f, e)| at(f, e))?;
            let used = step
                .path
                .slots()
                .chain(step.headers.iter().flat_map(|(_, t)| t.slots()))
                .chain(step.body.iter().flat_map(Text::slots));
            for slot in used {
                if !known[slot] {
                    return Err(at(
                        "",
                        format!(
                            "'{{{{{}}}}}' has no value yet: it is captured only by a later \
                             step{}",
                            self.values[slot],
                            if setup {
                                " (the set-up runs before any feeder row)"
                            } else {
                                ""
                            }
                        ),
                    ));
                }
            }
            for t in &step.takes {
                known[t.slot] = true;
            }
            out.push(step);
        }
        Ok(out)
    }

    fn step(
        &mut self,
        s: &StepSpec,
        name: &str,
        setup: bool,
        prefix: Option<&str>,
    ) -> Result<Step, (&'static str, String)> {
        let names = Names {
            values: self.values,
            corpora: self.corpora,
        };
        let method = Method::from_bytes(s.method.as_bytes())
            .map_err(|_| ("method", format!("'{}' is no HTTP method", s.method)))?;
        let path = if s.path.starts_with('/') {
            s.path.clone()
        } else {
            format!("/{}", s.path)
        };
        let path = Text::parse(&path, &names, true).map_err(|e| ("path", e))?;
        let headers = self.headers(s, &names)?;
        let body = match &s.body {
            Some(b) => Some(Text::parse(b, &names, false).map_err(|e| ("body", e))?),
            None => None,
        };
        let mut tests = Vec::new();
        for c in &s.checks {
            // The set-up's checks stop the run when they fail; only the load's are counted.
            let bit = if setup {
                0
            } else {
                number(&mut self.checks, &c.name, MAX_CHECKS, "checks").map_err(|e| ("check", e))?
            };
            tests.push(
                Test::compile(c, bit as u32, &names)
                    .map_err(|e| ("check", format!("'{}': {e}", c.name)))?,
            );
        }
        let mut takes = Vec::new();
        for c in &s.captures {
            let slot = self
                .values
                .iter()
                .position(|v| *v == c.name)
                .unwrap_or_default();
            takes.push(
                Take::compile(c, slot).map_err(|e| ("capture", format!("'{}': {e}", c.name)))?,
            );
        }
        let label = if setup {
            0
        } else {
            let shown = match prefix {
                Some(p) => format!("{p}: {name}"),
                None => name.to_string(),
            };
            self.endpoint(&shown, s.group.as_deref())?
        };
        Ok(Step {
            name: name.to_string(),
            label,
            method,
            path,
            headers,
            body,
            tests,
            takes,
            think: s.think,
        })
    }

    /// A step's headers: names checked, values parsed; the values a secret-named header
    /// carries are credentials.
    fn headers(
        &mut self,
        s: &StepSpec,
        names: &Names<'_>,
    ) -> Result<Vec<(HeaderName, Text)>, (&'static str, String)> {
        let mut headers = Vec::new();
        for (k, v) in &s.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ("headers", format!("'{k}' is no header name")))?;
            if OWN_HEADERS.contains(&name.as_str()) || (self.jar && name == hyper::header::COOKIE) {
                return Err((
                    "headers",
                    format!(
                        "{k} is written by perfbase (from the request, or the cookie jar: \
                         cookies = false to write Cookie yourself)"
                    ),
                ));
            }
            let text = Text::parse(v, names, false).map_err(|e| ("headers", e))?;
            if perfbase_core::redact::is_secret_name(k) {
                for slot in text.slots() {
                    self.secret[slot] = true;
                }
            }
            headers.push((name, text));
        }
        Ok(headers)
    }

    /// The endpoint (1-based label) named `shown`, in `group`: steps of one name share a row,
    /// so they must share a group too.
    fn endpoint(
        &mut self,
        shown: &str,
        group: Option<&str>,
    ) -> Result<u16, (&'static str, String)> {
        let label = number(&mut self.labels, shown, MAX_LABELS, "steps").map_err(|e| ("name", e))?
            as u16
            + 1;
        let group = match group {
            Some(g) => {
                number(&mut self.groups, g, MAX_LABELS, "groups").map_err(|e| ("group", e))? as u16
                    + 1
            }
            None => 0,
        };
        match self.group_of.get(label as usize) {
            Some(&known) if known != group => Err((
                "group",
                format!("another step named '{shown}' is in another group: name them apart"),
            )),
            Some(_) => Ok(label),
            None => {
                self.group_of.push(group);
                Ok(label)
            }
        }
    }
}
