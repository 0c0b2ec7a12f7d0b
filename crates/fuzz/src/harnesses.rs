//! One harness per parser of outside input. Each takes raw bytes, feeds them to the parser
//! exactly as perfbase does, and goes on through what runs after a successful parse
//! (validation, expansion, rendering). It returns whether the parser accepted the input. Any
//! panic is a finding; so is an abort or a hang, which `main` reports.

use crate::engine::{Harness, SHORT};
use crate::journeys::{journey, stream_growth};
use std::path::Path;

/// Every harness, by name.
pub const HARNESSES: &[Harness] = &[
    Harness {
        name: "plan",
        run: plan,
        dictionary: &[
            "[plan]\n",
            "[targets.t]\n",
            "[workloads.w]\n",
            "[[scenarios]]\n",
            "[[checks]]\n",
            "[corpora.c]\n",
            "[slo]\n",
            "[knee]\n",
            "[monitor]\n",
            "url = \"http://127.0.0.1:1/\"\n",
            "target = \"t\"\n",
            "workload = \"w\"\n",
            "name = \"s\"\n",
            "rate = ",
            "concurrency = ",
            "duration = \"",
            "requests = ",
            "repetitions = ",
            "warmup = \"",
            "cooldown = \"",
            "stages = [",
            "{ ramp_to = 5, duration = \"1s\" }",
            "generate = { pattern = \"k-{n}\", count = ",
            "length = ",
            "misses = ",
            "pick = \"weighted\"",
            "mix = [",
            "{ weight = 2, path = \"/\" }",
            "path = \"/{{c}}\"\n",
            "headers = { A = \"${HOME}\" }",
            "expect = { 200 = 1 }",
            "thresholds = [\"p99 < 200ms\"]",
            "scale = ",
            "timeout = \"",
            "max_inflight = ",
            "throughput_ratio = ",
            "p99_factor = ",
            "error_ratio = ",
            "min_gain = ",
            "ms",
            "s",
            "h",
            "/s",
            "k",
            "protocol = ",
            "postgres://u:p@127.0.0.1:1/d",
            "redis://127.0.0.1:1",
            "amqp://127.0.0.1:1",
            "nats://127.0.0.1:1",
            "mqtt://127.0.0.1:1",
            "op = \"get\"",
            "query = \"select 1\"",
            "body = \"x\"",
            "method = \"POST\"",
            "threads = ",
        ],
    },
    Harness {
        name: "targets",
        run: targets,
        dictionary: &[
            "GET ",
            "POST ",
            "http://127.0.0.1:1/",
            "https://127.0.0.1:1/",
            "http://a:b@127.0.0.1:1/",
            "\n",
            "Authorization: Bearer t\n",
            "@",
            "#",
            "?token=x",
            ":",
            "\r\n",
        ],
    },
    Harness {
        name: "units",
        run: units,
        dictionary: &[
            "ms",
            "us",
            "µs",
            "s",
            "m",
            "h",
            "d",
            "/s",
            "/m",
            "k",
            "M",
            "G",
            "p50",
            "p99",
            "p99.9",
            "rps",
            "error_rate",
            "<",
            ">",
            "<=",
            "%",
            ".",
            "e9",
            "1",
            "0",
        ],
    },
    Harness {
        name: "header",
        run: header,
        dictionary: &[
            "Authorization",
            "Cookie",
            ":",
            " ",
            "\r",
            "\n",
            "Bearer ",
            "X-Api-Key",
        ],
    },
    Harness {
        name: "url_vars",
        run: url_vars,
        dictionary: &[
            "${A}",
            "${B}",
            "http://",
            "https://",
            "postgres://",
            "@",
            ":",
            "/",
            "?",
            "#",
            "127.0.0.1",
            "[::1]",
            "8080",
            "\nA=",
            "\nB=",
            "%",
            "\\",
        ],
    },
    Harness {
        name: "http_response",
        run: http_response,
        dictionary: &[
            "HTTP/1.1 200 OK\r\n",
            "HTTP/1.0 ",
            "HTTP/1.1 100 Continue\r\n\r\n",
            "\r\n",
            "Content-Length: ",
            "Transfer-Encoding: chunked\r\n",
            "Connection: close\r\n",
            "0\r\n\r\n",
            "5\r\nhello\r\n",
            ";ext=1",
            "ffffffffffffffff",
            "101 ",
            "204 ",
            "304 ",
        ],
    },
    Harness {
        name: "chunked",
        run: chunked,
        dictionary: &[
            "\r\n",
            "0\r\n\r\n",
            "a\r\n",
            ";x=y",
            "ffffffff",
            "Trailer: v\r\n",
            " ",
        ],
    },
    Harness {
        name: "events",
        run: events,
        dictionary: &[
            "\n\n",
            "\r\n",
            "data: ",
            "data:",
            ": comment\n",
            "event: x\n",
            "data: [DONE]\n\n",
            "{\"choices\":[",
            "{\"delta\":{\"content\":\"t\"}}",
            "{\"text\":\"\"}",
            "]}",
        ],
    },
    Harness {
        name: "resp",
        run: resp,
        dictionary: &[
            "+OK\r\n",
            "-ERR x\r\n",
            ":1\r\n",
            "$3\r\nabc\r\n",
            "$-1\r\n",
            "*2\r\n",
            "*-1\r\n",
            "%1\r\n",
            "~1\r\n",
            "_\r\n",
            ",1.5\r\n",
            "#t\r\n",
            "(1\r\n",
            "=5\r\ntxt:x\r\n",
            "9223372036854775807",
            "-9223372036854775808",
        ],
    },
    Harness {
        name: "result_json",
        run: result_json,
        dictionary: &[
            "null",
            "NaN",
            "-1",
            "1e308",
            "[]",
            "{}",
            "\"p99\"",
            "\"requests\"",
            "\"study\"",
            "\"monitor\"",
            "\"phases\"",
            "\"latency_ms\"",
            "\"endpoints\"",
            "\"timeline\"",
            "0",
        ],
    },
    Harness {
        name: "request",
        run: request,
        dictionary: &[
            "\n",
            "\r\n",
            "\r\nX-Smuggled: 1\r\n\r\nGET /x HTTP/1.1",
            " HTTP/1.1",
            "{{v}}",
            "{{ v }}",
            "{{w}}",
            "{{",
            "}}",
            "#",
            "%0D%0A",
            "%",
            "?q=",
            "&",
            "\0",
            "\t",
            "\u{7f}",
            "é",
            "Content-Length",
            "Transfer-Encoding",
            "Authorization",
            "Host",
            ": ",
            "POST",
            "GET",
            "HEAD",
        ],
    },
    Harness {
        name: "scrub",
        run: scrub,
        dictionary: &[
            "\n",
            "\t",
            "hvs.",
            "Bearer ",
            "[redacted]",
            "redacted",
            "\u{1b}[2J",
            "\u{7}",
            "\u{9b}",
            "X-Vault-Token: ",
            "AUTH ",
            "abc",
            "s3cr3t",
        ],
    },
    Harness {
        name: "ui_request",
        run: crate::ui::request,
        dictionary: crate::ui::DICTIONARY,
    },
    Harness {
        name: "journey",
        run: journey,
        dictionary: &[
            "{{user}}",
            "{{ token }}",
            "{{nobody}}",
            "{{",
            "}}",
            "/items/",
            "?q=",
            "\n",
            "/access_token",
            "/items/0/id",
            "~1",
            "~0",
            "(\\d+)",
            "(.*)",
            "[a-z]+",
            "(?i)",
            "{\"access_token\": \"t\", \"items\": [{\"id\": 7}]}",
            "\"",
            "1e400",
        ],
    },
    Harness {
        name: "stream_growth",
        run: stream_growth,
        dictionary: &[
            "data: a\n\n",
            "data: ",
            "event: x\n",
            ": comment\n",
            "\r\n",
            "\n\n",
            "{\"choices\":[{\"delta\":{\"content\":\"t\"}}]}\n",
            "[DONE]",
            "{\"a\":1}\n",
        ],
    },
];

