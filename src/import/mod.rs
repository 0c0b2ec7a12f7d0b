//! `perfbase import`: a plan written from what someone recorded — a curl command (one
//! request) or a browser's HAR (a journey) — for them to review and run. Whatever looks like a
//! secret is never written: it becomes a `${PERFBASE_IMPORT_…}` variable the header comment
//! names, and a HAR's values that later requests reuse become captures.

mod curl;
mod har;
mod text;

use crate::cli::{ImportArgs, ImportWhat};
use crate::exit::{bad_input, AppError, Exit};
use std::io::Write as _;

/// A recorded request, as both sources give it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub method: String,
    pub url: url::Url,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// Runs `perfbase import`: the plan on stdout or in `--output`.
pub fn import(a: ImportArgs) -> Result<Exit, AppError> {
    let plan = match &a.what {
        ImportWhat::Curl { command } => curl::plan(command).map_err(bad_input)?,
        ImportWhat::Har {
            file,
            include_static,
        } => {
            let raw = perfbase_drivers::input::read_text(file)
                .map_err(|e| bad_input(format!("{}: cannot read it: {e}", file.display())))?;
            har::plan(&raw, *include_static)
                .map_err(|e| bad_input(format!("{}: {e}", file.display())))?
        }
    };
    match &a.output {
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`| head`) is no failure of the import.
            let _ = out.write_all(plan.as_bytes());
        }
        Some(path) => {
            if path.exists() && !a.force {
                return Err(bad_input(format!(
                    "{} exists: give another -o FILE, or --force to replace it",
                    path.display()
                )));
            }
            std::fs::write(path, plan)
                .map_err(|e| bad_input(format!("cannot write {}: {e}", path.display())))?;
            errln!(
                "perfbase: wrote {}: review it, then perfbase run {}",
                path.display(),
                path.display()
            );
        }
    }
    Ok(Exit::Success)
}
