//! `perfbase import har FILE.har`: a browser's recording (HTTP Archive 1.2) as one journey.
//! Static assets and other origins are dropped (and counted in the header comment); each
//! value an answer gave and a later request sent back (a token, an id, a Location) becomes a
//! capture on the step that got it and a `{{name}}` where it was reused, so a rerun carries
//! fresh values instead of the recorded, stale ones. Checks keep each recorded status.

use super::text::{inline, origin, q, Secrets};
use super::Recorded;
use perfbase_core::redact::is_secret_name;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    #[serde(default)]
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    request: Request,
    response: Response,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<Pair>,
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
struct PostData {
    text: Option<String>,
}

#[derive(Deserialize)]
struct Response {
    status: i64,
    #[serde(default)]
    headers: Vec<Pair>,
    #[serde(default)]
    content: Content,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Content {
    mime_type: Option<String>,
    text: Option<String>,
    encoding: Option<String>,
}

#[derive(Deserialize)]
struct Pair {
    name: String,
    value: String,
}

/// Headers a journey writes itself, or that only a browser's connection had.
const DROPPED_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "accept-encoding",
    "cookie",
    "keep-alive",
    "upgrade",
    "te",
];

const STATIC_EXTENSIONS: [&str; 15] = [
    ".js", ".mjs", ".css", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".woff",
    ".woff2", ".ttf", ".otf", ".map",
];

fn is_static(url: &url::Url, mime: Option<&str>) -> bool {
    let path = url.path().to_ascii_lowercase();
    let mime = mime.unwrap_or("").to_ascii_lowercase();
    STATIC_EXTENSIONS.iter().any(|e| path.ends_with(e))
        || [
            "image/",
            "font/",
            "text/css",
            "application/javascript",
            "text/javascript",
        ]
        .iter()
        .any(|m| mime.starts_with(m))
}

/// A value an answer gave: where it came from and the name it is captured as.
struct Found {
    value: String,
    step: usize,
    /// `json = "/ptr"` or the Location header.
    rule: String,
    name: String,
    /// A short value (an id) is only matched whole: a path segment, a query value, a JSON
    /// value; a long one (a token) anywhere.
    long: bool,
    used_by: Vec<usize>,
}

/// One kept request, its recorded status, and the values its answer gave.
struct Step {
    request: Recorded,
    status: u16,
    answer: Option<Value>,
    location: Option<String>,
}

/// The plan of `raw` (the HAR's text).
pub(super) fn plan(raw: &str, include_static: bool) -> Result<String, String> {
    let har: Har = serde_json::from_str(raw).map_err(|e| format!("not an HTTP Archive: {e}"))?;
    let (steps, dropped_static, foreign) = keep(har.log.entries, include_static)?;
    let mut found: Vec<Found> = Vec::new();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    let mut written = Vec::new();
    let mut secrets = Secrets::default();
    for (i, s) in steps.iter().enumerate() {
        written.push(rewrite(&s.request, &mut found, i, &mut secrets));
        collect(s, i, &mut found, &mut names);
    }
    let origin_url = origin(&steps[0].request.url);
    let mut out = format!(
        "# Imported by `perfbase import har`: {} requests to {origin_url} as one journey.\n",
        steps.len()
    );
    out.push_str(&format!(
        "# Dropped: {dropped_static} static asset(s) (--include-static keeps them), {} request(s) \
         to other origins{}.\n",
        foreign.values().sum::<usize>(),
        if foreign.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                foreign.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        }
    ));
    out.push_str(
        "# Review the captures (# review: below), then: perfbase run FILE. The scenario is \
         small on purpose.\n",
    );
    out.push_str(&secrets.comment());
    out.push_str(&format!(
        "\n[plan]\nname = \"imported journey\"\n\n[targets.api]\nurl = {}\n\n\
         [workloads.journey]\ntarget = \"api\"\n",
        q(&origin_url)
    ));
    for (i, (s, w)) in steps.iter().zip(&written).enumerate() {
        out.push_str(&step_text(i, s, w, &found));
    }
    out.push_str(
        "\n[[scenarios]]\nname = \"imported\"\nworkload = \"journey\"\nconcurrency = 1\n\
         requests = 10\n",
    );
    Ok(out)
}

type Kept = (Vec<Step>, usize, BTreeMap<String, usize>);

/// The entries of the most frequent origin, static assets dropped unless asked for.
fn keep(entries: Vec<Entry>, include_static: bool) -> Result<Kept, String> {
    let mut parsed = Vec::new();
    let mut dropped_static = 0;
    for (i, e) in entries.into_iter().enumerate() {
        let url = url::Url::parse(&e.request.url)
            .map_err(|err| format!("entry {}: '{}' is no URL: {err}", i + 1, e.request.url))?;
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        if !include_static && is_static(&url, e.response.content.mime_type.as_deref()) {
            dropped_static += 1;
            continue;
        }
        parsed.push((url, e));
    }
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for (u, _) in &parsed {
        *count.entry(origin(u)).or_default() += 1;
    }
    let main = count
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(o, _)| o.clone())
        .ok_or("no request to import (every entry was a static asset or no http request)")?;
    count.remove(&main);
    let steps = parsed
        .into_iter()
        .filter(|(u, _)| origin(u) == main)
        .map(|(url, e)| to_step(url, e))
        .collect();
    Ok((steps, dropped_static, count))
}

