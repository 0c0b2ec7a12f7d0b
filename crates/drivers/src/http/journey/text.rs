//! A journey's text with `{{name}}` placeholders: each names a value of the iteration (a
//! capture, a feeder column, a set-up capture) or a corpus, resolved once when the driver is
//! built, so an unknown name is an error before any load.

use crate::workload::Corpus;
use perfbase_core::percent;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Piece {
    Literal(Vec<u8>),
    /// The iteration's value in this slot.
    Value(usize),
    /// The corpus's pick for the op.
    Corpus(usize),
}

/// Text parsed once, rendered per request.
#[derive(Debug, Clone)]
pub(super) struct Text {
    pieces: Vec<Piece>,
    /// Percent-encode what could not stand in a request target (paths).
    target: bool,
}

/// The names placeholders may use: the iteration's value slots, then the corpora.
pub(super) struct Names<'a> {
    pub(super) values: &'a [String],
    pub(super) corpora: &'a [Arc<Corpus>],
}

impl Names<'_> {
    fn resolve(&self, name: &str) -> Result<Piece, String> {
        if let Some(i) = self.values.iter().position(|v| v == name) {
            return Ok(Piece::Value(i));
        }
        if let Some(i) = self.corpora.iter().position(|c| c.name == name) {
            return Ok(Piece::Corpus(i));
        }
        let mut known: Vec<&str> = self.values.iter().map(String::as_str).collect();
        known.extend(self.corpora.iter().map(|c| c.name.as_str()));
        Err(format!(
            "'{{{{{name}}}}}' names no capture, feeder column or corpus (known: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ))
    }
}

/// What renders a text: the iteration's values and the op for corpus picks.
pub(super) struct Fill<'a> {
    /// The slots' names, for messages.
    pub(super) names: &'a [String],
    pub(super) values: &'a [Option<String>],
    /// Which slots hold a credential (the plan's secret flags): never shown in a message.
    pub(super) secret: &'a [bool],
    pub(super) corpora: &'a [Arc<Corpus>],
    pub(super) op: u64,
}

impl Text {
    /// Parses `text`; `target` encodes it as a request target (a path).
    pub(super) fn parse(text: &str, names: &Names<'_>, target: bool) -> Result<Text, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        let literal = |s: &str, pieces: &mut Vec<Piece>| {
            if s.is_empty() {
                return;
            }
            let mut b = Vec::new();
            if target {
                percent::encode_target(s.as_bytes(), &mut b);
            } else {
                b.extend_from_slice(s.as_bytes());
            }
            pieces.push(Piece::Literal(b));
        };
        while let Some(i) = rest.find("{{") {
            let Some(end) = rest[i + 2..].find("}}") else {
                break;
            };
            literal(&rest[..i], &mut pieces);
            pieces.push(names.resolve(rest[i + 2..i + 2 + end].trim())?);
            rest = &rest[i + 2 + end + 2..];
        }
        literal(rest, &mut pieces);
        Ok(Text { pieces, target })
    }

    /// The value slots this text reads.
    pub(super) fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Value(i) => Some(*i),
            _ => None,
        })
    }

    /// Appends the text to `out`; `Err(name)` names a value the iteration does not have (its
    /// capture failed).
    pub(super) fn render<'f>(&self, fill: &Fill<'f>, out: &mut Vec<u8>) -> Result<(), &'f str> {
        for p in &self.pieces {
            let start = out.len();
            match p {
                Piece::Literal(b) => {
                    out.extend_from_slice(b);
                    continue;
                }
                Piece::Value(i) => match fill.values.get(*i).and_then(Option::as_deref) {
                    Some(v) => out.extend_from_slice(v.as_bytes()),
                    None => return Err(fill.names.get(*i).map_or("?", String::as_str)),
                },
                Piece::Corpus(i) => fill.corpora[*i].write(fill.op, out),
            }
            // A value that could not stand in a path (a line break would start a header
            // or a second request) is percent-encoded; most need nothing.
            if self.target && out[start..].iter().any(|b| percent::unsafe_in_target(*b)) {
                let value = out.split_off(start);
                percent::encode_target(&value, out);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Pick, Values};

    #[test]
    fn placeholders_resolve_to_values_and_corpora_and_paths_stay_one_line() {
        let corpus = Arc::new(
            Corpus::new(
                "users",
                Values::List(vec!["ann".into()]),
                None,
                Pick::Sequential,
                0.0,
            )
            .expect("corpus"),
        );
        let values = ["token".to_string(), "id".to_string()];
        let names = Names {
            values: &values,
            corpora: std::slice::from_ref(&corpus),
        };
        let path = Text::parse("/items/{{ id }}?u={{users}}", &names, true).expect("parses");
        assert_eq!(path.slots().collect::<Vec<_>>(), [1]);
        let mut out = Vec::new();
        let filled = [None, Some("4\r\nX: 1".to_string())];
        let fill = Fill {
            names: &values,
            values: &filled,
            secret: &[],
            corpora: std::slice::from_ref(&corpus),
            op: 0,
        };
        path.render(&fill, &mut out).expect("renders");
        assert_eq!(out, b"/items/4%0D%0AX:%201?u=ann");
        let header = Text::parse("Bearer {{token}}", &names, false).expect("parses");
        assert_eq!(header.render(&fill, &mut Vec::new()), Err("token"));
        let err = Text::parse("{{nope}}", &names, false).expect_err("unknown");
        assert!(err.contains("known: token, id, users"), "{err}");
    }
}
