//! Targets files in vegeta's HTTP format, so existing files can be reused:
//!
//! ```text
//! # a comment
//! GET http://127.0.0.1:8080/
//! X-Request-Id: 42
//!
//! POST http://127.0.0.1:8080/orders
//! Content-Type: application/json
//! @order.json
//! ```
//!
//! A target starts with `METHOD URL`, may be followed by `Name: value` header lines and one
//! `@file` body line (relative paths are taken from the targets file's folder). Blank lines
//! and `#` comments are ignored. Targets are used in turn: op n sends target n % count.

use super::Target;
use std::path::Path;
use std::sync::Arc;
use thiserror::Error;
use url::Url;

/// A targets file that cannot be used; names the file and line.
#[derive(Debug, Error)]
pub enum TargetsError {
    /// Fix the named line; the message says what was expected.
    #[error("{file}:{line}: {message}")]
    Line {
        file: String,
        line: usize,
        message: String,
    },
    /// The file could not be read; check the path and permissions.
    #[error("{file}: cannot read targets file: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The file holds no target line.
    #[error("{file}: no targets found; expected lines such as 'GET http://127.0.0.1:8080/'")]
    Empty { file: String },
}

/// A header name as errors show it: up to its first character that no header name has, so a
/// line such as `Authorization Bearer s3cret: x` never prints the secret.
fn shown_name(name: &str) -> String {
    match name.find(|c: char| !c.is_ascii() || !crate::http::is_token(&c.to_string())) {
        Some(bad) => format!("{}…", &name[..bad]),
        None => name.to_string(),
    }
}

fn is_method(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_uppercase())
}

/// Reads and parses a targets file.
pub fn read_targets(path: &Path) -> Result<Vec<Target>, TargetsError> {
    let file = path.display().to_string();
    let text =
        crate::input::read_text(path).map_err(|source| {
            match crate::input::bad_text_line(&source) {
                Some(line) => TargetsError::Line {
                    file: file.clone(),
                    line,
                    message: "not UTF-8 text".into(),
                },
                None => TargetsError::Read {
                    file: file.clone(),
                    source,
                },
            }
        })?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    parse_targets(&text, &file, base)
}

/// Parses targets from `text`; `file` names it in errors, `base` resolves `@body` paths.
pub fn parse_targets(text: &str, file: &str, base: &Path) -> Result<Vec<Target>, TargetsError> {
    let mut parsed = Parsed::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        parsed
            .line(raw.trim(), line, base)
            .map_err(|message| TargetsError::Line {
                file: file.to_string(),
                line,
                message,
            })?;
    }
    if parsed.targets.is_empty() {
        return Err(TargetsError::Empty {
            file: file.to_string(),
        });
    }
    Ok(parsed.targets)
}

/// The targets read so far. A line's error is its message alone: [`parse_targets`] adds the
/// file and the line number.
#[derive(Default)]
struct Parsed {
    targets: Vec<Target>,
    /// The first target's origin and its line: every later target must share it.
    first_origin: Option<(String, usize)>,
}

