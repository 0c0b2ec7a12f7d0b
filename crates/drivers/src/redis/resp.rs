//! RESP2, the Redis serialisation protocol: commands written into a reused buffer, replies
//! parsed in place (kind and length only; arrays are skipped, not built), and a small value
//! parser for the few replies whose contents matter outside the hot path (`CLUSTER SLOTS`).

/// One parsed reply: its kind and what the driver checks of it. Byte ranges are not kept;
/// the text of an error reply is copied out (it is the rare path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+...`: a simple string such as `OK` or `PONG`.
    Simple,
    /// `-...`: an error reply, its line without the `-`.
    Error(String),
    /// `:n`: an integer.
    Integer(i64),
    /// `$n`: a bulk string of `n` bytes.
    Bulk(usize),
    /// `$-1` or `*-1`: the null bulk string or array.
    Null,
    /// `*n`: an array of `n` elements (all of them skipped).
    Array(usize),
}

/// A reply that does not follow RESP2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// The largest bulk string or array accepted (a guard against garbage lengths).
pub const MAX_LEN: i64 = 512 * 1024 * 1024;

/// Finds the `\r\n` that ends the line starting at `from`; returns the index of the `\r`.
fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    let rest = buf.get(from..)?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let end = from + nl;
    if end > from && buf[end - 1] == b'\r' {
        Some(end - 1)
    } else {
        // A `\n` without its `\r`: never valid.
        Some(usize::MAX)
    }
}

fn parse_int(digits: &[u8]) -> Result<i64, Malformed> {
    let (neg, digits) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    if digits.is_empty() || digits.len() > 19 {
        return Err(Malformed("bad integer"));
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(Malformed("bad integer"));
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(i64::from(d - b'0')))
            .ok_or(Malformed("integer overflow"))?;
    }
    Ok(if neg { -v } else { v })
}

/// The header of one reply at `buf[at..]`: its kind byte, the line's contents and the index
/// just past its `\r\n`. `None` when the line is not complete yet.
fn header(buf: &[u8], at: usize) -> Result<Option<(u8, usize, usize, usize)>, Malformed> {
    let Some(&kind) = buf.get(at) else {
        return Ok(None);
    };
    match line_end(buf, at + 1) {
        None => Ok(None),
        Some(usize::MAX) => Err(Malformed("line not terminated by CRLF")),
        Some(cr) => Ok(Some((kind, at + 1, cr, cr + 2))),
    }
}

/// Parses one reply at the start of `buf`: the reply and the number of bytes it takes, or
/// `None` when more bytes are needed. Array elements are skipped without building values.
pub fn parse(buf: &[u8]) -> Result<Option<(Reply, usize)>, Malformed> {
    let Some((kind, s, e, mut pos)) = header(buf, 0)? else {
        return Ok(None);
    };
    let reply = match kind {
        b'+' => Reply::Simple,
        b'-' => Reply::Error(String::from_utf8_lossy(&buf[s..e]).into_owned()),
        b':' => Reply::Integer(parse_int(&buf[s..e])?),
        b'$' => match parse_int(&buf[s..e])? {
            -1 => Reply::Null,
            n if (0..=MAX_LEN).contains(&n) => {
                let n = n as usize;
                if buf.len() < pos + n + 2 {
                    return Ok(None);
                }
                if &buf[pos + n..pos + n + 2] != b"\r\n" {
                    return Err(Malformed("bulk string not terminated by CRLF"));
                }
                pos += n + 2;
                Reply::Bulk(n)
            }
            _ => return Err(Malformed("bad bulk length")),
        },
        b'*' => match parse_int(&buf[s..e])? {
            -1 => Reply::Null,
            n if (0..=MAX_LEN).contains(&n) => {
                // Skip the elements, nested arrays included, without recursion.
                let mut remaining = n as u64;
                while remaining > 0 {
                    let Some((k, s, e, next)) = header(buf, pos)? else {
                        return Ok(None);
                    };
                    remaining -= 1;
                    pos = next;
                    match k {
                        b'+' | b'-' | b':' => {}
                        b'$' => match parse_int(&buf[s..e])? {
                            -1 => {}
                            n if (0..=MAX_LEN).contains(&n) => {
                                let n = n as usize;
                                if buf.len() < pos + n + 2 {
                                    return Ok(None);
                                }
                                pos += n + 2;
                            }
                            _ => return Err(Malformed("bad bulk length")),
                        },
                        b'*' => match parse_int(&buf[s..e])? {
                            -1 => {}
                            m if (0..=MAX_LEN).contains(&m) => remaining += m as u64,
                            _ => return Err(Malformed("bad array length")),
                        },
                        _ => return Err(Malformed("unknown reply type")),
                    }
                }
                Reply::Array(n as usize)
            }
            _ => return Err(Malformed("bad array length")),
        },
        _ => return Err(Malformed("unknown reply type")),
    };
    Ok(Some((reply, pos)))
}

