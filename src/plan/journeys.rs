//! An HTTP workload's journeys (`steps`, or `journeys` by weight, with `setup`, `feed`,
//! `on_failure`, `cookies` and `think`): read into the driver's [`JourneySpec`], which is
//! compiled here once so that a placeholder no step can fill, a bad regex or a clash of
//! names is an error at the workload's line before any load.

use super::context::Ctx;
use super::fields::At;
use super::file::{self, CaptureDef, StepCheckDef, StepDef, S};
use super::http_fields::Fields;
use super::http_target::{target_headers, tls_of};
use super::model::*;
use crate::backend::http::{HttpRequests, HttpTarget};
use crate::backend::Backend;
use perfbase_drivers::http::journey::{
    Capture, Check, Feed, Journey, JourneySpec, OnFailure, Rule, Source, StepSpec, Strategy, Think,
};
use perfbase_drivers::http::HttpOptions;
use std::collections::BTreeMap;

/// Whether `w` is a journey workload.
pub(super) fn is_journey(w: &Fields) -> bool {
    w.steps.is_some() || w.journeys.is_some()
}

/// A journey workload over the target's URL, with the target's headers and trust settings.
pub(super) fn journey_workload(at: &At<'_>, w: &Fields) -> Result<Workload, PlanError> {
    let (cx, name, field, shown_url, corpora) =
        (at.cx, at.name, at.field, at.shown_url, at.corpora);
    let (tdef, _, _, url) = at.target;
    let url = url.as_ref().expect("http targets are parsed URLs");
    refuse_what_journeys_lack(at, w, tdef)?;
    let think = match &w.think {
        Some(t) => think_of(cx, t, &format!("{field}.think"))?,
        None => Think::None,
    };
    let (headers, shown_headers) = target_headers(cx, tdef, at.target_field.get_ref())?;
    let spec = JourneySpec {
        base: url.clone(),
        headers,
        journeys: journeys_of(at, w, think)?,
        setup: match &w.setup {
            Some(s) => steps_of(cx, s, &format!("{field}.setup"), Think::None)?,
            None => Vec::new(),
        },
        feed: w
            .feed
            .as_ref()
            .map(|f| feed(cx, f, &format!("{field}.feed")))
            .transpose()?,
        on_failure: on_failure(cx, field, w)?,
        cookies: w.cookies.as_ref().is_none_or(|c| *c.get_ref()),
    };
    let spec = with_target_headers(spec);
    perfbase_drivers::http::journey::check(&spec, corpora).map_err(|e| at.err(field, e))?;
    let steps: usize = spec.journeys.iter().map(|j| j.steps.len()).sum();
    let options = HttpOptions {
        tls: tls_of(cx, tdef),
        ..HttpOptions::default()
    };
    Ok(Workload {
        name: name.to_string(),
        label: format!(
            "{} (journey of {steps} step{})",
            shown_url.trim_end_matches('/'),
            if steps == 1 { "" } else { "s" }
        ),
        corpora: corpora.to_vec(),
        shown_headers,
        backend: Backend::Http(HttpTarget {
            requests: HttpRequests::Journeys {
                spec: Box::new(spec),
                corpora: corpora.to_vec(),
            },
            options,
        }),
        suite: Vec::new(),
    })
}

/// A journey's workload has no single request, no `ok_status` (its checks say which
/// statuses are expected) and runs over HTTP/1.1 keep-alive connections.
fn refuse_what_journeys_lack(
    at: &At<'_>,
    w: &Fields,
    tdef: &file::TargetDef,
) -> Result<(), PlanError> {
    let (cx, field) = (at.cx, at.field);
    let refuse = |what: &str| Err(at.err(field, what.to_string()));
    if w.mix.is_some() || w.path.is_some() || w.method.is_some() || w.body.is_some() {
        return refuse(
            "give either steps (or journeys) or a request (method, path, body, mix), not both",
        );
    }
    if let Some(o) = &w.ok_status {
        return Err(cx.err(
            o,
            format!("{field}.ok_status"),
            "a journey checks statuses per step: check.NAME = { status = [...] }",
        ));
    }
    if tdef.http2.as_ref().is_some_and(|h| *h.get_ref()) || tdef.keepalive == Some(false) {
        return refuse(
            "journeys run over HTTP/1.1 keep-alive connections: drop http2 and keepalive = \
             false from the target",
        );
    }
    Ok(())
}

