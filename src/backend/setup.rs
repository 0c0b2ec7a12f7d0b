//! Steps around the load that talk to the server directly: creating tables (`--init`),
//! reading their TPC-B scale, prefilling Redis. Each runs on a one-off single-threaded
//! runtime, outside the engine's workers.

use super::{Dialect, RedisTarget, SqlTarget};
use crate::exit::{bad_input, AppError};
use perfbase_drivers::sql::{mysql, postgres, SqlWorkload};

/// Runs a set-up step on a one-off single-threaded runtime.
pub fn block_on_local<F: std::future::Future>(f: F) -> Result<F::Output, AppError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| bad_input(format!("cannot start a runtime: {e}")))?;
    Ok(tokio::task::LocalSet::new().block_on(&rt, f))
}

/// pgbench's rule for a run: the scale is that of the tables on the server (the row count of
/// pgbench_branches), whatever was asked, so the keys drawn cover every account. A scale that
/// disagrees is named; tables that cannot be read leave the scale as given, and the run
/// reports why.
pub fn table_scale(s: &SqlTarget) -> Result<SqlWorkload, AppError> {
    if s.workload.tpcb_scale().is_none() {
        return Ok(s.workload.clone());
    }
    let found = block_on_local(async {
        match s.dialect {
            Dialect::Postgres => postgres::tpcb_scale(&s.url).await.ok().flatten(),
            Dialect::Mysql => mysql::tpcb_scale(&s.url).await.ok().flatten(),
        }
    })?;
    let Some(scale) = found else {
        return Ok(s.workload.clone());
    };
    if let Some(g) = s.scale_given.filter(|&g| g != scale) {
        errln!(
            "perfbase: scale {g} ignored: pgbench_branches holds {scale} rows, so the tables are at scale {scale} (as pgbench does)"
        );
    }
    Ok(s.workload.clone().with_tpcb_scale(scale))
}

/// Creates and fills the tables `s` needs: pgbench's at `scale` for TPC-B (and pgbench_tx()
/// on PostgreSQL), the suite's otherwise. Returns what was done, in words.
pub fn init_tables(s: &SqlTarget, scale: u32) -> Result<String, AppError> {
    let bad = |e: &dyn std::fmt::Display| bad_input(e.to_string());
    block_on_local(async {
        if s.workload.tpcb_scale().is_none() {
            match s.dialect {
                Dialect::Postgres => postgres::init_suite(&s.url).await.map_err(|e| bad(&e))?,
                Dialect::Mysql => mysql::init_suite(&s.url).await.map_err(|e| bad(&e))?,
            }
            return Ok(
                "initialised the suite's tables (perfbase_items: 10,000 rows, perfbase_orders)"
                    .to_string(),
            );
        }
        let (rows, elapsed, function) = match s.dialect {
            Dialect::Postgres => {
                let r = postgres::init_tpcb(&s.url, scale)
                    .await
                    .map_err(|e| bad(&e))?;
                postgres::create_tpcb_function(&s.url)
                    .await
                    .map_err(|e| bad(&e))?;
                (r.rows, r.elapsed, ", and pgbench_tx()")
            }
            Dialect::Mysql => {
                let r = mysql::init_tpcb(&s.url, scale).await.map_err(|e| bad(&e))?;
                (r.rows, r.elapsed, "")
            }
        };
        Ok(format!(
            "initialised pgbench tables at scale {scale}: {} rows in {:.2} s{function}",
            perfbase_report::thousands(rows),
            elapsed.as_secs_f64(),
        ))
    })?
}

/// SETs every key of the keyspace once, so GETs hit.
pub fn prefill(r: &RedisTarget) -> Result<(), AppError> {
    let n = block_on_local(perfbase_drivers::redis::prefill(&r.url, &r.options))?
        .map_err(|e| bad_input(e.to_string()))?;
    errln!(
        "perfbase: prefilled {} keys of {} bytes",
        perfbase_report::thousands(n),
        r.options.value_size
    );
    Ok(())
}

/// `--init` of a MongoDB workload: the collections made anew, said on stderr.
pub fn mongo_init(m: &super::MongoTarget) -> Result<(), AppError> {
    let r = block_on_local(perfbase_drivers::mongo::init(&m.url, &m.options))?
        .map_err(|e| bad_input(e.to_string()))?;
    errln!(
        "perfbase: made {db}.perfbase_docs and perfbase_deletes ({} documents each), \
         perfbase_scan ({} documents, no index on v) and an empty perfbase_inserts",
        perfbase_report::thousands(r.keyspace),
        perfbase_report::thousands(r.scan_docs),
        db = r.database
    );
    Ok(())
}
