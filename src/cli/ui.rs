//! `perfbase ui`: the store's runs, comparisons, trends and live runs in a browser.

use super::StoreArgs;

/// `perfbase ui [--store URL] [--listen ADDR] [--allow-remote [--public-name NAME]…]`.
#[derive(Debug, Clone, clap::Args)]
pub struct UiArgs {
    #[command(flatten)]
    pub store: StoreArgs,

    /// Where to serve the pages (port 0 picks one)
    #[arg(long, default_value = "127.0.0.1:8090", value_name = "ADDR")]
    pub listen: String,

    /// Listen on an address other than loopback. The pages then ask for the token in
    /// PERFBASE_UI_TOKEN (at least 16 characters; never on the command line) as
    /// `Authorization: Bearer TOKEN`, or once as `?token=TOKEN`, which sets a cookie
    #[arg(long)]
    pub allow_remote: bool,

    /// With --allow-remote: a host name the pages are reached by (repeatable); requests
    /// naming any other host than these, localhost or an IP address are refused
    #[arg(long = "public-name", value_name = "NAME", requires = "allow_remote")]
    pub public_names: Vec<String>,
}
