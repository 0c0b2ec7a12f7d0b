//! `perfbase import`: a plan written from what someone recorded — a curl command (one
//! request) or a browser's HAR (a journey) — for them to review and run. Whatever looks like a
//! secret is never written: it becomes a `${PERFBASE_IMPORT_…}` variable the header comment
//! names, and a HAR's values that later requests reuse become captures (`correlate`).

mod correlate;
mod curl;
mod har;
mod json;
mod text;

use crate::cli::{ImportArgs, ImportWhat};
use crate::exit::{bad_input, AppError, Exit};
use std::io::Write as _;

/// A request as a plan writes it: the path and query as sent (percent-encoded), the headers
/// in order with one entry per name, the body.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

impl Request {
    /// The request target: the path, and the query after a `?`.
    pub fn target(&self) -> String {
        match &self.query {
            Some(q) => format!("{}?{q}", self.path),
            None => self.path.clone(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the body is a form (`a=1&b=2`), whose fields are matched one by one.
    pub fn form(&self) -> bool {
        self.header("content-type").is_some_and(|c| {
            c.to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        })
    }

    /// Adds a header, or joins its value to the one of that name already there (", ", as
    /// HTTP folds repeated headers): a plan's headers are a table, one key per name.
    pub fn add_header(&mut self, name: &str, value: &str) {
        match self
            .headers
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
        {
            Some((_, v)) => {
                v.push_str(", ");
                v.push_str(value);
            }
            None => self.headers.push((name.to_string(), value.to_string())),
        }
    }
}

/// Runs `perfbase import`: the plan on stdout or in `--output`.
pub fn import(a: ImportArgs) -> Result<Exit, AppError> {
    // What the header comment's "perfbase run …" names.
    let run_as = a
        .output
        .as_ref()
        .map_or("PLAN.toml".to_string(), |p| p.display().to_string());
    let plan = match &a.what {
        ImportWhat::Curl { command } => curl::plan(command, &run_as).map_err(bad_input)?,
        ImportWhat::Har {
            file,
            include_static,
        } => {
            let shown = file.display().to_string();
            let raw = perfbase_drivers::input::read_text(file)
                .map_err(|e| bad_input(format!("{shown}: cannot read it: {e}")))?;
            har::plan(&raw, &shown, *include_static, &run_as)
                .map_err(|e| bad_input(format!("{shown}: {e}")))?
        }
    };
    match &a.output {
        // Checked at the end, as every command's printed product is (app.rs).
        None => out!("{plan}"),
        Some(path) => {
            let shown = path.display();
            let cannot = |e: std::io::Error| bad_input(format!("-o {shown}: cannot write it: {e}"));
            if a.force {
                // The one output writer: a file replaced atomically, a FIFO given up on after
                // 5 s without a reader (it used to hang for ever), `-` standard output.
                perfbase_report::json::write_text_atomic(path, &plan).map_err(cannot)?;
            } else {
                // Created, not checked then written: nothing can slip in between (and a FIFO
                // or any other existing path is refused).
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
                    .map_err(|e| match e.kind() {
                        std::io::ErrorKind::AlreadyExists => bad_input(format!(
                            "-o {shown}: the file exists; give another -o FILE, or --force to \
                             replace it"
                        )),
                        _ => bad_input(format!("-o {shown}: cannot create it: {e}")),
                    })?;
                file.write_all(plan.as_bytes()).map_err(cannot)?;
            }
            errln!("perfbase: wrote {shown}: review it, then: perfbase run {shown}");
        }
    }
    Ok(Exit::Success)
}
