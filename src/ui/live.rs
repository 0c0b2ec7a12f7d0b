//! `/live`: the runs agents are doing now, and each one's live view: the dashboard's own page
//! at `/live/ID/`, fed by a follower that reads the agents' figures from the store each second
//! (`live::follow`, as `merge --dashboard`). When the run's result is saved the page turns to
//! it: `/live/ID/report` leads to the run's page. At most [`WATCHES`] runs are followed at
//! once; a follower nobody has looked at for a minute stops.

use super::http::{Request, Response};
use super::Server;
use crate::live::feed::Feed;
use crate::live::follow::Follow;
use perfbase_report::ui::{self as view, Section};
use perfbase_store::Store;
use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs followed at once.
const WATCHES: usize = 8;
/// A follower with no page for this long stops.
const IDLE: Duration = Duration::from_secs(60);
/// Runs whose agents beat this recently are listed as live.
const LISTED_MS: i64 = 10_000;
/// Agents whose newest heartbeat is older than this are done (they beat every 250 ms).
const QUIET_MS: i64 = 3_000;
/// Quiet agents with no result saved are lost after this.
const LOST_MS: i64 = 30_000;

struct Watch {
    feed: Arc<Feed>,
    follow: Option<Follow>,
    wanted: Instant,
}

#[derive(Default)]
pub struct Watches(Mutex<HashMap<String, Watch>>);

impl Watches {
    /// The feed of run `run`, its follower started if need be; None when too many are
    /// followed already.
    fn feed(
        &self,
        location: &str,
        run: &str,
    ) -> Result<Option<Arc<Feed>>, perfbase_store::StoreError> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, w| {
            let keep = w.feed.following() > 0 || w.wanted.elapsed() < IDLE;
            if !keep {
                if let Some(f) = w.follow.take() {
                    f.stop();
                }
            }
            keep
        });
        if let Some(w) = map.get_mut(run) {
            w.wanted = Instant::now();
            return Ok(Some(w.feed.clone()));
        }
        if map.len() >= WATCHES {
            return Ok(None);
        }
        let feed = Arc::new(Feed::default());
        let id = run.to_string();
        let ended: crate::live::follow::Ended = Box::new(move |s: &mut Store| finished(s, &id));
        let follow = Follow::start(
            Store::open(location)?,
            run.to_string(),
            feed.clone(),
            Some(ended),
        );
        map.insert(
            run.to_string(),
            Watch {
                feed: feed.clone(),
                follow: Some(follow),
                wanted: Instant::now(),
            },
        );
        Ok(Some(feed))
    }
}

/// Where a finished run's page is: the merged run, the one agent's result, or the list of
/// the agents' results; None while an agent still beats.
fn finished(store: &mut Store, run: &str) -> Option<String> {
    let label = |k: &str| vec![(k.to_string(), run.to_string())];
    if let Some(m) = store
        .history(&label(crate::store::MERGED_LABEL), 1)
        .ok()?
        .first()
    {
        return Some(format!("/runs/{}", m.id));
    }
    let beats = store.heartbeats(run).ok()?;
    if beats.is_empty() || beats.iter().any(|(_, age)| *age < QUIET_MS) {
        return None;
    }
    let saved = store.history(&label(crate::store::RUN_LABEL), 0).ok()?;
    // Quiet agents that saved nothing yet may still be saving (a busy store, a long report):
    // they are taken as lost only after a while.
    if saved.is_empty() && beats.iter().any(|(_, age)| *age < LOST_MS) {
        return None;
    }
    Some(match saved.as_slice() {
        [one] => format!("/runs/{}", one.id),
        _ => perfbase_report::ui::href(
            "/",
            &[("label", &format!("{}={run}", crate::store::RUN_LABEL))],
        ),
    })
}

/// Answers a `/live…` request; an event stream is written here and returns None.
pub fn answer(server: &Server, req: &Request, stream: &mut TcpStream) -> Option<Response> {
    let rest = req.path.strip_prefix("/live").unwrap_or("");
    if rest.is_empty() || rest == "/" {
        return Some(list(server));
    }
    let rest = &rest[1..];
    let (run, what) = match rest.split_once('/') {
        Some((run, what)) => (run, what),
        None => {
            let to = format!("/live/{}/", perfbase_core::percent::encode_component(rest));
            return Some(Response::redirect(to));
        }
    };
    let known = server
        .pool
        .with(|s| s.heartbeats(run))
        .map(|b| !b.is_empty());
    match known {
        Ok(true) => {}
        Ok(false) => {
            return Some(Response::text(
                "404 Not Found",
                format!("no agent of run {run} has beaten in this store"),
            ))
        }
        Err(e) => return Some(unreadable(&e)),
    }
    let feed = match server.live.feed(&server.location, run) {
        Ok(Some(f)) => f,
        Ok(None) => {
            return Some(Response::text(
                "503 Service Unavailable",
                format!("{WATCHES} runs are followed already; try again when one ends"),
            ))
        }
        Err(e) => return Some(unreadable(&e)),
    };
    match what {
        "" => {
            let mut r = Response::html(perfbase_report::html::live_page(&format!(
                "perfbase: run {run}"
            )));
            r.scripted = true;
            Some(r)
        }
        "events" => {
            let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
            crate::live::feed::events(stream, &feed);
            None
        }
        "frame" => Some(match feed.frame() {
            Some(f) => Response::new("200 OK", "application/json", f.as_bytes().to_vec()),
            None => Response::new("204 No Content", "text/plain", ""),
        }),
        "report" => Some(match feed.report() {
            Some(to) => Response::redirect(to.to_string()),
            None => Response::text(
                "503 Service Unavailable",
                "the run is still going: its page is here when it ends",
            ),
        }),
        _ => Some(Response::text("404 Not Found", "not found")),
    }
}

/// The store could not be read: said, with any password in the message redacted.
fn unreadable(e: &perfbase_store::StoreError) -> Response {
    Response::text(
        "503 Service Unavailable",
        perfbase_core::redact::text(&e.to_string()),
    )
}

fn list(server: &Server) -> Response {
    let runs = server.pool.with(|s| s.live_runs(LISTED_MS));
    let body = match runs {
        Ok(runs) => {
            let items: Vec<view::live::LiveItem> = runs
                .into_iter()
                .map(|r| view::live::LiveItem {
                    run: r.run,
                    segments: r.segments,
                    age_ms: r.age_ms,
                })
                .collect();
            view::live::list(&items)
        }
        Err(e) => view::problem(
            "Store unavailable",
            &perfbase_core::redact::text(&e.to_string()),
        ),
    };
    super::frame::page(server, "200 OK", Section::Live, "perfbase: live", &body)
}
