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
    let (values, weights) = if let Some(v) = &def.values {
        (Values::List(v.clone()), None)
    } else if let Some(g) = &def.generate {
        (generated(cx, (name, &field), g)?, None)
    } else {
        from_file(cx, &field, def)?
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

/// A `generate = {…}` corpus: numbered keys from a pattern, or random strings.
fn generated(
    cx: &Ctx<'_>,
    (name, field): (&str, &str),
    g: &file::GenerateDef,
) -> Result<Values, PlanError> {
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
            Ok(Values::pattern(
                pattern.get_ref(),
                g.start.unwrap_or(0),
                count,
            ))
        }
        (None, Some(length)) => {
            // Random strings are built in memory: bounded in count and in bytes.
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
            Ok(Values::List(random_strings(name, count, len as usize)))
        }
        _ => Err(cx.err(
            &g.count,
            format!("{field}.generate"),
            "give either pattern = \"key-{n}\" or length = N (random strings)",
        )),
    }
}

/// A `file = "…"` corpus: a CSV column (with its weights) or one value per line.
fn from_file(
    cx: &Ctx<'_>,
    field: &str,
    def: &file::CorpusDef,
) -> Result<(Values, Option<Vec<f64>>), PlanError> {
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
    if !is_csv {
        let lines = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        return Ok((Values::List(lines), None));
    }
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
    Ok((Values::List(v), w))
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

type CsvColumns = (Vec<String>, Option<Vec<f64>>);

/// The values of a CSV data file's `column` (the first when `None`) and, with `weight`, that
/// column's numbers. The `csv` crate reads it as RFC 4180, so a quoted field may hold commas,
/// quotes and line breaks. The first record is the header; fields and names are trimmed,
/// and blank lines are skipped wherever they are. Errors name the data file's line (where the
/// record starts), for the caller to put after the file's path.
fn csv_values(
    text: &str,
    column: Option<&str>,
    weight: Option<&str>,
) -> Result<CsvColumns, String> {
    let mut reader = csv::ReaderBuilder::new()
        // The header is found below, after any blank lines, like every other record.
        .has_headers(false)
        // Rows may be short or long: only the columns asked for must be there, and a missing
        // one is reported with its line below rather than as a field-count mismatch.
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut lines = Lines::new(text);
    let mut records = reader
        .records()
        // Text in memory and flexible rows leave the reader little to refuse; its message,
        // if any, names the record and line itself.
        .map(|r| r.map_err(|e| e.to_string()))
        // A line of spaces is a record of one empty field: as blank as an empty line.
        .filter(|r| !matches!(r, Ok(rec) if rec.len() <= 1 && rec.iter().all(str::is_empty)));
    let header = records.next().ok_or("the CSV file is empty")??;
    let find = |name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "no column '{name}' (columns: {})",
                header.iter().collect::<Vec<_>>().join(", ")
            )
        })
    };
    let vi = match column {
        Some(c) => find(c)?,
        None => 0,
    };
    let wi = weight.map(find).transpose()?;
    let name_of = |i: usize| header.get(i).unwrap_or("").to_string();
    let mut values = Vec::new();
    let mut weights = Vec::new();
    for record in records {
        let record = record?;
        let line = lines.of(&record);
        let v = record.get(vi).ok_or_else(|| {
            format!(
                "line {line}: no column {} ('{}'): the row has {} field(s)",
                vi + 1,
                name_of(vi),
                record.len()
            )
        })?;
        values.push(v.to_string());
        if let Some(wi) = wi {
            let raw = record.get(wi).unwrap_or("");
            let w = raw.parse::<f64>().map_err(|_| {
                format!(
                    "line {line}: the weight ('{}') '{raw}' is not a number",
                    name_of(wi)
                )
            })?;
            weights.push(w);
        }
    }
    Ok((values, wi.map(|_| weights)))
}

/// The 1-based line on which each record of a CSV text starts, asked in reading order.
///
/// The reader's own position is where it began looking for the record: before the blank
/// lines it skipped, and after a CRLF still on the line before (csv 1.4 reports the `b` of
/// `"a\r\n\r\n\r\nb"` on line 1, not 4). So this steps from that byte over line breaks to the
/// record's first byte and counts the line feeds before it, carrying on from the last record.
struct Lines<'a> {
    text: &'a [u8],
    /// Bytes counted so far, and the line that `text[at]` is on.
    at: usize,
    line: u64,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            text: text.as_bytes(),
            at: 0,
            line: 1,
        }
    }

    fn of(&mut self, record: &csv::StringRecord) -> u64 {
        let Some(pos) = record.position() else {
            return self.line;
        };
        let mut start =
            usize::try_from(pos.byte()).map_or(self.text.len(), |b| b.min(self.text.len()));
        while matches!(self.text.get(start), Some(b'\r' | b'\n')) {
            start += 1;
        }
        // Records come in order, so counting resumes where the last one stopped.
        if start >= self.at {
            let feeds = self.text[self.at..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            self.line += feeds as u64;
            self.at = start;
        }
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::csv_values;

    #[test]
    fn lines_are_counted_from_the_file_not_the_reader() {
        // CRLF and blank lines before the bad row, which is on line 6.
        let text = "key,weight\r\n\r\na,1\r\n\r\n\r\nb,x\r\n";
        let e = csv_values(text, Some("key"), Some("weight")).unwrap_err();
        assert_eq!(e, "line 6: the weight ('weight') 'x' is not a number");
        // A quoted line break inside a record moves the next record down a line.
        let text = "key,weight\n\"a\nb\",1\n\nc\n";
        let e = csv_values(text, Some("weight"), None).unwrap_err();
        assert_eq!(e, "line 5: no column 2 ('weight'): the row has 1 field(s)");
        // A byte-order mark does not hide the first column's name.
        let (v, w) = csv_values("\u{feff}key\nk1\n", Some("key"), None).unwrap();
        assert_eq!((v, w), (vec!["k1".to_string()], None));
    }
}
