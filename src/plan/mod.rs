//! Plan files (`perfbase run PLAN.toml`): a whole performance characterisation described once
//! in TOML — targets, corpora, workloads, scenarios (constant load, stages, rate and
//! concurrency ladders, repetitions), SLO, thresholds and exact checks. Documented with
//! examples in `docs/plans.md`.
//!
//! Everything is validated before any load is sent; every error names the file, the line and
//! the field (`plans/x.toml:14: scenarios[2].rate: invalid rate '0': …`).

mod file;

use crate::backend::{AmqpTarget, BrokerTarget, Dialect, HttpRequests, HttpTarget};
pub use crate::backend::{Backend, RedisTarget, SqlTarget};
use file::{NumOrText, OneOrMany, PlanFile, RequestDef, S};
use perfbase_analysis::knee::KneeRule;
use perfbase_analysis::sweep::Offered;
use perfbase_analysis::threshold::{parse_threshold, Threshold};
use perfbase_core::units::{parse_duration, parse_rate};
use perfbase_drivers::http::{BodySpec, HttpOptions, HttpVersion, RequestSpec};
use perfbase_drivers::workload::{Corpus, Pick, Template};
use perfbase_engine::{Load, Pacer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use url::Url;

/// A plan that cannot be used: file, line and field, and what to write instead.
#[derive(Debug, Error)]
#[error("{file}:{line}: {field}: {message}")]
pub struct PlanError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

/// Default per-step duration when a scenario gives neither `duration` nor `requests`.
const DEFAULT_STEP: Duration = Duration::from_secs(10);
/// Default in-flight cap of open-model scenarios, whatever the protocol.
const DEFAULT_MAX_INFLIGHT: u64 = crate::backend::DEFAULT_MAX_INFLIGHT;

/// A validated plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub file: String,
    pub description: Option<String>,
    pub threads: Option<usize>,
    pub timeout: Duration,
    /// Open model: the dispatcher's pacing granularity.
    pub pacing: Duration,
    pub scale: f64,
    pub buckets_ms: Vec<f64>,
    pub knee: KneeRule,
    /// The SLO: decides the operating point of ladders.
    pub slo: Vec<Threshold>,
    /// Gates on every measured phase of scenarios that are not ladders (exit 1 on failure).
    pub thresholds: Vec<Threshold>,
    pub labels: BTreeMap<String, String>,
    pub workloads: BTreeMap<String, Workload>,
    pub scenarios: Vec<Scenario>,
    pub checks: Vec<Check>,
    /// Services to watch beside the load (perfbase itself is always watched).
    pub monitor: crate::monitoring::MonitorOptions,
}

/// What a workload loads (`backend`) and how results show it.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    /// What reports show: target URL (redacted) and the request templates as written.
    pub label: String,
    /// The plan's corpora (for `{{corpus}}` templates).
    pub corpora: Vec<Arc<Corpus>>,
    /// Header lines as written (`${ENV}` unexpanded, secrets redacted), for results.
    pub shown_headers: Vec<String>,
    pub backend: Backend,
}

impl Workload {
    /// The HTTP requests and options of an HTTP workload.
    pub fn http(&self) -> Option<&HttpTarget> {
        match &self.backend {
            Backend::Http(h) => Some(h),
            _ => None,
        }
    }
}

/// The shape of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Constant,
    Stages,
    RateLadder,
    ConcurrencyLadder,
}

impl Kind {
    pub fn is_ladder(self) -> bool {
        matches!(self, Kind::RateLadder | Kind::ConcurrencyLadder)
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Constant => "constant",
            Kind::Stages => "stages",
            Kind::RateLadder => "rate ladder",
            Kind::ConcurrencyLadder => "concurrency ladder",
        }
    }
}

/// One measured load level.
#[derive(Debug, Clone)]
pub struct Step {
    pub name: String,
    pub load: Load,
    pub offered: Offered,
    pub duration: Option<Duration>,
    pub count: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub workload: String,
    pub kind: Kind,
    pub steps: Vec<Step>,
    pub warmup: Option<Duration>,
    pub cooldown: Option<Duration>,
    pub repetitions: u32,
    pub thresholds: Vec<Threshold>,
}

/// An exact expectation: `requests` sequential requests (over `connections`) give exactly
/// these status counts.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub workload: String,
    pub requests: u64,
    pub connections: u64,
    pub expect: BTreeMap<u16, u64>,
}

struct Ctx<'a> {
    text: &'a str,
    file: String,
    base: PathBuf,
}

