//! A method's schema from the server itself, through gRPC server reflection
//! (`grpc.reflection.v1.ServerReflection`, or `v1alpha` on older servers), when no `.proto`
//! file is given: the file declaring the service is asked for, then any file it imports that
//! the answer lacked, and the whole set becomes the descriptor pool.

use super::{wire, GrpcError};
use crate::http::h2::{self, Pool};
use bytes::{Buf, Bytes};
use http_body_util::{BodyExt, Full};
use hyper::{Method as HttpMethod, Request, Uri};
use prost::Message;
use prost_reflect::DescriptorPool;
use prost_types::FileDescriptorProto;
use std::collections::BTreeMap;
use std::time::Duration;

/// The request of the reflection service (the fields perfbase uses).
#[derive(Clone, PartialEq, prost::Message)]
struct ReflectionRequest {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(oneof = "Ask", tags = "3, 4, 7")]
    ask: Option<Ask>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Ask {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
    #[prost(string, tag = "7")]
    ListServices(String),
}

#[derive(Clone, PartialEq, prost::Message)]
struct ReflectionResponse {
    #[prost(oneof = "Answer", tags = "4, 6, 7")]
    answer: Option<Answer>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Answer {
    #[prost(message, tag = "4")]
    Files(FileDescriptors),
    #[prost(message, tag = "6")]
    Services(ServiceList),
    #[prost(message, tag = "7")]
    Error(ErrorAnswer),
}

#[derive(Clone, PartialEq, prost::Message)]
struct FileDescriptors {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServiceList {
    #[prost(message, repeated, tag = "1")]
    service: Vec<ServiceName>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServiceName {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ErrorAnswer {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// The reflection services' paths, newest first.
const PATHS: [&str; 2] = [
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/// How long the schema may take to arrive.
const WAIT: Duration = Duration::from_secs(10);

/// Every file the server's reflection gives for `service` (and what they import), as a pool.
/// Asked on a thread and a runtime of its own (so a caller on a runtime may ask too), over
/// connections of its own that end with it.
pub(super) fn pool_of(
    (addr, tls): (std::net::SocketAddr, Option<crate::http::conn::Tls>),
    origin: &str,
    service: &str,
) -> Result<DescriptorPool, GrpcError> {
    let fail = |why: String| GrpcError::Proto(format!("server reflection at {origin}: {why}"));
    let files = std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("no runtime: {e}"))?;
            let pool = Pool::new(addr, tls, 1);
            rt.block_on(async {
                match tokio::time::timeout(WAIT, files_of(&pool, origin, service)).await {
                    Ok(r) => r,
                    Err(_) => Err(format!("no answer within {WAIT:?}")),
                }
            })
        })
        .join()
        .unwrap_or_else(|_| Err("the reflection thread failed".into()))
    })
    .map_err(fail)?;
    let mut descriptors = DescriptorPool::new();
    descriptors
        .add_file_descriptor_protos(files.into_values())
        .map_err(|e| fail(format!("its files do not make a schema: {e}")))?;
    Ok(descriptors)
}

/// The file declaring `service` and every file it imports, by name.
async fn files_of(
    pool: &Pool,
    origin: &str,
    service: &str,
) -> Result<BTreeMap<String, FileDescriptorProto>, String> {
    let asked = async {
        let mut files = ask(pool, origin, Ask::FileContainingSymbol(service.into())).await?;
        // A server may leave out what the file imports: asked for by name until none lacks.
        for _ in 0..32 {
            let missing: Vec<String> = files
                .values()
                .flat_map(|f| f.dependency.iter())
                .filter(|d| !files.contains_key(*d))
                .cloned()
                .collect();
            let Some(name) = missing.first() else { break };
            files.extend(ask(pool, origin, Ask::FileByFilename(name.clone())).await?);
        }
        Ok::<_, String>(files)
    };
    asked.await
}

/// One question on a reflection stream: the files in the answer, by name.
async fn ask(
    pool: &Pool,
    origin: &str,
    question: Ask,
) -> Result<BTreeMap<String, FileDescriptorProto>, String> {
    let mut body = Vec::new();
    let request = ReflectionRequest {
        host: String::new(),
        ask: Some(question),
    };
    wire::frame(&request.encode_to_vec(), &mut body);
    let body = Bytes::from(body);
    let mut last = String::new();
    for path in PATHS {
        match exchange(pool, origin, path, body.clone()).await? {
            Ok(messages) => return files_in(&messages),
            // An older server has only v1alpha.
            Err((code, why)) if code == wire::UNIMPLEMENTED => last = why,
            Err((code, why)) => return Err(format!("{}: {why}", wire::status_name(code))),
        }
    }
    Err(format!(
        "the server does not offer reflection ({last}); give the service's .proto file with --proto"
    ))
}

/// The files of reflection answers, or the error the server answered with.
fn files_in(messages: &[Bytes]) -> Result<BTreeMap<String, FileDescriptorProto>, String> {
    let mut files = BTreeMap::new();
    for m in messages {
        let answer =
            ReflectionResponse::decode(m.clone()).map_err(|e| format!("bad answer: {e}"))?;
        match answer.answer {
            Some(Answer::Files(f)) => {
                for bytes in f.file_descriptor_proto {
                    let file = FileDescriptorProto::decode(bytes.as_slice())
                        .map_err(|e| format!("bad file descriptor: {e}"))?;
                    files.insert(file.name().to_string(), file);
                }
            }
            Some(Answer::Error(e)) => {
                return Err(format!(
                    "{} ({})",
                    e.error_message,
                    wire::status_name(e.error_code as u16)
                ))
            }
            Some(Answer::Services(_)) | None => {}
        }
    }
    Ok(files)
}

/// A call to `path` with `body` (framed messages): its reply messages, or its gRPC status
/// and message when not OK; a transport failure is the outer error.
async fn exchange(
    pool: &Pool,
    origin: &str,
    path: &str,
    body: Bytes,
) -> Result<Result<Vec<Bytes>, (u16, String)>, String> {
    let mut lease = pool.lease(0).await.map_err(|o| detail(&o))?;
    let uri: Uri = format!("{origin}{path}")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let mut req = Request::new(Full::new(body));
    *req.method_mut() = HttpMethod::POST;
    *req.uri_mut() = uri;
    let h = req.headers_mut();
    h.insert("content-type", "application/grpc".parse().expect("valid"));
    h.insert("te", "trailers".parse().expect("valid"));
    let send = lease.sender();
    send.ready().await.map_err(|e| detail(&h2::failure(&e)))?;
    let resp = send
        .send_request(req)
        .await
        .map_err(|e| detail(&h2::failure(&e)))?;
    if resp.status() != 200 {
        let code = wire::status_of_http(resp.status().as_u16());
        return Ok(Err((code, format!("HTTP status {}", resp.status()))));
    }
    if let Some((code, message)) = wire::status_of(resp.headers()).filter(|(c, _)| *c != 0) {
        return Ok(Err((code, message)));
    }
    let collected = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| detail(&h2::failure(&e)))?;
    let status = collected.trailers().and_then(wire::status_of);
    let mut data = collected.to_bytes();
    match status {
        Some((0, _)) => {}
        Some((code, message)) => return Ok(Err((code, message))),
        None => return Err("the reply ended without grpc-status".into()),
    }
    let mut messages = Vec::new();
    while data.remaining() >= 5 {
        let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
        data.advance(5);
        if data.remaining() < len {
            return Err("the reply ended inside a message".into());
        }
        messages.push(data.split_to(len));
    }
    Ok(Ok(messages))
}

/// An outcome's message.
fn detail(o: &perfbase_core::Outcome) -> String {
    o.detail.as_deref().unwrap_or("failed").to_string()
}
