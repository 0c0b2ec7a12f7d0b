//! What a thread's natives and its runtime share: the running user's slot, where the natives
//! leave the requests, think time, checks and metric values it asked for, and each origin's
//! connection settings.

use super::Run;
use crate::http::journey::client::{Client, Outgoing};
use perfbase_core::CheckBits;
use rquickjs::{Function, Persistent};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

/// What a user asked to send and has not been sent yet, with the promise its answer settles.
pub(crate) struct Pending {
    /// One request, or an `http.batch`'s (sent together).
    pub(crate) requests: Vec<Request>,
    /// Whether the promise settles with an array of responses (`http.batch`).
    pub(crate) batch: bool,
    pub(crate) settle: (Persistent<Function<'static>>, Persistent<Function<'static>>),
}

/// One request the code made.
pub(crate) struct Request {
    pub(crate) out: Outgoing,
    pub(crate) client: Arc<Client>,
    pub(crate) label: u16,
    /// The whole URL, for the response's `url`.
    pub(crate) url: String,
    /// The path, for the cookie jar.
    pub(crate) path: String,
}

/// What the running user asked for since it last waited.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) pending: Option<Pending>,
    /// `sleep` since the last request: the next one's think time.
    pub(crate) think: Duration,
    pub(crate) checks: CheckBits,
    /// The groups it is in, outermost first.
    pub(crate) groups: Vec<String>,
    /// Values its code added to its metrics since the last step.
    pub(crate) samples: Vec<perfbase_core::metric::Sample>,
}

/// An origin: scheme, host, port.
type Origin = (String, String, u16);

/// What the natives of one thread share: the running user's slot, the run, the names seen.
pub(crate) struct Host {
    pub(crate) slot: RefCell<Slot>,
    /// True while the script loads (only then may it `open` files).
    pub(crate) init: Cell<bool>,
    /// False for set-up and tear-down, whose requests and checks are not the run's.
    pub(crate) measured: bool,
    /// The running user's number and its iteration's (`__VU`, `__ITER`).
    pub(crate) user: Cell<(u64, u64)>,
    pub(crate) run: Arc<Run>,
    pub(crate) seen: super::names::Seen,
    /// Each origin's connection settings.
    clients: RefCell<Vec<(Origin, Arc<Client>)>>,
}

impl Host {
    /// A thread's host for `run`, loading the script: `measured` is false for set-up and
    /// tear-down.
    pub(crate) fn new(run: Arc<Run>, measured: bool) -> Host {
        Host {
            slot: RefCell::new(Slot::default()),
            init: Cell::new(true),
            measured,
            user: Cell::new((0, 0)),
            run,
            seen: Default::default(),
            clients: RefCell::new(Vec::new()),
        }
    }

    /// The connection settings for `url`'s origin, made once per thread.
    pub(crate) fn client(&self, url: &url::Url) -> Result<Arc<Client>, String> {
        let (scheme, host, port) = (
            url.scheme(),
            url.host_str().unwrap_or(""),
            url.port_or_known_default().unwrap_or(0),
        );
        if let Some((_, c)) = self
            .clients
            .borrow()
            .iter()
            .find(|((s, h, p), _)| s == scheme && h == host && *p == port)
        {
            return Ok(c.clone());
        }
        let c = Arc::new(Client::for_url(url, &self.run.tls).map_err(|e| e.to_string())?);
        let origin = (scheme.to_string(), host.to_string(), port);
        self.clients.borrow_mut().push((origin, c.clone()));
        Ok(c)
    }
}
