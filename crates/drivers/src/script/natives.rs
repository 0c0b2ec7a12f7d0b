//! The native functions a script reaches through `globalThis.__perfbase` (wrapped by the
//! modules in modules.rs) and the globals it sees: `open`, `console`, `__ENV`. Natives
//! only record what the virtual user asked for in the thread's [`Slot`](super::host::Slot); the session sends
//! the request and the engine times it, so no script touches a clock or a histogram.

use super::crypto::{self, bytes_of};
use super::host::{Host, Pending, Request};
use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use perfbase_core::redact;
use rquickjs::function::{Opt, Rest};
use rquickjs::{ArrayBuffer, Ctx, Exception, Function, Object, Promise, Result, Value};
use std::rc::Rc;
use std::time::Duration;

/// The longest think time one `sleep` takes: longer is a mistake in units (ms for s).
const MAX_SLEEP_S: f64 = 3600.0;

/// Installs `__perfbase`, `open`, `console` and `__ENV` in the context's globals.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> Result<()> {
    let pb = Object::new(ctx.clone())?;
    let h = host.clone();
    pb.set(
        "request",
        Function::new(ctx.clone(), move |ctx, method, url, body, params| {
            request(ctx, &h, (method, url), body, params)
        })?,
    )?;
    let h = host.clone();
    pb.set(
        "batch",
        Function::new(ctx.clone(), move |ctx, list| batch(ctx, &h, list))?,
    )?;
    let h = host.clone();
    pb.set(
        "check",
        Function::new(ctx.clone(), move |name: String, passed: bool| {
            check(&h, &name, passed)
        })?,
    )?;
    let h = host.clone();
    pb.set(
        "metric",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, name: String, kind: String| metric(&ctx, &h, &name, &kind),
        )?,
    )?;
    let h = host.clone();
    pb.set(
        "sample",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, metric: u16, value: f64| sample(&ctx, &h, metric, value),
        )?,
    )?;
    let h = host.clone();
    pb.set(
        "enter",
        Function::new(ctx.clone(), move |name: String| {
            h.slot.borrow_mut().groups.push(name)
        })?,
    )?;
    let h = host.clone();
    pb.set(
        "leave",
        Function::new(ctx.clone(), move || {
            h.slot.borrow_mut().groups.pop();
        })?,
    )?;
    let h = host.clone();
    pb.set(
        "sleep",
        Function::new(ctx.clone(), move |ctx: Ctx<'js>, s: f64| sleep(&ctx, &h, s))?,
    )?;
    let h = host.clone();
    pb.set("vu", Function::new(ctx.clone(), move || h.user.get().0)?)?;
    let h = host.clone();
    pb.set(
        "iteration",
        Function::new(ctx.clone(), move || h.user.get().1)?,
    )?;
    crypto::install(ctx, &pb)?;
    ctx.globals().set("__perfbase", pb)?;
    // Read when the code reads them, not set before every run of it.
    ctx.eval::<(), _>(
        "Object.defineProperty(globalThis, '__VU', { get: () => __perfbase.vu() });\n\
         Object.defineProperty(globalThis, '__ITER', { get: () => __perfbase.iteration() });",
    )?;
    globals(ctx, host)
}

/// `open`, `console` and `__ENV`: the globals k6's scripts expect beside their modules.
fn globals<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> Result<()> {
    let h = host.clone();
    ctx.globals().set(
        "open",
        Function::new(ctx.clone(), move |ctx, path, mode| {
            open(ctx, &h, path, mode)
        })?,
    )?;
    let console = Object::new(ctx.clone())?;
    for name in ["log", "info", "warn", "error", "debug"] {
        console.set(name, Function::new(ctx.clone(), log)?)?;
    }
    ctx.globals().set("console", console)?;
    let env = Object::new(ctx.clone())?;
    for (k, v) in &host.run.env {
        env.set(k.as_str(), v.as_str())?;
    }
    ctx.globals().set("__ENV", env)?;
    Ok(())
}

/// `check(name, passed)`: counts into the iteration's bits of the named check.
fn check(h: &Host, name: &str, passed: bool) {
    if !h.measured {
        return;
    }
    if let Some(bit) = h.seen.check(&h.run.names, name) {
        let mut slot = h.slot.borrow_mut();
        if passed {
            slot.checks.passed |= 1 << bit;
        } else {
            slot.checks.failed |= 1 << bit;
        }
    }
}

/// A custom metric's value, held with the user's next request (at most [`MAX_SAMPLES`]).
fn sample(ctx: &Ctx<'_>, h: &Host, metric: u16, value: f64) -> Result<()> {
    if !h.measured {
        return Ok(());
    }
    let mut slot = h.slot.borrow_mut();
    if slot.samples.len() >= MAX_SAMPLES {
        return Err(Exception::throw_range(
            ctx,
            &format!(
                "more than {MAX_SAMPLES} metric values between two requests: add fewer, or add \
                 their sum"
            ),
        ));
    }
    slot.samples
        .push(perfbase_core::metric::Sample { metric, value });
    Ok(())
}

