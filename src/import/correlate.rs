//! Correlation: the values an answer gave (a token, an id, a new resource's `Location`) that
//! a later request of the recording sent back. Each becomes a capture on the step whose
//! answer had it, and a `{{name}}` wherever a later request reused it, so a replay sends
//! the values its own answers give instead of the recorded ones, stale by then (an expired
//! token, a deleted item). Without it a recorded journey replays into 401s and 404s.

use super::{json, Request};
use perfbase_core::percent;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// A value at least this long (a token, a UUID) is also found inside a body's text; a
/// shorter one (an id such as `7`) only as a whole value, or it would match everywhere.
const LONG: usize = 8;

/// Where a capture takes its value from.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum From {
    /// `{ json = "/pointer" }`
    Json(String),
    /// `{ header = "Location", regex = "…" }`: the regex's group is the value.
    Location(String),
}

/// A value an answer gave that later requests may have reused.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub value: String,
    pub from: From,
    /// Its capture's name before deduplication (`id`, `access_token`).
    pub name: String,
}

/// A capture the plan writes: on step `step` (0-based), used by the steps `used_by`.
#[derive(Debug)]
pub(super) struct Capture {
    pub step: usize,
    index: usize,
    pub name: String,
    pub from: From,
    pub used_by: Vec<usize>,
}

/// The values answer `answer` (and its `Location`, relative to the request's `url`) gave:
/// JSON strings of 8 or more characters without spaces (tokens, UUIDs; text with spaces is
/// prose), JSON strings and numbers whose member is an id (`id`, `userId`, `item_id`), and
/// the last path segment of the `Location` (the new resource's id).
pub(super) fn candidates(
    answer: Option<&Value>,
    location: Option<&str>,
    url: &url::Url,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    if let Some(v) = answer {
        leaves(v, String::new(), "", &mut out);
    }
    if let Some(c) = location
        .and_then(|l| url.join(l).ok())
        .and_then(|u| from_location(&u))
    {
        out.push(c);
    }
    out
}

fn leaves(v: &Value, at: String, key: &str, out: &mut Vec<Candidate>) {
    let id = key == "id" || key.ends_with("id") || key.ends_with("Id");
    let text = match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                leaves(x, p, k, out);
            }
            return;
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, format!("{at}/{i}"), key, out);
            }
            return;
        }
        Value::String(s)
            if id || (s.chars().count() >= LONG && !s.contains(char::is_whitespace)) =>
        {
            s.clone()
        }
        Value::Number(n) if id => n.to_string(),
        _ => return,
    };
    if !text.is_empty() {
        out.push(Candidate {
            value: text,
            from: From::Json(at),
            name: snake(key),
        });
    }
}

/// The `Location`'s last path segment, captured by a regex of the path before it.
fn from_location(u: &url::Url) -> Option<Candidate> {
    let path = u.path();
    let cut = path.trim_end_matches('/').rfind('/')?;
    let last = path[cut + 1..].trim_end_matches('/');
    if last.is_empty() {
        return None;
    }
    let before = path[..cut].rsplit('/').next().unwrap_or("");
    let noun = before.strip_suffix('s').unwrap_or(before);
    Some(Candidate {
        value: String::from_utf8_lossy(&percent::decode(last)).into_owned(),
        from: From::Location(format!("{}([^/?#]+)", regex::escape(&path[..=cut]))),
        name: if noun.is_empty() {
            "location".into()
        } else {
            format!("{}_id", snake(noun))
        },
    })
}

/// A capture's name from a member name: lower snake case (`accessToken` → `access_token`).
pub(super) fn snake(key: &str) -> String {
    let mut out = String::new();
    let mut lower_before = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() && lower_before {
            out.push('_');
        }
        lower_before = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        });
    }
    let out = out.trim_matches('_').to_string();
    if out.is_empty() {
        "value".into()
    } else {
        out
    }
}

/// The answers seen so far, and the captures the requests after them needed.
#[derive(Default)]
pub(super) struct Correlator {
    candidates: Vec<Vec<Candidate>>,
    /// Per value: the latest answer that gave it (its step, its index there).
    latest: HashMap<String, (usize, usize)>,
    pub captures: Vec<Capture>,
    names: BTreeSet<String>,
}

impl Correlator {
    /// Records answer `step`'s values, for the requests after it (call in step order, after
    /// [`Correlator::rewrite`] of the same step). A later answer's value wins over an earlier
    /// one's; within one answer, the first (a JSON id before the `Location`).
    pub fn answer(&mut self, step: usize, found: Vec<Candidate>) {
        debug_assert_eq!(step, self.candidates.len());
        for (k, c) in found.iter().enumerate().rev() {
            // An answer echoing a value its own request sent (reading item 7 answers id 7)
            // is no new source of it: the capture that filled the request stays.
            let echo = self.latest.get(&c.value).is_some_and(|&(s, i)| {
                self.captures
                    .iter()
                    .any(|k| k.step == s && k.index == i && k.used_by.contains(&step))
            });
            if !echo {
                self.latest.insert(c.value.clone(), (step, k));
            }
        }
        self.candidates.push(found);
    }

