//! `perfbase import curl 'curl …'`: the flags of curl that shape a request, read from one
//! command line split as a shell would split it (the `shell-words` crate), written as a plan
//! of that one request.

use super::text::{inline, origin, q, Secrets};
use super::Recorded;

/// Flags that change nothing about the request (output, verbosity, redirects followed by
/// the client, compression asked for): read and dropped. Those that take a value say so.
const HARMLESS: [(&str, bool); 14] = [
    ("-s", false),
    ("--silent", false),
    ("-S", false),
    ("--show-error", false),
    ("-v", false),
    ("--verbose", false),
    ("-i", false),
    ("--include", false),
    ("-L", false),
    ("--location", false),
    ("--compressed", false),
    ("-o", true),
    ("--output", true),
    ("-w", true),
];

/// What a curl command asks for.
struct Command {
    request: Recorded,
    insecure: bool,
}

/// The flags read, before they make a request.
#[derive(Default)]
struct Flags {
    method: Option<String>,
    url: Option<String>,
    headers: Vec<(String, String)>,
    data: Vec<String>,
    insecure: bool,
    get: bool,
}

impl Flags {
    /// Reads every word after `curl`.
    fn read(mut words: impl Iterator<Item = String>) -> Result<Flags, String> {
        let mut f = Flags::default();
        while let Some(w) = words.next() {
            let mut value =
                |flag: &str| words.next().ok_or_else(|| format!("{flag} needs a value"));
            match w.as_str() {
                "-X" | "--request" => f.method = Some(value(&w)?.to_ascii_uppercase()),
                "-H" | "--header" => {
                    let h = value(&w)?;
                    let (k, v) = h
                        .split_once(':')
                        .ok_or_else(|| format!("-H '{h}': write a header as 'Name: value'"))?;
                    f.headers.push((k.trim().to_string(), v.trim().to_string()));
                }
                "-d" | "--data" | "--data-raw" | "--data-binary" | "--data-ascii" => {
                    let d = value(&w)?;
                    f.data
                        .push(match d.strip_prefix('@').filter(|_| w != "--data-raw") {
                            Some(file) => std::fs::read_to_string(file)
                                .map_err(|e| format!("{w} @{file}: cannot read it: {e}"))?,
                            None => d,
                        });
                }
                "--json" => {
                    f.data.push(value(&w)?);
                    f.headers
                        .push(("Content-Type".into(), "application/json".into()));
                    f.headers.push(("Accept".into(), "application/json".into()));
                }
                "-u" | "--user" => {
                    let _credentials = value(&w)?;
                    // Never written: the variable holds base64(user:password).
                    f.headers
                        .push(("Authorization".into(), "Basic credentials".into()));
                }
                "-A" | "--user-agent" => f.headers.push(("User-Agent".into(), value(&w)?)),
                "-e" | "--referer" => f.headers.push(("Referer".into(), value(&w)?)),
                "-b" | "--cookie" => f.headers.push(("Cookie".into(), value(&w)?)),
                "-k" | "--insecure" => f.insecure = true,
                "-G" | "--get" => f.get = true,
                "--url" => f.url = Some(value(&w)?),
                flag if flag.starts_with('-') => f.other(flag, &mut value)?,
                _ => f.url = Some(w),
            }
        }
        Ok(f)
    }

    /// A flag that shapes no request (read and dropped), short flags given together
    /// (`-sSk`), or one perfbase cannot import.
    fn other(
        &mut self,
        flag: &str,
        value: &mut impl FnMut(&str) -> Result<String, String>,
    ) -> Result<(), String> {
        match HARMLESS.iter().find(|(f, _)| *f == flag) {
            Some((_, true)) => value(flag).map(drop),
            Some((_, false)) => Ok(()),
            None if flag.len() > 2
                && !flag.starts_with("--")
                && flag[1..].chars().all(|c| "sSviLkG".contains(c)) =>
            {
                self.insecure |= flag.contains('k');
                self.get |= flag.contains('G');
                Ok(())
            }
            None => Err(format!(
                "curl's {flag} is not read by perfbase import: drop it, or write the plan by \
                 hand (read: -X, -H, -d, --data-raw, --data-binary, --json, -u, -A, -e, -b, \
                 -k, -G, --url)"
            )),
        }
    }
}