fn to_step(url: url::Url, e: Entry) -> Step {
    let headers = e
        .request
        .headers
        .into_iter()
        .filter(|h| !h.name.starts_with(':'))
        .filter(|h| !DROPPED_HEADERS.contains(&h.name.to_ascii_lowercase().as_str()))
        .map(|h| (h.name, h.value))
        .collect();
    let c = e.response.content;
    let answer = c
        .text
        .filter(|_| c.encoding.is_none())
        .and_then(|t| serde_json::from_str(&t).ok());
    let location = e
        .response
        .headers
        .into_iter()
        .find(|h| h.name.eq_ignore_ascii_case("location"))
        .map(|h| h.value);
    Step {
        request: Recorded {
            method: e.request.method.to_ascii_uppercase(),
            url,
            headers,
            body: e.request.post_data.and_then(|p| p.text),
        },
        status: u16::try_from(e.response.status).unwrap_or(0),
        answer,
        location,
    }
}

/// The values answer `i` gave: JSON leaves that are long strings (tokens) or ids, and the
/// Location header. A later answer's value replaces an earlier one's.
fn collect(s: &Step, i: usize, found: &mut Vec<Found>, names: &mut BTreeMap<String, usize>) {
    let mut leaves = Vec::new();
    if let Some(v) = &s.answer {
        json_leaves(v, String::new(), "", &mut leaves);
    }
    if let Some(l) = &s.location {
        leaves.push(("Location".to_string(), "location".to_string(), l.clone()));
    }
    for (rule, key, value) in leaves {
        let is_id = key == "id" || key.ends_with("id") || key.ends_with("Id");
        if value.len() < 8 && !is_id && rule != "Location" {
            continue;
        }
        found.retain(|f| f.value != value || !f.used_by.is_empty());
        let base = snake(&key);
        let n = names.entry(base.clone()).or_default();
        *n += 1;
        let name = if *n == 1 { base } else { format!("{base}_{n}") };
        found.push(Found {
            long: value.len() >= 8,
            value,
            step: i,
            rule,
            name,
            used_by: Vec::new(),
        });
    }
}

/// Every string or number leaf of `v`: (its JSON pointer, its key, its text).
fn json_leaves(v: &Value, at: String, key: &str, out: &mut Vec<(String, String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                json_leaves(x, p, k, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                json_leaves(x, format!("{at}/{i}"), key, out);
            }
        }
        Value::String(s) if !s.is_empty() => out.push((at, key.to_string(), s.clone())),
        Value::Number(n) => out.push((at, key.to_string(), n.to_string())),
        _ => {}
    }
}

fn snake(key: &str) -> String {
    let mut out = String::new();
    for (i, c) in key.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
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

/// Request `i` as the plan writes it: values earlier answers gave as `{{name}}`, secrets it
/// did not get from an answer as variables.
struct Written {
    path: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

fn rewrite(r: &Recorded, found: &mut [Found], i: usize, secrets: &mut Secrets) -> Written {
    // Longest first, so a token is replaced whole before any shorter value inside it.
    let mut order: Vec<usize> = (0..found.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(found[k].value.len()));
    let mut parts = Parts {
        path: r.url.path().to_string(),
        query: r.url.query().map(String::from),
        headers: r.headers.clone(),
        body: r.body.clone(),
    };
    for k in order {
        let f = &mut found[k];
        if parts.replace(f) {
            f.used_by.push(i);
        }
    }
    // A path no id of an answer explains, but which an earlier answer's Location named.
    if !parts.path.contains("{{") {
        if let Some(f) = found
            .iter_mut()
            .filter(|f| f.rule == "Location" && f.value == r.url.path())
            .last()
        {
            parts.path = format!("{{{{{}}}}}", f.name);
            f.used_by.push(i);
        }
    }
    let mut target = parts.path;
    if let Some(qs) = parts.query {
        let safe: Vec<String> = qs
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if is_secret_name(k) && !v.contains("{{") => {
                    format!("{k}={}", secrets.var(k))
                }
                _ => kv.to_string(),
            })
            .collect();
        target.push('?');
        target.push_str(&safe.join("&"));
    }
    Written {
        path: target,
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), secrets.header(k, v)))
            .collect(),
        body: parts.body.map(|b| secrets.body(&b).0),
    }
}

/// A request's parts while earlier answers' values are put back as placeholders.
struct Parts {
    path: String,
    query: Option<String>,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

impl Parts {
    /// Puts `{{name}}` where `f`'s value stands; whether it stood anywhere.
    fn replace(&mut self, f: &Found) -> bool {
        let token = format!("{{{{{}}}}}", f.name);
        // Each part is tried (no short-circuit): a token may be in a header and the body.
        let in_path = f.rule != "Location" && self.in_path(f, &token);
        let in_query = self.in_query(f, &token);
        let in_headers = self.in_headers(f, &token);
        let in_body = self.in_body(f, &token);
        in_path || in_query || in_headers || in_body
    }

