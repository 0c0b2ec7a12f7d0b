//! The plan's text as imports write it: strings and keys quoted by the `toml` crate (never by
//! hand), and every secret turned into a `${PERFBASE_IMPORT_…}` variable that the header
//! comment lists, so no credential of a recording ever lands in a plan file (which gets
//! committed, pasted into tickets, shown on screens).

use super::{json, Request};
use perfbase_core::redact::is_written_secret;

/// `s` as a TOML string (quoted and escaped by the toml crate).
pub(super) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare where TOML allows one (letters, digits, `-`, `_`), quoted otherwise.
pub(super) fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if bare {
        k.to_string()
    } else {
        q(k)
    }
}

/// A request's fields in a workload or step table: method, path (with its query), headers
/// (one dotted key a line, readable where an inline table would run off the screen), body.
pub(super) fn fields(r: &Request) -> String {
    let mut out = format!("method = {}\npath = {}\n", q(&r.method), q(&r.target()));
    for (k, v) in &r.headers {
        out.push_str(&format!("headers.{} = {}\n", key(k), q(v)));
    }
    if let Some(b) = &r.body {
        out.push_str(&format!("body = {}\n", q(b)));
    }
    out
}

/// Whether recorded text holds what a plan would read as a placeholder (`{{name}}`) or an
/// environment variable (`${NAME}`): the plan then needs an edit, which a comment asks for.
pub(super) fn hazard(r: &Request) -> bool {
    let bad = |s: &str| s.contains("{{") || s.contains("${");
    bad(&r.target())
        || r.headers.iter().any(|(k, v)| bad(k) || bad(v))
        || r.body.as_deref().is_some_and(bad)
}

/// A variable of the plan: its name, the value it stands for (kept to tell values apart,
/// never written) and what it holds, for the header comment.
struct Var {
    name: String,
    value: String,
    what: String,
}

/// The variables a plan needs set, in the order first needed.
#[derive(Default)]
pub(super) struct Secrets {
    vars: Vec<Var>,
}

impl Secrets {
    /// `${PERFBASE_IMPORT_NAME}` in place of `value`. The same value under one name is one
    /// variable; another value under it (a second API key) gets `_2`, `_3`…
    pub(super) fn var(&mut self, name: &str, value: &str, what: &str) -> String {
        let mut upper: String = name
            .trim()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        if upper.is_empty() {
            upper = "VALUE".into();
        }
        let base = format!("PERFBASE_IMPORT_{upper}");
        let mut var = base.clone();
        let mut n = 1;
        loop {
            match self.vars.iter().find(|v| v.name == var) {
                Some(v) if v.value == value => break,
                Some(_) => {
                    n += 1;
                    var = format!("{base}_{n}");
                }
                None => {
                    self.vars.push(Var {
                        name: var.clone(),
                        value: value.to_string(),
                        what: what.to_string(),
                    });
                    break;
                }
            }
        }
        format!("${{{var}}}")
    }

    /// A header's value with its credential a variable when the header's name says it is
    /// secret; an `Authorization` keeps its scheme (`Bearer ${…}`), so the variable holds
    /// just the token. A value that is only captures stays (`Bearer {{token}}`); one with
    /// text besides a capture (`SUPERSECRET{{x}}`) is a secret as a whole.
    pub(super) fn header(&mut self, name: &str, value: &str) -> String {
        if !is_written_secret(name, value) {
            return value.to_string();
        }
        let lower = name.to_ascii_lowercase();
        if lower == "authorization" || lower == "proxy-authorization" {
            if let Some((scheme, credentials)) = value.split_once(' ') {
                let word = scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-');
                if !scheme.is_empty() && word && !credentials.trim().is_empty() {
                    let what = format!("the {name} header's {scheme} credentials");
                    let var = self.var(name, credentials.trim(), &what);
                    return format!("{scheme} {var}");
                }
            }
        }
        self.var(name, value, &format!("the {name} header"))
    }

