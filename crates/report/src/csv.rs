//! CSV of a run's phases (one row per measured phase; a single ad-hoc run is one row), for
//! spreadsheets and CI systems. The `csv` crate writes it (RFC 4180: a field with a comma,
//! quote or line break is quoted); this module decides the columns and how each figure is
//! rounded.

use perfbase_core::result::{Measurement, RunResult};

const HEADER: [&str; 27] = [
    "run",
    "phase",
    "scenario",
    "step",
    "repetition",
    "model",
    "offered_rate",
    "offered_connections",
    "requests",
    "duration_s",
    "rps",
    "success_ratio",
    "errors",
    "bytes_read",
    "min_ms",
    "mean_ms",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "p999_ms",
    "max_ms",
    // A journey's: empty for one request per op.
    "iterations",
    "iterations_failed",
    "iteration_p95_ms",
    "checks_passed",
    "checks_failed",
];

/// Which columns carry which precision, and why.
///
/// The figures are exact in the result JSON; a CSV is read by people and spreadsheets, where
/// `3.2799073390733917` ms only hides the figure in noise digits.
mod digits {
    /// Latency in ms to 3 decimals, i.e. 1 µs: the recorder measures in whole µs and its
    /// histograms keep 3 significant digits, so a 4th decimal would be below what was measured
    /// (a mean of µs values has more digits, none of them measured).
    pub const MS: usize = 3;
    /// A phase's duration in s to 3 decimals (1 ms): phases last seconds, and the ms is already
    /// finer than the start and stop of load can be placed.
    pub const SECONDS: usize = 3;
    /// Rates (requests per second) to 2 decimals: one request in a 100 s phase moves the rate
    /// by 0.01/s, so further digits are noise; two still show a slow check's 0.25/s.
    pub const RATE: usize = 2;
    /// Ratios to 4 decimals (0.01 %): enough for a success ratio held to four nines
    /// (99.99 %); the exact count of failures is in the `errors` column beside it.
    pub const RATIO: usize = 4;
}

/// A figure to `decimals` places, or an empty field when it is undefined (NaN: nothing
/// completed; a hand-edited infinity).
fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        String::new()
    }
}

/// A setting as it was given (the offered rate: `100`, `0.5`), to at most `decimals` places
/// with no trailing zeros, so it reads like the plan or flag that set it.
fn setting(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => {
            let s = format!("{v:.decimals$}");
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                s
            }
        }
        _ => String::new(),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// One phase's row (or a single run's), labelled and described by the other fields.
struct Row<'a> {
    run: &'a str,
    phase: &'a str,
    scenario: Option<&'a str>,
    step: Option<u32>,
    repetition: Option<u32>,
    model: &'a str,
    rate: Option<f64>,
    connections: Option<u64>,
    m: &'a Measurement,
}

impl Row<'_> {
    fn fields(&self) -> [String; 27] {
        let m = self.m;
        let l = &m.latency_ms;
        let ms = |v: f64| fixed(v, digits::MS);
        [
            text(self.run),
            text(self.phase),
            text(self.scenario.unwrap_or("")),
            opt(self.step),
            opt(self.repetition),
            self.model.to_string(),
            setting(self.rate, digits::RATE),
            opt(self.connections),
            m.requests.to_string(),
            fixed(m.duration_s, digits::SECONDS),
            fixed(m.rps, digits::RATE),
            fixed(m.success_ratio, digits::RATIO),
            m.errors.values().sum::<u64>().to_string(),
            m.bytes_read.to_string(),
            ms(l.min),
            ms(l.mean),
            ms(l.p50),
            ms(l.p90),
            ms(l.p95),
            ms(l.p99),
            ms(l.p999),
            ms(l.max),
            opt(m.iterations.as_ref().map(|i| i.count)),
            opt(m.iterations.as_ref().map(|i| i.failed)),
            m.iterations
                .as_ref()
                .map(|i| ms(i.duration_ms.p95))
                .unwrap_or_default(),
            checks(m, |c| c.passed),
            checks(m, |c| c.failed),
        ]
    }
}

