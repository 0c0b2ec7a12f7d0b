//! The results store as the commands use it: every result is saved (unless --no-store), runs
//! are found by id, `latest`, labels or a JSON file, and nothing measured is ever lost — when
//! the store cannot take a result, it is written to a file beside it and the path is printed.

use crate::exit::{bad_input, AppError};
use perfbase_core::result::RunResult;
use perfbase_store::{Labels, RunRef, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The label under which an agent's result is saved: `agent-run=ID`.
pub const RUN_LABEL: &str = "agent-run";
/// The label of a merged run that `perfbase merge --run-id ID --save` saved.
pub const MERGED_LABEL: &str = "merged-run";
/// The label of a merged run some of whose agents were lost: their segments.
pub const LOST_LABEL: &str = "lost-segments";
/// The label of a merged run some of whose agents were interrupted: their segments.
pub const INTERRUPTED_LABEL: &str = "interrupted-segments";

/// Where results go and how they are labelled.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    pub location: String,
    pub disabled: bool,
    pub labels: Vec<(String, String)>,
}

/// Parses `KEY=VALUE` labels by the store's rule, so a label the store would refuse stops
/// the command before any load.
pub fn parse_labels(raw: &[String]) -> Result<Vec<(String, String)>, AppError> {
    raw.iter()
        .map(|l| perfbase_store::parse_label(l).map_err(|e| bad_input(format!("--label: {e}"))))
        .collect()
}

/// Opens the store.
pub fn open(o: &StoreOptions) -> Result<Store, AppError> {
    Store::open(&o.location).map_err(|e| {
        bad_input(format!(
            "--store {}: {e}",
            perfbase_store::redact_location(&o.location)
        ))
    })
}

/// A result neither the store nor the file beside it could take (a full disk, a read-only
/// folder). It has been printed on standard output, the last place left, and the command
/// must exit 4: it did not keep what it measured.
#[derive(Debug)]
pub struct Lost;

/// Saves `result`; on failure writes it to a file next to the store instead. Returns the id
/// (none when no store is used or the file took it), or [`Lost`].
pub fn save(
    o: &StoreOptions,
    kind: &str,
    result: &RunResult,
    more: &BTreeMap<String, String>,
) -> Result<Option<i64>, Lost> {
    if o.disabled {
        return Ok(None);
    }
    let mut labels: BTreeMap<String, String> = more.clone();
    labels.extend(o.labels.iter().cloned());
    let saved = Store::open(&o.location).and_then(|mut s| s.save(kind, result, &Labels(labels)));
    match saved {
        Ok(id) => {
            errln!(
                "perfbase: saved as run {id} in {}",
                perfbase_store::redact_location(&o.location)
            );
            Ok(Some(id))
        }
        Err(e) => {
            let fallback = fallback_path(&o.location);
            let written = fallback
                .parent()
                .map(std::fs::create_dir_all)
                .unwrap_or(Ok(()))
                .and_then(|_| perfbase_report::json::write_atomic(&fallback, result));
            match written {
                Ok(()) => {
                    errln!(
                        "perfbase: warning: the store could not save this run ({e}); it was written to {} instead",
                        fallback.display()
                    );
                    Ok(None)
                }
                Err(w) => {
                    errln!(
                        "perfbase: error: the store could not save this run ({e}), nor {}: {w}; \
                         the result follows on standard output, the last place left",
                        fallback.display()
                    );
                    last_resort(result);
                    Err(Lost)
                }
            }
        }
    }
}

/// Prints `result` as its JSON on standard output: nothing measured is lost while a
/// terminal or a pipe can still take it.
fn last_resort(result: &RunResult) {
    use std::io::Write as _;
    let text = serde_json::to_string_pretty(result).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|_| out.flush());
}

