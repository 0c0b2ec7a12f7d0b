//! The workload fields of a grpc:// or grpcs:// target: the method, its .proto files, the
//! request message and the metadata.

use super::context::Ctx;
use super::file::{self, S};
use super::model::PlanError;
use super::targets::tls_of;
use crate::backend::{Backend, GrpcTarget};
use perfbase_drivers::grpc::GrpcOptions;
use perfbase_drivers::workload::Corpus;
use std::path::PathBuf;
use std::sync::Arc;

/// A gRPC workload and what reports call it (the method). The method is found and the first
/// request built here, so a bad file, method or message is an error at its line.
pub(super) fn grpc_workload(
    cx: &Ctx<'_>,
    field: &str,
    w: &file::WorkloadDef,
    tdef: &file::TargetDef,
    url: &str,
    corpora: &[Arc<Corpus>],
) -> Result<(Backend, String), PlanError> {
    let Some(call) = &w.call else {
        return Err(cx.err(
            &w.target,
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
            Some(s) => cx.positive(s, &format!("targets.{}.streams", w.target.get_ref()))? as usize,
            None => 1,
        },
        tls: tls_of(cx, tdef),
        corpora: corpora.to_vec(),
        ..GrpcOptions::default()
    };
    // `protocol = "grpc"` on an http:// or https:// URL: h2c, or TLS.
    let url = match url.split_once("://") {
        Some(("http", rest)) => format!("grpc://{rest}"),
        Some(("https", rest)) => format!("grpcs://{rest}"),
        _ => url.to_string(),
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
            (&w.target, "headers")
        } else {
            (&w.target, "target")
        };
        // The driver's words name its flag (`--call: …`); here the field says it.
        let text = e.split_once(": ").map_or(e.as_str(), |(_, rest)| rest);
        cx.err_at(cx.line(at.start()), format!("{field}.{name}"), text)
    })?;
    Ok((Backend::Grpc(target), call.get_ref().clone()))
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
