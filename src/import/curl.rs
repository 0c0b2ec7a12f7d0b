//! `perfbase import curl 'curl …'`: the request a curl command sends, read from the one
//! command line split as a shell would split it (the `shell-words` crate), written as a plan
//! of that request. curl's flags that shape the request are read; those that only change
//! what curl prints, saves or retries are dropped; any other is refused by name, since
//! ignoring it could load a service with a request other than the one meant.

mod flags;

use super::text::{fields, hazard, origin, q, Secrets};
use super::Request;
use base64::Engine as _;
use flags::Flags;

/// What a curl command sends.
struct Curl {
    url: url::Url,
    request: Request,
    /// Whether the Authorization header is `-u`'s `USER:PASSWORD` (whose variable the
    /// header comment explains).
    basic: bool,
    insecure: bool,
}

/// Reads `line` (`curl [flags] URL`) into the request it sends.
fn parse(line: &str) -> Result<Curl, String> {
    if line.contains(" $'") {
        return Err(
            "the command uses bash's $'…' quoting, which import does not read: quote with \
             '…' instead (or copy the request as cURL for POSIX)"
                .into(),
        );
    }
    let words = shell_words::split(&line.replace("\r\n", "\n"))
        .map_err(|e| format!("the curl command does not split as a shell would: {e}"))?;
    let (first, rest) = words
        .split_first()
        .ok_or("the curl command is empty: give it as one argument, 'curl …'")?;
    if !matches!(first.rsplit('/').next(), Some("curl" | "curl.exe")) {
        return Err(format!(
            "give the whole curl command, starting with 'curl' (it starts with '{first}')"
        ));
    }
    let f = Flags::read(rest.to_vec())?;
    let (mut url, user) = url_of(&f)?;
    let (mut body, json) = body_of(&f);
    let mut r = Request::default();
    for (k, v) in &f.headers {
        r.add_header(k, v);
    }
    let default = |r: &mut Request, k: &str, v: &str| {
        if r.header(k).is_none() && !f.removed.iter().any(|x| x.eq_ignore_ascii_case(k)) {
            r.add_header(k, v);
        }
    };
    if f.get {
        if let Some(d) = body.take() {
            let query = match url.query() {
                Some(q) if !q.is_empty() => format!("{q}&{d}"),
                _ => d,
            };
            url.set_query(Some(&query));
        }
    } else if body.is_some() && json {
        default(&mut r, "Content-Type", "application/json");
        default(&mut r, "Accept", "application/json");
    } else if body.is_some() {
        default(&mut r, "Content-Type", "application/x-www-form-urlencoded");
    }
    let basic = match &user {
        Some(u) if !u.contains(':') => {
            return Err(format!(
                "-u {u}: no password, so curl would ask for it; give -u USER:PASSWORD"
            ))
        }
        // An Authorization given with -H wins over -u, as in curl.
        Some(u) if r.header("authorization").is_none() => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(u);
            r.add_header("Authorization", &format!("Basic {encoded}"));
            true
        }
        _ => false,
    };
    r.method = match (&f.method, f.head, f.get, &body) {
        (Some(m), ..) => m.clone(),
        (None, true, ..) => "HEAD".into(),
        (None, _, false, Some(_)) => "POST".into(),
        _ => "GET".into(),
    };
    r.path = url.path().to_string();
    r.query = url.query().map(String::from);
    r.body = body;
    Ok(Curl {
        url,
        request: r,
        basic,
        insecure: f.insecure,
    })
}

/// The URL (curl's default scheme added, user info taken out) and the credentials: `-u`'s,
/// or the URL's own.
fn url_of(f: &Flags) -> Result<(url::Url, Option<String>), String> {
    let written = f.url.clone().ok_or("the curl command names no URL")?;
    // curl's default scheme.
    let with_scheme = if written.contains("://") {
        written.clone()
    } else {
        format!("http://{written}")
    };
    let mut url =
        url::Url::parse(&with_scheme).map_err(|e| format!("'{written}' is no URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "'{written}': only http:// and https:// requests can be imported"
        ));
    }
    let mut user = f.user.clone();
    if !url.username().is_empty() {
        let decode =
            |s: &str| String::from_utf8_lossy(&perfbase_core::percent::decode(s)).into_owned();
        let pass = url.password().map(decode).unwrap_or_default();
        user.get_or_insert(format!("{}:{pass}", decode(url.username())));
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    Ok((url, user))
}

