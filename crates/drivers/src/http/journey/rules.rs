//! Captures and checks on a response, compiled once (regexes, header names, placeholders)
//! and applied per response. Each failure is a message that names the rule and never holds
//! more than the start of what the server sent.

use super::spec::{Capture, Check, Rule, Source};
use super::text::{Fill, Names, Text};
use hyper::header::{HeaderMap, HeaderName};
use regex::bytes::Regex;
use serde_json::Value;

/// How much of a found value a failure message shows.
const SHOWN: usize = 40;

/// A response as captures and checks see it.
pub(super) struct Answer<'a> {
    pub(super) status: u16,
    pub(super) headers: &'a HeaderMap,
    /// The body, or its first [`super::client::KEPT_BODY`] bytes.
    pub(super) body: &'a [u8],
    /// The body's whole length.
    pub(super) size: u64,
    /// The body as JSON, parsed at the first rule that needs it.
    json: Option<Result<Value, String>>,
}

impl<'a> Answer<'a> {
    pub(super) fn new(status: u16, headers: &'a HeaderMap, body: &'a [u8], size: u64) -> Self {
        Answer {
            status,
            headers,
            body,
            size,
            json: None,
        }
    }

    fn json(&mut self) -> Result<&Value, String> {
        let parsed = self.json.get_or_insert_with(|| {
            serde_json::from_slice(self.body).map_err(|e| format!("the body is no JSON ({e})"))
        });
        parsed.as_ref().map_err(Clone::clone)
    }

    fn pointer(&mut self, pointer: &str) -> Result<Option<&Value>, String> {
        Ok(self.json()?.pointer(pointer))
    }
}

/// A value's text: a JSON string's content, or any other value's JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The start of `s`, for a message: the secrets perfbase sent hidden first, then cut (cut
/// first, a secret's first characters would show).
fn shown(s: &str) -> String {
    let s = perfbase_core::redact::known(s);
    match s.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.into_owned(),
    }
}

fn compile_regex(regex: &str) -> Result<Regex, String> {
    Regex::new(regex).map_err(|e| format!("the regex does not compile: {e}"))
}

fn header_name(name: &str) -> Result<HeaderName, String> {
    HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("'{name}' is no header name"))
}

/// A capture, compiled: it fills value slot `slot`.
pub(super) struct Take {
    pub(super) slot: usize,
    name: String,
    from: Found,
    regex: Option<Regex>,
}

enum Found {
    Json(String),
    Header(HeaderName),
    Body,
    Status,
}

impl Take {
    pub(super) fn compile(c: &Capture, slot: usize) -> Result<Take, String> {
        let from = match &c.from {
            Source::Json(p) => Found::Json(p.clone()),
            Source::Header(h) => Found::Header(header_name(h)?),
            Source::Body if c.regex.is_none() => {
                return Err("a capture from the body needs a regex".into())
            }
            Source::Body => Found::Body,
            Source::Status => Found::Status,
        };
        Ok(Take {
            slot,
            name: c.name.clone(),
            from,
            regex: c.regex.as_deref().map(compile_regex).transpose()?,
        })
    }

    /// The value found, or why there is none.
    pub(super) fn apply(&self, answer: &mut Answer<'_>) -> Result<String, String> {
        let found = match &self.from {
            Found::Json(p) => match answer.pointer(p) {
                Ok(Some(v)) => text_of(v),
                Ok(None) => return Err(self.failed(&format!("JSON pointer {p} found nothing"))),
                Err(e) => return Err(self.failed(&format!("JSON pointer {p}: {e}"))),
            },
            Found::Header(h) => match answer.headers.get(h) {
                Some(v) => String::from_utf8_lossy(v.as_bytes()).into_owned(),
                None => return Err(self.failed(&format!("no header {h}"))),
            },
            Found::Body => String::from_utf8_lossy(answer.body).into_owned(),
            Found::Status => answer.status.to_string(),
        };
        let Some(re) = &self.regex else {
            return Ok(found);
        };
        let Some(m) = re.captures(found.as_bytes()) else {
            return Err(self.failed(&format!("regex {} matched nothing", re.as_str())));
        };
        let whole = m.get(0).map(|g| g.as_bytes()).unwrap_or_default();
        let value = m.get(1).map_or(whole, |g| g.as_bytes());
        Ok(String::from_utf8_lossy(value).into_owned())
    }

