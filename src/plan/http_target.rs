//! An http(s):// target's settings, for HTTP and the protocols above it: its HTTP version,
//! how its TLS is trusted, and the URL of a protocol reached with `protocol = "NAME"`.

use super::context::Ctx;
use super::file;
use super::model::PlanError;
use perfbase_drivers::http::HttpVersion;

/// A target's HTTP version: `http2 = true` with `streams` per connection (1 by default).
pub(super) fn http_version(
    cx: &Ctx,
    tdef: &file::TargetDef,
    target: &str,
) -> Result<HttpVersion, PlanError> {
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

/// How an https:// target is trusted, as its plan table says (`insecure`, `cacert` relative to
/// the plan): one reading for request mixes, journeys and Vault.
/// Header names and values, in order.
type Headers = Vec<(String, String)>;

/// The target's headers, `${ENV}` expanded (each error names `targets.T.headers.NAME`), and
/// as results show them (secrets redacted), for the workloads that send them on every
/// request (journeys, scripts).
pub(super) fn target_headers(
    cx: &Ctx,
    tdef: &file::TargetDef,
    target: &str,
) -> Result<(Headers, Vec<String>), PlanError> {
    let mut headers = Vec::new();
    for (k, v) in &tdef.headers {
        headers.push((
            k.clone(),
            cx.env(v, &format!("targets.{target}.headers.{k}"))?,
        ));
    }
    let shown = tdef
        .headers
        .iter()
        .map(|(k, v)| perfbase_core::redact::header_line(k, v.get_ref()))
        .collect();
    Ok((headers, shown))
}

pub(super) fn tls_of(cx: &Ctx, tdef: &file::TargetDef) -> perfbase_drivers::http::TlsOptions {
    perfbase_drivers::http::TlsOptions {
        insecure: tdef.insecure.unwrap_or(false),
        ca_file: tdef.cacert.as_ref().map(|c| cx.base.join(c.get_ref())),
    }
}

/// A protocol above HTTP reached with `protocol = "NAME"` on an http:// or https:// URL: the
/// URL in its own schemes, `plain` or `tls`.
pub(super) fn above_http(url: &str, plain: &str, tls: &str) -> String {
    match url.split_once("://") {
        Some(("http", rest)) => format!("{plain}://{rest}"),
        Some(("https", rest)) => format!("{tls}://{rest}"),
        _ => url.to_string(),
    }
}
