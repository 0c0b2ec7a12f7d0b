//! `perfbase import`: a plan written from a recorded request (curl) or a browser's recording
//! (HAR), to review and run.

use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub what: ImportWhat,

    /// Write the plan to FILE instead of stdout
    #[arg(short, long, value_name = "FILE", global = true)]
    pub output: Option<PathBuf>,

    /// Replace FILE when it exists
    #[arg(long, global = true)]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum ImportWhat {
    /// A curl command line, in one quoted argument: perfbase import curl 'curl -X POST …'
    Curl {
        /// The command, as you would type it (curl's flags -X, -H, -d, --data-raw,
        /// --data-binary, --data-urlencode, --json, -u, -A, -e, -b, -k, -G, -I, --url)
        command: String,
    },
    /// An HTTP Archive (a browser's recording): one journey step per request, the values
    /// later requests reuse captured from the answers that gave them
    Har {
        /// The .har file
        file: PathBuf,
        /// Keep requests for static assets (scripts, styles, images, fonts)
        #[arg(long)]
        include_static: bool,
    },
}