/// A journey's checks added up (`passed` or `failed`), empty without checks.
fn checks(m: &Measurement, count: fn(&perfbase_core::result::CheckResult) -> u64) -> String {
    if m.checks.is_empty() {
        String::new()
    } else {
        m.checks.iter().map(count).sum::<u64>().to_string()
    }
}

/// A text cell (a label, a phase or scenario name) that no spreadsheet runs as a formula:
/// one starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, as
/// OWASP's CSV-injection advice says. Figures are written by perfbase and never need it.
fn text(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

fn rows<'a>(label: &'a str, r: &'a RunResult) -> Vec<Row<'a>> {
    if r.phases.is_empty() {
        return vec![Row {
            run: label,
            phase: "run",
            scenario: None,
            step: None,
            repetition: None,
            model: r.model.name(),
            rate: r.config.rate,
            connections: r.config.connections,
            m: &r.measurement,
        }];
    }
    r.phases
        .iter()
        .map(|p| Row {
            run: label,
            phase: &p.name,
            scenario: p.scenario.as_deref(),
            step: p.step,
            repetition: p.repetition,
            model: p.model.name(),
            rate: p.offered_rate,
            connections: p.offered_connections,
            m: &p.measurement,
        })
        .collect()
}

fn write(runs: &[(String, &RunResult)]) -> Result<String, Box<dyn std::error::Error>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)?;
    for (label, r) in runs {
        for row in rows(label, r) {
            w.write_record(row.fields())?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The CSV of several runs, labelled by `labels` (run ids or file names).
pub fn render(runs: &[(String, &RunResult)]) -> String {
    // Written to memory from `String` fields: there is no I/O to fail and the bytes are UTF-8,
    // so the empty fallback is never taken.
    write(runs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_never_a_formula() {
        for (name, cell) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1", "'+1"),
            ("-2", "'-2"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("steady", "steady"),
        ] {
            assert_eq!(text(name), cell);
        }
    }

    #[test]
    fn figures_are_rounded_per_column() {
        assert_eq!(fixed(3.279_907_339_073_391_7, digits::MS), "3.280");
        assert_eq!(fixed(0.000_4, digits::MS), "0.000");
        assert_eq!(fixed(f64::NAN, digits::MS), "");
        assert_eq!(fixed(12_345.678_9, digits::RATE), "12345.68");
        assert_eq!(fixed(0.999_96, digits::RATIO), "1.0000");
        assert_eq!(fixed(0.998_76, digits::RATIO), "0.9988");
        assert_eq!(setting(Some(100.0), digits::RATE), "100");
        assert_eq!(setting(Some(0.5), digits::RATE), "0.5");
        assert_eq!(setting(Some(1000.0 / 3.0), digits::RATE), "333.33");
        assert_eq!(setting(None, digits::RATE), "");
    }

    #[test]
    fn a_run_reads_back_with_its_rounded_figures_and_quoted_labels() {
        let text =
            include_str!("../../fuzz/corpus/result_json/regression-more-errors-than-requests.json");
        let mut r: RunResult = serde_json::from_str(text).unwrap();
        r.phases.clear();
        r.measurement.latency_ms.mean = 3.279_907_339_073_391_7;
        r.measurement.latency_ms.p99 = 12.345_678;
        r.measurement.rps = 1_234.567_89;
        r.measurement.duration_s = 10.000_123_4;
        r.measurement.success_ratio = 0.987_654_3;
        let label = "a \"quoted\", label\nover two lines";
        let out = render(&[(label.to_string(), &r)]);

        let mut reader = csv::Reader::from_reader(out.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header, HEADER);
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), 1, "{out}");
        let row = &records[0];
        let col = |name: &str| &row[HEADER.iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("run"), label);
        assert_eq!(col("phase"), "run");
        assert_eq!(col("mean_ms"), "3.280");
        assert_eq!(col("p99_ms"), "12.346");
        assert_eq!(col("rps"), "1234.57");
        assert_eq!(col("duration_s"), "10.000");
        assert_eq!(col("success_ratio"), "0.9877");
    }
}
