//! `[workloads]`: what each workload sends to its target. HTTP workloads are a request or a
//! weighted mix of templates; the others take their protocol's fields (backends.rs).

#[cfg(feature = "amqp")]
use super::backends::amqp_workload;
#[cfg(feature = "mongo")]
use super::backends::mongo_workload;
#[cfg(feature = "mqtt")]
use super::backends::mqtt_workload;
#[cfg(feature = "nats")]
use super::backends::nats_workload;
#[cfg(feature = "redis")]
use super::backends::redis_workload;
#[cfg(feature = "sql")]
use super::backends::sql_workload;
#[cfg(feature = "vault")]
use super::backends::vault_workload;
use super::context::Ctx;
use super::file::{self, PlanFile, RequestDef, S};
#[cfg(feature = "grpc")]
use super::grpc::grpc_workload;
use super::model::*;
use super::targets::{http_version, tls_of, Family, TargetInfo};
#[cfg(feature = "ws")]
use super::ws::ws_workload;
#[cfg(feature = "sql")]
use crate::backend::Dialect;
use crate::backend::{HttpRequests, HttpTarget};
use perfbase_drivers::http::{BodySpec, HttpOptions, RequestSpec};
use perfbase_drivers::workload::{Corpus, Template};
use perfbase_drivers::Operation;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Every workload of the plan, by name.
pub(super) fn workloads(
    cx: &Ctx<'_>,
    raw: &PlanFile,
    targets: &BTreeMap<String, TargetInfo<'_>>,
    corpora: &[Arc<Corpus>],
) -> Result<BTreeMap<String, Workload>, PlanError> {
    let mut workloads = BTreeMap::new();
    for (name, w) in &raw.workloads {
        let field = format!("workloads.{name}");
        let target = targets.get(w.target.get_ref()).ok_or_else(|| {
            let known: Vec<&str> = targets.keys().map(|s| s.as_str()).collect();
            cx.err(
                &w.target,
                format!("{field}.target"),
                format!(
                    "no target named '{}' (targets: {})",
                    w.target.get_ref(),
                    known.join(", ")
                ),
            )
        })?;
        let (tdef, family, _, _) = target;
        fields_fit(cx, &field, w, *family)?;
        // Labels reach results and reports: a `${VAR}` that may hold a secret stays a name.
        let shown_url = cx.shown_url(&tdef.url, &format!("targets.{}.url", w.target.get_ref()))?;
        let workload = if *family == Family::Http && super::journeys::is_journey(w) {
            super::journeys::journey_workload(cx, (name, &field, w), target, &shown_url, corpora)?
        } else if *family == Family::Http {
            http_workload(cx, (name, &field, w), target, &shown_url, corpora)?
        } else if let Some(ops) = suite_operations(cx, &field, w, *family)? {
            // One workload per operation, `NAME/operation`; the suite names them in order.
            let mut suite = Vec::new();
            for (i, (op, def)) in ops.into_iter().enumerate() {
                let (backend, _) = backend_of(cx, &field, &def, target, corpora)?;
                let op_name = format!("{name}/{op}");
                let mut one = Workload {
                    name: op_name.clone(),
                    label: format!("{shown_url} ({op})"),
                    corpora: corpora.to_vec(),
                    shown_headers: Vec::new(),
                    backend,
                    suite: Vec::new(),
                };
                if i > 0 {
                    // Tables, collections and keys are set up once, before the first.
                    one.backend = one.backend.without_setup();
                }
                workloads.insert(op_name.clone(), one);
                suite.push(op_name);
            }
            let first = workloads[&suite[0]].backend.clone();
            Workload {
                name: name.clone(),
                label: format!("{shown_url} (suite of {})", suite.len()),
                corpora: corpora.to_vec(),
                shown_headers: Vec::new(),
                backend: first,
                suite,
            }
        } else {
            let (backend, what) = backend_of(cx, &field, w, target, corpora)?;
            Workload {
                name: name.clone(),
                label: format!("{shown_url} ({what})"),
                corpora: corpora.to_vec(),
                shown_headers: Vec::new(),
                backend,
                suite: Vec::new(),
            }
        };
        workloads.insert(name.clone(), workload);
    }
    Ok(workloads)
}

