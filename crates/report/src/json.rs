//! The result JSON (`perfbase.result/v1`), written atomically: a temporary file in the same
//! folder, flushed to disk, then renamed over the destination, so a crash or Ctrl-C never
//! leaves a half-written result.

use perfbase_core::result::RunResult;
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Writes `text` where `path` says, without ever destroying what the path points to:
/// - `-` is standard output;
/// - a FIFO, a character device (`/dev/null`, `/dev/stdout`) or `/dev/fd/N` (`>(…)`) is
///   written directly, since replacing it would cut off its reader or, run as root, replace a
///   system file;
/// - a symbolic link is followed, and its target is replaced atomically;
/// - a regular file (or a new one) is replaced atomically: a temporary file beside it,
///   synced, then renamed over it, so a reader (or a crash) sees the old file or the new one,
///   never half of one.
pub fn write_text_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }
    if is_stream(path) {
        let mut f = open_stream(path)?;
        return f.write_all(text.as_bytes()).and_then(|_| f.flush());
    }
    replace_atomically(&resolve_links(path)?, text)
}

/// How long a FIFO may go without a reader before its output is given up.
const READER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Opens an output for writing (created when missing, truncated when a file) without ever
/// blocking on a FIFO that has no reader, which a plain open does until one comes: no
/// signal would then end the run. The open is tried without blocking, every 50 ms, for at
/// most [`READER_WAIT`]; then the FIFO is refused, naming it. The file is then switched back to
/// blocking writes, so a slow reader is waited for (a second Ctrl-C still ends the run).
pub fn open_stream(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    use std::os::unix::io::AsRawFd as _;
    let fifo = std::fs::metadata(path).is_ok_and(|m| {
        use std::os::unix::fs::FileTypeExt as _;
        m.file_type().is_fifo()
    });
    let deadline = std::time::Instant::now() + READER_WAIT;
    let file = loop {
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(!fifo)
            .truncate(!fifo)
            .custom_flags(libc::O_NONBLOCK)
            .open(path);
        match opened {
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if std::time::Instant::now() >= deadline {
                    return Err(std::io::Error::other(format!(
                        "{}: a FIFO with no reader for {} s; start its reader first",
                        path.display(),
                        READER_WAIT.as_secs()
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => break other?,
        }
    };
    // SAFETY: fcntl on a descriptor this function owns; it reads and sets status flags only.
    unsafe {
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Whether `path` is standard output (`-`), a FIFO, a device or a `/dev/fd/N`: written once
/// and directly, so a result is sent there only when it is final (a reader of a FIFO stops
/// at the first writer's end).
pub fn is_stream(path: &Path) -> bool {
    path.as_os_str() == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The file a chain of symbolic links ends at (which may not exist yet), or `path` itself.
fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    // Linux gives up after 40 links (ELOOP); so does this.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

fn replace_atomically(path: &Path, text: &str) -> std::io::Result<()> {
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
    // The replacement keeps the mode of what it replaces: a 600 result stays private, a
    // read-only one stays read-only (its folder's permission is what allows the rename).
    if let Ok(m) = std::fs::metadata(path) {
        f.set_permissions(m.permissions())?;
    }
    let res = f
        .write_all(text.as_bytes())
        .and_then(|_| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path));
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}