/// Where plans and targets files resolve relative files: nowhere, so no input reads one.
const NOWHERE: &str = "/nonexistent-perfbase-fuzz";

fn plan(input: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(input) else {
        return false;
    };
    match perfbase::plan::parse(text, "fuzz.toml", Path::new(NOWHERE), None) {
        Ok(plan) => {
            // Expansion: every phase of every scenario, with its duration arithmetic.
            let described = perfbase::plan::describe(&plan);
            assert!(!described.is_empty());
            true
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz.toml:"), "{message}");
            false
        }
    }
}

fn targets(input: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(input) else {
        return false;
    };
    match perfbase_drivers::http::parse_targets(text, "t.txt", Path::new(NOWHERE)) {
        Ok(t) => !t.is_empty(),
        Err(e) => {
            let message = e.to_string();
            // A header value or URL password must never reach an error (a body file's
            // path is the user's own text, shown so they can find the file).
            if !message.contains("cannot read body file") {
                assert!(!message.contains("Bearer t"), "{message}");
            }
            false
        }
    }
}

fn units(input: &[u8]) -> bool {
    let Some((&which, rest)) = input.split_first() else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return false;
    };
    match which % 4 {
        0 => perfbase_core::units::parse_duration(text).is_ok(),
        1 => perfbase_core::units::parse_rate(text).is_ok_and(|r| {
            assert!(r.is_finite() && r > 0.0, "rate {r} from {text:?}");
            true
        }),
        2 => perfbase_core::units::parse_count(text).is_ok(),
        _ => perfbase_analysis::parse_threshold(text).is_ok(),
    }
}