/// `console.log(...)`: one line on stderr, its secrets hidden and its control characters
/// escaped (a script may print what a server sent).
fn log<'js>(ctx: Ctx<'js>, args: Rest<Value<'js>>) -> Result<()> {
    let mut line = String::new();
    for (i, v) in args.0.into_iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        let text = match v.as_string() {
            Some(s) => s.to_string()?,
            None => ctx
                .json_stringify(v)?
                .map(|s| s.to_string())
                .transpose()?
                .unwrap_or_else(|| "undefined".into()),
        };
        line.push_str(&text);
    }
    let line = redact::text(&line);
    let line = redact::printable(&redact::known(&line)).into_owned();
    eprintln!("script: {line}");
    Ok(())
}

/// `new Counter(name)` and its kin: the metric's number, the same on every thread.
fn metric(ctx: &Ctx<'_>, host: &Host, name: &str, kind: &str) -> Result<u16> {
    use perfbase_core::metric::MetricKind;
    let kind = match kind {
        "counter" => MetricKind::Counter,
        "gauge" => MetricKind::Gauge,
        "rate" => MetricKind::Rate,
        _ => MetricKind::Trend,
    };
    host.run
        .names
        .metric(name, kind)
        .map_err(|why| Exception::throw_type(ctx, &why))
}

fn sleep(ctx: &Ctx<'_>, host: &Host, seconds: f64) -> Result<()> {
    if !(0.0..=MAX_SLEEP_S).contains(&seconds) {
        return Err(Exception::throw_range(
            ctx,
            &format!("sleep({seconds}): seconds must be from 0 to {MAX_SLEEP_S}"),
        ));
    }
    host.slot.borrow_mut().think += Duration::from_secs_f64(seconds);
    Ok(())
}

/// `open(path[, "b"])`: a file under the script's folder, read once when the script loads
/// (through the one capped reader), as text or, with "b", as an ArrayBuffer.
fn open<'js>(ctx: Ctx<'js>, host: &Host, path: String, mode: Opt<String>) -> Result<Value<'js>> {
    if !host.init.get() {
        return Err(Exception::throw_message(
            &ctx,
            "open() reads files when the script loads (at its top level), not in an \
             iteration, setup or teardown",
        ));
    }
    let file = host
        .run
        .inside(&path)
        .map_err(|why| Exception::throw_message(&ctx, &format!("open('{path}'): {why}")))?;
    let bytes = crate::input::read(&file)
        .map_err(|e| Exception::throw_message(&ctx, &format!("open('{path}'): {e}")))?;
    if mode.0.as_deref() == Some("b") {
        return Ok(ArrayBuffer::new(ctx, bytes)?.into_value());
    }
    let text = crate::input::text(bytes)
        .map_err(|e| Exception::throw_message(&ctx, &format!("open('{path}'): {e}")))?;
    rquickjs::String::from_str(ctx, &text).map(|s| s.into_value())
}

/// The most requests one `http.batch` sends (k6's own default is 20 at a time): the answers
/// are held together (each body up to 1 MiB) until the last one comes.
const MAX_BATCH: usize = 100;
/// The most metric values a user adds between two requests: they are held until its next
/// step, outside the runtime's memory limit.
const MAX_SAMPLES: usize = 1024;
/// The most connections a batch opens to one origin at a time (k6's `batchPerHost`).
pub(crate) const BATCH_PER_HOST: usize = 6;

/// `http.request(method, url, body, params)`: checks and records the request in the VU's
/// slot, and gives back the promise its response will settle.
fn request<'js>(
    ctx: Ctx<'js>,
    host: &Host,
    (method, url): (String, String),
    body: Value<'js>,
    params: Value<'js>,
) -> Result<Promise<'js>> {
    let r = made(&ctx, host, (method, url), &body, params)?;
    ask(&ctx, host, vec![r], false)
}

/// `http.batch([[method, url, body, params], ...])` (the module makes every form this one):
/// the requests sent together, the promise settled with their responses in order.
fn batch<'js>(ctx: Ctx<'js>, host: &Host, list: rquickjs::Array<'js>) -> Result<Promise<'js>> {
    if list.len() > MAX_BATCH {
        return Err(Exception::throw_range(
            &ctx,
            &format!("http.batch of {} requests: at most {MAX_BATCH}", list.len()),
        ));
    }
    let mut requests = Vec::with_capacity(list.len());
    for item in list.iter::<rquickjs::Array>() {
        let item = item?;
        let (method, url): (String, String) = (item.get(0)?, item.get(1)?);
        requests.push(made(
            &ctx,
            host,
            (method, url),
            &item.get(2)?,
            item.get(3)?,
        )?);
    }
    if requests.is_empty() {
        let (promise, resolve, _) = ctx.promise()?;
        resolve.call::<_, ()>((rquickjs::Array::new(ctx.clone())?,))?;
        return Ok(promise);
    }
    ask(&ctx, host, requests, true)
}

