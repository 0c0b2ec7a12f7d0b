//! `perfbase mongo`: MongoDB's operation table, or one operation.

use super::command::{check_url, op_jobs, pick_ops};
use super::LoadArgs;
use crate::backend::mongo::MongoTarget;
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::mongo::{DocumentTemplate, MongoOp, MongoOptions};

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase mongo mongodb://127.0.0.1:27017/ --init -w suite -d 5s
  perfbase mongo mongodb://user:secret@127.0.0.1:27017/shop -w find-one -c 8 -r 2k -d 30s

The collections (perfbase_docs, perfbase_scan, perfbase_inserts, perfbase_deletes, in the URL's
database or `perfbase`) are made by --init; find-scan filters on a field without an index.")]
pub struct MongoArgs {
    /// mongodb://[user:password@]host:port[/database] (the password is redacted everywhere)
    pub url: String,

    /// suite (every operation in turn) or one of: insert-one, find-one, find-scan, update-one,
    /// aggregate, aggregate-complex, delete-one
    #[arg(short = 'w', long, default_value = "suite")]
    pub workload: String,

    /// Documents in perfbase_docs and perfbase_deletes (_id k000000000000 …, picked at random)
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub keyspace: u64,

    /// Documents in perfbase_scan, which find-scan reads in full
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub scan_docs: u64,

    /// Bytes of padding per document written
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(0..=16_000_000))]
    pub doc_size: u64,

    /// insert-one: the document to insert, as JSON; a string "{{ n }}" becomes the op number and
    /// "{{ key }}" a key of the keyspace, e.g. '{"user": "{{ key }}", "seq": "{{ n }}"}'
    #[arg(long, value_name = "JSON")]
    pub document: Option<String>,

    /// Drop and rebuild the collections first
    #[arg(long)]
    pub init: bool,

    #[command(flatten)]
    pub load: LoadArgs,
}

impl MongoArgs {
    /// One scenario per operation asked for (the suite: every one in turn).
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
        check_url(&self.url, &["mongodb"], "mongo")?;
        self.load.check_json()?;
        if self.document.is_some() && !matches!(self.workload.as_str(), "suite" | "insert-one") {
            return Err(bad_input(format!(
                "--document is the document insert-one inserts; -w {} inserts none",
                self.workload
            )));
        }
        let document = match &self.document {
            Some(json) => Some(
                DocumentTemplate::parse(json).map_err(|e| bad_input(format!("--document: {e}")))?,
            ),
            None => None,
        };
        let options = MongoOptions {
            keyspace: self.keyspace,
            scan_docs: self.scan_docs,
            doc_size: self.doc_size as usize,
            document,
        };
        let ops = pick_ops::<MongoOp>(&self.workload)?;
        let label = redact::url(&self.url);
        let jobs = op_jobs(&ops, &label, |i, op| {
            Backend::Mongo(MongoTarget {
                url: self.url.clone(),
                op: *op,
                options: options.clone(),
                // Once, before the first operation.
                init: self.init && i == 0,
                set_up: false,
            })
        });
        let title = (ops.len() > 1).then(|| self.load.suite_title("mongo", &label, ops.len()));
        Ok((
            self.load.plan("mongodb", jobs, 1),
            self.load.options("mongodb", title, store),
        ))
    }
}

/// `perfbase mongo`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load MongoDB (or FerretDB): an operation suite, or one operation.
    Mongo(Box<MongoArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Mongo(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
