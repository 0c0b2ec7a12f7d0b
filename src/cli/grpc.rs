//! `perfbase grpc`: one method of a gRPC service, any kind of call.

use super::command::{check_url, Job};
use super::LoadArgs;
use crate::backend::grpc::GrpcTarget;
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::grpc::GrpcOptions;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase grpc grpc://127.0.0.1:50051 --proto route_guide.proto \\
      --call routeguide.RouteGuide/GetFeature --data '{\"latitude\": 409146138}' -c 1 --streams 50 -n 100000
  perfbase grpc grpcs://127.0.0.1:50052 --cacert ca.pem --proto helloworld.proto \\
      --call helloworld.Greeter/SayHello --data '{\"name\": \"user-{{ n }}\"}' -r 2k -d 30s

-c N --streams M runs N HTTP/2 connections carrying M calls each (ghz's -c 50 on its one
connection is -c 1 --streams 50). --timeout is each call's deadline: sent as grpc-timeout, and a
call past it is DEADLINE_EXCEEDED.")]
pub struct GrpcArgs {
    /// grpc://host:port (h2c, prior knowledge) or grpcs://host:port (TLS, ALPN h2)
    pub url: String,

    /// The method: package.Service/Method
    #[arg(long, value_name = "METHOD")]
    pub call: String,

    /// A .proto file declaring the service (repeat for more; imports are found next to it or
    /// in --import-path); without one, the server's reflection service is asked
    #[arg(long = "proto", value_name = "FILE")]
    pub protos: Vec<PathBuf>,

    /// Where the .proto files' imports are found (repeatable)
    #[arg(short = 'I', long = "import-path", value_name = "DIR")]
    pub import_paths: Vec<PathBuf>,

    /// The request message as JSON ({{ n }} is the call's number), e.g. '{"name": "u{{ n }}"}'
    #[arg(long, value_name = "JSON", conflicts_with = "data_file")]
    pub data: Option<String>,

    /// The request message's JSON from a file
    #[arg(long, value_name = "FILE")]
    pub data_file: Option<PathBuf>,

    /// Client-streaming and bidirectional calls: messages each call sends
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub messages: u32,

    /// Metadata sent with every call, 'name: value' (repeatable; credentials are redacted)
    #[arg(short = 'M', long = "metadata", value_name = "HEADER")]
    pub metadata: Vec<String>,

    /// Calls in flight on each HTTP/2 connection; the closed model runs -c × this many calls
    /// at once
    #[arg(long, value_name = "M", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub streams: u64,

    #[command(flatten)]
    pub tls: super::TlsArgs,

    #[command(flatten)]
    pub load: LoadArgs,
}

impl GrpcArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
        check_url(&self.url, &["grpc", "grpcs"], "grpc")?;
        self.load.check_json()?;
        let data = match (&self.data, &self.data_file) {
            (Some(d), _) => d.clone(),
            (None, Some(f)) => perfbase_drivers::input::read_text(f)
                .map_err(|e| bad_input(format!("--data-file {}: {e}", f.display())))?,
            (None, None) => String::new(),
        };
        let metadata = self
            .metadata
            .iter()
            .map(|m| super::http::parse_header(m).map_err(|e| bad_input(format!("--metadata: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let options = GrpcOptions {
            call: self.call.clone(),
            protos: self.protos.clone(),
            import_paths: self.import_paths.clone(),
            data,
            messages: self.messages,
            metadata,
            streams: self.streams as usize,
            tls: self.tls.options(),
            ..GrpcOptions::default()
        };
        let target = GrpcTarget::new(&self.url, options).map_err(bad_input)?;
        let job = Job {
            step: "measure".into(),
            label: format!("{} {}", redact::url(&self.url), self.call),
            backend: Backend::Grpc(target),
        };
        let plan = self.load.plan("grpc", vec![job], self.streams);
        Ok((plan, self.load.options("grpc", None, store)))
    }
}

/// `perfbase grpc`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load a gRPC service: one method, unary or streaming, with messages from JSON.
    Grpc(Box<GrpcArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Grpc(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