    /// Whole path segments only: an id `7` must not rewrite `/v17/`.
    fn in_path(&mut self, f: &Found, token: &str) -> bool {
        let mut used = false;
        let segments: Vec<String> = self
            .path
            .split('/')
            .map(|s| {
                if s == f.value {
                    used = true;
                    token.to_string()
                } else {
                    s.to_string()
                }
            })
            .collect();
        self.path = segments.join("/");
        used
    }

    fn in_query(&mut self, f: &Found, token: &str) -> bool {
        let Some(qs) = &self.query else { return false };
        let mut used = false;
        let parts: Vec<String> = qs
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((key, v)) if v == f.value || (f.long && v.contains(&f.value)) => {
                    used = true;
                    format!("{key}={}", v.replace(&f.value, token))
                }
                _ => kv.to_string(),
            })
            .collect();
        self.query = Some(parts.join("&"));
        used
    }

    fn in_headers(&mut self, f: &Found, token: &str) -> bool {
        let mut used = false;
        for (_, v) in self.headers.iter_mut() {
            if *v == f.value || (f.long && v.contains(&f.value)) {
                *v = v.replace(&f.value, token);
                used = true;
            }
        }
        used
    }

    /// A JSON string value (or, for a long value, anywhere), or a JSON number value.
    fn in_body(&mut self, f: &Found, token: &str) -> bool {
        let Some(b) = &mut self.body else {
            return false;
        };
        let quoted = format!("\"{}\"", f.value);
        if b.contains(&quoted) || (f.long && b.contains(&f.value)) {
            *b = b.replace(&f.value, token);
            return true;
        }
        let number = format!(r"(:\s*){}(\s*[,}}\]])", regex::escape(&f.value));
        match regex::Regex::new(&number) {
            Ok(re) if re.is_match(b) => {
                *b = re
                    .replace_all(b, format!("${{1}}{token}${{2}}").as_str())
                    .into_owned();
                true
            }
            _ => false,
        }
    }
}

/// One `[[workloads.journey.steps]]` table, with its captures and its status check.
fn step_text(i: usize, s: &Step, w: &Written, found: &[Found]) -> String {
    let r = &s.request;
    let mut out = format!(
        "\n[[workloads.journey.steps]]\nname = {}\nmethod = {}\npath = {}\n",
        q(&format!(
            "{} {} ({})",
            r.method,
            w.path.split('?').next().unwrap_or(""),
            i + 1
        )),
        q(&r.method),
        q(&w.path)
    );
    if !w.headers.is_empty() {
        out.push_str(&format!("headers = {}\n", inline(&w.headers)));
    }
    if let Some(b) = &w.body {
        out.push_str(&format!("body = {}\n", q(b)));
    }
    let captures: Vec<&Found> = found
        .iter()
        .filter(|f| f.step == i && !f.used_by.is_empty())
        .collect();
    if !captures.is_empty() {
        let mut rules = Vec::new();
        for f in &captures {
            let used: Vec<String> = f.used_by.iter().map(|u| (u + 1).to_string()).collect();
            let (rule, from) = if f.rule == "Location" {
                (
                    "{ header = \"Location\" }".to_string(),
                    "the Location header".to_string(),
                )
            } else {
                (format!("{{ json = {} }}", q(&f.rule)), f.rule.clone())
            };
            out.push_str(&format!(
                "# review: {} is captured here from {from} and used by step(s) {}\n",
                f.name,
                used.join(", ")
            ));
            rules.push(format!("{} = {rule}", q(&f.name)));
        }
        out.push_str(&format!("capture = {{ {} }}\n", rules.join(", ")));
    }
    if (100..=599).contains(&s.status) {
        out.push_str(&format!(
            "check = {{ {} = {{ status = [{}] }} }}\n",
            q(&format!("status {}", i + 1)),
            s.status
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_static_assets() {
        assert_eq!(snake("accessToken"), "access_token");
        assert_eq!(snake("item-id"), "item_id");
        assert_eq!(snake("$"), "value");
        let u = |s: &str| url::Url::parse(s).unwrap();
        assert!(is_static(&u("http://h/a/app.JS"), None));
        assert!(is_static(&u("http://h/logo"), Some("image/png")));
        assert!(!is_static(
            &u("http://h/api/items"),
            Some("application/json")
        ));
    }

    #[test]
    fn a_har_without_requests_or_json_says_so() {
        assert!(plan("{}", false)
            .unwrap_err()
            .contains("not an HTTP Archive"));
        let only_static = r#"{"log":{"entries":[{"request":{"method":"GET","url":"http://h/a.css"},
            "response":{"status":200}}]}}"#;
        assert!(plan(only_static, false)
            .unwrap_err()
            .contains("no request to import"));
        assert!(plan(only_static, true).is_ok());
    }
}
