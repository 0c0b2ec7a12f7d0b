//! `perfbase ws`: messages over WebSocket connections, each reply awaited; or held connections.

use super::command::{check_url, Job};
use super::LoadArgs;
use crate::backend::ws::WsTarget;
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::ws::WsOptions;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase ws ws://127.0.0.1:8080/echo --message '{\"id\": {{ n }}, \"op\": \"ping\"}' -c 50 -d 30s
  perfbase ws wss://api.local/feed --match id --message '{\"id\": {{ n }}}' -H 'Authorization: Bearer …'
  perfbase ws ws://127.0.0.1:8080/echo -c 10000 --interval 10s -d 5m    # hold 10,000 connections

Each op sends one message and waits for its reply: the next message the server sends, or with
--match FIELD the first whose FIELD equals the message's (the others are counted as unmatched).
A session's first op carries its connection's connect (TCP and upgrade) and TLS times.")]
pub struct WsArgs {
    /// ws://host:port/path or wss://host:port/path
    pub url: String,

    /// The message each op sends ({{ n }} is the op's number)
    #[arg(long, value_name = "TEXT", conflicts_with = "message_file")]
    pub message: Option<String>,

    /// The message read from a file
    #[arg(long, value_name = "FILE")]
    pub message_file: Option<PathBuf>,

    /// Send binary messages instead of text
    #[arg(long)]
    pub binary: bool,

    /// Match each reply by this JSON field (a name, or a pointer such as /meta/id) instead of
    /// taking the next message
    #[arg(long = "match", value_name = "FIELD")]
    pub match_field: Option<String>,

    /// A header of the upgrade request, 'Name: value' (repeatable; credentials are redacted)
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// The subprotocol to ask for (Sec-WebSocket-Protocol)
    #[arg(long, value_name = "NAME")]
    pub subprotocol: Option<String>,

    /// Closed model: each connection waits this long between its messages, so -c N holds N
    /// connections (a soak); the report says what holding them cost in memory
    #[arg(long, value_name = "DURATION", value_parser = super::parse::duration)]
    pub interval: Option<Duration>,

    #[command(flatten)]
    pub tls: super::TlsArgs,

    #[command(flatten)]
    pub load: LoadArgs,
}

impl WsArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
        check_url(&self.url, &["ws", "wss"], "ws")?;
        self.load.check_json()?;
        if self.interval.is_some() && self.load.rate.is_some() {
            return Err(bad_input(
                "--interval paces the closed model's connections; with -r the open model \
                 sets the pace: give one of them",
            ));
        }
        let message = match (&self.message, &self.message_file) {
            (Some(m), _) => m.clone(),
            (None, Some(f)) => perfbase_drivers::input::read_text(f)
                .map_err(|e| bad_input(format!("--message-file {}: {e}", f.display())))?,
            (None, None) => "perfbase {{n}}".to_string(),
        };
        let headers = self
            .headers
            .iter()
            .map(|h| super::http::parse_header(h).map_err(|e| bad_input(format!("--header: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let options = WsOptions {
            message,
            binary: self.binary,
            match_field: self.match_field.clone(),
            headers,
            subprotocol: self.subprotocol.clone(),
            tls: self.tls.options(),
            interval: self.interval.unwrap_or_default(),
            ..WsOptions::default()
        };
        let target = WsTarget::new(&self.url, options).map_err(bad_input)?;
        let job = Job {
            step: "measure".into(),
            label: redact::url(&self.url),
            backend: Backend::Ws(target),
        };
        let plan = self.load.plan("ws", vec![job], 1);
        Ok((plan, self.load.options("ws", None, store)))
    }
}

/// `perfbase ws`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load a WebSocket server: messages with their replies awaited, or held connections.
    Ws(Box<WsArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Ws(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