    /// Request `step` with each value an earlier answer gave as its `{{capture}}`: whole
    /// path segments, query values, header values (or a `Bearer` token), JSON or form values
    /// of the body, and long values anywhere in the body.
    pub fn rewrite(&mut self, step: usize, r: &mut Request) {
        let mut segments = Vec::new();
        for s in r.path.split('/') {
            let decoded = String::from_utf8_lossy(&percent::decode(s)).into_owned();
            segments.push(match self.find(&decoded) {
                Some(at) => self.placeholder(at, step),
                None => s.to_string(),
            });
        }
        r.path = segments.join("/");
        if let Some(q) = r.query.take() {
            r.query = Some(self.pairs(&q, step));
        }
        for i in 0..r.headers.len() {
            let value = r.headers[i].1.clone();
            if let Some(at) = self.find(&value) {
                r.headers[i].1 = self.placeholder(at, step);
            } else if let Some((scheme, token)) = value.split_once(' ') {
                if let Some(at) = self
                    .find(token.trim())
                    .filter(|_| scheme.eq_ignore_ascii_case("bearer"))
                {
                    r.headers[i].1 = format!("{scheme} {}", self.placeholder(at, step));
                }
            }
        }
        let form = r.form();
        if let Some(b) = r.body.take() {
            r.body = Some(self.body(&b, form, step));
        }
    }

    fn find(&self, value: &str) -> Option<(usize, usize)> {
        if value.is_empty() {
            return None;
        }
        self.latest.get(value).copied()
    }

    /// `a=1&b=2` with each value an answer gave replaced (compared decoded).
    fn pairs(&mut self, raw: &str, step: usize) -> String {
        let mut out = Vec::new();
        for kv in raw.split('&') {
            let decoded = url::form_urlencoded::parse(kv.as_bytes())
                .next()
                .map(|(_, v)| v.into_owned());
            match (kv.split_once('='), decoded.and_then(|v| self.find(&v))) {
                (Some((k, _)), Some(at)) => out.push(format!("{k}={}", self.placeholder(at, step))),
                _ => out.push(kv.to_string()),
            }
        }
        out.join("&")
    }

    fn body(&mut self, body: &str, form: bool, step: usize) -> String {
        // JSON first, whatever the content type says (`curl -d '{…}'` labels JSON a form).
        let mut text = if let Some(tokens) = json::values(body) {
            let mut edits = Vec::new();
            for t in tokens {
                if let Some(at) = self.find(&t.text) {
                    let p = self.placeholder(at, step);
                    // A number stays a number: `{"id": {{id}}}` sends `{"id": 7}`.
                    edits.push((t.range, if t.string { format!("\"{p}\"") } else { p }));
                }
            }
            json::splice(body, edits)
        } else if form {
            self.pairs(body, step)
        } else {
            body.to_string()
        };
        // Long values anywhere else (a token inside a string, plain text), longest first so
        // a value inside a longer one does not break it.
        let mut long: Vec<(&String, &(usize, usize))> = self
            .latest
            .iter()
            .filter(|(v, _)| v.len() >= LONG)
            .collect();
        long.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        let long: Vec<(String, (usize, usize))> =
            long.into_iter().map(|(v, at)| (v.clone(), *at)).collect();
        for (value, at) in long {
            if text.contains(&value) {
                let p = self.placeholder(at, step);
                text = text.replace(&value, &p);
            }
        }
        text
    }

    /// `{{name}}` of the capture of candidate `at`, made on first use; `step` uses it.
    fn placeholder(&mut self, (from, index): (usize, usize), step: usize) -> String {
        if let Some(c) = self
            .captures
            .iter_mut()
            .find(|c| c.step == from && c.index == index)
        {
            if !c.used_by.contains(&step) {
                c.used_by.push(step);
            }
            return format!("{{{{{}}}}}", c.name);
        }
        let c = &self.candidates[from][index];
        let mut name = c.name.clone();
        let mut n = 1;
        while self.names.contains(&name) {
            n += 1;
            name = format!("{}_{n}", c.name);
        }
        self.names.insert(name.clone());
        self.captures.push(Capture {
            step: from,
            index,
            name: name.clone(),
            from: c.from.clone(),
            used_by: vec![step],
        });
        format!("{{{{{name}}}}}")
    }
}

#[cfg(test)]
mod tests;