/// The body as curl joins the pieces (`-d` with `&`, `--json` as one document), and
/// whether it is JSON.
fn body_of(f: &Flags) -> (Option<String>, bool) {
    let json = f.data.iter().any(|(_, j)| *j);
    let mut body = None::<String>;
    for (d, j) in &f.data {
        match &mut body {
            // --json pieces are one document; the -d family's are joined as curl joins them.
            Some(b) if *j => b.push_str(d),
            Some(b) => {
                b.push('&');
                b.push_str(d);
            }
            None => body = Some(d.clone()),
        }
    }
    (body, json)
}

/// The request with every secret a variable; whether its body held one (so it must be a
/// journey step, whose body reads the environment) and the headers a step may not write.
fn without_secrets(c: &Curl, secrets: &mut Secrets) -> (Request, bool, Vec<String>) {
    let mut r = c.request.clone();
    for h in &mut r.headers {
        h.1 = match h.1.strip_prefix("Basic ") {
            Some(b64) if c.basic && h.0 == "Authorization" => format!(
                "Basic {}",
                secrets.var(
                    "Authorization",
                    b64,
                    "-u's USER:PASSWORD in base64: printf %s 'USER:PASSWORD' | base64"
                )
            ),
            _ => secrets.header(&h.0, &h.1),
        };
    }
    r.query = r.query.map(|q| secrets.pairs(&q, "the query parameter"));
    let form = r.form();
    // A plain workload sends its body as written; a step's body reads ${…} from the
    // environment: a body that holds a secret makes the request a one-step journey.
    let (body, as_step) = match r.body.take() {
        Some(b) => {
            let (b, replaced) = secrets.body(&b, form, "the body's");
            (Some(b), replaced)
        }
        None => (None, false),
    };
    r.body = body;
    // A step refuses the headers its client writes from the request itself.
    let own = ["host", "content-length", "transfer-encoding", "connection"];
    let mut dropped = Vec::new();
    if as_step {
        dropped = r
            .headers
            .iter()
            .filter(|(k, _)| own.contains(&k.to_ascii_lowercase().as_str()))
            .map(|(k, _)| k.clone())
            .collect();
        r.headers.retain(|(k, _)| !dropped.contains(k));
    }
    (r, as_step, dropped)
}

/// The plan of the request: 10 connections for 10 s, to review before it runs.
pub(super) fn plan(line: &str, run_as: &str) -> Result<String, String> {
    let c = parse(line)?;
    let mut secrets = Secrets::default();
    let (r, as_step, dropped) = without_secrets(&c, &mut secrets);
    let target = origin(&c.url);
    let mut out = format!(
        "# Imported by `perfbase import curl`: {} {target}{}, sent by 10 connections\n\
         # for 10 s. Review it (the load above all), then: perfbase run {run_as}\n",
        r.method, r.path
    );
    out.push_str(&secrets.comment());
    if !dropped.is_empty() {
        out.push_str(&format!(
            "# review: a journey step writes {} from the request itself: the command's were \
             dropped\n",
            dropped.join(", ")
        ));
    }
    if hazard(&c.request) {
        out.push_str(
            "# review: the request holds '{{' or '${', which a plan reads as a placeholder or \
             an environment variable: edit it\n",
        );
    }
    out.push_str(&format!(
        "\n[plan]\nname = \"imported request\"\n\n[targets.api]\nurl = {}\n",
        q(&target)
    ));
    if c.insecure {
        out.push_str("insecure = true         # curl -k: any certificate is accepted\n");
    }
    out.push_str("\n[workloads.request]\ntarget = \"api\"\n");
    if as_step && r.header("cookie").is_some() {
        // As curl, which has no cookie jar unless asked: the Cookie given is sent as it is.
        out.push_str("cookies = false         # the Cookie header below is sent as given\n");
    }
    if as_step {
        out.push_str(&format!(
            "\n# A one-step journey, not a plain request: its body holds a secret, and a step's\n\
             # body reads ${{…}} from the environment.\n[[workloads.request.steps]]\n\
             name = {}\n",
            q(&format!("{} {}", r.method, r.path))
        ));
    }
    out.push_str(&fields(&r));
    out.push_str(
        "\n[[scenarios]]\nname = \"imported\"\nworkload = \"request\"\nconcurrency = 10\n\
         duration = \"10s\"\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests;
