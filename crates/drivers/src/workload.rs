//! Protocol-independent request generation: corpora of values, `{{corpus}}` placeholders filled
//! from them,
//! and weighted mixes of request templates.
//!
//! Everything is a pure function of the operation number `op` (and a seed), so a run is
//! reproducible and counts are exact: a mix with weights 9:1 sends exactly 9 of every 10
//! consecutive ops to the first template, and a sequential corpus walks its values in order.

use std::sync::Arc;

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", 2014):
/// a stateless, well-mixed hash of the op number for random picks.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in [0, 1) for op `op` under `salt`.
pub fn unit(op: u64, salt: u64) -> f64 {
    (mix64(op ^ mix64(salt)) >> 11) as f64 / (1u64 << 53) as f64
}

/// How a corpus value is chosen for an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Uniformly at random (deterministic per op).
    Random,
    /// Value `op % len`, in order.
    Sequential,
    /// At random, in proportion to each value's weight.
    Weighted,
}

/// A corpus's values: a list, or numbered keys made on demand from the index, so a corpus
/// of 10^12 keys (`key-{n}`) costs no memory and no time to build.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    List(Vec<String>),
    /// Value i is `parts` joined by the number `start + i` (`key-{n}` → `["key-", ""]`).
    Pattern {
        parts: Vec<String>,
        start: i64,
        count: u64,
    },
}

impl Values {
    /// `pattern` (holding `{n}`) numbered from `start`, `count` values.
    pub fn pattern(pattern: &str, start: i64, count: u64) -> Values {
        Values::Pattern {
            parts: pattern.split("{n}").map(String::from).collect(),
            start,
            count,
        }
    }

