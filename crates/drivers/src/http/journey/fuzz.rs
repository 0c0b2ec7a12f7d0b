//! The journey code that takes text from outside, for the fuzz harnesses: a plan's template
//! (its `{{name}}` placeholders) rendered with values a server sent, and a capture (a JSON
//! pointer, or a regex over the body) applied to a body a server sent. The same code a run
//! uses, without a connection.

use super::rules::{Answer, Take};
use super::spec::{Capture, Source};
use super::text::{Fill, Names, Text};

/// Values a server could have sent, one with bytes that would end a request line.
const VALUES: [&str; 2] = ["a b\r\nX-Smuggled: 1\r\n\r\n#?%", "s3cr3t-value"];

/// Parses `template` (as a path when `target`) naming the captures `user` and `token`,
/// renders it with hostile values, and checks that a path stays one request target: no byte
/// a value brought can end it or start a header. Whether it parsed.
pub fn template(template: &str, target: bool) -> bool {
    let names = ["user".to_string(), "token".to_string()];
    let parsed = Text::parse(
        template,
        &Names {
            values: &names,
            corpora: &[],
        },
        target,
    );
    let Ok(text) = parsed else { return false };
    let values: Vec<Option<String>> = VALUES.iter().map(|v| Some(v.to_string())).collect();
    let fill = Fill {
        names: &names,
        values: &values,
        secret: &[false, true],
        corpora: &[],
        op: 7,
    };
    let mut out = Vec::new();
    assert!(text.render(&fill, &mut out).is_ok(), "every value is set");
    if target && !template.contains(['\r', '\n', ' ']) {
        assert!(
            !out.iter().any(|b| matches!(b, b'\r' | b'\n' | b' ')),
            "a value ended the request target: {:?}",
            String::from_utf8_lossy(&out)
        );
    }
    true
}

/// A capture from `body` by JSON `pointer`, or by `regex` over the whole body when `pointer`
/// is None; a body's regex capture is a part of the body. Whether it found a value.
pub fn capture(pointer: Option<&str>, regex: Option<&str>, body: &[u8]) -> bool {
    let c = Capture {
        name: "c".into(),
        from: pointer.map_or(Source::Body, |p| Source::Json(p.to_string())),
        regex: regex.map(str::to_string),
    };
    let Ok(take) = Take::compile(&c, 0) else {
        return false;
    };
    let headers = hyper::HeaderMap::new();
    let mut answer = Answer::new(200, &headers, body, body.len() as u64);
    let Ok(value) = take.apply(&mut answer) else {
        return false;
    };
    if let (None, Ok(text)) = (pointer, std::str::from_utf8(body)) {
        assert!(text.contains(&value), "captured {value:?}, not in the body");
    }
    true
}