impl Ctx<'_> {
    fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn err<T>(
        &self,
        span: &S<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> PlanError {
        PlanError {
            file: self.file.clone(),
            line: self.line(span.span().start),
            field: field.into(),
            message: message.into(),
        }
    }

    fn err_at(
        &self,
        line: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> PlanError {
        PlanError {
            file: self.file.clone(),
            line,
            field: field.into(),
            message: message.into(),
        }
    }

    fn duration(&self, s: &S<String>, field: &str) -> Result<Duration, PlanError> {
        parse_duration(s.get_ref()).map_err(|e| self.err(s, field, e.to_string()))
    }

    fn positive_duration(&self, s: &S<String>, field: &str) -> Result<Duration, PlanError> {
        let d = self.duration(s, field)?;
        if d.is_zero() {
            return Err(self.err(s, field, "must be longer than zero"));
        }
        Ok(d)
    }

    fn positive(&self, s: &S<i64>, field: &str) -> Result<u64, PlanError> {
        match *s.get_ref() {
            n if n >= 1 => Ok(n as u64),
            n => Err(self.err(s, field, format!("must be at least 1, not {n}"))),
        }
    }

    fn threshold(&self, s: &S<String>, field: &str) -> Result<Threshold, PlanError> {
        parse_threshold(s.get_ref()).map_err(|e| self.err(s, field, e.to_string()))
    }

    /// Expands `${ENV_VAR}` from the environment (secrets stay out of the plan file).
    fn env(&self, s: &S<String>, field: &str) -> Result<String, PlanError> {
        self.expand(s, field, |_| true)
    }

    /// A target URL as results and reports show it: a variable that holds a URL (`${BASE}` =
    /// `http://10.0.0.5:8080`) says where the target is and is expanded, its password then
    /// redacted; any other variable may hold a key or token and stays `${NAME}`.
    fn shown_url(&self, s: &S<String>, field: &str) -> Result<String, PlanError> {
        let shown = self.expand(s, field, |value| value.contains("://"))?;
        Ok(perfbase_core::redact::url(&shown))
    }

    /// Expands the `${NAME}`s whose value `keep` accepts; the others stay as written.
    fn expand(
        &self,
        s: &S<String>,
        field: &str,
        keep: impl Fn(&str) -> bool,
    ) -> Result<String, PlanError> {
        let mut out = String::new();
        let mut rest = s.get_ref().as_str();
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let end = after.find('}').ok_or_else(|| {
                self.err(
                    s,
                    field,
                    "unclosed '${' (write ${NAME} for an environment variable)",
                )
            })?;
            let name = &after[..end];
            let value = std::env::var(name).map_err(|_| {
                self.err(
                    s,
                    field,
                    format!("environment variable {name} is not set (export it before the run)"),
                )
            })?;
            if keep(&value) {
                out.push_str(&value);
            } else {
                out.push_str(&rest[i..i + 2 + end + 1]);
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Reads and validates a plan file. `scale` overrides `[plan] scale`.
pub fn load(path: &Path, scale: Option<f64>) -> Result<Plan, PlanError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| PlanError {
        file: file.clone(),
        line: 0,
        field: "file".into(),
        message: format!("cannot read the plan: {e}"),
    })?;
    let base = path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .to_path_buf();
    parse(&text, &file, &base, scale)
}

/// Validates plan `text`; `file` names it in errors and `base` resolves relative files.
pub fn parse(text: &str, file: &str, base: &Path, scale: Option<f64>) -> Result<Plan, PlanError> {
    let cx = Ctx {
        text,
        file: file.to_string(),
        base: base.to_path_buf(),
    };
    let raw: PlanFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(0, |s| cx.line(s.start));
        cx.err_at(line, "toml", e.message().trim().to_string())
    })?;
    let meta = &raw.plan;
    let scale = match (scale, &meta.scale) {
        (Some(s), _) => s,
        (None, Some(s)) => *s.get_ref(),
        (None, None) => 1.0,
    };
    if !(scale.is_finite() && scale > 0.0) {
        let line = meta.scale.as_ref().map_or(0, |s| cx.line(s.span().start));
        return Err(cx.err_at(
            line,
            "plan.scale",
            format!("must be a positive number, not {scale}"),
        ));
    }
    let threads = match &meta.threads {
        Some(t) => Some(cx.positive(t, "plan.threads")? as usize),
        None => None,
    };
    let timeout = match &meta.timeout {
        Some(t) => {
            let d = cx.positive_duration(t, "plan.timeout")?;
            if d < Duration::from_millis(1) {
                return Err(cx.err(
                    t,
                    "plan.timeout",
                    "below 1ms, the resolution of request timeouts; use 1ms or more",
                ));
            }
            d
        }
        None => Duration::from_secs(5),
    };
    let buckets_ms = match &meta.buckets {
        Some(b) => b
            .iter()
            .map(|s| {
                cx.positive_duration(s, "plan.buckets")
                    .map(|d| d.as_secs_f64() * 1000.0)
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![50.0, 100.0, 200.0],
    };
    let mut knee = KneeRule::default();
    if let Some(k) = &meta.knee {
        knee.min_throughput_ratio = k.throughput_ratio.unwrap_or(knee.min_throughput_ratio);
        knee.p99_factor = k.p99_factor.unwrap_or(knee.p99_factor);
        knee.max_error_ratio = k.error_ratio.unwrap_or(knee.max_error_ratio);
        knee.min_gain = k.min_gain.unwrap_or(knee.min_gain);
    }
    let thresholds = meta
        .thresholds
        .iter()
        .map(|t| cx.threshold(t, "plan.thresholds"))
        .collect::<Result<Vec<_>, _>>()?;
    let slo = match &raw.slo {
        Some(s) => s
            .thresholds
            .iter()
            .map(|t| cx.threshold(t, "slo.thresholds"))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };

    let mut labels = BTreeMap::new();
    for (key, value) in &meta.labels {
        // The store's own rule, checked before any load so a run is never left unsaved.
        let (k, v) = perfbase_store::parse_label(&format!("{key}={}", value.get_ref()))
            .map_err(|e| cx.err(value, format!("plan.labels.{key}"), e.to_string()))?;
        labels.insert(k, v);
    }
    let mut corpora = Vec::new();
    for (name, def) in &raw.corpora {
        corpora.push(Arc::new(corpus(&cx, name, def)?));
    }
    let mut targets = BTreeMap::new();
    for (name, t) in &raw.targets {
        let field = format!("targets.{name}.url");
        let url_text = cx.env(&t.url, &field)?;
        let scheme = url_text.split("://").next().unwrap_or_default();
        let Some(family) = Family::of(scheme).filter(|_| url_text.contains("://")) else {
            return Err(cx.err(
                &t.url,
                &field,
                format!(
                    "'{}': use an http://, https://, postgres://, mysql://, redis://, \
                     redis+cluster://, amqp://, nats:// or mqtt:// URL",
                    perfbase_core::redact::url(t.url.get_ref())
                ),
            ));
        };
        // Each protocol's driver checks its URL now, so a bad one is an error at this line
        // (a cluster URL lists several host:port pairs, which is no URL to the url crate).
        let url = match family {
            Family::Redis => {
                let probe = perfbase_drivers::redis::RedisOptions {
                    keyspace: 1,
                    value_size: 1,
                    pipeline: 1,
                };
                perfbase_drivers::redis::RedisDriver::new(
                    &url_text,
                    perfbase_drivers::redis::RedisOp::Ping,
                    probe,
                )
                .map_err(|e| cx.err(&t.url, &field, e.to_string()))?;
                None
            }
            Family::Amqp => {
                perfbase_drivers::amqp::AmqpDriver::new(&url_text, Default::default())
                    .map_err(|e| cx.err(&t.url, &field, e.to_string()))?;
                None
            }
            Family::Nats => {
                perfbase_drivers::nats::NatsDriver::new(&url_text, Default::default())
                    .map_err(|e| cx.err(&t.url, &field, e.to_string()))?;
                None
            }
            Family::Mqtt => {
                perfbase_drivers::mqtt::MqttDriver::new(&url_text, Default::default())
                    .map_err(|e| cx.err(&t.url, &field, e.to_string()))?;
                None
            }
            Family::Http | Family::Sql => Some(Url::parse(&url_text).map_err(|e| {
                cx.err(
                    &t.url,
                    &field,
                    format!(
                        "invalid URL '{}': {e}",
                        perfbase_core::redact::url(t.url.get_ref())
                    ),
                )
            })?),
        };
        if family != Family::Http {
            let http_only = [
                ("keepalive", t.keepalive.is_some()),
                ("insecure", t.insecure.is_some()),
                ("cacert", t.cacert.is_some()),
                ("http2", t.http2.is_some()),
                ("streams", t.streams.is_some()),
            ];
            if let Some((f, _)) = http_only.iter().find(|(_, set)| *set) {
                return Err(cx.err(
                    &t.url,
                    format!("targets.{name}.{f}"),
                    "applies to http:// and https:// targets only",
                ));
            }
        }
        targets.insert(name.clone(), (t, family, url_text, url));
    }
    let mut workloads = BTreeMap::new();
    for (name, w) in &raw.workloads {
        let field = format!("workloads.{name}");
        let (tdef, family, url_text, url) = targets.get(w.target.get_ref()).ok_or_else(|| {
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
        fields_fit(&cx, &field, w, *family)?;
        // Labels reach results and reports: a `${VAR}` that may hold a secret stays a name.
        let shown_url = cx.shown_url(&tdef.url, &format!("targets.{}.url", w.target.get_ref()))?;
        let other = |backend: Backend, what: String| Workload {
            name: name.clone(),
            label: format!("{shown_url} ({what})"),
            corpora: corpora.clone(),
            shown_headers: Vec::new(),
            backend,
        };
        let workload = match family {
            Family::Http => None,
            Family::Sql => {
                let sql = sql_workload(&cx, &field, w, &corpora)?;
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
                Some(other(
                    Backend::Sql(SqlTarget {
                        dialect,
                        url: url_text.clone(),
                        workload: sql,
                        shown: what.clone(),
                        pipeline,
                        scale_given: w
                            .scale
                            .as_ref()
                            .map(|s| (*s.get_ref()).clamp(1, u32::MAX as i64) as u32),
                    }),
                    what,
                ))
            }
            Family::Redis => {
                let redis = redis_workload(&cx, &field, w, url_text)?;
                let what = redis.op.name().to_string();
                Some(other(Backend::Redis(redis), what))
            }
            Family::Amqp | Family::Nats | Family::Mqtt => {
                let (backend, what) = broker_workload(&cx, &field, w, *family, url_text)?;
                Some(other(backend, what))
            }
        };
        if let Some(workload) = workload {
            workloads.insert(name.clone(), workload);
            continue;
        }
        let url = url.as_ref().expect("http targets are parsed URLs");
        let single = w.request();
        let items: Vec<&RequestDef> = match &w.mix {
            Some(mix) => {
                if w.path.is_some()
                    || w.method.is_some()
                    || w.body.is_some()
                    || w.body_file.is_some()
                {
                    return Err(cx.err(
                        &w.target,
                        &field,
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
                mix.iter().collect()
            }
            None => vec![&single],
        };
        let mut specs = Vec::new();
        let mut shown_headers = Vec::new();
        for (i, r) in items.iter().enumerate() {
            let f = if w.mix.is_some() {
                format!("{field}.mix[{i}]")
            } else {
                field.clone()
            };
            let mut headers = Vec::new();
            // Target headers first, the request's own override them; each error names the
            // table the header was written in.
            let mut all: BTreeMap<String, (&S<String>, String)> = tdef
                .headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        (v, format!("targets.{}.headers.{k}", w.target.get_ref())),
                    )
                })
                .collect();
            for (k, v) in &r.headers {
                all.insert(k.clone(), (v, format!("{f}.headers.{k}")));
            }
            for (k, (v, hf)) in all {
                let value = cx.env(v, &hf)?;
                Template::parse(&value, &corpora).map_err(|e| cx.err(v, &hf, e))?;
                if i == 0 {
                    shown_headers.push(perfbase_core::redact::header_line(&k, v.get_ref()));
                }
                headers.push((k, value));
            }
            let path = match &r.path {
                Some(p) => {
                    Template::parse(p.get_ref(), &corpora)
                        .map_err(|e| cx.err(p, format!("{f}.path"), e))?;
                    p.get_ref().clone()
                }
                None => "/".to_string(),
            };
            let body = match (&r.body, &r.body_file) {
                (Some(b), None) => {
                    Template::parse(b.get_ref(), &corpora)
                        .map_err(|e| cx.err(b, format!("{f}.body"), e))?;
                    Some(BodySpec::Text(b.get_ref().clone()))
                }
                (None, Some(bf)) => {
                    let p = cx.base.join(bf.get_ref());
                    let bytes = std::fs::read(&p).map_err(|e| {
                        cx.err(
                            bf,
                            format!("{f}.body_file"),
                            format!("cannot read '{}': {e}", p.display()),
                        )
                    })?;
                    Some(BodySpec::Bytes(bytes.into()))
                }
                (Some(b), Some(_)) => {
                    return Err(cx.err(b, &f, "give either body or body_file, not both"))
                }
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
                n => n.as_ref().map(|n| n.get_ref().trim().to_string()),
            };
            specs.push(RequestSpec {
                method,
                base: url.clone(),
                path,
                headers,
                body,
                weight,
                name,
            });
        }
        if specs.iter().all(|s| s.weight == 0) {
            return Err(cx.err(
                &w.target,
                format!("{field}.mix"),
                "at least one request needs a weight above 0",
            ));
        }
        let label = format!(
            "{}{}",
            shown_url.trim_end_matches('/'),
            if specs.len() == 1 {
                specs[0].path.clone()
            } else {
                format!(" (mix of {})", specs.len())
            }
        );
        let version = http_version(&cx, tdef, w.target.get_ref())?;
        let ok_status = match &w.ok_status {
            Some(codes) => codes
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
                .collect::<Result<Vec<u16>, _>>()?,
            None => Vec::new(),
        };
        workloads.insert(
            name.clone(),
            Workload {
                name: name.clone(),
                label,
                corpora: corpora.clone(),
                shown_headers,
                backend: Backend::Http(HttpTarget {
                    requests: HttpRequests::Mix {
                        specs,
                        corpora: corpora.clone(),
                    },
                    options: HttpOptions {
                        version,
                        keepalive: tdef.keepalive.unwrap_or(true),
                        tls: perfbase_drivers::http::TlsOptions {
                            insecure: tdef.insecure.unwrap_or(false),
                            ca_file: tdef.cacert.as_ref().map(|c| cx.base.join(c.get_ref())),
                        },
                        ok_status,
                        ..HttpOptions::default()
                    },
                }),
            },
        );
    }
    let workload_ref = |s: &S<String>, field: String| -> Result<String, PlanError> {
        if workloads.contains_key(s.get_ref()) {
            Ok(s.get_ref().clone())
        } else {
            let known: Vec<&str> = workloads.keys().map(|k| k.as_str()).collect();
            Err(cx.err(
                s,
                field,
                format!(
                    "no workload named '{}' (workloads: {})",
                    s.get_ref(),
                    known.join(", ")
                ),
            ))
        }
    };
    let mut scenarios = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, sd) in raw.scenarios.iter().enumerate() {
        let field = format!("scenarios[{i}]");
        if !names.insert(sd.name.get_ref().clone()) {
            return Err(cx.err(
                &sd.name,
                format!("{field}.name"),
                format!("another scenario is already named '{}'", sd.name.get_ref()),
            ));
        }
        let workload = workload_ref(&sd.workload, format!("{field}.workload"))?;
        scenarios.push(scenario(&cx, &field, sd, workload, scale)?);
    }
    let mut checks = Vec::new();
    for (i, c) in raw.checks.iter().enumerate() {
        let field = format!("checks[{i}]");
        let workload = workload_ref(&c.workload, format!("{field}.workload"))?;
        let mut expect = BTreeMap::new();
        for (k, v) in c.expect.get_ref() {
            let code: u16 = k
                .parse()
                .ok()
                .filter(|c| (100..=599).contains(c))
                .ok_or_else(|| {
                    cx.err(
                        &c.expect,
                        format!("{field}.expect"),
                        format!("'{k}' is not an HTTP status code (100–599)"),
                    )
                })?;
            if *v < 0 {
                return Err(cx.err(
                    &c.expect,
                    format!("{field}.expect.{k}"),
                    "counts must be 0 or more",
                ));
            }
            expect.insert(code, *v as u64);
        }
        let requests = cx.positive(&c.requests, &format!("{field}.requests"))?;
        let total: u64 = expect.values().sum();
        if total != requests {
            return Err(cx.err(
                &c.expect,
                format!("{field}.expect"),
                format!("the expected counts add up to {total}, but requests = {requests}"),
            ));
        }
        checks.push(Check {
            name: c.name.get_ref().clone(),
            workload,
            requests,
            connections: match &c.connections {
                Some(n) => cx.positive(n, &format!("{field}.connections"))?,
                None => 1,
            },
            expect,
        });
    }
    let monitor = match &raw.monitor {
        Some(m) => {
            for t in &m.targets {
                t.get_ref()
                    .parse::<perfbase_monitor::Selector>()
                    .map_err(|e| cx.err(t, "monitor.targets", e.to_string()))?;
            }
            crate::monitoring::MonitorOptions {
                selectors: m.targets.iter().map(|t| t.get_ref().clone()).collect(),
                idle: match &m.idle {
                    Some(d) => cx.duration(d, "monitor.idle")?,
                    None => crate::monitoring::DEFAULT_IDLE,
                },
                interval: match &m.interval {
                    Some(d) => cx.positive_duration(d, "monitor.interval")?,
                    None => Duration::from_secs(1),
                },
            }
        }
        None => crate::monitoring::MonitorOptions {
            selectors: Vec::new(),
            idle: Duration::ZERO,
            interval: Duration::from_secs(1),
        },
    };
    if scenarios.is_empty() && checks.is_empty() {
        return Err(cx.err_at(
            1,
            "scenarios",
            "the plan has no [[scenarios]] and no [[checks]]: nothing to run",
        ));
    }
    Ok(Plan {
        name: meta.name.clone().unwrap_or_else(|| {
            Path::new(file)
                .file_stem()
                .map_or("plan".into(), |s| s.to_string_lossy().into_owned())
        }),
        file: file.to_string(),
        description: meta.description.clone(),
        threads,
        timeout,
        pacing: perfbase_engine::DEFAULT_PACING,
        scale,
        buckets_ms,
        knee,
        slo,
        thresholds,
        labels,
        workloads,
        scenarios,
        checks,
        monitor,
    })
}

/// The kind of protocol a target speaks, from its URL's scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Http,
    Sql,
    Redis,
    Amqp,
    Nats,
    Mqtt,
}

impl Family {
    fn of(scheme: &str) -> Option<Family> {
        Some(match scheme {
            "http" | "https" => Family::Http,
            "postgres" | "postgresql" | "mysql" | "mariadb" => Family::Sql,
            "redis" | "redis+cluster" => Family::Redis,
            "amqp" => Family::Amqp,
            "nats" => Family::Nats,
            "mqtt" => Family::Mqtt,
            _ => return None,
        })
    }

    /// The targets a workload field is for, in words.
    fn describe(families: &[Family]) -> String {
        let names: Vec<&str> = families
            .iter()
            .map(|f| match f {
                Family::Http => "http(s)://",
                Family::Sql => "postgres:// and mysql://",
                Family::Redis => "redis://",
                Family::Amqp => "amqp://",
                Family::Nats => "nats://",
                Family::Mqtt => "mqtt://",
            })
            .collect();
        names.join(", ")
    }
}

/// A target's HTTP version: `http2 = true` with `streams` per connection (1 by default).
fn http_version(cx: &Ctx, tdef: &file::TargetDef, target: &str) -> Result<HttpVersion, PlanError> {
    let field = |f: &str| format!("targets.{target}.{f}");
    let http2 = tdef.http2.as_ref().is_some_and(|b| *b.get_ref());
    match (&tdef.streams, http2) {
        (Some(s), false) => Err(cx.err(
            s,
            field("streams"),
            "applies to HTTP/2 only: add http2 = true",
        )),
        (_, true) if tdef.keepalive == Some(false) => Err(cx.err(
            tdef.http2.as_ref().expect("set"),
            field("http2"),
            "HTTP/2 keeps its connections: remove keepalive = false",
        )),
        (streams, true) => Ok(HttpVersion::Http2 {
            streams: match streams {
                Some(s) => cx.positive(s, &field("streams"))? as usize,
                None => 1,
            },
        }),
        (None, false) => Ok(HttpVersion::Http1),
    }
}

/// Each workload field that is set, the targets it is for, and where it was written (a byte
/// offset, for the error's line).
fn fields_set(w: &file::WorkloadDef) -> Vec<(&'static str, &'static [Family], usize)> {
    use Family::*;
    let at = |s: &std::ops::Range<usize>| s.start;
    let target = at(&w.target.span());
    let mut set = Vec::new();
    let mut add = |name, families, offset: Option<usize>| {
        if let Some(o) = offset {
            set.push((name, families, o));
        }
    };
    const HTTP: &[Family] = &[Http];
    const SQL: &[Family] = &[Sql];
    const REDIS: &[Family] = &[Redis];
    const AMQP: &[Family] = &[Amqp];
    add("method", HTTP, w.method.as_ref().map(|v| at(&v.span())));
    add("path", HTTP, w.path.as_ref().map(|v| at(&v.span())));
    add("headers", HTTP, (!w.headers.is_empty()).then_some(target));
    add("body", HTTP, w.body.as_ref().map(|v| at(&v.span())));
    add(
        "body_file",
        HTTP,
        w.body_file.as_ref().map(|v| at(&v.span())),
    );
    add("mix", HTTP, w.mix.as_ref().map(|_| target));
    add(
        "ok_status",
        HTTP,
        w.ok_status.as_ref().map(|v| at(&v.span())),
    );
    add("sql", SQL, w.sql.as_ref().map(|v| at(&v.span())));
    add("params", SQL, w.params.first().map(|v| at(&v.span())));
    add("builtin", SQL, w.builtin.as_ref().map(|v| at(&v.span())));
    add("scale", SQL, w.scale.as_ref().map(|v| at(&v.span())));
    add(
        "pipeline",
        &[Sql, Redis],
        w.pipeline.as_ref().map(|v| at(&v.span())),
    );
    add("command", REDIS, w.command.as_ref().map(|v| at(&v.span())));
    add(
        "keyspace",
        REDIS,
        w.keyspace.as_ref().map(|v| at(&v.span())),
    );
    add(
        "value_size",
        REDIS,
        w.value_size.as_ref().map(|v| at(&v.span())),
    );
    add("prefill", REDIS, w.prefill.as_ref().map(|v| at(&v.span())));
    add(
        "mode",
        &[Amqp, Nats],
        w.mode.as_ref().map(|v| at(&v.span())),
    );
    add(
        "size",
        &[Amqp, Nats, Mqtt],
        w.size.as_ref().map(|v| at(&v.span())),
    );
    add(
        "persistent",
        AMQP,
        w.persistent.as_ref().map(|v| at(&v.span())),
    );
    add("confirms", AMQP, w.confirms.as_ref().map(|v| at(&v.span())));
    add("ack", AMQP, w.ack.as_ref().map(|v| at(&v.span())));
    add("qos", &[Mqtt], w.qos.as_ref().map(|v| at(&v.span())));
    set
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

/// The mode and message options of a workload on an amqp://, nats:// or mqtt:// target, and
/// what reports call it.
fn broker_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    family: Family,
    url: &str,
) -> Result<(Backend, String), PlanError> {
    use perfbase_drivers::{amqp, mqtt, nats};
    let size = |default: usize| match &w.size {
        Some(v) => cx.positive(v, &format!("{field}.size")).map(|n| n as usize),
        None => Ok(default),
    };
    let pick = |v: &Option<S<String>>, name: &str, choices: &[&str], default: &str| {
        let Some(v) = v else {
            return Ok(default.to_string());
        };
        let text = v.get_ref().to_ascii_lowercase();
        if choices.contains(&text.as_str()) {
            Ok(text)
        } else {
            Err(cx.err(
                v,
                format!("{field}.{name}"),
                format!("'{}': use one of {}", v.get_ref(), choices.join(", ")),
            ))
        }
    };
    let flag = |v: &Option<S<bool>>| v.as_ref().is_some_and(|b| *b.get_ref());
    let url = url.to_string();
    Ok(match family {
        Family::Amqp => {
            let mode = pick(&w.mode, "mode", &["roundtrip", "publish"], "roundtrip")?;
            let ack = pick(&w.ack, "ack", &["none", "auto", "manual"], "manual")?;
            let options = amqp::AmqpOptions {
                mode: if mode == "publish" {
                    amqp::AmqpMode::Publish
                } else {
                    amqp::AmqpMode::RoundTrip
                },
                message_size: size(1024)?,
                persistent: flag(&w.persistent),
                confirms: flag(&w.confirms),
                ack: match ack.as_str() {
                    "none" => amqp::AckMode::None,
                    "auto" => amqp::AckMode::Auto,
                    _ => amqp::AckMode::Manual,
                },
                queue: None,
            };
            amqp::AmqpDriver::new(&url, options.clone())
                .map_err(|e| cx.err(&w.target, field, e.to_string()))?;
            (
                Backend::Amqp(AmqpTarget {
                    url,
                    options,
                    stream: None,
                }),
                mode,
            )
        }
        Family::Nats => {
            let mode = pick(
                &w.mode,
                "mode",
                &["pubsub", "request", "jetstream"],
                "pubsub",
            )?;
            let options = nats::NatsOptions {
                mode: match mode.as_str() {
                    "request" => nats::NatsMode::Request,
                    "jetstream" => nats::NatsMode::JetStream,
                    _ => nats::NatsMode::PubSub,
                },
                message_size: size(128)?,
            };
            nats::NatsDriver::new(&url, options)
                .map_err(|e| cx.err(&w.target, field, e.to_string()))?;
            (Backend::Nats(BrokerTarget { url, options }), mode)
        }
        _ => {
            let qos = match &w.qos {
                Some(q) if matches!(*q.get_ref(), 0 | 1) => *q.get_ref() as u8,
                Some(q) => return Err(cx.err(q, format!("{field}.qos"), "use 0 or 1")),
                None => 0,
            };
            let options = mqtt::MqttOptions {
                qos,
                message_size: size(128)?,
            };
            mqtt::MqttDriver::new(&url, options)
                .map_err(|e| cx.err(&w.target, field, e.to_string()))?;
            (
                Backend::Mqtt(BrokerTarget { url, options }),
                format!("qos {qos}"),
            )
        }
    })
}

/// The Redis command of a workload on a redis:// target, with its keyspace, value size,
/// pipeline and prefill.
fn redis_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    url: &str,
) -> Result<RedisTarget, PlanError> {
    use perfbase_drivers::redis::{RedisOp, RedisOptions};
    let names = || {
        RedisOp::ALL
            .iter()
            .map(|o| o.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let op = match &w.command {
        Some(c) => RedisOp::from_name(c.get_ref()).ok_or_else(|| {
            cx.err(
                c,
                format!("{field}.command"),
                format!(
                    "unknown Redis command '{}'; use one of {}",
                    c.get_ref(),
                    names()
                ),
            )
        })?,
        None => {
            return Err(cx.err(
                &w.target,
                format!("{field}.command"),
                format!("a Redis workload needs `command`: one of {}", names()),
            ))
        }
    };
    let int = |v: &Option<S<i64>>, f: &str, default: u64| match v {
        Some(v) => cx.positive(v, &format!("{field}.{f}")),
        None => Ok(default),
    };
    Ok(RedisTarget {
        url: url.to_string(),
        op,
        options: RedisOptions {
            keyspace: int(&w.keyspace, "keyspace", 100_000)?,
            value_size: int(&w.value_size, "value_size", 3)? as usize,
            pipeline: int(&w.pipeline, "pipeline", 1)? as usize,
        },
        prefill: w.prefill.as_ref().is_some_and(|p| *p.get_ref()),
    })
}

fn sql_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    corpora: &[Arc<Corpus>],
) -> Result<perfbase_drivers::sql::SqlWorkload, PlanError> {
    use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
    let scale = match &w.scale {
        Some(s) => cx.positive(s, &format!("{field}.scale"))? as u32,
        None => 1,
    };
    match (&w.sql, &w.builtin) {
        (Some(sql), None) => {
            let params = w
                .params
                .iter()
                .map(|p| Template::parse(p.get_ref(), corpora).map_err(|e| cx.err(p, format!("{field}.params"), e)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(SqlWorkload::Custom {
                sql: sql.get_ref().clone(),
                params,
                corpora: corpora.to_vec(),
            })
        }
        (None, Some(b)) => match b.get_ref().as_str() {
            "tpcb" => Ok(SqlWorkload::TpcB { scale }),
            "tpcb-function" => Ok(SqlWorkload::TpcBFunction { scale }),
            other => SuiteOp::from_name(other).map(SqlWorkload::Suite).ok_or_else(|| {
                cx.err(b, format!("{field}.builtin"), format!("'{other}': use tpcb, tpcb-function, insert, select-pk, scan, update, delete, transaction or join"))
            }),
        },
        (Some(sql), Some(_)) => Err(cx.err(sql, field, "give either sql or builtin, not both")),
        (None, None) => Err(cx.err(&w.target, field, "a database workload needs sql = \"…\" (with params) or builtin = \"tpcb\"")),
    }
}

fn corpus(cx: &Ctx<'_>, name: &str, def: &file::CorpusDef) -> Result<Corpus, PlanError> {
    let field = format!("corpora.{name}");
    let line_of = |d: &file::CorpusDef| {
        d.file
            .as_ref()
            .map(|s| cx.line(s.span().start))
            .or(d.pick.as_ref().map(|s| cx.line(s.span().start)))
            .unwrap_or(0)
    };
    let pick = match def.pick.as_ref().map(|p| p.get_ref().as_str()) {
        None | Some("random") => Pick::Random,
        Some("sequential") => Pick::Sequential,
        Some("weighted") => Pick::Weighted,
        Some(other) => {
            return Err(cx.err(
                def.pick.as_ref().expect("matched Some"),
                format!("{field}.pick"),
                format!("'{other}': use random, sequential or weighted"),
            ))
        }
    };
    let sources =
        def.file.is_some() as u8 + def.values.is_some() as u8 + def.generate.is_some() as u8;
    if sources != 1 {
        return Err(cx.err_at(
            line_of(def),
            &field,
            "give exactly one of file, values or generate",
        ));
    }
    let mut weights = None;
    let values: Vec<String> = if let Some(v) = &def.values {
        v.clone()
    } else if let Some(g) = &def.generate {
        let count = cx.positive(&g.count, &format!("{field}.generate.count"))?;
        match (&g.pattern, &g.length) {
            (Some(pattern), None) => {
                if !pattern.get_ref().contains("{n}") {
                    return Err(cx.err(
                        pattern,
                        format!("{field}.generate.pattern"),
                        "the pattern needs '{n}', e.g. \"key-{n}\"",
                    ));
                }
                let start = g.start.unwrap_or(0);
                (0..count as i64)
                    .map(|i| pattern.get_ref().replace("{n}", &(start + i).to_string()))
                    .collect()
            }
            (None, Some(length)) => {
                let len = cx.positive(length, &format!("{field}.generate.length"))? as usize;
                random_strings(name, count, len)
            }
            _ => {
                return Err(cx.err(
                    &g.count,
                    format!("{field}.generate"),
                    "give either pattern = \"key-{n}\" or length = N (random strings)",
                ))
            }
        }
    } else {
        let f = def.file.as_ref().expect("one source is set");
        let path = cx.base.join(f.get_ref());
        let text = std::fs::read_to_string(&path).map_err(|e| {
            cx.err(
                f,
                format!("{field}.file"),
                format!("cannot read '{}': {e}", path.display()),
            )
        })?;
        let is_csv =
            def.column.is_some() || def.weight_column.is_some() || f.get_ref().ends_with(".csv");
        if is_csv {
            let (v, w) = csv_values(
                &text,
                def.column.as_ref().map(|c| c.get_ref().as_str()),
                def.weight_column.as_ref().map(|c| c.get_ref().as_str()),
            )
            .map_err(|e| {
                cx.err(
                    f,
                    format!("{field}.file"),
                    format!("{}: {e}", path.display()),
                )
            })?;
            weights = w;
            v
        } else {
            text.lines()
                .map(str::trim_end)
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect()
        }
    };
    let misses = def.misses.as_ref().map_or(0.0, |m| *m.get_ref());
    Corpus::new(name, values, weights, pick, misses).map_err(|e| cx.err_at(line_of(def), &field, e))
}

/// `count` random alphanumeric strings of `len` characters, the same for the same corpus name
/// (seeded by it), so runs are reproducible.
fn random_strings(name: &str, count: u64, len: usize) -> Vec<String> {
    use perfbase_drivers::workload::mix64;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let seed = name.bytes().fold(0u64, |h, b| mix64(h ^ b as u64));
    (0..count)
        .map(|i| {
            (0..len as u64)
                .map(|j| {
                    let r = mix64(seed ^ mix64(i) ^ j.wrapping_mul(0x9E37_79B9));
                    ALPHABET[(r % ALPHABET.len() as u64) as usize] as char
                })
                .collect()
        })
        .collect()
}

/// Splits one CSV line, honouring double quotes (RFC 4180 style, no embedded newlines).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

type CsvColumns = (Vec<String>, Option<Vec<f64>>);

fn csv_values(
    text: &str,
    column: Option<&str>,
    weight: Option<&str>,
) -> Result<CsvColumns, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = csv_fields(lines.next().ok_or("the CSV file is empty")?);
    let find = |name: &str| {
        header
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| format!("no column '{name}' (columns: {})", header.join(", ")))
    };
    let vi = match column {
        Some(c) => find(c)?,
        None => 0,
    };
    let wi = weight.map(find).transpose()?;
    let mut values = Vec::new();
    let mut weights = Vec::new();
    for (n, line) in lines.enumerate() {
        let f = csv_fields(line);
        let v = f
            .get(vi)
            .ok_or_else(|| format!("row {} has no column {}", n + 2, vi + 1))?;
        values.push(v.trim().to_string());
        if let Some(wi) = wi {
            let w = f
                .get(wi)
                .and_then(|x| x.trim().parse::<f64>().ok())
                .ok_or_else(|| format!("row {}: the weight is not a number", n + 2))?;
            weights.push(w);
        }
    }
    Ok((values, wi.map(|_| weights)))
}

fn num_text(v: &NumOrText) -> String {
    match v {
        NumOrText::Int(i) => i.to_string(),
        NumOrText::Float(f) => f.to_string(),
        NumOrText::Text(t) => t.clone(),
    }
}

fn offered_value(o: Offered) -> f64 {
    match o {
        Offered::Rate(r) => r,
        Offered::Concurrency(c) => c as f64,
    }
}

fn rate_of(
    cx: &Ctx<'_>,
    v: &NumOrText,
    span: &S<impl Sized>,
    field: &str,
    scale: f64,
) -> Result<f64, PlanError> {
    let rate = parse_rate(&num_text(v)).map_err(|e| cx.err(span, field, e.to_string()))? * scale;
    if rate > perfbase_core::units::MAX_RATE {
        return Err(cx.err(
            span,
            field,
            format!("{rate:.0}/s after scale {scale}: above the 100M/s that perfbase can pace"),
        ));
    }
    Ok(rate)
}

fn conc_of(
    cx: &Ctx<'_>,
    v: &NumOrText,
    span: &S<impl Sized>,
    field: &str,
    scale: f64,
) -> Result<u64, PlanError> {
    match v {
        NumOrText::Int(n) if *n >= 1 => {
            let n = ((*n as f64 * scale).round() as u64).max(1);
            crate::limits::check_connections(n).map_err(|e| cx.err(span, field, e))?;
            Ok(n)
        }
        _ => Err(cx.err(
            span,
            field,
            format!(
                "'{}': concurrency must be a whole number of connections ≥ 1",
                num_text(v)
            ),
        )),
    }
}

fn fmt_rate(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{r:.0}/s")
    } else {
        format!("{r:.2}/s")
    }
}

fn scenario(
    cx: &Ctx<'_>,
    field: &str,
    sd: &file::ScenarioDef,
    workload: String,
    scale: f64,
) -> Result<Scenario, PlanError> {
    let shapes =
        sd.rate.is_some() as u8 + sd.concurrency.is_some() as u8 + sd.stages.is_some() as u8;
    if shapes != 1 {
        return Err(cx.err(
            &sd.name,
            field,
            "give exactly one of rate, concurrency or stages",
        ));
    }
    let count = sd
        .requests
        .as_ref()
        .map(|r| cx.positive(r, &format!("{field}.requests")))
        .transpose()?;
    let duration = match (&sd.duration, count) {
        (Some(d), _) => Some(cx.positive_duration(d, &format!("{field}.duration"))?),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_STEP),
    };
    let max_inflight = sd
        .max_inflight
        .as_ref()
        .map(|m| {
            let f = format!("{field}.max_inflight");
            let n = cx.positive(m, &f)?;
            crate::limits::check_connections(n).map_err(|e| cx.err(m, &f, e))?;
            Ok::<u64, PlanError>(n)
        })
        .transpose()?
        .unwrap_or(DEFAULT_MAX_INFLIGHT);
    let open = |rate: f64| Load::Open {
        pacer: Pacer::constant(rate),
        max_inflight,
    };
    let (kind, steps) = if let Some(r) = &sd.rate {
        let f = format!("{field}.rate");
        match r.get_ref() {
            OneOrMany::One(v) => {
                let rate = rate_of(cx, v, r, &f, scale)?;
                (
                    Kind::Constant,
                    vec![Step {
                        name: fmt_rate(rate),
                        load: open(rate),
                        offered: Offered::Rate(rate),
                        duration,
                        count,
                    }],
                )
            }
            OneOrMany::Many(vs) => {
                let mut steps = Vec::new();
                for v in vs {
                    let rate = rate_of(cx, v, r, &f, scale)?;
                    steps.push(Step {
                        name: fmt_rate(rate),
                        load: open(rate),
                        offered: Offered::Rate(rate),
                        duration,
                        count,
                    });
                }
                (Kind::RateLadder, steps)
            }
        }
    } else if let Some(c) = &sd.concurrency {
        let f = format!("{field}.concurrency");
        let vs: Vec<&NumOrText> = match c.get_ref() {
            OneOrMany::One(v) => vec![v],
            OneOrMany::Many(vs) => vs.iter().collect(),
        };
        let mut steps = Vec::new();
        for v in &vs {
            let n = conc_of(cx, v, c, &f, scale)?;
            steps.push(Step {
                name: format!("c={n}"),
                load: Load::Closed { connections: n },
                offered: Offered::Concurrency(n),
                duration,
                count,
            });
        }
        let kind = if matches!(c.get_ref(), OneOrMany::Many(_)) {
            Kind::ConcurrencyLadder
        } else {
            Kind::Constant
        };
        (kind, steps)
    } else {
        let stages = sd.stages.as_ref().expect("one shape is set");
        let mut steps = Vec::new();
        let mut last_rate: Option<f64> = None;
        for (j, st) in stages.get_ref().iter().enumerate() {
            let f = format!("{field}.stages[{j}]");
            let d = cx.positive_duration(&st.duration, &format!("{f}.duration"))?;
            let set = st.rate.is_some() as u8
                + st.ramp_to.is_some() as u8
                + st.concurrency.is_some() as u8;
            if set != 1 {
                return Err(cx.err(
                    &st.duration,
                    &f,
                    "give exactly one of rate, ramp_to or concurrency",
                ));
            }
            let step = if let Some(r) = &st.rate {
                let rate = rate_of(cx, r.get_ref(), r, &format!("{f}.rate"), scale)?;
                last_rate = Some(rate);
                Step {
                    name: format!("stage {}: {}", j + 1, fmt_rate(rate)),
                    load: open(rate),
                    offered: Offered::Rate(rate),
                    duration: Some(d),
                    count: None,
                }
            } else if let Some(r) = &st.ramp_to {
                let to = rate_of(cx, r.get_ref(), r, &format!("{f}.ramp_to"), scale)?;
                let from = last_rate.unwrap_or(0.0);
                last_rate = Some(to);
                Step {
                    name: format!("stage {}: ramp {}→{}", j + 1, fmt_rate(from), fmt_rate(to)),
                    load: Load::Open {
                        pacer: Pacer::Ramp { from, to, over: d },
                        max_inflight,
                    },
                    offered: Offered::Rate((from + to) / 2.0),
                    duration: Some(d),
                    count: None,
                }
            } else {
                let c = st.concurrency.as_ref().expect("one is set");
                let n = conc_of(
                    cx,
                    &NumOrText::Int(*c.get_ref()),
                    c,
                    &format!("{f}.concurrency"),
                    scale,
                )?;
                last_rate = None;
                Step {
                    name: format!("stage {}: c={n}", j + 1),
                    load: Load::Closed { connections: n },
                    offered: Offered::Concurrency(n),
                    duration: Some(d),
                    count: None,
                }
            };
            steps.push(step);
        }
        (Kind::Stages, steps)
    };
    if steps.is_empty() {
        // `rate = []`, `concurrency = []` or `stages = []`: nothing to run.
        const LADDER: &str = "a ladder needs at least one step, e.g. [10, 20, 40]";
        let (span, name, why) = match (&sd.rate, &sd.concurrency, &sd.stages) {
            (Some(r), _, _) => (r.span(), "rate", LADDER),
            (_, Some(c), _) => (c.span(), "concurrency", LADDER),
            (_, _, Some(st)) => (st.span(), "stages", "needs at least one stage"),
            _ => (0..0, "scenario", "needs at least one step"),
        };
        return Err(cx.err_at(cx.line(span.start), format!("{field}.{name}"), why));
    }
    if kind.is_ladder() {
        // The knee rule compares each step with the ones below it: a ladder must climb.
        let shape = if kind == Kind::RateLadder {
            sd.rate.as_ref().map(|r| (r.span(), "rate"))
        } else {
            sd.concurrency.as_ref().map(|c| (c.span(), "concurrency"))
        };
        let (span, key) = shape.expect("a ladder has its values");
        for (j, pair) in steps.windows(2).enumerate() {
            if offered_value(pair[1].offered) <= offered_value(pair[0].offered) {
                let scaled = if scale == 1.0 {
                    String::new()
                } else {
                    format!(" after scale {scale}: use a larger scale")
                };
                return Err(cx.err_at(
                    cx.line(span.start),
                    format!("{field}.{key}"),
                    format!(
                        "a ladder must climb: step {} ({}) is not above step {} ({}){scaled}",
                        j + 2,
                        pair[1].name,
                        j + 1,
                        pair[0].name
                    ),
                ));
            }
        }
    }
    Ok(Scenario {
        name: sd.name.get_ref().clone(),
        workload,
        kind,
        steps,
        warmup: sd
            .warmup
            .as_ref()
            .map(|w| cx.positive_duration(w, &format!("{field}.warmup")))
            .transpose()?,
        cooldown: sd
            .cooldown
            .as_ref()
            .map(|w| cx.positive_duration(w, &format!("{field}.cooldown")))
            .transpose()?,
        repetitions: sd
            .repetitions
            .as_ref()
            .map(|r| cx.positive(r, &format!("{field}.repetitions")))
            .transpose()?
            .map_or(1, |r| r as u32),
        thresholds: sd
            .thresholds
            .iter()
            .map(|t| cx.threshold(t, &format!("{field}.thresholds")))
            .collect::<Result<Vec<_>, _>>()?,
    })
}

