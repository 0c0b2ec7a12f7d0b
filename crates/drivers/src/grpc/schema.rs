//! What a call sends: its method, found in `.proto` files compiled in-process (protox, no
//! protoc), and its request messages, JSON templates turned into protobuf bytes through the
//! method's input type (prost-reflect's dynamic messages).

use super::wire;
use super::GrpcError;
use crate::workload::{with_number, Corpus, Template};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The four kinds of gRPC call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Unary,
    ServerStreaming,
    ClientStreaming,
    Bidi,
}

impl CallKind {
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Unary => "unary",
            CallKind::ServerStreaming => "server-streaming",
            CallKind::ClientStreaming => "client-streaming",
            CallKind::Bidi => "bidi-streaming",
        }
    }

    /// Whether the client sends a stream of messages (so `messages` may exceed 1).
    pub fn client_streams(self) -> bool {
        matches!(self, CallKind::ClientStreaming | CallKind::Bidi)
    }
}

/// The method a load calls, resolved against its schema.
#[derive(Debug, Clone)]
pub struct Method {
    /// `/package.Service/Method`, the HTTP/2 path.
    pub path: String,
    pub kind: CallKind,
    input: MessageDescriptor,
}

/// The largest `.proto` file given to compile.
const MAX_PROTO_BYTES: u64 = 4 << 20;

/// Compiles `protos` (with `import_paths`, or else each file's own directory, as the place
/// their imports are found) and finds `call` (`package.Service/Method` or
/// `package.Service.Method`) in them.
pub fn method_from_protos(
    protos: &[PathBuf],
    import_paths: &[PathBuf],
    call: &str,
) -> Result<Method, GrpcError> {
    let mut includes: Vec<PathBuf> = import_paths.to_vec();
    if includes.is_empty() {
        for p in protos {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = dir.map(Path::to_path_buf).unwrap_or_else(|| ".".into());
            if !includes.contains(&dir) {
                includes.push(dir);
            }
        }
    }
    for p in protos {
        if !p.is_file() {
            return Err(GrpcError::Proto(format!(
                "{}: no such file (give --proto the path of a .proto file)",
                p.display()
            )));
        }
        // protox takes about 1.4 s and 200 MB per MB of schema: a 10 MB file, 14 s and 2 GB.
        let size = std::fs::metadata(p).map_or(0, |m| m.len());
        if size > MAX_PROTO_BYTES {
            return Err(GrpcError::Proto(format!(
                "{}: {size} bytes, over the {} MiB a .proto may have here (the largest real \
                 schemas are well under 1 MiB); give the file that defines the service",
                p.display(),
                MAX_PROTO_BYTES >> 20
            )));
        }
    }
    let mut compiler = protox::Compiler::new(&includes).map_err(|e| proto_error(&e))?;
    compiler.include_imports(true);
    compiler.open_files(protos).map_err(|e| proto_error(&e))?;
    method_in(&compiler.descriptor_pool(), call)
}

/// protox's error with its file and line, on one line.
fn proto_error(e: &protox::Error) -> GrpcError {
    let mut text = e.to_string();
    if let Some(f) = e.file() {
        if !text.contains(f) {
            text = format!("{f}: {text}");
        }
    }
    if text.contains("found 'edition'") {
        // protox (0.10) reads proto2 and proto3 only.
        text.push_str(
            " (protobuf editions are not read: write the file as proto3 or proto2; edition \
             2023 with features.field_presence = IMPLICIT is proto3's wire format)",
        );
    }
    GrpcError::Proto(text)
}

/// `call` split into its service and method: `package.Service/Method` or
/// `package.Service.Method`.
fn split(call: &str) -> Result<(&str, &str), GrpcError> {
    let trimmed = call.trim_start_matches('/');
    match trimmed.rsplit_once('/') {
        Some(parts) => Ok(parts),
        None => trimmed.rsplit_once('.').ok_or_else(|| {
            GrpcError::Call(format!(
                "'{call}' is no method: write package.Service/Method"
            ))
        }),
    }
}

/// The service `call` names (for server reflection).
pub(super) fn service_of(call: &str) -> Result<&str, GrpcError> {
    split(call).map(|(service, _)| service)
}