/// A suite workload's operations (`builtin = "suite"` on SQL, `command = "suite"` on Redis
/// and MongoDB), each with the workload's fields naming that one operation; `None` for a
/// workload of one operation.
fn suite_operations(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    family: Family,
) -> Result<Option<Vec<(String, file::WorkloadDef)>>, PlanError> {
    fn names<O: Operation>() -> Vec<&'static str> {
        O::ALL.iter().map(|o| o.name()).collect()
    }
    let (chosen, all): (&Option<S<String>>, Vec<&'static str>) = match family {
        Family::Sql => (
            &w.builtin,
            built!("sql", names::<perfbase_drivers::sql::SuiteOp>()),
        ),
        Family::Redis => (
            &w.command,
            built!("redis", names::<perfbase_drivers::redis::RedisOp>()),
        ),
        Family::Mongo => (
            &w.command,
            built!("mongo", names::<perfbase_drivers::mongo::MongoOp>()),
        ),
        Family::Vault => (
            &w.command,
            built!("vault", names::<perfbase_drivers::vault::VaultOp>()),
        ),
        Family::Http | Family::Grpc | Family::Ws | Family::Amqp | Family::Nats | Family::Mqtt => {
            return Ok(None)
        }
    };
    let Some(chosen) = chosen.as_ref().filter(|c| c.get_ref() == "suite") else {
        if let Some(o) = &w.operations {
            return Err(cx.err(
                o,
                format!("{field}.operations"),
                "pick operations of a suite only (builtin or command = \"suite\")",
            ));
        }
        return Ok(None);
    };
    let picked: Vec<String> = match &w.operations {
        None => all.iter().map(|s| s.to_string()).collect(),
        Some(o) => {
            let f = format!("{field}.operations");
            if o.get_ref().is_empty() {
                return Err(cx.err(o, &f, "name at least one operation"));
            }
            for op in o.get_ref() {
                if !all.contains(&op.as_str()) {
                    return Err(cx.err(
                        o,
                        &f,
                        format!("unknown operation '{op}'; use {}", all.join(", ")),
                    ));
                }
            }
            o.get_ref().clone()
        }
    };
    let span = chosen.span();
    Ok(Some(
        picked
            .into_iter()
            .map(|op| {
                let mut def = w.clone();
                def.operations = None;
                let named = Some(S::new(span.clone(), op.clone()));
                if family == Family::Sql {
                    def.builtin = named;
                } else {
                    def.command = named;
                }
                (op, def)
            })
            .collect(),
    ))
}