impl Parsed {
    /// Takes one trimmed line: blank, comment, `@body`, `METHOD URL` or `Name: value`, tried
    /// in that order.
    fn line(&mut self, line: &str, line_no: usize, base: &Path) -> Result<(), String> {
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        if let Some(path) = line.strip_prefix('@') {
            return self.body_line(path, base);
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if is_method(first) && line[first.len()..].starts_with([' ', '\t']) {
            return self.request_line(first, line[first.len()..].trim(), line_no);
        }
        if let Some((name, value)) = line.split_once(':') {
            return self.header_line(name.trim(), value);
        }
        Err(
            "expected 'METHOD URL', 'Name: value' or '@body-file' (the line is not shown: it \
             may hold a secret)"
                .to_string(),
        )
    }

    /// `@file`: the body of the latest target, read now from `base`/file.
    fn body_line(&mut self, path: &str, base: &Path) -> Result<(), String> {
        let target = self
            .targets
            .last_mut()
            .ok_or("a '@body' line must follow a 'METHOD URL' line")?;
        if !target.body.is_empty() {
            return Err("a target may have only one '@body' line".into());
        }
        let p = base.join(path.trim());
        let body = crate::input::read(&p)
            .map_err(|e| format!("cannot read body file '{}': {e}", p.display()))?;
        target.body = Arc::from(body);
        Ok(())
    }

    /// `METHOD URL`: a new target, on the same origin as the first one.
    fn request_line(&mut self, method: &str, rest: &str, line_no: usize) -> Result<(), String> {
        let url = target_url(method, rest)?;
        // One run has one origin (the engine resolves it once): a second one is an
        // error at its own line, not a late one about the whole file.
        let origin = super::request::origin(&url).map_err(|e| e.to_string())?;
        match &self.first_origin {
            None => self.first_origin = Some((origin, line_no)),
            Some((o, at)) if *o != origin => {
                return Err(format!(
                    "this target is on {origin}, line {at}'s on {o}: every target of one \
                     run must use the same scheme, host and port"
                ))
            }
            Some(_) => {}
        }
        self.targets.push(Target {
            method: method.to_string(),
            url,
            headers: Vec::new(),
            body: Arc::from(Vec::new()),
        });
        Ok(())
    }

    /// `Name: value`: a header of the latest target.
    fn header_line(&mut self, name: &str, value: &str) -> Result<(), String> {
        let target = self
            .targets
            .last_mut()
            .ok_or_else(|| format!("header '{}' before any 'METHOD URL' line", shown_name(name)))?;
        if !crate::http::is_token(name) {
            return Err(format!(
                "invalid header name '{}' (letters, digits and !#$%&'*+-.^_`|~ only); \
                 use 'Name: value'",
                shown_name(name)
            ));
        }
        target
            .headers
            .push((name.to_string(), value.trim().to_string()));
        Ok(())
    }
}

/// The URL of a `METHOD URL` line (`rest` is what follows the method): one word, an http://
/// or https:// URL.
fn target_url(method: &str, rest: &str) -> Result<Url, String> {
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return Err(match rest.split_whitespace().count() {
            0 => format!("expected a URL after '{method}' (e.g. 'GET http://127.0.0.1:8080/')"),
            // The words are not shown: a URL with a password or a header pasted
            // onto the line may be among them.
            n => format!(
                "expected 'METHOD URL' (e.g. 'GET http://127.0.0.1:8080/'), found {n} \
                 words after '{method}' (not shown: they may hold a secret)"
            ),
        });
    }
    let url = Url::parse(rest).map_err(|e| format!("invalid URL '{rest}': {e}"))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        s => Err(format!(
            "'{rest}': unsupported scheme '{s}'; use http:// or https://"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_targets_headers_and_bodies() {
        let dir = std::env::temp_dir().join(format!("perfbase-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("b.json"), b"{\"a\":1}").unwrap();
        let text = "# demo\nGET http://127.0.0.1:8080/\nX-Id: 1\n\nPOST http://127.0.0.1:8080/o\nContent-Type: application/json\n@b.json\n";
        let t = parse_targets(text, "t.txt", &dir).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].headers, vec![("X-Id".to_string(), "1".to_string())]);
        assert_eq!(t[1].method, "POST");
        assert_eq!(&*t[1].body, b"{\"a\":1}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases = [
            ("X-Id: 1\nGET http://127.0.0.1/\n", "t.txt:1:"),
            ("GET http://127.0.0.1/\nnonsense\n", "t.txt:2:"),
            (
                "GET http://127.0.0.1:8080/a\nGET http://127.0.0.1:8080/b\nGET https://127.0.0.1:8080/c\n",
                "t.txt:3: this target is on https://127.0.0.1:8080, line 1's on http://127.0.0.1:8080",
            ),
            (
                "GET http://127.0.0.1/\n\nGET notaurl\n",
                "t.txt:3: invalid URL",
            ),
            (
                "GET ftp://127.0.0.1/\n",
                "t.txt:1: 'ftp://127.0.0.1/': unsupported scheme 'ftp'",
            ),
            (
                "GET http://127.0.0.1/\n@missing.bin\n",
                "t.txt:2: cannot read body file",
            ),
            ("# only a comment\n", "t.txt: no targets"),
        ];
        for (text, want) in cases {
            let e = parse_targets(text, "t.txt", Path::new("/nonexistent"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want), "{e:?} should start with {want:?}");
        }
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse_targets(&text, "f", Path::new("/nonexistent"));
        }
    }
}