/// The workload's one journey (`steps`) or its weighted `journeys`.
fn journeys_of(at: &At<'_>, w: &Fields, think: Think) -> Result<Vec<Journey>, PlanError> {
    let (cx, name, field) = (at.cx, at.name, at.field);
    let journeys = match (&w.steps, &w.journeys) {
        (Some(_), Some(_)) => return Err(at.err(field, "give either steps or journeys, not both")),
        (Some(steps), None) => vec![Journey {
            name: name.to_string(),
            weight: 1,
            steps: steps_of(cx, steps, &format!("{field}.steps"), think)?,
        }],
        (None, Some(js)) => {
            let mut out = Vec::new();
            for (i, j) in js.iter().enumerate() {
                let f = format!("{field}.journeys[{i}]");
                cx.name(&j.name, &format!("{f}.name"))?;
                let weight = match &j.weight {
                    Some(wt) if *wt.get_ref() >= 0 => *wt.get_ref() as u64,
                    Some(wt) => return Err(cx.err(wt, format!("{f}.weight"), "must be 0 or more")),
                    None => 1,
                };
                out.push(Journey {
                    name: j.name.get_ref().clone(),
                    weight,
                    steps: steps_of(cx, &j.steps, &format!("{f}.steps"), think)?,
                });
            }
            out
        }
        (None, None) => unreachable!("is_journey said so"),
    };
    if journeys.iter().all(|j| j.weight == 0) || journeys.iter().any(|j| j.steps.is_empty()) {
        return Err(at.err(
            field,
            "every journey needs a step, and one journey a weight above 0",
        ));
    }
    Ok(journeys)
}

/// Steps in order; `think` goes before each but the first, unless a step sets its own.
fn steps_of(
    cx: &Ctx<'_>,
    steps: &[StepDef],
    f: &str,
    think: Think,
) -> Result<Vec<StepSpec>, PlanError> {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| step(cx, s, &format!("{f}[{i}]"), (i > 0).then_some(think)))
        .collect()
}

fn on_failure(cx: &Ctx<'_>, field: &str, w: &Fields) -> Result<OnFailure, PlanError> {
    match &w.on_failure {
        None => Ok(OnFailure::Stop),
        Some(o) => match o.get_ref().as_str() {
            "stop" => Ok(OnFailure::Stop),
            "continue" => Ok(OnFailure::Continue),
            other => Err(cx.err(
                o,
                format!("{field}.on_failure"),
                format!("'{other}': use stop or continue"),
            )),
        },
    }
}

/// The target's headers go on every step, under the step's own of the same name.
fn with_target_headers(mut spec: JourneySpec) -> JourneySpec {
    let shared = std::mem::take(&mut spec.headers);
    let add = |s: &mut StepSpec| {
        for (k, v) in &shared {
            if !s.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(k)) {
                s.headers.insert(0, (k.clone(), v.clone()));
            }
        }
    };
    spec.setup.iter_mut().for_each(add);
    spec.journeys
        .iter_mut()
        .flat_map(|j| j.steps.iter_mut())
        .for_each(add);
    spec.headers = shared;
    spec
}