fn header(input: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(input) else {
        return false;
    };
    let (name, value) = text.split_once(':').unwrap_or((text, ""));
    let shown = perfbase_core::redact::header_line(name, value);
    let secret = value.trim();
    if perfbase_core::redact::is_secret_name(name.trim())
        && secret.len() > 3
        && !name.contains(secret)
        && !"[redacted]".contains(secret)
    {
        assert!(!shown[name.len()..].contains(secret), "{shown}");
    }
    let _ = perfbase_core::redact::text(text);
    match perfbase::cli::parse_header(text) {
        Ok((name, value)) => {
            assert!(perfbase_drivers::http::is_token(&name), "{name:?}");
            assert!(!value.contains(['\r', '\n']), "{value:?}");
            true
        }
        Err(_) => false,
    }
}

/// The first line is a URL with `${A}` or `${B}`; `A=` and `B=` lines give their values.
fn url_vars(input: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(input) else {
        return false;
    };
    let mut lines = text.split('\n');
    let template = lines.next().unwrap_or("");
    let env: Vec<(&str, &str)> = lines.filter_map(|l| l.split_once('=')).collect();
    let lookup = |name: &str| {
        env.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    };
    let Ok(expanded) = perfbase::plan::expand_url(template, lookup) else {
        return false;
    };
    // A variable written after the authority can never change the host or port.
    if let (Some(first_var), Some(scheme_end)) = (template.find("${"), template.find("://")) {
        let authority_end = template[scheme_end + 3..]
            .find(['/', '?', '#'])
            .map(|i| scheme_end + 3 + i);
        if authority_end.is_some_and(|end| first_var > end) {
            let written = url::Url::parse(&template.replace("${A}", "v").replace("${B}", "v"));
            if let (Ok(w), Ok(e)) = (written, url::Url::parse(&expanded)) {
                assert_eq!(
                    (w.host_str(), w.port()),
                    (e.host_str(), e.port()),
                    "{expanded}"
                );
            }
        }
    }
    true
}

