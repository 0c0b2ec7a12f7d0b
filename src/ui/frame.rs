//! The app's frame around every page of `perfbase ui` (its bar, the store's name) and what
//! a page that could not be made says instead: not found, a bad request, the store unreadable.

use super::http::Response;
use super::Server;
use perfbase_core::redact;
use perfbase_report::ui::{self as view, Section};
use perfbase_store::StoreError;

/// Why a page could not be made.
pub enum Problem {
    NotFound(String),
    Bad(String),
    Store(StoreError),
}

impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Problem {
        match e {
            StoreError::NotFound(what) => Problem::NotFound(format!("no run {what} in the store")),
            e => Problem::Store(e),
        }
    }
}

/// A page in the app's frame.
pub fn page(
    server: &Server,
    status: &'static str,
    section: Section,
    title: &str,
    body: &str,
) -> Response {
    let mut r = Response::html(view::page(title, section, &server.store_name, body));
    r.status = status;
    r
}

pub fn unavailable(server: &Server, e: &StoreError) -> Response {
    let text = format!(
        "the store cannot be read now: {}",
        redact::text(&e.to_string())
    );
    page(
        server,
        "503 Service Unavailable",
        Section::Runs,
        "Store unavailable",
        &view::problem("Store unavailable", &text),
    )
}
