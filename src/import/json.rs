//! The string and number values of a JSON text, found where they stand, so that an import
//! can put a placeholder in place of one and keep the rest of a recorded body byte for byte
//! (re-serialising it with serde_json would reorder its keys and change its spacing).

use std::ops::Range;

/// One string or number value of a JSON text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    /// Where it stands in the text (a string's quotes included).
    pub range: Range<usize>,
    /// A string's decoded text, or a number as written.
    pub text: String,
    pub string: bool,
    /// The name of the object member it is; in an array, the array's member name.
    pub key: Option<String>,
}

/// An open object or array while scanning.
struct Open {
    object: bool,
    /// The member name its values are under.
    key: Option<String>,
    /// In an object: whether the next string is a member name.
    want_key: bool,
}

/// The string and number values of `text` in order, or `None` when it is not JSON.
pub(super) fn values(text: &str) -> Option<Vec<Token>> {
    // Validated first, so the scan below can trust the structure.
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    let b = text.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c @ (b'{' | b'[') => {
                let key = stack.last().and_then(|o| o.key.clone());
                let object = c == b'{';
                stack.push(Open {
                    object,
                    key,
                    want_key: object,
                });
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b',' => {
                if let Some(o) = stack.last_mut() {
                    o.want_key = o.object;
                }
                i += 1;
            }
            b'"' => {
                let end = string_end(b, i);
                let decoded: String = serde_json::from_str(&text[i..end]).unwrap_or_default();
                match stack.last_mut() {
                    Some(o) if o.want_key => {
                        o.key = Some(decoded);
                        o.want_key = false;
                    }
                    o => out.push(Token {
                        range: i..end,
                        text: decoded,
                        string: true,
                        key: o.and_then(|o| o.key.clone()),
                    }),
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let len = b[i..]
                    .iter()
                    .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(b.len() - i);
                out.push(Token {
                    range: i..i + len,
                    text: text[i..i + len].to_string(),
                    string: false,
                    key: stack.last().and_then(|o| o.key.clone()),
                });
                i += len;
            }
            _ => i += 1,
        }
    }
    Some(out)
}

/// The index just past the closing quote of the string opening at `start`.
fn string_end(b: &[u8], start: usize) -> usize {
    let mut j = start + 1;
    while j < b.len() && b[j] != b'"' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(b.len())
}

/// `text` with each range replaced by its text (ranges of [`values`]: they do not overlap).
pub(super) fn splice(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (r, with) in edits {
        out.push_str(&text[at..r.start]);
        out.push_str(&with);
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_place_their_member_name_and_their_kind() {
        let text = r#"{ "id": 7, "user": {"name": "a\"b", "tags": ["x", 2.5e3]}, "ok": true }"#;
        let v = values(text).expect("JSON");
        let seen: Vec<(&str, bool, Option<&str>)> = v
            .iter()
            .map(|t| (t.text.as_str(), t.string, t.key.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                ("7", false, Some("id")),
                ("a\"b", true, Some("name")),
                ("x", true, Some("tags")),
                ("2.5e3", false, Some("tags")),
            ]
        );
        assert_eq!(&text[v[1].range.clone()], r#""a\"b""#);
        let edited = splice(text, vec![(v[0].range.clone(), "{{id}}".into())]);
        assert!(edited.starts_with(r#"{ "id": {{id}}, "user""#), "{edited}");
        assert_eq!(values("[1, \"a\"]").unwrap().len(), 2);
        assert_eq!(values("id=7"), None);
    }
}