/// The backend of a workload on a database, Redis or broker target, and what reports call it.
// A build without some protocols reads none of their fields.
#[cfg_attr(not(feature = "every-protocol"), allow(unused_variables))]
fn backend_of(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    target: &TargetInfo<'_>,
    corpora: &[Arc<Corpus>],
) -> Result<(Backend, String), PlanError> {
    let (tdef, family, url_text, _) = target;
    let (family, url_text) = (*family, url_text.as_str());
    Ok(match family {
        Family::Sql => built!("sql", {
            let sql = sql_workload(cx, field, w, corpora)?;
            let what = w.sql.as_ref().map_or_else(
                || {
                    w.builtin
                        .as_ref()
                        .map_or(String::new(), |b| b.get_ref().clone())
                },
                |s| s.get_ref().clone(),
            );
            let dialect = Dialect::of_url(url_text).unwrap_or(Dialect::Mysql);
            let pipeline = match &w.pipeline {
                Some(p) if dialect == Dialect::Mysql => {
                    return Err(cx.err(
                        p,
                        format!("{field}.pipeline"),
                        "PostgreSQL only (the MySQL protocol answers one statement at a \
                         time); raise the concurrency for more statements in flight",
                    ))
                }
                Some(p) => cx.positive(p, &format!("{field}.pipeline"))? as usize,
                None => 1,
            };
            let target = SqlTarget {
                dialect,
                url: url_text.to_string(),
                workload: sql,
                shown: what.clone(),
                pipeline,
                scale_given: w
                    .scale
                    .as_ref()
                    .map(|s| (*s.get_ref()).clamp(1, u32::MAX as i64) as u32),
                init: w.init.as_ref().is_some_and(|i| *i.get_ref()),
            };
            (Backend::Sql(target), what)
        }),
        Family::Redis => built!("redis", {
            let redis = redis_workload(cx, field, w, url_text)?;
            let what = redis.op.name().to_string();
            (Backend::Redis(redis), what)
        }),
        Family::Mongo => built!("mongo", {
            let mongo = mongo_workload(cx, field, w, url_text)?;
            let what = mongo.op.name().to_string();
            (Backend::Mongo(mongo), what)
        }),
        Family::Vault => built!("vault", {
            let target = w.target.get_ref();
            let http = HttpOptions {
                version: http_version(cx, tdef, target)?,
                keepalive: tdef.keepalive.unwrap_or(true),
                tls: tls_of(cx, tdef),
                ..HttpOptions::default()
            };
            let vault = vault_workload(cx, field, w, (tdef, target), url_text, http)?;
            let what = vault.op.name().to_string();
            (Backend::Vault(vault), what)
        }),
        Family::Amqp => built!("amqp", amqp_workload(cx, field, w, url_text)?),
        Family::Nats => built!("nats", nats_workload(cx, field, w, url_text)?),
        Family::Mqtt => built!("mqtt", mqtt_workload(cx, field, w, url_text)?),
        Family::Grpc => built!(
            "grpc",
            grpc_workload(cx, field, w, tdef, url_text, corpora)?
        ),
        Family::Ws => built!("ws", ws_workload(cx, field, w, tdef, url_text, corpora)?),
        Family::Http => unreachable!("HTTP workloads are read by http_workload"),
    })
}

/// The requests of an HTTP workload as written: its `mix`, or its one request.
fn items<'w>(
    cx: &Ctx<'_>,
    field: &str,
    w: &'w file::WorkloadDef,
    single: &'w RequestDef,
) -> Result<Vec<&'w RequestDef>, PlanError> {
    let Some(mix) = &w.mix else {
        return Ok(vec![single]);
    };
    if w.path.is_some() || w.method.is_some() || w.body.is_some() || w.body_file.is_some() {
        return Err(cx.err(
            &w.target,
            field,
            "give either `mix = [...]` or method/path/body, not both",
        ));
    }
    if mix.is_empty() {
        return Err(cx.err(
            &w.target,
            format!("{field}.mix"),
            "a mix needs at least one request",
        ));
    }
    Ok(mix.iter().collect())
}

