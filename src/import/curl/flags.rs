//! curl's flags as import reads them: the table of those it knows (what shapes the request,
//! and what only changes what curl prints, saves or retries), short ones given together
//! (`-sSL`, `-XPOST`), and the `-d` family's values made as curl makes them.

/// How a flag is read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Method,
    Header,
    Data(Data),
    Json,
    User,
    UserAgent,
    Referer,
    Cookie,
    Insecure,
    Get,
    Head,
    Url,
    /// Changes nothing about the request (output, verbosity, retries, redirects).
    Ignored,
    IgnoredWithValue,
}

/// The `-d` family: what `@file` means, and whether the value is encoded.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Data {
    /// `-d`, `--data`, `--data-ascii`: `@file` is read, its line breaks dropped.
    Ascii,
    /// `--data-binary`: `@file` is read as it is.
    Binary,
    /// `--data-raw`: `@` is just a character.
    Raw,
    /// `--data-urlencode`: `content`, `=content`, `name=content`, `@file`, `name@file`.
    UrlEncode,
}

impl Kind {
    fn takes_value(self) -> bool {
        !matches!(
            self,
            Kind::Insecure | Kind::Get | Kind::Head | Kind::Ignored
        )
    }
}

/// The flags read: short form, long form, how.
const FLAGS: [(Option<char>, &str, Kind); 38] = [
    (Some('X'), "--request", Kind::Method),
    (Some('H'), "--header", Kind::Header),
    (Some('d'), "--data", Kind::Data(Data::Ascii)),
    (None, "--data-ascii", Kind::Data(Data::Ascii)),
    (None, "--data-binary", Kind::Data(Data::Binary)),
    (None, "--data-raw", Kind::Data(Data::Raw)),
    (None, "--data-urlencode", Kind::Data(Data::UrlEncode)),
    (None, "--json", Kind::Json),
    (Some('u'), "--user", Kind::User),
    (Some('A'), "--user-agent", Kind::UserAgent),
    (Some('e'), "--referer", Kind::Referer),
    (Some('b'), "--cookie", Kind::Cookie),
    (Some('k'), "--insecure", Kind::Insecure),
    (Some('G'), "--get", Kind::Get),
    (Some('I'), "--head", Kind::Head),
    (None, "--url", Kind::Url),
    (Some('s'), "--silent", Kind::Ignored),
    (Some('S'), "--show-error", Kind::Ignored),
    (Some('v'), "--verbose", Kind::Ignored),
    (Some('i'), "--include", Kind::Ignored),
    (Some('L'), "--location", Kind::Ignored),
    (Some('f'), "--fail", Kind::Ignored),
    (None, "--fail-with-body", Kind::Ignored),
    (None, "--compressed", Kind::Ignored),
    (Some('#'), "--progress-bar", Kind::Ignored),
    (None, "--no-progress-meter", Kind::Ignored),
    (Some('g'), "--globoff", Kind::Ignored),
    (Some('N'), "--no-buffer", Kind::Ignored),
    (None, "--http1.1", Kind::Ignored),
    (Some('O'), "--remote-name", Kind::Ignored),
    (None, "--create-dirs", Kind::Ignored),
    (Some('o'), "--output", Kind::IgnoredWithValue),
    (Some('w'), "--write-out", Kind::IgnoredWithValue),
    (Some('D'), "--dump-header", Kind::IgnoredWithValue),
    (Some('m'), "--max-time", Kind::IgnoredWithValue),
    (None, "--connect-timeout", Kind::IgnoredWithValue),
    (None, "--retry", Kind::IgnoredWithValue),
    (None, "--max-redirs", Kind::IgnoredWithValue),
];

/// What the flags asked for, before it is a request.
#[derive(Default)]
pub(super) struct Flags {
    pub(super) method: Option<String>,
    pub(super) head: bool,
    pub(super) get: bool,
    pub(super) url: Option<String>,
    pub(super) headers: Vec<(String, String)>,
    /// `-H 'Name:'`: curl leaves out a header it would add (a default Content-Type).
    pub(super) removed: Vec<String>,
    /// The `-d` family's values and `--json`'s, in order; whether `--json` gave it.
    pub(super) data: Vec<(String, bool)>,
    pub(super) user: Option<String>,
    pub(super) insecure: bool,
}

fn unknown(flag: &str, word: &str) -> String {
    let within = if flag == word {
        String::new()
    } else {
        format!(" (in {word})")
    };
    format!(
        "curl's {flag}{within} is not read by perfbase import: drop it if it does not change \
         the request, or write the plan by hand (read: -X, -H, -d, --data-raw, --data-binary, \
         --data-urlencode, --json, -u, -A, -e, -b, -k, -G, -I, --url)"
    )
}