/// What a plan would run, phase by phase (for `perfbase run --dry-run`).
pub fn describe(plan: &Plan) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut total = Duration::ZERO;
    let _ = writeln!(
        out,
        "plan {} ({}), scale {}",
        plan.name, plan.file, plan.scale
    );
    for s in &plan.scenarios {
        let _ = writeln!(
            out,
            "scenario {}: {} on {}, {} step(s) × {} repetition(s)",
            s.name,
            s.kind.name(),
            plan.workloads[&s.workload].label,
            s.steps.len(),
            s.repetitions
        );
        if let Some(w) = s.warmup {
            let _ = writeln!(
                out,
                "  warm-up {}",
                perfbase_core::units::format_duration(w)
            );
            total += w;
        }
        for step in &s.steps {
            let bound = match (step.duration, step.count) {
                (Some(d), Some(n)) => format!(
                    "{} or {n} requests",
                    perfbase_core::units::format_duration(d)
                ),
                (Some(d), None) => perfbase_core::units::format_duration(d),
                (None, Some(n)) => format!("{n} requests"),
                (None, None) => String::new(),
            };
            let _ = writeln!(out, "  step {}: {bound}", step.name);
            total += step.duration.unwrap_or_default() * s.repetitions;
        }
        if let Some(c) = s.cooldown {
            total += c * (s.steps.len() as u32 * s.repetitions).saturating_sub(1);
        }
    }
    for c in &plan.checks {
        let expect: Vec<String> = c.expect.iter().map(|(k, v)| format!("{v} × {k}")).collect();
        let _ = writeln!(
            out,
            "check {}: {} requests on {} connection(s), expect {}",
            c.name,
            c.requests,
            c.connections,
            expect.join(" + ")
        );
    }
    let _ = writeln!(
        out,
        "at least {} of load",
        perfbase_core::units::format_duration(Duration::from_secs(total.as_secs()))
    );
    out
}

#[cfg(test)]
mod tests;