/// `call` in `pool`, or an error naming the services and methods there are.
pub fn method_in(pool: &DescriptorPool, call: &str) -> Result<Method, GrpcError> {
    let (service, method) = split(call)?;
    let Some(svc) = pool.get_service_by_name(service) else {
        let known: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        return Err(GrpcError::Call(format!(
            "no service '{service}' (services: {})",
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        )));
    };
    let Some(m) = svc.methods().find(|m| m.name() == method) else {
        let known: Vec<String> = svc.methods().map(|m| m.name().to_string()).collect();
        return Err(GrpcError::Call(format!(
            "service '{service}' has no method '{method}' (methods: {})",
            known.join(", ")
        )));
    };
    Ok(Method::of(&m))
}

impl Method {
    fn of(m: &MethodDescriptor) -> Method {
        let kind = match (m.is_client_streaming(), m.is_server_streaming()) {
            (false, false) => CallKind::Unary,
            (false, true) => CallKind::ServerStreaming,
            (true, false) => CallKind::ClientStreaming,
            (true, true) => CallKind::Bidi,
        };
        Method {
            path: format!("/{}/{}", m.parent_service().full_name(), m.name()),
            kind,
            input: m.input(),
        }
    }

    /// The input message's full name.
    pub fn input_name(&self) -> &str {
        self.input.full_name()
    }
}

/// A call's request body: `messages` messages from one JSON template, framed.
#[derive(Debug, Clone)]
pub struct Body {
    template: Template,
    corpora: Vec<Arc<Corpus>>,
    input: MessageDescriptor,
    messages: u32,
    /// The framed body when the template has no placeholder: built once, sent every time.
    fixed: Option<bytes::Bytes>,
}

/// The name of the placeholder that is the call's own number (message k of call n is number
/// n × messages + k).
const NUMBER: &str = "n";

impl Body {
    /// `data` as the template of `method`'s request messages; every placeholder must name
    /// one of `corpora` or be `{{n}}`. The first call's messages are built here, so a field
    /// the message lacks or a value of the wrong type is an error before any load.
    pub fn new(
        method: &Method,
        data: &str,
        corpora: &[Arc<Corpus>],
        messages: u32,
    ) -> Result<Body, GrpcError> {
        let corpora = with_number(corpora, NUMBER).map_err(GrpcError::Data)?;
        let template = Template::parse(data, &corpora).map_err(GrpcError::Data)?;
        let mut body = Body {
            fixed: None,
            template,
            corpora,
            input: method.input.clone(),
            messages: messages.max(1),
        };
        let first = body.build(0).map_err(GrpcError::Data)?;
        if body.template.is_literal() {
            body.fixed = Some(first);
        }
        Ok(body)
    }

