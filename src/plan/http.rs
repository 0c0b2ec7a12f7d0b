//! The workload fields of an http:// or https:// target (http_fields.rs): one request, a
//! weighted mix of them, journeys (journeys.rs) or a script (script.rs), over the target's URL, headers and trust
//! settings (http_target.rs).

use super::context::Ctx;
use super::fields::{self, At, Made};
use super::file::{self, S};
pub(super) use super::http_fields::Fields;
use super::http_fields::RequestDef;
use super::http_target::{http_version, tls_of};
use super::model::*;
use crate::backend::http::{HttpRequests, HttpTarget};
use crate::backend::Backend;
use perfbase_drivers::http::{BodySpec, HttpOptions, RequestSpec};
use perfbase_drivers::workload::{Corpus, Template};
use std::collections::BTreeMap;
use std::sync::Arc;
use url::Url;

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] =
        &["keepalive", "insecure", "cacert", "http2", "streams"];

    fn url(url_text: &str, shown: &str) -> Result<Option<Url>, String> {
        fields::parsed(url_text, shown)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        if self.script.is_none() && (self.function.is_some() || !self.env.is_empty()) {
            return Err(at.err(
                at.field,
                "`function` and `env` belong to a script workload: add script = \"FILE.js\"",
            ));
        }
        Ok(Made::Workload(if self.script.is_some() {
            super::script::script_workload(at, &self)?
        } else if super::journeys::is_journey(&self) {
            super::journeys::journey_workload(at, &self)?
        } else {
            http_workload(at, &self)?
        }))
    }
}

/// The requests of an HTTP workload as written: its `mix`, or its one request.
fn items<'w>(
    at: &At<'_>,
    w: &'w Fields,
    single: &'w RequestDef,
) -> Result<Vec<&'w RequestDef>, PlanError> {
    let field = at.field;
    let Some(mix) = &w.mix else {
        return Ok(vec![single]);
    };
    if w.path.is_some() || w.method.is_some() || w.body.is_some() || w.body_file.is_some() {
        return Err(at.err(
            field,
            "give either `mix = [...]` or method/path/body, not both",
        ));
    }
    if mix.is_empty() {
        return Err(at.err(format!("{field}.mix"), "a mix needs at least one request"));
    }
    Ok(mix.iter().collect())
}

/// An HTTP workload: its requests over the target's URL, with the target's settings.
fn http_workload(at: &At<'_>, w: &Fields) -> Result<Workload, PlanError> {
    let (cx, name, field, shown_url, corpora) =
        (at.cx, at.name, at.field, at.shown_url, at.corpora);
    let (tdef, _, _, url) = at.target;
    let target = at.target_field.get_ref();
    let url = url.as_ref().expect("http targets are parsed URLs");
    let single = w.request();
    let mut specs = Vec::new();
    // Each request's path as written (`${NAME}` unexpanded), for the label results show.
    let mut written = Vec::new();
    let mut shown_headers = Vec::new();
    for (i, r) in items(at, w, &single)?.into_iter().enumerate() {
        let f = if w.mix.is_some() {
            format!("{field}.mix[{i}]")
        } else {
            field.to_string()
        };
        let (headers, shown) = headers_of(cx, &f, r, tdef, target, corpora)?;
        if i == 0 {
            shown_headers = shown;
        }
        let (spec, path_written) = request_spec(cx, &f, r, url, headers, corpora)?;
        specs.push(spec);
        written.push(path_written);
    }
    if specs.iter().all(|s| s.weight == 0) {
        return Err(at.err(
            format!("{field}.mix"),
            "at least one request needs a weight above 0",
        ));
    }
    let label = match specs.as_slice() {
        [one] if one.path.is_empty() => shown_url.to_string(),
        [_] => format!("{}{}", shown_url.trim_end_matches('/'), written[0]),
        _ => format!(
            "{} (mix of {})",
            shown_url.trim_end_matches('/'),
            specs.len()
        ),
    };
    let options = HttpOptions {
        version: http_version(cx, tdef, target)?,
        keepalive: tdef.keepalive.unwrap_or(true),
        tls: tls_of(cx, tdef),
        ok_status: ok_status_of(cx, field, w)?,
        ..HttpOptions::default()
    };
    Ok(Workload {
        name: name.to_string(),
        label,
        corpora: corpora.to_vec(),
        shown_headers,
        backend: Backend::Http(HttpTarget {
            requests: HttpRequests::Mix {
                specs,
                corpora: corpora.to_vec(),
            },
            options,
        }),
        suite: Vec::new(),
    })
}

/// Header names and values, in order.
type Headers = Vec<(String, String)>;