/// One step; `think` is the workload's pause before it (none for a journey's first step).
fn step(cx: &Ctx<'_>, s: &StepDef, f: &str, think: Option<Think>) -> Result<StepSpec, PlanError> {
    if let Some(n) = &s.name {
        cx.name(n, &format!("{f}.name"))?;
    }
    let method = s
        .method
        .as_ref()
        .map_or("GET".to_string(), |m| m.get_ref().to_ascii_uppercase());
    let mut headers = Vec::new();
    for (k, v) in &s.headers {
        let value = cx.env(v, &format!("{f}.headers.{k}"))?;
        headers.push((k.clone(), value));
    }
    let mut captures = Vec::new();
    for (name, c) in &s.capture {
        captures.push(capture(
            cx,
            name,
            c,
            &format!("{f}.capture.{name}"),
            &s.path,
        )?);
    }
    let mut checks = Vec::new();
    for (name, c) in &s.check {
        checks.push(check(cx, name, c, &format!("{f}.check.{name}"), &s.path)?);
    }
    Ok(StepSpec {
        name: s.name.as_ref().map(|n| n.get_ref().trim().to_string()),
        method,
        path: cx.env(&s.path, &format!("{f}.path"))?,
        headers,
        body: s
            .body
            .as_ref()
            .map(|b| cx.env(b, &format!("{f}.body")))
            .transpose()?,
        captures,
        checks,
        think: match &s.think {
            Some(t) => think_of(cx, t, &format!("{f}.think"))?,
            None => think.unwrap_or_default(),
        },
        group: match &s.group {
            Some(g) => {
                cx.name(g, &format!("{f}.group"))?;
                Some(g.get_ref().trim().to_string())
            }
            None => None,
        },
    })
}

fn capture(
    cx: &Ctx<'_>,
    name: &str,
    c: &CaptureDef,
    f: &str,
    at: &S<String>,
) -> Result<Capture, PlanError> {
    let from = match (&c.json, &c.header, &c.status, &c.regex) {
        (Some(p), None, None, _) => Source::Json(pointer(cx, p, &format!("{f}.json"))?),
        (None, Some(h), None, _) => Source::Header(h.get_ref().clone()),
        (None, None, Some(s), None) if *s.get_ref() => Source::Status,
        (None, None, None, Some(_)) => Source::Body,
        _ => {
            return Err(cx.err(
                at,
                f,
                "take a capture from one of json = \"/pointer\", header = \"Name\", status = \
                 true, or regex = \"…\" alone (over the body); json and header may add a regex",
            ))
        }
    };
    Ok(Capture {
        name: name.to_string(),
        from,
        regex: c.regex.as_ref().map(|r| r.get_ref().clone()),
    })
}

fn check(
    cx: &Ctx<'_>,
    name: &str,
    c: &StepCheckDef,
    f: &str,
    at: &S<String>,
) -> Result<Check, PlanError> {
    let rule = match c {
        StepCheckDef {
            status: Some(s), ..
        } if only(c, 1) => Rule::Status(
            s.get_ref()
                .iter()
                .map(|&code| {
                    u16::try_from(code)
                        .ok()
                        .filter(|c| (100..=599).contains(c))
                        .ok_or_else(|| {
                            cx.err(
                                s,
                                format!("{f}.status"),
                                format!("{code} is no HTTP status"),
                            )
                        })
                })
                .collect::<Result<_, _>>()?,
        ),
        StepCheckDef {
            body_contains: Some(t),
            ..
        } if only(c, 1) => Rule::BodyContains(t.get_ref().clone()),
        StepCheckDef {
            json: Some(p),
            equals: Some(v),
            ..
        } if only(c, 2) => Rule::JsonEquals {
            pointer: pointer(cx, p, &format!("{f}.json"))?,
            value: v.get_ref().clone(),
        },
        StepCheckDef {
            json: Some(p),
            exists: Some(e),
            ..
        } if only(c, 2) && *e.get_ref() => Rule::JsonExists(pointer(cx, p, &format!("{f}.json"))?),
        StepCheckDef {
            header: Some(h),
            matches: Some(m),
            ..
        } if only(c, 2) => Rule::HeaderMatches {
            name: h.get_ref().clone(),
            regex: m.get_ref().clone(),
        },
        StepCheckDef {
            max_size: Some(n), ..
        } if only(c, 1) && *n.get_ref() >= 0 => Rule::MaxSize(*n.get_ref() as u64),
        _ => {
            return Err(cx.err(
                at,
                f,
                "a check is one of: status = [codes], body_contains = \"text\", json = \
                 \"/pointer\" with equals = \"value\" or exists = true, header = \"Name\" with \
                 matches = \"regex\", max_size = bytes",
            ))
        }
    };
    Ok(Check {
        name: name.to_string(),
        rule,
    })
}