/// An HTTP workload: its requests over the target's URL, with the target's settings.
fn http_workload(
    cx: &Ctx<'_>,
    (name, field, w): (&str, &str, &file::WorkloadDef),
    (tdef, _, _, url): &TargetInfo<'_>,
    shown_url: &str,
    corpora: &[Arc<Corpus>],
) -> Result<Workload, PlanError> {
    let url = url.as_ref().expect("http targets are parsed URLs");
    let single = w.request();
    let mut specs = Vec::new();
    // Each request's path as written (`${NAME}` unexpanded), for the label results show.
    let mut written = Vec::new();
    let mut shown_headers = Vec::new();
    for (i, r) in items(cx, field, w, &single)?.into_iter().enumerate() {
        let f = if w.mix.is_some() {
            format!("{field}.mix[{i}]")
        } else {
            field.to_string()
        };
        let (headers, shown) = headers_of(cx, &f, r, tdef, w.target.get_ref(), corpora)?;
        if i == 0 {
            shown_headers = shown;
        }
        let (spec, path_written) = request_spec(cx, &f, r, url, headers, corpora)?;
        specs.push(spec);
        written.push(path_written);
    }
    if specs.iter().all(|s| s.weight == 0) {
        return Err(cx.err(
            &w.target,
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
        version: http_version(cx, tdef, w.target.get_ref())?,
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
fn ok_status_of(cx: &Ctx<'_>, field: &str, w: &file::WorkloadDef) -> Result<Vec<u16>, PlanError> {
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

/// Each workload field that is set, the targets it is for, and where it was written (a byte
/// offset, for the error's line).
fn fields_set(w: &file::WorkloadDef) -> Vec<(&'static str, &'static [Family], usize)> {
    use Family::*;
    /// Where a field stands in the file, if it is set.
    fn at<T>(v: &Option<S<T>>) -> Option<usize> {
        v.as_ref().map(|v| v.span().start)
    }
    let target = w.target.span().start;
    let table: Vec<(&'static str, &'static [Family], Option<usize>)> = vec![
        ("method", &[Http], at(&w.method)),
        ("path", &[Http], at(&w.path)),
        (
            "headers",
            &[Http, Grpc, Ws],
            (!w.headers.is_empty()).then_some(target),
        ),
        ("body", &[Http], at(&w.body)),
        ("body_file", &[Http], at(&w.body_file)),
        ("mix", &[Http], w.mix.as_ref().map(|_| target)),
        ("ok_status", &[Http], at(&w.ok_status)),
        ("steps", &[Http], w.steps.as_ref().map(|_| target)),
        ("journeys", &[Http], w.journeys.as_ref().map(|_| target)),
        ("setup", &[Http], w.setup.as_ref().map(|_| target)),
        (
            "feed",
            &[Http],
            w.feed.as_ref().map(|f| f.file.span().start),
        ),
        ("on_failure", &[Http], at(&w.on_failure)),
        ("cookies", &[Http], at(&w.cookies)),
        ("think", &[Http], at(&w.think)),
        ("sql", &[Sql], at(&w.sql)),
        ("params", &[Sql], w.params.first().map(|v| v.span().start)),
        ("builtin", &[Sql], at(&w.builtin)),
        ("scale", &[Sql], at(&w.scale)),
        ("max_lag", &[Amqp], at(&w.max_lag)),
        ("pipeline", &[Sql, Redis, Amqp], at(&w.pipeline)),
        ("command", &[Redis, Mongo, Vault], at(&w.command)),
        ("keyspace", &[Redis, Mongo], at(&w.keyspace)),
        ("init", &[Sql, Mongo, Vault], at(&w.init)),
        ("operations", &[Sql, Redis, Mongo, Vault], at(&w.operations)),
        ("document", &[Mongo], at(&w.document)),
        ("value_size", &[Redis], at(&w.value_size)),
        ("prefill", &[Redis], at(&w.prefill)),
        ("mode", &[Amqp, Nats], at(&w.mode)),
        ("size", &[Amqp, Nats, Mqtt, Vault], at(&w.size)),
        ("persistent", &[Amqp], at(&w.persistent)),
        ("confirms", &[Amqp], at(&w.confirms)),
        ("ack", &[Amqp], at(&w.ack)),
        ("consumers", &[Amqp], at(&w.consumers)),
        ("drain", &[Amqp], at(&w.drain)),
        ("qos", &[Mqtt], at(&w.qos)),
        ("key_type", &[Vault], at(&w.key_type)),
        ("sign_key_type", &[Vault], at(&w.sign_key_type)),
        ("kv_path", &[Vault], at(&w.kv_path)),
        ("pki_role", &[Vault], at(&w.pki_role)),
        ("call", &[Grpc], at(&w.call)),
        ("protos", &[Grpc], at(&w.protos)),
        ("import_paths", &[Grpc], at(&w.import_paths)),
        ("data", &[Grpc, Ws], at(&w.data)),
        ("match", &[Ws], at(&w.match_field)),
        ("binary", &[Ws], at(&w.binary)),
        ("interval", &[Ws], at(&w.interval)),
        ("messages", &[Grpc], at(&w.messages)),
    ];
    table
        .into_iter()
        .filter_map(|(name, families, at)| at.map(|at| (name, families, at)))
        .collect()
}

/// Every field set in `w` applies to a target of `family`; the first that does not is an
/// error at its line naming the targets it is for.
fn fields_fit(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    family: Family,
) -> Result<(), PlanError> {
    match fields_set(w)
        .into_iter()
        .find(|(_, families, _)| !families.contains(&family))
    {
        Some((name, families, offset)) => Err(cx.err_at(
            cx.line(offset),
            format!("{field}.{name}"),
            format!(
                "applies to {} targets, not to target '{}'",
                Family::describe(families),
                w.target.get_ref()
            ),
        )),
        None => Ok(()),
    }
}