/// A request's headers (`${ENV}` expanded) and how results show them (as written, secrets
/// redacted). The target's headers come first; the request's own override them; each error
/// names the table the header was written in.
fn headers_of(
    cx: &Ctx<'_>,
    f: &str,
    r: &RequestDef,
    tdef: &file::TargetDef,
    target: &str,
    corpora: &[Arc<Corpus>],
) -> Result<(Headers, Vec<String>), PlanError> {
    let mut all: BTreeMap<String, (&S<String>, String)> = tdef
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), (v, format!("targets.{target}.headers.{k}"))))
        .collect();
    for (k, v) in &r.headers {
        all.insert(k.clone(), (v, format!("{f}.headers.{k}")));
    }
    let (mut headers, mut shown) = (Vec::new(), Vec::new());
    for (k, (v, hf)) in all {
        if !perfbase_drivers::http::is_token(&k) {
            return Err(cx.err(
                v,
                &hf,
                format!("'{k}' is no HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)"),
            ));
        }
        let value = cx.env(v, &hf)?;
        if value.contains(['\r', '\n']) {
            // Checked after `${VAR}` expansion: a secret from the environment may carry one.
            return Err(cx.err(
                v,
                &hf,
                "the value has a line break (CR or LF), which would end the header early",
            ));
        }
        Template::parse(&value, corpora).map_err(|e| cx.err(v, &hf, e))?;
        shown.push(perfbase_core::redact::header_line(&k, v.get_ref()));
        headers.push((k, value));
    }
    Ok((headers, shown))
}

/// One request template of an HTTP workload.
fn request_spec(
    cx: &Ctx<'_>,
    f: &str,
    r: &RequestDef,
    url: &url::Url,
    headers: Vec<(String, String)>,
    corpora: &[Arc<Corpus>],
) -> Result<(RequestSpec, String), PlanError> {
    // `${NAME}` in a path is expanded (it used to go out literally); the endpoint keeps the
    // path as written for its name, so the value (a tenant, a key) shows in no report.
    let mut written = None;
    let path = match &r.path {
        Some(p) => {
            let expanded = cx.env(p, &format!("{f}.path"))?;
            Template::parse(&expanded, corpora).map_err(|e| cx.err(p, format!("{f}.path"), e))?;
            if expanded != *p.get_ref() {
                written = Some(p.get_ref().clone());
            }
            expanded
        }
        // The target URL as written, path and query included.
        None => String::new(),
    };
    let body = match (&r.body, &r.body_file) {
        (Some(b), None) => {
            Template::parse(b.get_ref(), corpora).map_err(|e| cx.err(b, format!("{f}.body"), e))?;
            Some(BodySpec::Text(b.get_ref().clone()))
        }
        (None, Some(bf)) => {
            let p = cx.base.join(bf.get_ref());
            let bytes = perfbase_drivers::input::read(&p).map_err(|e| {
                cx.err(
                    bf,
                    format!("{f}.body_file"),
                    format!("cannot read '{}': {e}", p.display()),
                )
            })?;
            Some(BodySpec::Bytes(bytes.into()))
        }
        (Some(b), Some(_)) => return Err(cx.err(b, f, "give either body or body_file, not both")),
        (None, None) => None,
    };
    let weight = match &r.weight {
        Some(wt) if *wt.get_ref() >= 0 => *wt.get_ref() as u64,
        Some(wt) => return Err(cx.err(wt, format!("{f}.weight"), "must be 0 or more")),
        None => 1,
    };
    let method = r
        .method
        .as_ref()
        .map_or("GET".to_string(), |m| m.get_ref().to_ascii_uppercase());
    let name = match &r.name {
        Some(n) if n.get_ref().trim().is_empty() => {
            return Err(cx.err(n, format!("{f}.name"), "must not be empty"))
        }
        n => n
            .as_ref()
            .map(|n| n.get_ref().trim().to_string())
            .or_else(|| written.map(|w| format!("{method} {w}"))),
    };
    let shown_path = r
        .path
        .as_ref()
        .map_or(String::new(), |p| p.get_ref().clone());
    Ok((
        RequestSpec {
            method,
            base: url.clone(),
            path,
            headers,
            body,
            weight,
            name,
        },
        shown_path,
    ))
}

/// The statuses a workload counts as success besides 2xx/3xx.
fn ok_status_of(cx: &Ctx<'_>, field: &str, w: &Fields) -> Result<Vec<u16>, PlanError> {
    let Some(codes) = &w.ok_status else {
        return Ok(Vec::new());
    };
    codes
        .get_ref()
        .iter()
        .map(|&c| {
            u16::try_from(c)
                .ok()
                .filter(|c| (100..=599).contains(c))
                .ok_or_else(|| {
                    cx.err(
                        codes,
                        format!("{field}.ok_status"),
                        format!("{c} is no HTTP status (100–599)"),
                    )
                })
        })
        .collect()
}
