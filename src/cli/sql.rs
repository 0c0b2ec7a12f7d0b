//! `perfbase pg` and `perfbase mysql`: databases with the same engine, statistics and reports.

use super::LoadArgs;
use clap::Args;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase pg postgres://bench:secret@127.0.0.1:5432/bench --init --scale 10
  perfbase pg postgres://bench:secret@127.0.0.1:5432/bench -c 10 -d 10s            # TPC-B like pgbench
  perfbase pg postgres://… -w suite -c 4 -d 5s                                      # one row per operation
  perfbase mysql mysql://bench:secret@127.0.0.1:3306/bench -w select-pk -r 2k -d 30s
  perfbase pg postgres://… --sql 'SELECT v FROM items WHERE id = $1::bigint' --param 42")]
pub struct SqlArgs {
    /// The database: postgres://user:password@host:port/db or mysql://…; the password is
    /// redacted in every output
    pub url: String,

    /// Create and fill the tables the workload needs (pgbench's TPC-B tables at --scale, or the
    /// suite's tables), then exit
    #[arg(long)]
    pub init: bool,

    /// TPC-B scale: 100 000 accounts, 10 tellers and 1 branch per unit, as pgbench -s
    /// [default: 1 for --init; for a run, the scale of the tables found, as pgbench does]
    #[arg(short = 's', long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub scale: Option<u32>,

    /// tpcb (pgbench's built-in transaction), tpcb-function (one pgbench_tx() call), suite (every
    /// operation in turn), or one operation: insert, select-pk, scan, update, delete,
    /// transaction, join
    #[arg(short = 'w', long, default_value = "tpcb")]
    pub workload: String,

    /// A custom statement instead of a built-in workload ($1… for PostgreSQL, ? for MySQL)
    #[arg(long, value_name = "SQL")]
    pub sql: Option<String>,

    /// A parameter of --sql, in order (repeatable); sent as text
    #[arg(long = "param", value_name = "VALUE", requires = "sql")]
    pub params: Vec<String>,

    /// PostgreSQL: operations sent per round trip on each connection (pipelining): N statements
    /// of a single-statement workload, or N whole TPC-B transactions (7 statements each)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub pipeline: u64,

    #[command(flatten)]
    pub load: LoadArgs,
}