    /// Call `op`'s framed body, or why a message could not be built from its JSON.
    pub fn build(&self, op: u64) -> Result<bytes::Bytes, String> {
        if let Some(b) = &self.fixed {
            return Ok(b.clone());
        }
        let mut out = Vec::new();
        let mut json = Vec::new();
        let mut encoded = Vec::new();
        for k in 0..self.messages as u64 {
            json.clear();
            let number = op.saturating_mul(self.messages as u64).saturating_add(k);
            self.template.write(number, &self.corpora, &mut json);
            let mut de = serde_json::Deserializer::from_slice(&json);
            let msg = DynamicMessage::deserialize(self.input.clone(), &mut de)
                .and_then(|m| de.end().map(|()| m))
                .map_err(|e| {
                    format!(
                        "{} as {}: {e}",
                        String::from_utf8_lossy(&json),
                        self.input.full_name()
                    )
                })?;
            encoded.clear();
            msg.encode(&mut encoded)
                .map_err(|e| format!("encoding {}: {e}", self.input.full_name()))?;
            wire::frame(&encoded, &mut out);
        }
        Ok(out.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema past 4 MiB is refused before protox reads it (issue 47's judgement call:
    /// a 10 MB file took 14 s and 2 GB).
    #[test]
    fn a_huge_proto_is_refused_by_its_size() {
        let dir = tempdir::Dir::new();
        let p = dir.path.join("huge.proto");
        let mut text = String::from("syntax = \"proto3\";\n");
        text.push_str(&"// padding\n".repeat(400_000));
        std::fs::write(&p, text).unwrap();
        let e = method_from_protos(&[p], &[], "x.Y/Z")
            .unwrap_err()
            .to_string();
        assert!(e.contains("over the 4 MiB"), "{e}");
    }

    fn pool() -> (tempdir::Dir, PathBuf) {
        let dir = tempdir::Dir::new();
        let p = dir.path.join("demo.proto");
        std::fs::write(
            &p,
            "syntax = \"proto3\";\npackage demo;\n\
             message Point { int32 latitude = 1; int32 longitude = 2; }\n\
             message Ack { string text = 1; }\n\
             service Map {\n  rpc Get(Point) returns (Ack);\n  rpc List(Point) returns (stream Ack);\n\
               rpc Record(stream Point) returns (Ack);\n  rpc Chat(stream Point) returns (stream Ack);\n}\n",
        )
        .unwrap();
        (dir, p)
    }

    mod tempdir {
        pub struct Dir {
            pub path: std::path::PathBuf,
        }
        impl Dir {
            pub fn new() -> Dir {
                let path = std::env::temp_dir().join(format!(
                    "perfbase-grpc-{}-{:?}",
                    std::process::id(),
                    std::thread::current().id()
                ));
                std::fs::create_dir_all(&path).unwrap();
                Dir { path }
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }

    #[test]
    fn each_kind_of_call_is_found_in_a_proto_file() {
        let (_d, p) = pool();
        let kinds: Vec<CallKind> = [
            "demo.Map/Get",
            "demo.Map/List",
            "demo.Map.Record",
            "/demo.Map/Chat",
        ]
        .iter()
        .map(|c| {
            method_from_protos(std::slice::from_ref(&p), &[], c)
                .unwrap()
                .kind
        })
        .collect();
        use CallKind::*;
        assert_eq!(kinds, [Unary, ServerStreaming, ClientStreaming, Bidi]);
        let m = method_from_protos(std::slice::from_ref(&p), &[], "demo.Map/Get").unwrap();
        assert_eq!(m.path, "/demo.Map/Get");
        assert_eq!(m.input_name(), "demo.Point");
    }

    #[test]
    fn a_wrong_method_or_file_is_named_with_what_there_is() {
        let (_d, p) = pool();
        let e = method_from_protos(std::slice::from_ref(&p), &[], "demo.Map/Nope").unwrap_err();
        assert!(
            e.to_string().contains("methods: Get, List, Record, Chat"),
            "{e}"
        );
        let e = method_from_protos(std::slice::from_ref(&p), &[], "demo.Nope/Get").unwrap_err();
        assert!(e.to_string().contains("services: demo.Map"), "{e}");
        let e = method_from_protos(&[p.with_extension("x")], &[], "demo.Map/Get").unwrap_err();
        assert!(e.to_string().contains("no such file"), "{e}");
        let editions = p.with_file_name("editions.proto");
        std::fs::write(&editions, "edition = \"2023\";\npackage x;\n").unwrap();
        let e = method_from_protos(&[editions], &[], "x.Y/Z").unwrap_err();
        assert!(e.to_string().contains("editions are not read"), "{e}");
    }

    #[test]
    fn a_template_becomes_framed_protobuf_and_a_bad_field_is_refused() {
        let (_d, p) = pool();
        let m = method_from_protos(&[p], &[], "demo.Map/Record").unwrap();
        let b = Body::new(&m, r#"{"latitude": {{n}}, "longitude": 7}"#, &[], 2).unwrap();
        let bytes = b.build(3).unwrap();
        // Two messages: latitude 6 and 7 (call 3, two messages each), longitude 7.
        assert_eq!(
            bytes.as_ref(),
            [0, 0, 0, 0, 4, 8, 6, 16, 7, 0, 0, 0, 0, 4, 8, 7, 16, 7]
        );
        let e = Body::new(&m, r#"{"lattitude": 1}"#, &[], 1).unwrap_err();
        assert!(e.to_string().contains("lattitude"), "{e}");
        let e = Body::new(&m, r#"{"latitude": "x"}"#, &[], 1).unwrap_err();
        assert!(e.to_string().contains("demo.Point"), "{e}");
        let e = Body::new(&m, r#"{"latitude": {{nope}}}"#, &[], 1).unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
    }
}