    fn failed(&self, why: &str) -> String {
        format!("capture '{}': {why}", self.name)
    }
}

/// A check, compiled: it counts on bit `bit` of the driver's checks.
pub(super) struct Test {
    pub(super) bit: u32,
    name: String,
    rule: Compiled,
}

enum Compiled {
    Status(Vec<u16>),
    BodyContains(Vec<u8>),
    JsonEquals { pointer: String, value: Text },
    JsonExists(String),
    HeaderMatches { name: HeaderName, regex: Regex },
    MaxSize(u64),
}

impl Test {
    pub(super) fn compile(c: &Check, bit: u32, names: &Names<'_>) -> Result<Test, String> {
        let rule = match &c.rule {
            Rule::Status(s) => Compiled::Status(s.clone()),
            Rule::BodyContains(t) => Compiled::BodyContains(t.as_bytes().to_vec()),
            Rule::JsonEquals { pointer, value } => Compiled::JsonEquals {
                pointer: pointer.clone(),
                value: Text::parse(value, names, false)?,
            },
            Rule::JsonExists(p) => Compiled::JsonExists(p.clone()),
            Rule::HeaderMatches { name, regex } => Compiled::HeaderMatches {
                name: header_name(name)?,
                regex: compile_regex(regex)?,
            },
            Rule::MaxSize(n) => Compiled::MaxSize(*n),
        };
        Ok(Test {
            bit,
            name: c.name.clone(),
            rule,
        })
    }

    /// Whether the rule accepts this status (a status check listing a 4xx makes it expected).
    pub(super) fn accepts_status(&self, status: u16) -> Option<bool> {
        match &self.rule {
            Compiled::Status(s) => Some(s.contains(&status)),
            _ => None,
        }
    }