/// Records `requests` in the slot as what the user waits for.
fn ask<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    requests: Vec<Request>,
    batch: bool,
) -> Result<Promise<'js>> {
    if host.slot.borrow().pending.is_some() {
        return Err(Exception::throw_type(
            ctx,
            "a virtual user sends one request (or one http.batch) at a time: await each \
             before the next (Promise.all of requests is not supported: use http.batch)",
        ));
    }
    let (promise, resolve, reject) = ctx.promise()?;
    host.slot.borrow_mut().pending = Some(Pending {
        requests,
        batch,
        settle: (
            rquickjs::Persistent::save(ctx, resolve),
            rquickjs::Persistent::save(ctx, reject),
        ),
    });
    Ok(promise)
}

/// One request from the code's arguments: its target, headers, body and endpoint name.
fn made<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    (method, url): (String, String),
    body: &Value<'js>,
    params: Value<'js>,
) -> Result<Request> {
    let fail = |why: String| Exception::throw_type(ctx, &format!("{method} {url}: {why}"));
    if host.init.get() {
        return Err(fail(
            "requests are made in an iteration, setup or teardown, not when the script loads"
                .into(),
        ));
    }
    let target = host.run.url(&url).map_err(fail)?;
    let client = host.client(&target).map_err(fail)?;
    let params = params.into_object();
    let mut headers = host.run.headers.clone();
    let mut name = None;
    if let Some(p) = &params {
        read_headers(p, &mut headers).map_err(fail)?;
        name = p.get::<_, Option<String>>("name")?;
        if name.is_none() {
            if let Some(tags) = p.get::<_, Option<Object>>("tags")? {
                name = tags.get::<_, Option<String>>("name")?;
            }
        }
    }
    let body = request_body(body, &mut headers).map_err(fail)?;
    let method = hyper::Method::from_bytes(method.as_bytes())
        .map_err(|_| Exception::throw_type(ctx, &format!("'{method}' is no HTTP method")))?;
    let path = target.path().to_string();
    let name = name.unwrap_or_else(|| super::names::template(method.as_str(), &path));
    let group = host.slot.borrow().groups.join(" / ");
    let label = match host.measured {
        true => host.seen.label(&host.run.names, &group, &name),
        false => 0,
    };
    let uri = match target.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.clone(),
    };
    let uri = hyper::Uri::try_from(uri).map_err(|e| fail(format!("no request target: {e}")))?;
    let mut map = hyper::HeaderMap::new();
    for (n, v) in headers {
        map.append(n, v);
    }
    Ok(Request {
        out: crate::http::journey::client::Outgoing {
            method,
            uri,
            headers: map,
            body,
        },
        client,
        label,
        url: target.to_string(),
        path,
    })
}

/// Adds `params.headers` to `headers`.
fn read_headers(
    params: &Object<'_>,
    headers: &mut Vec<(HeaderName, HeaderValue)>,
) -> std::result::Result<(), String> {
    let Ok(Some(h)) = params.get::<_, Option<Object>>("headers") else {
        return Ok(());
    };
    for entry in h.props::<String, Value>() {
        let (k, v) = entry.map_err(|e| e.to_string())?;
        let v = match v.as_string() {
            Some(s) => s.to_string().map_err(|e| e.to_string())?,
            None if v.is_number() || v.is_bool() => {
                v.get::<rquickjs::Coerced<String>>()
                    .map_err(|e| e.to_string())?
                    .0
            }
            None => return Err(format!("header {k}: its value must be a string")),
        };
        let name =
            HeaderName::from_bytes(k.as_bytes()).map_err(|_| format!("'{k}' is no header name"))?;
        let value = HeaderValue::from_str(&v).map_err(|_| {
            format!("header {k}: a value holds a line break or another control character")
        })?;
        headers.retain(|(n, _)| n != name);
        headers.push((name, value));
    }
    Ok(())
}

/// A request's body: a string or bytes as they are; an object as an HTML form
/// (`application/x-www-form-urlencoded`, as k6 sends it) unless a Content-Type says otherwise.
fn request_body(
    body: &Value<'_>,
    headers: &mut Vec<(HeaderName, HeaderValue)>,
) -> std::result::Result<Bytes, String> {
    if body.is_null() || body.is_undefined() {
        return Ok(Bytes::new());
    }
    if let Some(b) = bytes_of(body).map_err(|e| e.to_string())? {
        return Ok(Bytes::from(b));
    }
    let Some(obj) = body.as_object() else {
        return Err("the body must be a string, an ArrayBuffer or an object (a form)".into());
    };
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for entry in obj.props::<String, rquickjs::Coerced<String>>() {
        let (k, v) = entry.map_err(|e| e.to_string())?;
        form.append_pair(&k, &v.0);
    }
    if !headers.iter().any(|(n, _)| n == CONTENT_TYPE) {
        headers.push((
            CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        ));
    }
    Ok(Bytes::from(form.finish()))
}
