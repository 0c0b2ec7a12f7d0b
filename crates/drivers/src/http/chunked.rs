//! An incremental decoder for `Transfer-Encoding: chunked` bodies (RFC 9112 §7.1). It is fed
//! whatever bytes arrive, in any split, counts the body without keeping it and says when the
//! body (including any trailer section) has ended.

use std::fmt;

/// What is wrong with a chunked body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkError(&'static str);

impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed chunked body: {}", self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the hex size; `digits` so far, `ext` once a `;` extension started.
    Size {
        value: u64,
        digits: u8,
        ext: bool,
    },
    SizeLf {
        value: u64,
    },
    Data(u64),
    DataCr,
    DataLf,
    /// Trailer section: `len` bytes into the current line.
    Trailer {
        len: usize,
    },
    TrailerLf {
        len: usize,
    },
    Done,
}

/// The decoder's state between reads.
#[derive(Debug, Clone)]
pub struct Decoder {
    state: State,
    /// Body bytes (chunk data) seen so far.
    pub data_bytes: u64,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

const NEW_SIZE: State = State::Size {
    value: 0,
    digits: 0,
    ext: false,
};

impl Decoder {
    pub fn new() -> Decoder {
        Decoder {
            state: NEW_SIZE,
            data_bytes: 0,
        }
    }

    /// Whether the whole body has been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consumes bytes from `input`; returns how many belonged to the body. Stops at the end
    /// of the body, so anything after it is left unconsumed. Per byte of every chunked body:
    /// chunk data is skipped in one step, every other byte goes through `next_state`, an
    /// `#[inline]` function of the state and the byte that the loop compiles into itself.
    pub fn feed(&mut self, input: &[u8]) -> Result<usize, ChunkError> {
        self.feed_data(input, |_| {})
    }

    /// [`Decoder::feed`], handing each run of chunk data to `on_data` as it passes (an event
    /// stream's bytes, without the framing).
    #[inline]
    pub fn feed_data(
        &mut self,
        input: &[u8],
        mut on_data: impl FnMut(&[u8]),
    ) -> Result<usize, ChunkError> {
        let mut i = 0;
        while i < input.len() {
            match self.state {
                State::Done => break,
                State::Data(rem) => {
                    let take = rem.min((input.len() - i) as u64);
                    on_data(&input[i..i + take as usize]);
                    i += take as usize;
                    self.data_bytes += take;
                    self.state = if take == rem {
                        State::DataCr
                    } else {
                        State::Data(rem - take)
                    };
                    continue;
                }
                _ => {}
            }
            let b = input[i];
            i += 1;
            self.state = next_state(self.state, b)?;
        }
        Ok(i)
    }
}

/// The state after the byte `b` outside chunk data (the size lines, the CRLF after each
/// chunk's data, the trailer section).
#[inline]
fn next_state(state: State, b: u8) -> Result<State, ChunkError> {
    Ok(match state {
        State::Size { value, digits, ext } => size_byte(value, digits, ext, b)?,
        State::SizeLf { value } => {
            if b != b'\n' {
                return Err(ChunkError("expected LF after chunk size"));
            }
            end_of_size(value)
        }
        State::DataCr => match b {
            b'\r' => State::DataLf,
            b'\n' => NEW_SIZE,
            _ => return Err(ChunkError("expected CRLF after chunk data")),
        },
        State::DataLf => {
            if b != b'\n' {
                return Err(ChunkError("expected LF after chunk data"));
            }
            NEW_SIZE
        }
        State::Trailer { len } => match b {
            b'\r' => State::TrailerLf { len },
            b'\n' if len == 0 => State::Done,
            b'\n' => State::Trailer { len: 0 },
            _ => State::Trailer { len: len + 1 },
        },
        State::TrailerLf { len } => {
            if b != b'\n' {
                return Err(ChunkError("expected LF in trailer section"));
            }
            if len == 0 {
                State::Done
            } else {
                State::Trailer { len: 0 }
            }
        }
        State::Data(_) | State::Done => unreachable!("handled before reading a byte"),
    })
}

/// The state after the byte `b` of a chunk-size line: a hex digit, the start of an extension
/// (skipped to the line's end), or the line's end.
#[inline]
fn size_byte(value: u64, digits: u8, ext: bool, b: u8) -> Result<State, ChunkError> {
    Ok(if ext {
        match b {
            b'\r' => State::SizeLf { value },
            b'\n' => end_of_size(value),
            _ => State::Size { value, digits, ext },
        }
    } else if let Some(d) = (b as char).to_digit(16) {
        if digits >= 15 {
            return Err(ChunkError("chunk size too large"));
        }
        State::Size {
            value: value * 16 + d as u64,
            digits: digits + 1,
            ext,
        }
    } else if digits == 0 {
        return Err(ChunkError("expected a hexadecimal chunk size"));
    } else {
        match b {
            b';' | b' ' | b'\t' => State::Size {
                value,
                digits,
                ext: true,
            },
            b'\r' => State::SizeLf { value },
            b'\n' => end_of_size(value),
            _ => return Err(ChunkError("invalid character in chunk size")),
        }
    })
}

/// The state after a chunk-size line: the chunk's data, or the trailer section after the
/// last (zero-size) chunk.
#[inline]
fn end_of_size(value: u64) -> State {
    if value == 0 {
        State::Trailer { len: 0 }
    } else {
        State::Data(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encode(body: &[u8], sizes: &[usize], trailer: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let mut rest = body;
        let mut k = 0;
        while !rest.is_empty() {
            let n = sizes.get(k).copied().unwrap_or(7).clamp(1, rest.len());
            k += 1;
            out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
            out.extend_from_slice(&rest[..n]);
            out.extend_from_slice(b"\r\n");
            rest = &rest[n..];
        }
        out.extend_from_slice(b"0\r\n");
        if trailer {
            out.extend_from_slice(b"X-Sum: 1\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }

    #[test]
    fn decodes_a_simple_body() {
        let mut d = Decoder::new();
        let wire = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\nNEXT";
        let used = d.feed(wire).unwrap();
        assert!(d.is_done());
        assert_eq!(d.data_bytes, 11);
        assert_eq!(&wire[used..], b"NEXT");
    }

    #[test]
    fn rejects_garbage() {
        assert!(Decoder::new().feed(b"zz\r\n").is_err());
        assert!(Decoder::new().feed(b"3\r\nabcX").is_err());
        assert!(Decoder::new().feed(b"ffffffffffffffffff\r\n").is_err());
    }

    proptest! {
        #[test]
        fn any_split_decodes_exactly(
            body in proptest::collection::vec(any::<u8>(), 0..3000),
            sizes in proptest::collection::vec(1usize..500, 0..20),
            cuts in proptest::collection::vec(1usize..64, 1..50),
            trailer in any::<bool>(),
        ) {
            let wire = encode(&body, &sizes, trailer);
            let mut d = Decoder::new();
            let mut pos = 0;
            let mut k = 0;
            while pos < wire.len() && !d.is_done() {
                let end = (pos + cuts[k % cuts.len()]).min(wire.len());
                k += 1;
                pos += d.feed(&wire[pos..end]).unwrap();
            }
            prop_assert!(d.is_done());
            prop_assert_eq!(pos, wire.len());
            prop_assert_eq!(d.data_bytes, body.len() as u64);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Decoder::new().feed(&bytes);
        }
    }
}