    /// A query or a form body (`a=1&b=2`) with each secret-named parameter's value a
    /// variable; `what` says where it is ("the query parameter").
    pub(super) fn pairs(&mut self, raw: &str, what: &str) -> String {
        let parts: Vec<String> = raw
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if is_written_secret(k, v) => {
                    format!("{k}={}", self.var(k, v, &format!("{what} {k}")))
                }
                _ => kv.to_string(),
            })
            .collect();
        parts.join("&")
    }

    /// A body with each secret-named JSON member (a string) or form field a variable;
    /// `whose` says whose body it is ("step 1's"). Whether one was replaced, too. JSON is
    /// tried first whatever the content type says (`curl -d '{…}'` labels JSON a form).
    pub(super) fn body(&mut self, body: &str, form: bool, whose: &str) -> (String, bool) {
        let out = match json::values(body) {
            Some(tokens) => {
                let mut edits = Vec::new();
                for t in tokens {
                    let Some(k) = t.key.as_deref() else { continue };
                    if t.string && is_written_secret(k, &t.text) {
                        let var = self.var(k, &t.text, &format!("{whose} JSON member {k}"));
                        edits.push((t.range, format!("\"{var}\"")));
                    }
                }
                json::splice(body, edits)
            }
            None if form => self.pairs(body, &format!("{whose} form field")),
            None => body.to_string(),
        };
        let replaced = out != body;
        (out, replaced)
    }

    /// The header comment's lines for the variables to export, or nothing.
    pub(super) fn comment(&self) -> String {
        if self.vars.is_empty() {
            return String::new();
        }
        let mut out = String::from("# No secret is written here; export these before the run:\n");
        let width = self.vars.iter().map(|v| v.name.len()).max().unwrap_or(0);
        for v in &self.vars {
            out.push_str(&format!(
                "#   export {:width$}   # {}\n",
                format!("{}=…", v.name),
                perfbase_core::redact::printable(&v.what),
                width = width + 2
            ));
        }
        out
    }
}

/// `scheme://host:port` of a URL: the target every imported request goes to.
pub(super) fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_become_variables_and_the_rest_stays() {
        let mut s = Secrets::default();
        assert_eq!(
            s.header("Authorization", "Bearer abc"),
            "Bearer ${PERFBASE_IMPORT_AUTHORIZATION}"
        );
        // Another token under the same name is another variable; the same one is reused.
        assert_eq!(
            s.header("Authorization", "Bearer xyz"),
            "Bearer ${PERFBASE_IMPORT_AUTHORIZATION_2}"
        );
        assert_eq!(
            s.header("authorization", "Bearer abc"),
            "Bearer ${PERFBASE_IMPORT_AUTHORIZATION}"
        );
        assert_eq!(s.header("X-Api-Key", "k1"), "${PERFBASE_IMPORT_X_API_KEY}");
        assert_eq!(s.header("Accept", "text/html"), "text/html");
        assert_eq!(
            s.header("Authorization", "Bearer {{token}}"),
            "Bearer {{token}}"
        );
        assert_eq!(
            s.pairs("q=1&api_key=zz", "the query parameter"),
            "q=1&api_key=${PERFBASE_IMPORT_API_KEY}"
        );
        let (body, replaced) = s.body(r#"{"user":"u", "password":"pw"}"#, false, "the");
        assert!(replaced, "{body}");
        assert_eq!(
            body,
            r#"{"user":"u", "password":"${PERFBASE_IMPORT_PASSWORD}"}"#
        );
        let (form, _) = s.body("user=u&password=pw", true, "the");
        assert_eq!(form, "user=u&password=${PERFBASE_IMPORT_PASSWORD}");
        let comment = s.comment();
        assert!(
            comment.contains("export PERFBASE_IMPORT_PASSWORD=…") && !comment.contains("pw"),
            "{comment}"
        );
        assert!(comment.contains("the Authorization header's Bearer credentials"));
        let quoted = format!("x = {}", q("a\"b\n'c"));
        assert_eq!(
            toml::from_str::<toml::Table>(&quoted).unwrap()["x"].as_str(),
            Some("a\"b\n'c")
        );
        assert_eq!(
            (key("Content-Type"), key("x.y")),
            ("Content-Type".into(), "\"x.y\"".into())
        );
    }
}