    pub fn len(&self) -> u64 {
        match self {
            Values::List(v) => v.len() as u64,
            Values::Pattern { count, .. } => *count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends value `i` (below [`Values::len`]) to `out`.
    pub fn write(&self, i: u64, out: &mut Vec<u8>) {
        match self {
            Values::List(v) => out.extend_from_slice(v[i as usize].as_bytes()),
            Values::Pattern { parts, start, .. } => {
                // The number saturates like the old eager generation did at i64::MAX.
                let n = start.saturating_add(i64::try_from(i).unwrap_or(i64::MAX));
                for (k, part) in parts.iter().enumerate() {
                    if k > 0 {
                        out.extend_from_slice(n.to_string().as_bytes());
                    }
                    out.extend_from_slice(part.as_bytes());
                }
            }
        }
    }

    /// Value `i` as text.
    pub fn get(&self, i: u64) -> String {
        let mut out = Vec::new();
        self.write(i, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// `corpora` with a corpus named `name` that is each op's own number (`{{n}}`), unless one of
/// them already has that name.
pub fn with_number(corpora: &[Arc<Corpus>], name: &str) -> Result<Vec<Arc<Corpus>>, String> {
    let mut all = corpora.to_vec();
    if !all.iter().any(|c| c.name == name) {
        let n = Corpus::new(
            name,
            Values::pattern("{n}", 0, u64::MAX),
            None,
            Pick::Sequential,
            0.0,
        )?;
        all.push(Arc::new(n));
    }
    Ok(all)
}

/// A named list of values to fill placeholders with.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub name: String,
    pub values: Values,
    /// Cumulative weights (only for [`Pick::Weighted`]).
    cumulative: Vec<f64>,
    pub pick: Pick,
    /// Share of picks (0..1) replaced by a generated value that is in no corpus (a miss).
    pub misses: f64,
    salt: u64,
}

impl Corpus {
    /// A corpus; `weights` must match `values` in length for [`Pick::Weighted`].
    pub fn new(
        name: &str,
        values: Values,
        weights: Option<Vec<f64>>,
        pick: Pick,
        misses: f64,
    ) -> Result<Corpus, String> {
        if values.is_empty() {
            return Err(format!("corpus '{name}' has no values"));
        }
        if !(0.0..=1.0).contains(&misses) {
            return Err(format!("corpus '{name}': misses must be between 0 and 1"));
        }
        let cumulative = match (pick, weights) {
            (Pick::Weighted, Some(w)) => {
                if w.len() as u64 != values.len() || w.iter().any(|x| !x.is_finite() || *x < 0.0) {
                    return Err(format!(
                        "corpus '{name}': one non-negative weight per value is needed"
                    ));
                }
                let mut acc = 0.0;
                let c: Vec<f64> = w
                    .iter()
                    .map(|x| {
                        acc += x;
                        acc
                    })
                    .collect();
                if acc <= 0.0 {
                    return Err(format!("corpus '{name}': the weights add up to zero"));
                }
                c
            }
            (Pick::Weighted, None) => {
                return Err(format!(
                    "corpus '{name}': pick = \"weighted\" needs a weight for every value"
                ))
            }
            _ => Vec::new(),
        };
        let salt = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        Ok(Corpus {
            name: name.to_string(),
            values,
            cumulative,
            pick,
            misses,
            salt,
        })
    }

    /// The first value holding a byte `bad` refuses, as (index, value), or none. A pattern's
    /// values differ only by their number, so its parts are what is checked. (Misses are
    /// `perfbase-miss-N`: always safe.)
    pub fn find_value(&self, bad: impl Fn(u8) -> bool) -> Option<(u64, String)> {
        match &self.values {
            Values::List(v) => v
                .iter()
                .position(|x| x.bytes().any(&bad))
                .map(|i| (i as u64, v[i].clone())),
            Values::Pattern { parts, .. } => parts
                .iter()
                .any(|p| p.bytes().any(&bad))
                .then(|| (0, self.values.get(0))),
        }
    }

    /// Appends op `op`'s value to `out`.
    pub fn write(&self, op: u64, out: &mut Vec<u8>) {
        if self.misses > 0.0 && unit(op, self.salt ^ 0x6d69_7373) < self.misses {
            out.extend_from_slice(b"perfbase-miss-");
            out.extend_from_slice(op.to_string().as_bytes());
            return;
        }
        let len = self.values.len();
        let i = match self.pick {
            Pick::Sequential => op % len,
            Pick::Random => mix64(op ^ self.salt) % len,
            Pick::Weighted => {
                let total = self.cumulative.last().copied().unwrap_or(1.0);
                let u = unit(op, self.salt) * total;
                (self.cumulative.partition_point(|c| *c <= u) as u64).min(len - 1)
            }
        };
        self.values.write(i, out);
    }
}

/// A piece of a template: literal bytes, or a corpus to draw from (its value percent-encoded
/// where it could not stand in a request target, when `target` is set).
#[derive(Debug, Clone)]
enum Piece {
    Literal(Vec<u8>),
    Corpus { index: usize, target: bool },
}

/// Text with `{{corpus}}` placeholders, parsed once.
#[derive(Debug, Clone)]
pub struct Template {
    pieces: Vec<Piece>,
    /// The template as written (shown in reports instead of the filled values).
    pub text: String,
}

impl Template {
    /// Parses `text`; every `{{name}}` (spaces allowed inside) must name one of `corpora`.
    /// Text that is not a complete placeholder is kept as it is.
    pub fn parse(text: &str, corpora: &[Arc<Corpus>]) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut lit = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find("{{") {
            let Some(end) = rest[i + 2..].find("}}") else {
                break;
            };
            let name = rest[i + 2..i + 2 + end].trim();
            let idx = corpora.iter().position(|c| c.name == name).ok_or_else(|| {
                let known: Vec<&str> = corpora.iter().map(|c| c.name.as_str()).collect();
                format!(
                    "'{{{{{name}}}}}' names no corpus (known: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )
            })?;
            lit.extend_from_slice(&rest.as_bytes()[..i]);
            if !lit.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut lit)));
            }
            pieces.push(Piece::Corpus {
                index: idx,
                target: false,
            });
            rest = &rest[i + 2 + end + 2..];
        }
        lit.extend_from_slice(rest.as_bytes());
        if !lit.is_empty() {
            pieces.push(Piece::Literal(lit));
        }
        Ok(Template {
            pieces,
            text: text.to_string(),
        })
    }

    /// Literal text, with no placeholder.
    pub fn literal(text: &str) -> Template {
        Template {
            pieces: vec![Piece::Literal(text.as_bytes().to_vec())],
            text: text.to_string(),
        }
    }