    /// Passes, or says why not.
    pub(super) fn apply(&self, answer: &mut Answer<'_>, fill: &Fill<'_>) -> Result<(), String> {
        let why = match &self.rule {
            Compiled::Status(s) if s.contains(&answer.status) => return Ok(()),
            Compiled::Status(s) => format!("status {} is not one of {s:?}", answer.status),
            Compiled::BodyContains(t) if contains(answer.body, t) => return Ok(()),
            Compiled::BodyContains(t) => {
                format!(
                    "the body does not hold '{}'",
                    shown(&String::from_utf8_lossy(t))
                )
            }
            Compiled::JsonEquals { pointer, value } => {
                let mut want = Vec::new();
                if let Err(name) = value.render(fill, &mut want) {
                    return Err(format!(
                        "check '{}': '{{{{{name}}}}}' has no value (its capture failed)",
                        self.name
                    ));
                }
                let want = String::from_utf8_lossy(&want);
                // A token or password found there, or a value the plan holds as a credential
                // (captured in set-up or in this iteration), is never shown, expected or not.
                let secret = perfbase_core::redact::is_secret_name(
                    pointer.rsplit('/').next().unwrap_or_default(),
                ) || value
                    .slots()
                    .any(|i| fill.secret.get(i).copied().unwrap_or(false));
                match answer.pointer(pointer) {
                    Ok(Some(v)) if text_of(v) == want => return Ok(()),
                    Ok(Some(_)) if secret => format!("{pointer} is not the expected value"),
                    Ok(Some(v)) => format!(
                        "{pointer} is '{}', not '{}'",
                        shown(&text_of(v)),
                        shown(&want)
                    ),
                    Ok(None) => format!("JSON pointer {pointer} found nothing"),
                    Err(e) => format!("JSON pointer {pointer}: {e}"),
                }
            }
            Compiled::JsonExists(p) => match answer.pointer(p) {
                Ok(Some(_)) => return Ok(()),
                Ok(None) => format!("JSON pointer {p} found nothing"),
                Err(e) => format!("JSON pointer {p}: {e}"),
            },
            Compiled::HeaderMatches { name, regex } => match answer.headers.get(name) {
                Some(v) if regex.is_match(v.as_bytes()) => return Ok(()),
                Some(_) => format!("header {name} does not match {}", regex.as_str()),
                None => format!("no header {name}"),
            },
            Compiled::MaxSize(n) if answer.size <= *n => return Ok(()),
            Compiled::MaxSize(n) => format!("the body is {} bytes, over {n}", answer.size),
        };
        Err(format!("check '{}': {why}", self.name))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer<'a>(headers: &'a HeaderMap, body: &'a [u8]) -> Answer<'a> {
        Answer::new(201, headers, body, body.len() as u64)
    }

    #[test]
    fn captures_find_json_headers_regex_groups_and_status() {
        let mut headers = HeaderMap::new();
        headers.insert("location", "/items/42".parse().expect("value"));
        let body = br#"{"access_token":"abc","n":7}"#;
        let take = |from, regex: Option<&str>| {
            let c = Capture {
                name: "x".into(),
                from,
                regex: regex.map(String::from),
            };
            Take::compile(&c, 0)
                .expect("compiles")
                .apply(&mut answer(&headers, body))
        };
        assert_eq!(
            take(Source::Json("/access_token".into()), None),
            Ok("abc".into())
        );
        assert_eq!(take(Source::Json("/n".into()), None), Ok("7".into()));
        assert_eq!(
            take(Source::Header("Location".into()), Some(r"/items/(\d+)")),
            Ok("42".into())
        );
        assert_eq!(take(Source::Status, None), Ok("201".into()));
        assert_eq!(
            take(Source::Json("/acces_token".into()), None),
            Err("capture 'x': JSON pointer /acces_token found nothing".into())
        );
        assert_eq!(
            take(Source::Body, Some("zzz")),
            Err("capture 'x': regex zzz matched nothing".into())
        );
    }

    /// Check `rule` (named `c`) on an answer with `body`, the iteration's `id` being 5.
    fn judge(rule: Rule, body: &[u8]) -> Result<(), String> {
        let ids = ["id".to_string()];
        let names = Names {
            values: &ids,
            corpora: &[],
        };
        let values = [Some("5".to_string())];
        let fill = Fill {
            names: &ids,
            values: &values,
            secret: &[false],
            corpora: &[],
            op: 0,
        };
        let check = Check {
            name: "c".into(),
            rule,
        };
        let headers = HeaderMap::new();
        Test::compile(&check, 0, &names)
            .expect("compiles")
            .apply(&mut answer(&headers, body), &fill)
    }

    #[test]
    fn checks_pass_or_say_which_rule_failed() {
        let run = |rule| judge(rule, br#"{"id":5}"#);
        assert_eq!(run(Rule::Status(vec![200, 201])), Ok(()));
        assert_eq!(
            run(Rule::Status(vec![200])),
            Err("check 'c': status 201 is not one of [200]".into())
        );
        let equals = |value: &str| Rule::JsonEquals {
            pointer: "/id".into(),
            value: value.into(),
        };
        assert_eq!(run(equals("{{id}}")), Ok(()));
        assert_eq!(
            run(equals("6")),
            Err("check 'c': /id is '5', not '6'".into())
        );
        assert_eq!(run(Rule::BodyContains("\"id\"".into())), Ok(()));
        assert_eq!(
            run(Rule::JsonExists("/name".into())).map_err(|e| e.contains("found nothing")),
            Err(true)
        );
        assert_eq!(run(Rule::MaxSize(8)), Ok(()));
        assert!(run(Rule::MaxSize(7)).is_err());
    }

    #[test]
    fn a_check_never_shows_a_secret_fields_value_nor_parses_what_is_no_json() {
        let token = Rule::JsonEquals {
            pointer: "/access_token".into(),
            value: "x".into(),
        };
        assert_eq!(
            judge(token, br#"{"access_token":"tok-secret"}"#),
            Err("check 'c': /access_token is not the expected value".into())
        );
        let no_json = judge(Rule::JsonExists("/a".into()), b"<html>").expect_err("not JSON");
        assert!(no_json.contains("the body is no JSON"), "{no_json}");
    }
}