/// Reads `line` (`curl [flags] URL`) into its request.
fn parse(line: &str) -> Result<Command, String> {
    let words =
        shell_words::split(line).map_err(|e| format!("the curl command does not split: {e}"))?;
    let mut words = words.into_iter();
    match words.next().as_deref() {
        Some("curl") => {}
        other => {
            return Err(format!(
                "give the whole curl command, starting with 'curl' (it starts with {:?})",
                other.unwrap_or("")
            ))
        }
    }
    let f = Flags::read(words)?;
    let url = f.url.ok_or("the curl command names no URL")?;
    let mut url = url::Url::parse(&url).map_err(|e| format!("'{url}' is no URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "'{url}': only http:// and https:// requests can be imported"
        ));
    }
    let mut body = (!f.data.is_empty()).then(|| f.data.join("&"));
    if f.get {
        if let Some(d) = body.take() {
            let query = match url.query() {
                Some(q) => format!("{q}&{d}"),
                None => d,
            };
            url.set_query(Some(&query));
        }
    }
    let method = f
        .method
        .unwrap_or_else(|| if body.is_some() { "POST" } else { "GET" }.into());
    Ok(Command {
        request: Recorded {
            method,
            url,
            headers: f.headers,
            body,
        },
        insecure: f.insecure,
    })
}

/// The plan of one request: a closed scenario of 10 connections for 10 s, to review.
pub(super) fn plan(line: &str) -> Result<String, String> {
    let Command {
        request: r,
        insecure,
    } = parse(line)?;
    let mut secrets = Secrets::default();
    let headers: Vec<(String, String)> = r
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), secrets.header(k, v)))
        .collect();
    let path = secrets.target(&r.url);
    let body = r.body.as_deref().map(|b| secrets.body(b));
    // A plain request sends its body as written; a secret in it must come from the
    // environment, which a journey's step reads: then the request is a one-step journey.
    let as_step = body.as_ref().is_some_and(|(_, replaced)| *replaced);
    let mut out = format!(
        "# Imported by `perfbase import curl`: {} {}. Review it, then: perfbase run FILE\n",
        r.method,
        r.url.path()
    );
    out.push_str(&secrets.comment());
    out.push_str(&format!(
        "\n[plan]\nname = \"imported request\"\n\n[targets.api]\nurl = {}\n",
        q(&origin(&r.url))
    ));
    if insecure {
        out.push_str("insecure = true               # curl -k: any certificate is accepted\n");
    }
    out.push_str("\n[workloads.request]\ntarget = \"api\"\n");
    let mut fields = vec![
        format!("method = {}", q(&r.method)),
        format!("path = {}", q(&path)),
    ];
    if !headers.is_empty() {
        fields.push(format!("headers = {}", inline(&headers)));
    }
    if let Some((b, _)) = &body {
        fields.push(format!("body = {}", q(b)));
    }
    if as_step {
        out.push_str(&format!("steps = [ {{ {} }} ]\n", fields.join(", ")));
    } else {
        out.push_str(&(fields.join("\n") + "\n"));
    }
    out.push_str(
        "\n[[scenarios]]\nname = \"imported\"\nworkload = \"request\"\nconcurrency = 10\n\
         duration = \"10s\"\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_shape_the_request_and_secrets_stay_out() {
        let c = parse(
            "curl -sS -X put 'http://127.0.0.1:8080/a?b=1' -H 'X-Id: 7' -H 'Authorization: \
             Bearer s3cret' --data-raw '{\"k\":1}' -A ua -k -o /dev/null",
        )
        .expect("parses");
        assert_eq!(c.request.method, "PUT");
        assert_eq!(c.request.url.as_str(), "http://127.0.0.1:8080/a?b=1");
        assert_eq!(c.request.body.as_deref(), Some("{\"k\":1}"));
        assert!(c.insecure);
        assert_eq!(c.request.headers.len(), 3);
        let text = plan("curl http://h/login -d '{\"user\":\"u\",\"password\":\"pw\"}' -u a:b")
            .expect("a plan");
        assert!(!text.contains("pw") && !text.contains("a:b"), "{text}");
        assert!(text.contains("export PERFBASE_IMPORT_PASSWORD"), "{text}");
        assert!(
            text.contains("Basic ${PERFBASE_IMPORT_AUTHORIZATION}"),
            "{text}"
        );
        assert!(
            text.contains("steps = [ {"),
            "a secret body is a step's: {text}"
        );
        assert!(toml::from_str::<toml::Table>(&text).is_ok(), "{text}");
        let get = parse("curl -G http://h/s -d q=1 -d r=2").expect("parses");
        assert_eq!(
            (get.request.method.as_str(), get.request.url.query()),
            ("GET", Some("q=1&r=2"))
        );
    }

    #[test]
    fn what_cannot_be_imported_says_why() {
        for (line, says) in [
            ("wget http://h/", "starting with 'curl'"),
            ("curl --proxy x http://h/", "--proxy is not read"),
            ("curl -H", "-H needs a value"),
            ("curl -s", "names no URL"),
            ("curl ftp://h/f", "only http:// and https://"),
            ("curl 'http://h/", "does not split"),
        ] {
            let e = plan(line).expect_err(line);
            assert!(e.contains(says), "{line}: {e}");
        }
    }
}
