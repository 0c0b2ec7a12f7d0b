//! MongoDB workloads (or a server of its wire protocol, such as FerretDB): one operation (or
//! the suite) over a keyspace of documents, with the collections `--init` makes.

use super::closing::misses;
use super::protocol::{ask_version, Extras, Target, Ran, RunArgs, BACKEND_MAX_INFLIGHT};
use super::setup::block_on_local;
use crate::exit::{bad_input, AppError};
use perfbase_core::closing::Closing;
use perfbase_core::result::RunResult;
use perfbase_drivers::mongo::{self, MongoDriver};
use perfbase_drivers::Operation;
use serde_json::Value;
use std::collections::BTreeMap;

/// A workload against MongoDB (or a server of its wire protocol, such as FerretDB).
#[derive(Debug, Clone)]
pub struct MongoTarget {
    /// With the password from the environment; never shown.
    pub url: String,
    pub op: mongo::MongoOp,
    pub options: mongo::MongoOptions,
    /// Rebuild the collections before the scenario (`--init`).
    pub init: bool,
    /// This workload already ran in the study (its set-up made, its collections checked):
    /// later repetitions skip both, as a repetition's deletes may have emptied the pool the
    /// check looks at.
    pub set_up: bool,
}

impl MongoTarget {
    fn driver(&self) -> Result<MongoDriver, String> {
        MongoDriver::new(&self.url, self.op, self.options.clone()).map_err(|e| e.to_string())
    }

    /// `--init`: the collections made anew, said on stderr.
    fn init(&self) -> Result<(), AppError> {
        let r = block_on_local(mongo::init(&self.url, &self.options))?
            .map_err(|e| bad_input(e.to_string()))?;
        errln!(
            "perfbase: made {db}.perfbase_docs and perfbase_deletes ({} documents each), \
             perfbase_scan ({} documents, no index on v) and an empty perfbase_inserts",
            perfbase_core::units::thousands(r.keyspace),
            perfbase_core::units::thousands(r.scan_docs),
            db = r.database
        );
        Ok(())
    }
}

impl Target for MongoTarget {
    fn name(&self) -> &'static str {
        "mongodb"
    }

    fn service_kind(&self) -> &'static str {
        "MongoDB"
    }

    /// One client, as the databases' own benchmarks start.
    fn default_connections(&self) -> u64 {
        1
    }

    fn default_max_inflight(&self) -> u64 {
        BACKEND_MAX_INFLIGHT
    }

    fn skip_setup(&mut self) {
        self.init = false;
        self.set_up = true;
    }

    fn validate(&self) -> Result<(), String> {
        self.driver().map(drop)
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        if self.init {
            self.init().map_err(|e| args.bad("--init: ", e))?;
        }
        if self.set_up && self.op == mongo::MongoOp::DeleteOne {
            // A repetition deletes the same keys as the one before it: put them back first,
            // outside the measured time.
            block_on_local(mongo::refill_deletes(&self.url, &self.options))?
                .map_err(|e| args.bad("refilling the deletes: ", e))?;
        }
        let driver = self.driver();
        if let (Ok(d), false) = (&driver, self.set_up) {
            // The collection the operation reads holds documents (else: run with --init).
            block_on_local(d.check())?.map_err(|e| args.bad("", e))?;
        }
        args.drive(driver)
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        m.insert("workload".into(), self.op.name().into());
        m.insert("keyspace".into(), self.options.keyspace.into());
        m.insert("scan_docs".into(), self.options.scan_docs.into());
        m.insert("doc_size".into(), self.options.doc_size.into());
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    fn server_version(&self) -> Result<String, String> {
        ask_version(mongo::server_version(&self.url))
    }

    fn closing(
        &self,
        extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> Vec<Closing> {
        let what = "matched no document (finds, updates, deletes";
        misses(extras, result, single, what)
    }
}

impl Extras for MongoDriver {
    /// Finds, updates and deletes that matched no document.
    fn extras(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        if self.misses() > 0 {
            m.insert("misses".into(), self.misses().into());
        }
        m
    }
}
