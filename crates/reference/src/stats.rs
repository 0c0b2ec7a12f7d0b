//! The service's counters: connections accepted, requests answered, and what the journey
//! routes did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An outcome of the journey routes (`/login`, `/items`, `/session`) that [`Stats`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// `POST /login` answered 200 (a token issued).
    Login,
    /// An authorized `POST /items` that tried to store: 201, or 507 when the store is full.
    ItemsCreate,
    /// An authorized `GET`/`HEAD /items/{id}` with a numeric id: 200 or 404.
    ItemsRead,
    /// An authorized `DELETE /items/{id}` with a numeric id: 204 or 404.
    ItemsDelete,
    /// `GET /session` without a valid `sid` cookie: a new one issued.
    SessionNew,
    /// `GET /session` with a valid `sid` cookie.
    SessionReturning,
    /// A 401 answer (an `/items` request without a valid token); not counted as `Items*`.
    Unauthorized,
}

impl Route {
    /// Every route, in the order `/stats` reports them.
    pub const ALL: [Route; 7] = [
        Route::Login,
        Route::ItemsCreate,
        Route::ItemsRead,
        Route::ItemsDelete,
        Route::SessionNew,
        Route::SessionReturning,
        Route::Unauthorized,
    ];

    /// The route's key in the `routes` object of `/stats`.
    pub fn name(self) -> &'static str {
        match self {
            Route::Login => "login",
            Route::ItemsCreate => "items_create",
            Route::ItemsRead => "items_read",
            Route::ItemsDelete => "items_delete",
            Route::SessionNew => "session_new",
            Route::SessionReturning => "session_returning",
            Route::Unauthorized => "unauthorized",
        }
    }
}

#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    requests: AtomicU64,
    /// Indexed by `Route as usize`.
    routes: [AtomicU64; Route::ALL.len()],
}

/// Counters the tests read: connections accepted, requests answered, journey outcomes.
///
/// Clones share the same counters.
#[derive(Clone, Default)]
pub struct Stats {
    inner: Arc<Counters>,
}

impl Stats {
    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.inner.connections.load(Ordering::Relaxed)
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.inner.requests.load(Ordering::Relaxed)
    }

    /// How many times `route` happened so far (see [`Route`] for what each counts).
    pub fn route(&self, route: Route) -> u64 {
        self.inner.routes[route as usize].load(Ordering::Relaxed)
    }

    pub(crate) fn count_connection(&self) {
        self.inner.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_request(&self) {
        self.inner.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_route(&self, route: Route) {
        self.inner.routes[route as usize].fetch_add(1, Ordering::Relaxed);
    }
}
