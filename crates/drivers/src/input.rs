//! Files perfbase reads as input (plans, targets, corpora, request bodies, results), each
//! read with one size limit. Reading `/dev/zero` or a multi-gigabyte file by mistake would
//! otherwise fill memory before any error; with the limit it is one clear error after at
//! most [`MAX_INPUT_BYTES`] bytes, in well under a second.

use std::io::{self, Read};
use std::path::Path;

/// The largest input file perfbase reads: 256 MiB (the same as a generated corpus's limit).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads a whole file (or FIFO, or `/dev/stdin`), refusing one larger than [`MAX_INPUT_BYTES`].
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_from(std::fs::File::open(path)?)
}

/// Reads a whole stream, refusing one larger than [`MAX_INPUT_BYTES`].
pub fn read_from(source: impl Read) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    source.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than perfbase's {} MiB limit for an input file",
                MAX_INPUT_BYTES >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// [`read`] for text: the file must be UTF-8.
pub fn read_text(path: &Path) -> io::Result<String> {
    text(read(path)?)
}

/// The bytes as UTF-8 text, or an error that says where the first bad byte is.
pub fn text(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text (an invalid byte on line {line}, at offset {at})"),
        )
    })
}

/// The line named by a [`text`] error, if that is what `e` is.
pub fn bad_text_line(e: &io::Error) -> Option<usize> {
    let message = e.to_string();
    let rest = message.split("an invalid byte on line ").nth(1)?;
    rest.split(',').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_after_the_limit() {
        let started = std::time::Instant::now();
        let err = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("256 MiB limit"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_file_at_the_limit_is_read_and_bad_utf8_is_located() {
        let bytes = read_from(io::repeat(b'a').take(MAX_INPUT_BYTES)).unwrap();
        assert_eq!(bytes.len() as u64, MAX_INPUT_BYTES);
        let err = text(b"ok\nyes\xffno".to_vec()).unwrap_err();
        assert!(err.to_string().contains("line 2, at offset 6"), "{err}");
        assert_eq!(bad_text_line(&err), Some(2));
    }
}