impl Flags {
    /// Reads the words after `curl`: long flags, short ones alone or together (`-sSL`,
    /// `-XPOST`, the value attached or the next word), and the URL.
    pub(super) fn read(words: Vec<String>) -> Result<Flags, String> {
        let mut f = Flags::default();
        let mut words = words.into_iter();
        while let Some(w) = words.next() {
            let mut next = |flag: &str| words.next().ok_or_else(|| format!("{flag} needs a value"));
            if w.starts_with("--") {
                let (_, _, kind) = FLAGS
                    .iter()
                    .find(|(_, long, _)| *long == w)
                    .ok_or_else(|| unknown(&w, &w))?;
                let value = if kind.takes_value() {
                    next(&w)?
                } else {
                    String::new()
                };
                f.apply(&w, *kind, value)?;
            } else if w.len() > 1 && w.starts_with('-') {
                let shorts: Vec<char> = w[1..].chars().collect();
                for (k, c) in shorts.iter().enumerate() {
                    let flag = format!("-{c}");
                    let (_, _, kind) = FLAGS
                        .iter()
                        .find(|(short, _, _)| *short == Some(*c))
                        .ok_or_else(|| unknown(&flag, &w))?;
                    if !kind.takes_value() {
                        f.apply(&flag, *kind, String::new())?;
                        continue;
                    }
                    let rest: String = shorts[k + 1..].iter().collect();
                    let value = if rest.is_empty() { next(&flag)? } else { rest };
                    f.apply(&flag, *kind, value)?;
                    break;
                }
            } else {
                f.apply("URL", Kind::Url, w)?;
            }
        }
        Ok(f)
    }

    fn apply(&mut self, flag: &str, kind: Kind, v: String) -> Result<(), String> {
        match kind {
            Kind::Method => self.method = Some(v.to_ascii_uppercase()),
            Kind::Header => self.header(flag, &v)?,
            Kind::Data(d) => self.data.push((data(flag, d, &v)?, false)),
            Kind::Json => self.data.push((at_file(flag, &v, false)?, true)),
            Kind::User => self.user = Some(v),
            Kind::UserAgent => self.headers.push(("User-Agent".into(), v)),
            Kind::Referer => {
                // `;auto` asks curl to set it on redirects, which a plan does not follow.
                let r = v.strip_suffix(";auto").unwrap_or(&v).to_string();
                self.headers.push(("Referer".into(), r));
            }
            Kind::Cookie if !v.contains('=') => {
                return Err(format!(
                    "{flag} {v}: a cookie file, which import does not read; give the cookies \
                     themselves: {flag} 'name=value; other=value'"
                ))
            }
            Kind::Cookie => self.headers.push(("Cookie".into(), v)),
            Kind::Insecure => self.insecure = true,
            Kind::Get => self.get = true,
            Kind::Head => self.head = true,
            Kind::Url => match &self.url {
                Some(first) => {
                    return Err(format!(
                        "the command names two URLs ({first} and {v}): import one request at \
                         a time"
                    ))
                }
                None => self.url = Some(v),
            },
            Kind::Ignored | Kind::IgnoredWithValue => {}
        }
        Ok(())
    }

    /// `Name: value`; `Name:` leaves out a header curl would add; `Name;` sends it empty.
    fn header(&mut self, flag: &str, h: &str) -> Result<(), String> {
        let bad = || format!("{flag} '{h}': write a header as 'Name: value'");
        if h.starts_with('@') {
            return Err(format!(
                "{flag} {h}: headers from a file are not read; give each as {flag} 'Name: value'"
            ));
        }
        match h.split_once(':') {
            Some((k, _)) if k.trim().is_empty() => return Err(bad()),
            Some((k, v)) if v.trim().is_empty() => self.removed.push(k.trim().to_string()),
            Some((k, v)) => self
                .headers
                .push((k.trim().to_string(), v.trim().to_string())),
            None => match h.strip_suffix(';') {
                Some(k) if !k.trim().is_empty() => {
                    self.headers.push((k.trim().to_string(), String::new()))
                }
                _ => return Err(bad()),
            },
        }
        Ok(())
    }
}

/// A `-d`-family value as curl sends it.
fn data(flag: &str, d: Data, v: &str) -> Result<String, String> {
    Ok(match d {
        // curl drops the line breaks of a file given to -d (not to --data-binary).
        Data::Ascii => at_file(flag, v, true)?,
        Data::Binary => at_file(flag, v, false)?,
        Data::Raw => v.to_string(),
        Data::UrlEncode => {
            let (eq, at) = (v.find('='), v.find('@'));
            let (name, content) = if let Some(rest) = v.strip_prefix('=') {
                (None, rest.to_string())
            } else if let Some(e) = eq.filter(|e| at.is_none_or(|a| *e < a)) {
                (Some(&v[..e]), v[e + 1..].to_string())
            } else if let Some(a) = at {
                let name = Some(&v[..a]).filter(|n| !n.is_empty());
                (name, at_file(flag, &v[a..], false)?)
            } else {
                (None, v.to_string())
            };
            let encoded = encode(&content);
            match name {
                Some(n) => format!("{n}={encoded}"),
                None => encoded,
            }
        }
    })
}

/// `@file`'s text (relative to the current folder), or the value itself.
fn at_file(flag: &str, v: &str, drop_breaks: bool) -> Result<String, String> {
    let Some(file) = v.strip_prefix('@') else {
        return Ok(v.to_string());
    };
    if file == "-" {
        return Err(format!(
            "{flag} @-: the body comes from standard input, which an import cannot replay; \
             save it to a file and give {flag} @FILE"
        ));
    }
    let text = perfbase_drivers::input::read_text(std::path::Path::new(file))
        .map_err(|e| format!("{flag} @{file}: cannot read it as text: {e}"))?;
    Ok(if drop_breaks {
        text.replace(['\r', '\n'], "")
    } else {
        text
    })
}

/// Percent-encoding as `--data-urlencode` does it: all but letters, digits and `-._~`.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
