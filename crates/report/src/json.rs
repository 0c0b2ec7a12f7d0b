//! The result JSON (`perfbase.result/v1`), written atomically: a temporary file in the same
//! folder, flushed to disk, then renamed over the destination, so a crash or Ctrl-C never
//! leaves a half-written result.

use perfbase_core::result::RunResult;
use std::io::Write;
use std::path::Path;

/// Pretty JSON of a result.
pub fn render(result: &RunResult) -> String {
    // RunResult holds only strings, numbers, maps with string keys and vectors: it always
    // serialises.
    serde_json::to_string_pretty(result).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Writes `result` to `path` atomically.
pub fn write_atomic(path: &Path, result: &RunResult) -> std::io::Result<()> {
    write_text_atomic(path, &format!("{}\n", render(result)))
}

/// Writes `text` to a temporary file beside `path`, syncs it and renames it over `path`, so
/// a reader (or a crash) sees the old file or the new one, never half of one.
pub fn write_text_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    let res = f
        .write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}