fn http_response(input: &[u8]) -> bool {
    let Some((&flags, bytes)) = input.split_first() else {
        return false;
    };
    match perfbase_drivers::http::parse_response(bytes, flags & 1 == 1) {
        Ok((status, read)) => {
            assert!(
                read <= bytes.len() as u64,
                "read {read} of {} bytes",
                bytes.len()
            );
            (100..1000).contains(&status)
        }
        Err(_) => false,
    }
}

/// The body fed in pieces whose size the first byte picks, as bytes arrive from a socket.
fn chunked(input: &[u8]) -> bool {
    let Some((&step, bytes)) = input.split_first() else {
        return false;
    };
    let step = usize::from(step).max(1);
    let mut decoder = perfbase_drivers::http::chunked::Decoder::new();
    for piece in bytes.chunks(step) {
        match decoder.feed(piece) {
            Ok(used) => {
                assert!(used <= piece.len());
                if decoder.is_done() {
                    return true;
                }
            }
            Err(_) => return false,
        }
    }
    false
}

/// An event stream (the first byte: JSON lines or server-sent events, and the size of the
/// pieces it arrives in): the events counted must not depend on how the bytes were split.
fn events(input: &[u8]) -> bool {
    let Some((&flags, body)) = input.split_first() else {
        return false;
    };
    let kind: &[u8] = if flags & 1 == 1 {
        b"application/x-ndjson"
    } else {
        b"text/event-stream"
    };
    let whole = perfbase_drivers::http::count_events(kind, body, body.len());
    let split = perfbase_drivers::http::count_events(kind, body, usize::from(flags >> 1));
    assert_eq!(whole, split, "the count depends on the split");
    whole.is_some_and(|n| n > 0)
}

fn resp(input: &[u8]) -> bool {
    let mut rest = input;
    let mut any = false;
    while let Ok(Some((_, used))) = perfbase_drivers::redis::resp::parse(rest) {
        assert!(used > 0 && used <= rest.len());
        rest = &rest[used..];
        any = true;
    }
    if let Ok(Some((_, used))) = perfbase_drivers::redis::resp::parse_value(input) {
        assert!(used > 0 && used <= input.len());
    }
    any
}

fn result_json(input: &[u8]) -> bool {
    use perfbase_core::result::RunResult;
    let Ok(r) = serde_json::from_slice::<RunResult>(input) else {
        return false;
    };
    let runs = [("a".to_string(), &r), ("b".to_string(), &r)];
    let _ = perfbase_report::json::render(&r);
    let _ = perfbase_report::markdown::render_any(&r);
    let _ = perfbase_report::terminal::render(&r);
    let _ = perfbase_report::csv::render(&runs);
    let _ = perfbase_report::junit::render(&runs);
    let _ = perfbase_report::html::render(std::slice::from_ref(&r));
    let c = perfbase_analysis::versus::runs::compare_results("a", &r, "b", &r, 0.05, 0.05);
    let _ = perfbase_report::compare::render(&c);
    true
}

