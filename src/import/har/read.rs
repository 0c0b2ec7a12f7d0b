//! A HAR as an import reads it: lenient serde structs (unknown fields ignored, optional ones
//! defaulted, so every browser's and proxy's recordings read), and the entries a replay
//! keeps — those of the main origin that are no static asset (unless asked for), no CORS
//! preflight and got an answer — with the rest counted for the header comment.

use crate::import::text::origin;
use crate::import::Request;
use perfbase_core::redact::printable;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Deserialize)]
pub(super) struct Har {
    pub log: Log,
}

#[derive(Deserialize)]
pub(super) struct Log {
    #[serde(default)]
    pub entries: Vec<Entry>,
}

#[derive(Deserialize)]
pub(super) struct Entry {
    request: HarRequest,
    #[serde(default)]
    response: HarResponse,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HarRequest {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<Pair>,
    post_data: Option<PostData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PostData {
    mime_type: Option<String>,
    text: Option<String>,
    /// A form's fields, which some tools record instead of `text`.
    #[serde(default)]
    params: Vec<Pair>,
}

#[derive(Deserialize, Default)]
struct HarResponse {
    #[serde(default)]
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
    #[serde(default)]
    value: String,
}

/// Request headers a replay must not copy: the connection's own (the client writes them),
/// `Accept-Encoding` (the answer would come compressed), and `Cookie` (each journey's cookie
/// jar sends what its answers set; a recorded cookie is a stale session).
const DROPPED_HEADERS: [&str; 12] = [
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "http2-settings",
    "accept-encoding",
    "cookie",
];

const STATIC_EXTENSIONS: [&str; 15] = [
    ".js", ".mjs", ".css", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".woff",
    ".woff2", ".ttf", ".otf", ".map",
];

const STATIC_TYPES: [&str; 5] = [
    "image/",
    "font/",
    "text/css",
    "application/javascript",
    "text/javascript",
];

fn is_static(url: &url::Url, mime: Option<&str>) -> bool {
    let path = url.path().to_ascii_lowercase();
    let mime = mime.unwrap_or("").trim().to_ascii_lowercase();
    STATIC_EXTENSIONS.iter().any(|e| path.ends_with(e))
        || STATIC_TYPES.iter().any(|m| mime.starts_with(m))
}

/// A kept entry: the request as recorded, its status, and what its answer gave.
pub(super) struct Recorded {
    pub url: url::Url,
    pub request: Request,
    pub status: u16,
    pub answer: Option<Value>,
    pub location: Option<String>,
}

/// What was left out, for the header comment.
#[derive(Default)]
pub(super) struct Dropped {
    pub assets: usize,
    /// Per other origin, how many requests.
    pub foreign: BTreeMap<String, usize>,
    pub preflights: usize,
    pub unanswered: usize,
    pub not_http: usize,
    /// Whether a recorded `Cookie` header was left out.
    pub cookies: bool,
}

/// The entries of the main origin (where most non-static requests went; on a tie the first
/// seen), without static assets unless asked for, CORS preflights or unanswered requests.
pub(super) fn keep(
    entries: Vec<Entry>,
    include_static: bool,
) -> Result<(Vec<Recorded>, Dropped), String> {
    let mut dropped = Dropped::default();
    let mut parsed = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        let url = url::Url::parse(&e.request.url).map_err(|err| {
            let shown = printable(&e.request.url).into_owned();
            format!("log.entries[{i}].request.url: '{shown}' is no URL: {err}")
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            dropped.not_http += 1;
            continue;
        }
        let asset = is_static(&url, e.response.content.mime_type.as_deref());
        parsed.push((url, asset, e));
    }
    let main = most_frequent(parsed.iter().filter(|p| include_static || !p.1))
        .or_else(|| most_frequent(parsed.iter()))
        .ok_or("no HTTP request to import: log.entries has none")?;
    let mut kept = Vec::new();
    for (url, asset, e) in parsed {
        let o = origin(&url);
        if o != main {
            *dropped.foreign.entry(o).or_default() += 1;
        } else if asset && !include_static {
            dropped.assets += 1;
        } else if !(100..=599).contains(&e.response.status) {
            dropped.unanswered += 1;
        } else if e.request.method.eq_ignore_ascii_case("OPTIONS")
            && e.request
                .headers
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case("access-control-request-method"))
        {
            dropped.preflights += 1;
        } else {
            kept.push(recorded(url, e, &mut dropped.cookies));
        }
    }
    if kept.is_empty() {
        return Err(format!(
            "no request to import from {main}: {} static asset(s) (--include-static keeps \
             them), {} without an answer, {} CORS preflight(s)",
            dropped.assets, dropped.unanswered, dropped.preflights
        ));
    }
    Ok((kept, dropped))
}

fn most_frequent<'a>(entries: impl Iterator<Item = &'a (url::Url, bool, Entry)>) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for (url, _, _) in entries {
        let o = origin(url);
        match counts.iter_mut().find(|(c, _)| *c == o) {
            Some((_, n)) => *n += 1,
            None => counts.push((o, 1)),
        }
    }
    let mut best: Option<(String, usize)> = None;
    for (o, n) in counts {
        if best.as_ref().is_none_or(|(_, m)| n > *m) {
            best = Some((o, n));
        }
    }
    best.map(|(o, _)| o)
}

fn recorded(url: url::Url, e: Entry, cookies: &mut bool) -> Recorded {
    let mut request = Request {
        method: e.request.method.to_ascii_uppercase(),
        path: url.path().to_string(),
        query: url.query().map(String::from),
        ..Request::default()
    };
    for h in e.request.headers {
        let lower = h.name.to_ascii_lowercase();
        *cookies |= lower == "cookie";
        if !h.name.starts_with(':') && !DROPPED_HEADERS.contains(&lower.as_str()) {
            request.add_header(&h.name, &h.value);
        }
    }
    if let Some(p) = e.request.post_data {
        request.body = match p.text {
            Some(t) => Some(t),
            None if !p.params.is_empty() => {
                let mut form = url::form_urlencoded::Serializer::new(String::new());
                for f in &p.params {
                    form.append_pair(&f.name, &f.value);
                }
                Some(form.finish())
            }
            None => None,
        };
        if let (Some(m), None) = (p.mime_type, request.header("content-type")) {
            if request.body.is_some() && !m.is_empty() {
                request.add_header("Content-Type", &m);
            }
        }
    }
    let c = e.response.content;
    let text = match (c.text, c.encoding.as_deref()) {
        (Some(t), Some("base64")) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(t.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        }
        (t, _) => t,
    };
    Recorded {
        request,
        status: u16::try_from(e.response.status).unwrap_or(0),
        answer: text.and_then(|t| serde_json::from_str(&t).ok()),
        location: e
            .response
            .headers
            .into_iter()
            .find(|h| h.name.eq_ignore_ascii_case("location"))
            .map(|h| h.value),
        url,
    }
}
