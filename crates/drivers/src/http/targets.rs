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
    let mut targets: Vec<Target> = Vec::new();
    let mut first_origin: Option<(String, usize)> = None;
    let err = |line: usize, message: String| TargetsError::Line {
        file: file.to_string(),
        line,
        message,
    };
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(path) = line.strip_prefix('@') {
            let target = targets.last_mut().ok_or_else(|| {
                err(
                    line_no,
                    "a '@body' line must follow a 'METHOD URL' line".into(),
                )
            })?;
            if !target.body.is_empty() {
                return Err(err(
                    line_no,
                    "a target may have only one '@body' line".into(),
                ));
            }
            let p = base.join(path.trim());
            let body = crate::input::read(&p).map_err(|e| {
                err(
                    line_no,
                    format!("cannot read body file '{}': {e}", p.display()),
                )
            })?;
            target.body = Arc::from(body);
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if is_method(first) && line[first.len()..].starts_with([' ', '\t']) {
            let rest = line[first.len()..].trim();
            if rest.is_empty() || rest.contains(char::is_whitespace) {
                return Err(err(
                    line_no,
                    match rest.split_whitespace().count() {
                        0 => format!(
                            "expected a URL after '{first}' (e.g. 'GET http://127.0.0.1:8080/')"
                        ),
                        // The words are not shown: a URL with a password or a header pasted
                        // onto the line may be among them.
                        n => format!(
                            "expected 'METHOD URL' (e.g. 'GET http://127.0.0.1:8080/'), found {n} \
                             words after '{first}' (not shown: they may hold a secret)"
                        ),
                    },
                ));
            }
            let url =
                Url::parse(rest).map_err(|e| err(line_no, format!("invalid URL '{rest}': {e}")))?;
            match url.scheme() {
                "http" | "https" => {}
                s => {
                    return Err(err(
                        line_no,
                        format!("'{rest}': unsupported scheme '{s}'; use http:// or https://"),
                    ))
                }
            }
            // One run has one origin (the engine resolves it once): a second one is an
            // error at its own line, not a late one about the whole file.
            let origin = super::request::origin(&url).map_err(|e| err(line_no, e.to_string()))?;
            match &first_origin {
                None => first_origin = Some((origin, line_no)),
                Some((o, at)) if *o != origin => {
                    return Err(err(
                        line_no,
                        format!(
                            "this target is on {origin}, line {at}'s on {o}: every target of one \
                             run must use the same scheme, host and port"
                        ),
                    ))
                }
                Some(_) => {}
            }
            targets.push(Target {
                method: first.to_string(),
                url,
                headers: Vec::new(),
                body: Arc::from(Vec::new()),
            });
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim();
            let target = targets.last_mut().ok_or_else(|| {
                err(
                    line_no,
                    format!("header '{}' before any 'METHOD URL' line", shown_name(name)),
                )
            })?;
            if !crate::http::is_token(name) {
                return Err(err(
                    line_no,
                    format!(
                        "invalid header name '{}' (letters, digits and !#$%&'*+-.^_`|~ only); \
                         use 'Name: value'",
                        shown_name(name)
                    ),
                ));
            }
            target
                .headers
                .push((name.to_string(), value.trim().to_string()));
            continue;
        }
        return Err(err(
            line_no,
            "expected 'METHOD URL', 'Name: value' or '@body-file' (the line is not shown: it \
             may hold a secret)"
                .to_string(),
        ));
    }
    if targets.is_empty() {
        return Err(TargetsError::Empty {
            file: file.to_string(),
        });
    }
    Ok(targets)
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