/// A fully built reply, for the few replies whose contents are needed (not the hot path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Simple(Vec<u8>),
    Error(String),
    Integer(i64),
    Bulk(Vec<u8>),
    Null,
    Array(Vec<Value>),
}

/// Parses one reply into a [`Value`]: the value and its length, or `None` if incomplete.
pub fn parse_value(buf: &[u8]) -> Result<Option<(Value, usize)>, Malformed> {
    value_at(buf, 0, 0)
}

fn value_at(buf: &[u8], at: usize, depth: u32) -> Result<Option<(Value, usize)>, Malformed> {
    if depth > 16 {
        return Err(Malformed("arrays nested too deeply"));
    }
    let Some((kind, s, e, pos)) = header(buf, at)? else {
        return Ok(None);
    };
    Ok(Some(match kind {
        b'+' => (Value::Simple(buf[s..e].to_vec()), pos),
        b'-' => (
            Value::Error(String::from_utf8_lossy(&buf[s..e]).into_owned()),
            pos,
        ),
        b':' => (Value::Integer(parse_int(&buf[s..e])?), pos),
        b'$' => match parse_int(&buf[s..e])? {
            -1 => (Value::Null, pos),
            n if (0..=MAX_LEN).contains(&n) => {
                let n = n as usize;
                if buf.len() < pos + n + 2 {
                    return Ok(None);
                }
                (Value::Bulk(buf[pos..pos + n].to_vec()), pos + n + 2)
            }
            _ => return Err(Malformed("bad bulk length")),
        },
        b'*' => match parse_int(&buf[s..e])? {
            -1 => (Value::Null, pos),
            n if (0..=MAX_LEN).contains(&n) => {
                let mut items = Vec::with_capacity((n as usize).min(1024));
                let mut pos = pos;
                for _ in 0..n {
                    let Some((v, next)) = value_at(buf, pos, depth + 1)? else {
                        return Ok(None);
                    };
                    items.push(v);
                    pos = next;
                }
                (Value::Array(items), pos)
            }
            _ => return Err(Malformed("bad array length")),
        },
        _ => return Err(Malformed("unknown reply type")),
    }))
}

/// Appends the decimal digits of `n`.
pub fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends the header of a command of `args` arguments: `*args\r\n`.
pub fn push_array_header(out: &mut Vec<u8>, args: usize) {
    out.push(b'*');
    push_decimal(out, args as u64);
    out.extend_from_slice(b"\r\n");
}

/// Appends one argument as a bulk string.
pub fn push_arg(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'$');
    push_decimal(out, arg.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

/// Appends a whole command.
pub fn push_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    push_array_header(out, args.len());
    for a in args {
        push_arg(out, a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind() {
        assert_eq!(parse(b"+OK\r\n"), Ok(Some((Reply::Simple, 5))));
        assert_eq!(
            parse(b"-ERR no\r\n"),
            Ok(Some((Reply::Error("ERR no".into()), 9)))
        );
        assert_eq!(parse(b":-42\r\n"), Ok(Some((Reply::Integer(-42), 6))));
        assert_eq!(parse(b"$3\r\nabc\r\n"), Ok(Some((Reply::Bulk(3), 9))));
        assert_eq!(parse(b"$-1\r\n"), Ok(Some((Reply::Null, 5))));
        assert_eq!(parse(b"*-1\r\n"), Ok(Some((Reply::Null, 5))));
        let nested = b"*2\r\n*2\r\n:1\r\n$1\r\nx\r\n+y\r\n";
        assert_eq!(parse(nested), Ok(Some((Reply::Array(2), nested.len()))));
    }

    #[test]
    fn incomplete_and_malformed() {
        for partial in [
            &b""[..],
            b"+O",
            b"+OK\r",
            b"$3\r\nab",
            b"$3\r\nabc\r",
            b"*2\r\n:1\r\n",
        ] {
            assert_eq!(parse(partial), Ok(None), "{partial:?}");
        }
        assert!(parse(b"?x\r\n").is_err());
        assert!(parse(b"$3\r\nabcde\r\n").is_err());
        assert!(parse(b":1\n").is_err());
        assert!(parse(b"$-5\r\n").is_err());
    }

    #[test]
    fn values_and_commands() {
        let mut out = Vec::new();
        push_command(&mut out, &[b"SET", b"k", b""]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
        let v = parse_value(b"*2\r\n:1\r\n*1\r\n$2\r\nab\r\n")
            .ok()
            .flatten();
        assert_eq!(
            v,
            Some((
                Value::Array(vec![
                    Value::Integer(1),
                    Value::Array(vec![Value::Bulk(b"ab".to_vec())])
                ]),
                20
            ))
        );
        let mut d = Vec::new();
        push_decimal(&mut d, 0);
        push_decimal(&mut d, u64::MAX);
        assert_eq!(d, b"018446744073709551615");
    }
}