    /// The template as an HTTP request target: its literal text, and every value that fills
    /// it, percent-encoded where a byte could not stand there (a line break would end the
    /// request line and start a header or a second request; see
    /// [`perfbase_core::percent::unsafe_in_target`]).
    pub fn as_target(mut self) -> Template {
        for p in &mut self.pieces {
            match p {
                Piece::Literal(b) => {
                    let mut encoded = Vec::with_capacity(b.len());
                    perfbase_core::percent::encode_target(b, &mut encoded);
                    *b = encoded;
                }
                Piece::Corpus { target, .. } => *target = true,
            }
        }
        self
    }

    /// This template followed by `next`.
    pub fn then(mut self, next: Template) -> Template {
        self.pieces.extend(next.pieces);
        self.text.push_str(&next.text);
        self
    }

    /// The corpora (by index) that fill this template's placeholders.
    pub fn corpora_used(&self) -> impl Iterator<Item = usize> + '_ {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Corpus { index, .. } => Some(*index),
            Piece::Literal(_) => None,
        })
    }

    /// Whether the template has no placeholder.
    pub fn is_literal(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Literal(_)))
    }

    /// Appends op `op`'s rendering to `out`.
    pub fn write(&self, op: u64, corpora: &[Arc<Corpus>], out: &mut Vec<u8>) {
        for p in &self.pieces {
            match p {
                Piece::Literal(b) => out.extend_from_slice(b),
                Piece::Corpus {
                    index,
                    target: false,
                } => corpora[*index].write(op, out),
                Piece::Corpus {
                    index,
                    target: true,
                } => {
                    let start = out.len();
                    corpora[*index].write(op, out);
                    // Most values need no escape: copy only when one does.
                    if out[start..]
                        .iter()
                        .any(|b| perfbase_core::percent::unsafe_in_target(*b))
                    {
                        let value = out.split_off(start);
                        perfbase_core::percent::encode_target(&value, out);
                    }
                }
            }
        }
    }

    /// Renders op `op` into a new string (for tests and previews).
    pub fn render(&self, op: u64, corpora: &[Arc<Corpus>]) -> String {
        let mut out = Vec::new();
        self.write(op, corpora, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Chooses which of several weighted items op `op` uses, with exact proportions: over every
/// `total` consecutive ops, item i is used exactly `weights[i]` times. Positions within a
/// cycle are permuted by a multiplier coprime with the cycle, which spreads each item over
/// the cycle instead of sending it in one burst.
#[derive(Debug, Clone)]
pub struct Mix {
    cumulative: Vec<u64>,
    multiplier: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Mix {
    /// Whole-number weights, at least one positive.
    pub fn new(weights: &[u64]) -> Result<Mix, String> {
        let total: u64 = weights.iter().sum();
        if total == 0 {
            return Err("a mix needs at least one positive weight".into());
        }
        let mut acc = 0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w;
                acc
            })
            .collect();
        // A multiplier near total·φ⁻¹ that is coprime with total (1 always is).
        let mut multiplier = ((total as f64 * 0.618_033_988_75) as u64).max(1);
        while gcd(multiplier, total) != 1 {
            multiplier += 1;
        }
        Ok(Mix {
            cumulative,
            multiplier,
        })
    }

    /// The item op `op` uses.
    pub fn choose(&self, op: u64) -> usize {
        let total = *self.cumulative.last().unwrap_or(&1);
        let pos = ((op % total) as u128 * self.multiplier as u128 % total as u128) as u64;
        self.cumulative.partition_point(|c| *c <= pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_keys_are_made_on_demand_as_the_pattern_says() {
        let v = Values::pattern("{n}-k-{n}", 5, 1_000_000_000_000);
        assert_eq!(v.len(), 1_000_000_000_000);
        assert_eq!(v.get(0), "5-k-5");
        assert_eq!(v.get(999_999_999_999), "1000000000004-k-1000000000004");
        let mut out = b"x".to_vec();
        Values::pattern("plain", 0, 2).write(1, &mut out);
        assert_eq!(out, b"xplain");
    }
    use proptest::prelude::*;

    fn corpus(pick: Pick, misses: f64) -> Arc<Corpus> {
        let values = (0..10).map(|i| format!("key-{i}")).collect();
        let weights = (pick == Pick::Weighted)
            .then(|| (0..10).map(|i| if i == 3 { 9.0 } else { 0.0 }).collect());
        Arc::new(Corpus::new("keys", Values::List(values), weights, pick, misses).unwrap())
    }

    #[test]
    fn templates_fill_placeholders() {
        let c = vec![corpus(Pick::Sequential, 0.0)];
        let t = Template::parse("/lookup/{{keys}}?x={{ keys }}&y=${z}&j={\"a\":{}}", &c).unwrap();
        assert_eq!(
            t.render(13, &c),
            "/lookup/key-3?x=key-3&y=${z}&j={\"a\":{}}"
        );
        assert!(Template::parse("/a/{{nope}}", &c)
            .unwrap_err()
            .contains("known: keys"));
        assert_eq!(
            Template::parse("/a/{{keys", &c).unwrap().render(0, &c),
            "/a/{{keys"
        );
        assert!(Template::parse("/plain", &c).unwrap().is_literal());
    }

    #[test]
    fn a_target_template_encodes_what_could_split_a_request() {
        let c = vec![Arc::new(
            Corpus::new(
                "v",
                Values::List(vec![
                    "ok-1".into(),
                    "x HTTP/1.1\r\nEvil: 1\r\n\r\nGET /s".into(),
                ]),
                None,
                Pick::Sequential,
                0.0,
            )
            .unwrap(),
        )];
        let t = Template::parse("/a b/{{v}}#f", &c).unwrap().as_target();
        assert_eq!(t.render(0, &c), "/a%20b/ok-1%23f");
        assert_eq!(
            t.render(1, &c),
            "/a%20b/x%20HTTP/1.1%0D%0AEvil:%201%0D%0A%0D%0AGET%20/s%23f"
        );
        let head = Template::literal("GET ").then(t);
        assert_eq!(head.render(0, &c), "GET /a%20b/ok-1%23f");
        assert_eq!(head.corpora_used().collect::<Vec<_>>(), [0]);
        assert_eq!(c[0].find_value(|b| b == b'\n').map(|(i, _)| i), Some(1));
    }

    #[test]
    fn weighted_pick_follows_weights() {
        let c = vec![corpus(Pick::Weighted, 0.0)];
        let t = Template::parse("{{keys}}", &c).unwrap();
        for op in 0..200 {
            assert_eq!(t.render(op, &c), "key-3");
        }
    }

    #[test]
    fn misses_are_close_to_their_share_and_never_hit() {
        let c = vec![corpus(Pick::Random, 0.5)];
        let t = Template::parse("{{keys}}", &c).unwrap();
        let misses = (0..10_000)
            .filter(|op| t.render(*op, &c).starts_with("perfbase-miss-"))
            .count();
        assert!((4_800..=5_200).contains(&misses), "{misses}");
    }

    #[test]
    fn random_pick_covers_the_corpus_evenly() {
        let c = vec![corpus(Pick::Random, 0.0)];
        let t = Template::parse("{{keys}}", &c).unwrap();
        let mut seen = std::collections::HashMap::new();
        for op in 0..10_000 {
            *seen.entry(t.render(op, &c)).or_insert(0) += 1;
        }
        assert_eq!(seen.len(), 10);
        assert!(seen.values().all(|n| (900..=1100).contains(n)), "{seen:?}");
    }

    proptest! {
        #[test]
        fn mix_proportions_are_exact_per_cycle(weights in proptest::collection::vec(0u64..20, 1..8), start in 0u64..1000) {
            prop_assume!(weights.iter().sum::<u64>() > 0);
            let m = Mix::new(&weights).unwrap();
            let total: u64 = weights.iter().sum();
            let mut counts = vec![0u64; weights.len()];
            for op in start * total..(start + 1) * total {
                counts[m.choose(op)] += 1;
            }
            prop_assert_eq!(counts, weights);
        }

        #[test]
        fn templates_never_panic(text in "\\PC{0,40}") {
            let c = vec![corpus(Pick::Random, 0.1)];
            if let Ok(t) = Template::parse(&text, &c) {
                let _ = t.render(7, &c);
            }
        }
    }
}