/// A store location that can only be wrong, refused before any load: a device, a FIFO or a
/// socket (`--store /dev/null` would have left the run in `/dev/unsaved-….json`). A file, a
/// folder (the unsaved run then goes inside it), a path still to be created or a URL pass.
pub fn check_location(location: &str) -> Result<(), AppError> {
    if perfbase_store::is_postgres_url(location) || location.contains("://") {
        return Ok(());
    }
    match std::fs::metadata(location) {
        Ok(m) if !m.is_file() && !m.is_dir() => Err(bad_input(format!(
            "--store {}: not a file but a device, FIFO or socket; give a SQLite file (e.g. \
             .perfbase/results.db) or a postgres:// URL, or --no-store",
            perfbase_core::redact::printable(location)
        ))),
        _ => Ok(()),
    }
}

fn fallback_path(location: &str) -> PathBuf {
    let dir = if perfbase_store::is_postgres_url(location) || location.contains("://") {
        PathBuf::from(".perfbase")
    } else if Path::new(location).is_dir() {
        // `--store` named a folder (no SQLite file): the unsaved run goes into it.
        PathBuf::from(location)
    } else {
        Path::new(location)
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    };
    // To the millisecond, so two runs saved in one second keep apart.
    let stamp = crate::env::format_utc(std::time::SystemTime::now(), "%Y%m%d%H%M%S%3f");
    dir.join(format!("unsaved-{stamp}.json"))
}

/// Finds a run: an existing JSON file, or a stored run reference. Returns a label for tables.
pub fn load(
    store: &mut Option<Store>,
    o: &StoreOptions,
    reference: &str,
) -> Result<(String, RunResult), AppError> {
    load_labelled(store, o, reference).map(|(name, _, r)| (name, r))
}

/// Like [`load`], with the labels the run was saved with (none for a file).
pub fn load_labelled(
    store: &mut Option<Store>,
    o: &StoreOptions,
    reference: &str,
) -> Result<
    (
        String,
        std::collections::BTreeMap<String, String>,
        RunResult,
    ),
    AppError,
> {
    let path = Path::new(reference);
    // `-` is standard input; a FIFO or `/dev/fd/N` (`<(…)`) is read like a file.
    let readable = path.metadata().is_ok_and(|m| !m.is_dir());
    if reference == "-" || readable {
        let text = if reference == "-" {
            perfbase_drivers::input::read_from(std::io::stdin().lock())
                .and_then(perfbase_drivers::input::text)
        } else {
            perfbase_drivers::input::read_text(path)
        }
        .map_err(|e| bad_input(format!("{reference}: cannot read: {e}")))?;
        let r: RunResult = serde_json::from_str(&text)
            .map_err(|e| bad_input(format!("{reference}: not a perfbase result: {e}")))?;
        if r.schema != perfbase_core::result::SCHEMA {
            // Fields that parse may still mean something else in another version: refuse
            // rather than read a future or foreign result as this one.
            return Err(bad_input(format!(
                "{reference}: schema '{}' is not {}, the one this perfbase reads; a newer \
                 perfbase wrote it, or another tool",
                perfbase_core::redact::printable(&r.schema),
                perfbase_core::result::SCHEMA
            )));
        }
        let name = match reference {
            "-" => "stdin".to_string(),
            _ => path
                .file_stem()
                .map_or(reference.to_string(), |s| s.to_string_lossy().into_owned()),
        };
        return Ok((name, Default::default(), r));
    }
    // Looks like a file (a path or a .json name) but is none: say so, not "invalid run id".
    if reference.contains('/') || reference.ends_with(".json") {
        return Err(bad_input(format!(
            "{reference}: no such file (give a result JSON file, a run id, latest or latest:KEY=VALUE)"
        )));
    }
    let r: RunRef = reference.parse().map_err(|e| {
        bad_input(format!(
            "'{reference}': {e} (give a run id, latest, latest:KEY=VALUE or a result JSON file)"
        ))
    })?;
    if store.is_none() {
        *store = Some(open(o)?);
    }
    let s = store.as_mut().expect("opened just above");
    let run = s.get(&r).map_err(|e| bad_input(e.to_string()))?;
    Ok((
        format!("run {}", run.summary.id),
        run.summary.labels,
        run.result,
    ))
}