/// The request builder: plan values into bytes on the wire. The input is split at its first
/// three `\u{1f}` into the method, the path, a header value and the rest; the rest's lines are
/// corpus `v`'s values (and `w`'s, reversed). Whatever was given, every request built is one
/// whole request: one request line, exactly the headers meant, a body of its
/// Content-Length, and nothing after it.
fn request(input: &[u8]) -> bool {
    use perfbase_drivers::http::{BodySpec, HttpDriver, HttpOptions, RequestSpec};
    use perfbase_drivers::workload::{Corpus, Pick, Values};
    use std::sync::Arc;
    // A plan's values are short: a longer input is not taken (nor kept in the pool, where
    // 64 KiB inputs would spend the runs copying bodies).
    if input.len() > SHORT {
        return false;
    }
    let Ok(text) = std::str::from_utf8(input) else {
        return false;
    };
    let mut parts = text.splitn(4, '\u{1f}');
    let (method, path, header, rest) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    let values: Vec<String> = rest.split('\n').map(str::to_string).collect();
    let reversed: Vec<String> = values.iter().rev().cloned().collect();
    let corpora = vec![
        Arc::new(
            Corpus::new(
                "v",
                Values::List(values.clone()),
                None,
                Pick::Sequential,
                0.0,
            )
            .unwrap(),
        ),
        Arc::new(Corpus::new("w", Values::List(reversed), None, Pick::Random, 0.25).unwrap()),
    ];
    let spec = RequestSpec {
        method: method.to_string(),
        base: url::Url::parse("http://127.0.0.1:1/api").unwrap(),
        path: path.to_string(),
        headers: vec![("X-Value".into(), header.to_string())],
        body: Some(BodySpec::Text(rest.to_string())),
        weight: 1,
        name: None,
    };
    let Ok(requests) = HttpDriver::wire_bytes(&[spec], corpora, &HttpOptions::default(), 4) else {
        return false;
    };
    requests.iter().for_each(|bytes| one_whole_request(bytes));
    true
}

/// `bytes` is one whole request: one request line, only the headers the harness meant, a
/// body of its Content-Length and nothing after it, a target without an unsafe byte.
fn one_whole_request(bytes: &[u8]) {
    let mut slots = [httparse::EMPTY_HEADER; 16];
    let mut parsed = httparse::Request::new(&mut slots);
    let head = match parsed.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        other => panic!(
            "not one whole request head ({other:?}): {:?}",
            String::from_utf8_lossy(bytes)
        ),
    };
    // Host, User-Agent, X-Value and Content-Length (POST, PUT and PATCH always; others
    // with a body): no header more.
    let names: Vec<String> = parsed
        .headers
        .iter()
        .map(|h| h.name.to_ascii_lowercase())
        .collect();
    assert!(
        names.iter().filter(|n| *n == "x-value").count() == 1
            && names.len() <= 4
            && names.iter().all(|n| matches!(
                n.as_str(),
                "host" | "user-agent" | "x-value" | "content-length"
            )),
        "{names:?}: {:?}",
        String::from_utf8_lossy(bytes)
    );
    let length = parsed
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .map_or(0, |h| {
            std::str::from_utf8(h.value)
                .unwrap()
                .parse::<usize>()
                .unwrap()
        });
    assert_eq!(
        head + length,
        bytes.len(),
        "a body of its length and nothing after it"
    );
    let target = parsed.path.unwrap_or("");
    assert!(
        !target.bytes().any(perfbase_core::percent::unsafe_in_target),
        "{target:?}"
    );
}

/// The error-sample scrubber: the input's first line holds secrets (separated by tabs), the
/// rest is a message a server sent. Every remembered secret is gone from what is kept, and
/// what is kept, once made printable, holds no control character. (Secrets are letters and
/// digits and not part of the marker's own word: then no occurrence can be made by the
/// replacement itself.)
fn scrub(input: &[u8]) -> bool {
    if input.len() > SHORT {
        return false;
    }
    let Ok(text) = std::str::from_utf8(input) else {
        return false;
    };
    let (first, message) = text.split_once('\n').unwrap_or((text, ""));
    perfbase_core::redact::forget_all();
    let secrets: Vec<&str> = first
        .split('\t')
        .filter(|s| {
            s.len() >= 3 && s.chars().all(|c| c.is_ascii_alphanumeric()) && !"redacted".contains(*s)
        })
        .collect();
    for s in &secrets {
        perfbase_core::redact::remember(s);
    }
    let kept = perfbase_core::redact::known(message);
    for s in &secrets {
        assert!(!kept.contains(s), "{s:?} in {kept:?}");
    }
    let shown = perfbase_core::redact::printable(&kept);
    assert!(!shown.chars().any(char::is_control), "{shown:?}");
    !secrets.is_empty()
}