/// Whether `c` sets exactly `n` fields (one rule, and nothing beside it).
fn only(c: &StepCheckDef, n: usize) -> bool {
    let set = [
        c.status.is_some(),
        c.body_contains.is_some(),
        c.json.is_some(),
        c.equals.is_some(),
        c.exists.is_some(),
        c.header.is_some(),
        c.matches.is_some(),
        c.max_size.is_some(),
    ];
    set.iter().filter(|s| **s).count() == n
}

/// A JSON pointer (RFC 6901): empty (the whole body) or starting with `/`.
fn pointer(cx: &Ctx<'_>, p: &S<String>, f: &str) -> Result<String, PlanError> {
    let text = p.get_ref();
    if text.is_empty() || text.starts_with('/') {
        Ok(text.clone())
    } else {
        Err(cx.err(
            p,
            f,
            format!("'{text}' is no JSON pointer: write it from the root, as /{text}"),
        ))
    }
}

/// `"2s"`, or `["1s", "3s"]` for a uniform pause in that range.
fn think_of(cx: &Ctx<'_>, t: &S<toml::Value>, f: &str) -> Result<Think, PlanError> {
    let duration = |v: &toml::Value| -> Result<std::time::Duration, PlanError> {
        let text = v
            .as_str()
            .ok_or_else(|| cx.err(t, f, "write a duration as text, such as \"500ms\""))?;
        let d =
            perfbase_core::units::parse_duration(text).map_err(|e| cx.err(t, f, e.to_string()))?;
        if d > std::time::Duration::from_secs(3600) {
            return Err(cx.err(t, f, "is longer than an hour, the longest think time"));
        }
        Ok(d)
    };
    match t.get_ref() {
        toml::Value::Array(a) if a.len() == 2 => {
            let (lo, hi) = (duration(&a[0])?, duration(&a[1])?);
            if lo > hi {
                return Err(cx.err(t, f, "the range's first bound is above its second"));
            }
            Ok(Think::Uniform(lo, hi))
        }
        toml::Value::Array(_) => Err(cx.err(t, f, "a range is two durations: [\"1s\", \"3s\"]")),
        v => Ok(Think::Fixed(duration(v)?)),
    }
}

/// `feed = { file, strategy }`: a CSV file with a header row naming its columns.
fn feed(cx: &Ctx<'_>, f: &file::FeedDef, field: &str) -> Result<Feed, PlanError> {
    let strategy = match &f.strategy {
        None => Strategy::Circular,
        Some(s) => Strategy::from_name(s.get_ref()).ok_or_else(|| {
            cx.err(
                s,
                format!("{field}.strategy"),
                format!("'{}': use {}", s.get_ref(), Strategy::NAMES),
            )
        })?,
    };
    let path = cx.base.join(f.file.get_ref());
    let bad = |e: String| {
        cx.err(
            &f.file,
            format!("{field}.file"),
            format!("{}: {e}", path.display()),
        )
    };
    let text = perfbase_drivers::input::read_text(&path)
        .map_err(|e| bad(format!("cannot read it: {e}")))?;
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let columns: Vec<String> = reader
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(|c| c.trim().to_string())
        .collect();
    let mut seen = BTreeMap::new();
    for c in &columns {
        if c.is_empty() || seen.insert(c.clone(), ()).is_some() {
            return Err(bad(format!(
                "the header row needs distinct, non-empty column names ('{c}')"
            )));
        }
    }
    // One record reused and the rows kept compactly: a row costs its text, not an
    // allocation per cell.
    let mut rows = perfbase_drivers::http::journey::Rows::new(columns.len());
    let mut record = csv::StringRecord::new();
    for i in 0.. {
        match reader.read_record(&mut record) {
            Ok(true) => rows
                .push(record.iter())
                .map_err(|e| bad(format!("row {}: {e}", i + 2)))?,
            Ok(false) => break,
            Err(e) => return Err(bad(format!("row {}: {e}", i + 2))),
        }
    }
    if rows.is_empty() {
        return Err(bad("has a header row and no data rows".into()));
    }
    Ok(Feed {
        name: f.file.get_ref().clone(),
        columns,
        rows: std::sync::Arc::new(rows),
        strategy,
    })
}
