//! `[corpora]`: values for `{{name}}` templates, from a file, a list or a generator.

use super::context::Ctx;
use super::file::{self, PlanFile};
use super::model::PlanError;
use perfbase_drivers::workload::{Corpus, Pick, Values};
use std::sync::Arc;

/// The most numbered keys (`pattern = "key-{n}"`) a corpus may have: made on demand, they
/// cost nothing up front; the bound keeps `{n}` arithmetic far from overflow.
const MAX_KEYS: u64 = 1_000_000_000_000;
/// The most random strings a corpus may have: they are built in memory before the run.
const MAX_ENTRIES: u64 = 10_000_000;
/// The most bytes a generated corpus's random strings may take together: 256 MiB.
const MAX_BYTES: u64 = 256 << 20;

/// Every corpus of the plan.
pub(super) fn corpora(cx: &Ctx<'_>, raw: &PlanFile) -> Result<Vec<Arc<Corpus>>, PlanError> {
    let mut corpora = Vec::new();
    for (name, def) in &raw.corpora {
        corpora.push(Arc::new(corpus(cx, name, def)?));
    }
    Ok(corpora)
}

fn corpus(cx: &Ctx<'_>, name: &str, def: &file::CorpusDef) -> Result<Corpus, PlanError> {
    let field = format!("corpora.{name}");
    let line_of = |d: &file::CorpusDef| {
        d.file
            .as_ref()
            .map(|s| cx.line(s.span().start))
            .or(d.pick.as_ref().map(|s| cx.line(s.span().start)))
            .unwrap_or(0)
    };
    let pick = match def.pick.as_ref().map(|p| p.get_ref().as_str()) {
        None | Some("random") => Pick::Random,
        Some("sequential") => Pick::Sequential,
        Some("weighted") => Pick::Weighted,
        Some(other) => {
            return Err(cx.err(
                def.pick.as_ref().expect("matched Some"),
                format!("{field}.pick"),
                format!("'{other}': use random, sequential or weighted"),
            ))
        }
    };
    let sources =
        def.file.is_some() as u8 + def.values.is_some() as u8 + def.generate.is_some() as u8;
    if sources != 1 {
        return Err(cx.err_at(
            line_of(def),
            &field,
            "give exactly one of file, values or generate",
        ));
    }
    let mut weights = None;
    let values: Values = if let Some(v) = &def.values {
        Values::List(v.clone())
    } else if let Some(g) = &def.generate {
        let count_field = format!("{field}.generate.count");
        let count = cx.count(
            &g.count,
            &count_field,
            MAX_KEYS,
            "entries a generated corpus may have",
        )?;
        match (&g.pattern, &g.length) {
            (Some(pattern), None) => {
                if !pattern.get_ref().contains("{n}") {
                    return Err(cx.err(
                        pattern,
                        format!("{field}.generate.pattern"),
                        "the pattern needs '{n}', e.g. \"key-{n}\"",
                    ));
                }
                Values::pattern(pattern.get_ref(), g.start.unwrap_or(0), count)
            }
            (None, Some(length)) => {
                if count > MAX_ENTRIES {
                    return Err(cx.err(
                        &g.count,
                        &count_field,
                        format!(
                            "at most {MAX_ENTRIES} random strings (they are built in memory), \
                             not {count}"
                        ),
                    ));
                }
                let f = format!("{field}.generate.length");
                let len = cx.count(
                    length,
                    &f,
                    MAX_BYTES / count,
                    "characters per entry that keep the corpus within 256 MiB",
                )?;
                Values::List(random_strings(name, count, len as usize))
            }
            _ => {
                return Err(cx.err(
                    &g.count,
                    format!("{field}.generate"),
                    "give either pattern = \"key-{n}\" or length = N (random strings)",
                ))
            }
        }
    } else {
        let f = def.file.as_ref().expect("one source is set");
        let path = cx.base.join(f.get_ref());
        let text = perfbase_drivers::input::read_text(&path).map_err(|e| {
            cx.err(
                f,
                format!("{field}.file"),
                format!("cannot read '{}': {e}", path.display()),
            )
        })?;
        let is_csv =
            def.column.is_some() || def.weight_column.is_some() || f.get_ref().ends_with(".csv");
        if is_csv {
            let (v, w) = csv_values(
                &text,
                def.column.as_ref().map(|c| c.get_ref().as_str()),
                def.weight_column.as_ref().map(|c| c.get_ref().as_str()),
            )
            .map_err(|e| {
                cx.err(
                    f,
                    format!("{field}.file"),
                    format!("{}: {e}", path.display()),
                )
            })?;
            weights = w;
            Values::List(v)
        } else {
            Values::List(
                text.lines()
                    .map(str::trim_end)
                    .filter(|l| !l.is_empty())
                    .map(String::from)
                    .collect(),
            )
        }
    };
    let misses = match &def.misses {
        Some(m) if !(0.0..=1.0).contains(m.get_ref()) => {
            return Err(cx.err(
                m,
                format!("{field}.misses"),
                "must be a share from 0 to 1 (0.1 = one lookup in ten misses)",
            ))
        }
        Some(m) => *m.get_ref(),
        None => 0.0,
    };
    Corpus::new(name, values, weights, pick, misses).map_err(|e| cx.err_at(line_of(def), &field, e))
}

/// `count` random alphanumeric strings of `len` characters, the same for the same corpus name
/// (seeded by it), so runs are reproducible.
fn random_strings(name: &str, count: u64, len: usize) -> Vec<String> {
    use perfbase_drivers::workload::mix64;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let seed = name.bytes().fold(0u64, |h, b| mix64(h ^ b as u64));
    (0..count)
        .map(|i| {
            (0..len as u64)
                .map(|j| {
                    let r = mix64(seed ^ mix64(i) ^ j.wrapping_mul(0x9E37_79B9));
                    ALPHABET[(r % ALPHABET.len() as u64) as usize] as char
                })
                .collect()
        })
        .collect()
}

/// Splits one CSV line, honouring double quotes (RFC 4180 style, no embedded newlines).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

type CsvColumns = (Vec<String>, Option<Vec<f64>>);

fn csv_values(
    text: &str,
    column: Option<&str>,
    weight: Option<&str>,
) -> Result<CsvColumns, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = csv_fields(lines.next().ok_or("the CSV file is empty")?);
    let find = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| format!("no column '{name}' (columns: {})", header.join(", ")))
    };
    let vi = match column {
        Some(c) => find(c)?,
        None => 0,
    };
    let wi = weight.map(find).transpose()?;
    let mut values = Vec::new();
    let mut weights = Vec::new();
    for (n, line) in lines.enumerate() {
        let f = csv_fields(line);
        let v = f
            .get(vi)
            .ok_or_else(|| format!("row {} has no column {}", n + 2, vi + 1))?;
        values.push(v.trim().to_string());
        if let Some(wi) = wi {
            let w = f
                .get(wi)
                .and_then(|x| x.trim().parse::<f64>().ok())
                .ok_or_else(|| format!("row {}: the weight is not a number", n + 2))?;
            weights.push(w);
        }
    }
    Ok((values, wi.map(|_| weights)))
}
