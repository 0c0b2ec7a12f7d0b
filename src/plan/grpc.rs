//! The workload fields of a grpc:// or grpcs:// target: the method, its .proto files, the
//! request message and the metadata.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use super::http_target::tls_of;
use crate::backend::grpc::GrpcTarget;
use crate::backend::Backend;
use perfbase_drivers::grpc::GrpcOptions;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// The method (package.Service/Method)…
    call: Option<S<String>>,
    /// …declared in these .proto files (relative to the plan's directory; without them, the
    /// server's reflection says)…
    protos: Option<S<Vec<String>>>,
    /// …whose imports are found here…
    import_paths: Option<S<Vec<String>>>,
    /// …called with this request message, JSON with {{n}} and {{corpus}} placeholders…
    data: Option<S<String>>,
    /// …this many of them per client-streaming or bidirectional call (default 1)…
    messages: Option<S<i64>>,
    /// …and this metadata (after the target's headers).
    #[serde(default)]
    headers: BTreeMap<String, S<String>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &["insecure", "cacert", "streams"];

    fn url(url_text: &str, _: &str) -> Result<Option<Url>, String> {
        // The method and its schema are the workload's; the URL alone is checked here.
        let url = Url::parse(url_text).map_err(|e| e.to_string())?;
        if url.host_str().is_none() || url.port().is_none() || !matches!(url.path(), "" | "/") {
            return Err("a gRPC target is grpc://host:port or grpcs://host:port (the method \
                        goes in the workload's `call`)"
                .into());
        }
        Ok(None)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let (backend, what) = self.target(at)?;
        Ok(Made::One(backend, what))
    }
}

impl Fields {
    /// A gRPC workload and what reports call it (the method). The method is found and the first
    /// request built here, so a bad file, method or message is an error at its line.
    fn target(&self, at: &At<'_>) -> Result<(Backend, String), PlanError> {
        let (cx, field, w, tdef, corpora) = (at.cx, at.field, self, at.target.0, at.corpora);
        // `protocol = "grpc"` on an http:// or https:// URL: plain, or TLS.
        let url = super::http_target::above_http(at.url(), "grpc", "grpcs");
        let Some(call) = &w.call else {
            return Err(at.err(
                format!("{field}.call"),
                "a gRPC workload needs `call = \"package.Service/Method\"`",
            ));
        };
        // Without protos, the schema comes from the server's reflection.
        let protos = w.protos.as_ref();
        let paths = |v: &S<Vec<String>>| -> Vec<PathBuf> {
            v.get_ref().iter().map(|p| cx.base.join(p)).collect()
        };
        let messages = match &w.messages {
            Some(m) => {
                let n = cx.positive(m, &format!("{field}.messages"))?;
                u32::try_from(n).map_err(|_| cx.err(m, format!("{field}.messages"), "too many"))?
            }
            None => 1,
        };
        let metadata = w
            .headers
            .iter()
            .chain(tdef.headers.iter())
            .map(|(k, v)| (k.clone(), v.get_ref().clone()))
            .collect();
        let options = GrpcOptions {
            call: call.get_ref().clone(),
            protos: protos.map(paths).unwrap_or_default(),
            import_paths: w.import_paths.as_ref().map(paths).unwrap_or_default(),
            data: w
                .data
                .as_ref()
                .map(|d| d.get_ref().clone())
                .unwrap_or_default(),
            messages,
            metadata,
            streams: match &tdef.streams {
                Some(s) => cx.positive(s, &format!("targets.{}.streams", at.target_field.get_ref()))?
                    as usize,
                None => 1,
            },
            tls: tls_of(cx, tdef),
            corpora: corpora.to_vec(),
            ..GrpcOptions::default()
        };
        let target = GrpcTarget::new(&url, options).map_err(|e| {
            // The error names its field: the method, the schema or the message.
            let (at, name): (&dyn Written, &str) = if e.starts_with("--call") {
                (call, "call")
            } else if let (true, Some(p)) = (e.starts_with("proto"), protos) {
                (p, "protos")
            } else if let (true, Some(d)) = (e.starts_with("request data"), &w.data) {
                (d, "data")
            } else if e.starts_with("metadata") {
                (at.target_field, "headers")
            } else {
                (at.target_field, "target")
            };
            // The driver's words name its flag (`--call: …`); here the field says it.
            let text = e.split_once(": ").map_or(e.as_str(), |(_, rest)| rest);
            cx.err_at(cx.line(at.start()), format!("{field}.{name}"), text)
        })?;
        Ok((Backend::Grpc(target), call.get_ref().clone()))
    }
    }

    /// Where a field was written, whatever its type.
    trait Written {
        fn start(&self) -> usize;
    }

    impl<T> Written for S<T> {
        fn start(&self) -> usize {
            self.span().start
        }
}
