//! What a plan says a journey is: plain data, checked and compiled by the driver
//! ([`super::JourneyDriver::new`]), whose errors name the step and the field.

use std::time::Duration;
use url::Url;

/// A journey workload: weighted journeys over one origin, set-up steps run once before the
/// load, an optional feeder, and what a failed step does.
#[derive(Debug, Clone)]
pub struct JourneySpec {
    /// Scheme, host, port and an optional path prefix every step's path goes after.
    pub base: Url,
    /// Headers every request carries (the target's), before a step's own.
    pub headers: Vec<(String, String)>,
    /// The journeys, chosen per iteration by weight (exact proportions per cycle).
    pub journeys: Vec<Journey>,
    /// Steps sent once before the load; their captures are every iteration's values.
    pub setup: Vec<StepSpec>,
    /// Rows whose columns are an iteration's values.
    pub feed: Option<Feed>,
    pub on_failure: OnFailure,
    /// A cookie jar per iteration (on by default).
    pub cookies: bool,
}

/// One journey of a mix.
#[derive(Debug, Clone)]
pub struct Journey {
    /// Shown before its steps' names when the workload mixes several journeys.
    pub name: String,
    pub weight: u64,
    pub steps: Vec<StepSpec>,
}

/// One request of a journey. Its path, header values and body may hold `{{name}}`
/// placeholders: a value captured earlier in the iteration (or in set-up), a feeder column,
/// or a corpus.
#[derive(Debug, Clone, Default)]
pub struct StepSpec {
    /// Its endpoint row; `METHOD path` when absent.
    pub name: Option<String>,
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
    pub captures: Vec<Capture>,
    pub checks: Vec<Check>,
    /// The pause before this step (after the previous one's answer): a user reading.
    pub think: Think,
    /// The group of consecutive steps it belongs to, timed as a whole (k6's `group`).
    pub group: Option<String>,
}

impl StepSpec {
    /// The step's endpoint name.
    pub fn label(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| format!("{} {}", self.method, self.path))
    }
}

/// A value taken from a response for the steps after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub name: String,
    pub from: Source,
    /// Applied to what `from` found: its first group, or the whole match without groups.
    pub regex: Option<String>,
}

/// Where a capture or a check looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A JSON pointer (RFC 6901) into the body: `/access_token`, `/items/0/id`.
    Json(String),
    /// A response header, by name.
    Header(String),
    /// The whole body (with a regex).
    Body,
    /// The status code, as text.
    Status,
}

/// A named test of a response, counted apart: a failed one makes its step an error of
/// class `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub rule: Rule,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The status is one of these (a 4xx listed here is then no HTTP error).
    Status(Vec<u16>),
    /// The body holds this text.
    BodyContains(String),
    /// The JSON value at the pointer is this text (a string's content, or any other value's
    /// JSON); it may hold placeholders (`{{id}}`).
    JsonEquals { pointer: String, value: String },
    /// The JSON pointer finds a value.
    JsonExists(String),
    /// The header is present and its value matches the regex.
    HeaderMatches { name: String, regex: String },
    /// The body is at most this many bytes.
    MaxSize(u64),
}

/// A pause before a step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Think {
    #[default]
    None,
    Fixed(Duration),
    /// Uniform between the two, drawn per iteration and step (the same in every rerun).
    Uniform(Duration, Duration),
}

impl Think {
    /// The longest pause it can give.
    pub fn longest(&self) -> Duration {
        match *self {
            Think::None => Duration::ZERO,
            Think::Fixed(d) => d,
            Think::Uniform(a, b) => a.max(b),
        }
    }
}

/// A feeder: rows of named columns, one row per iteration.
#[derive(Debug, Clone)]
pub struct Feed {
    /// What errors call it (the file).
    pub name: String,
    pub columns: Vec<String>,
    pub rows: std::sync::Arc<Rows>,
    pub strategy: Strategy,
}

/// A feeder's rows, compactly: every cell's text in one string and where each cell ends, so
/// a row costs its text and 4 bytes a cell (as `Vec<Vec<String>>`, a one-character row cost
/// about 340 bytes: 4 million rows of an 8 MB file took 1.36 GB).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    text: String,
    ends: Vec<u32>,
    width: usize,
}

impl Rows {
    /// No rows yet, of `width` cells each.
    pub fn new(width: usize) -> Rows {
        Rows {
            width: width.max(1),
            ..Rows::default()
        }
    }

    /// Appends a row of `width` cells (missing ones empty, extra ones dropped); an error past
    /// 4 GiB of text (the capped reader never gets near it).
    pub fn push<'a>(&mut self, cells: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
        let mut cells = cells.into_iter();
        for _ in 0..self.width {
            self.text.push_str(cells.next().unwrap_or(""));
            let end = u32::try_from(self.text.len()).map_err(|_| "more than 4 GiB of rows")?;
            self.ends.push(end);
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.ends.len() / self.width
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Row `i`'s cells, in column order.
    pub fn row(&self, i: usize) -> impl Iterator<Item = &str> + '_ {
        let first = i * self.width;
        (first..first + self.width).map(move |c| {
            let start = if c == 0 { 0 } else { self.ends[c - 1] as usize };
            &self.text[start..self.ends[c] as usize]
        })
    }
}

/// How a feeder gives its rows (Gatling's strategies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Each row once, in order; the run ends when they are used up.
    Queue,
    /// Row n mod the count: in order, again and again.
    Circular,
    /// A row at random per iteration (the same in every rerun).
    Random,
    /// Each row once, in a shuffled order; the run ends when they are used up.
    Shuffle,
}

impl Strategy {
    pub const NAMES: &'static str = "queue, circular, random or shuffle";

    pub fn from_name(name: &str) -> Option<Strategy> {
        Some(match name {
            "queue" => Strategy::Queue,
            "circular" => Strategy::Circular,
            "random" => Strategy::Random,
            "shuffle" => Strategy::Shuffle,
            _ => return None,
        })
    }
}

/// What a failed step (an error, a failed check or capture) does to its iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// Ends the iteration: the next op starts a new one.
    #[default]
    Stop,
    /// Goes on with the next step (a placeholder whose capture failed then fails its step).
    Continue,
}
