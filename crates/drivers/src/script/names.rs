//! The names a script's run finds as it goes: its requests (the endpoints of the reports),
//! its groups and its checks. One list per run, shared by the workers, so every worker's
//! numbers mean the same names; each worker keeps a map of those it has seen, so a request
//! takes the lock only the first time its name appears on that thread.

use perfbase_core::metric::{MetricKind, MAX_METRICS};
use perfbase_core::recorder::MAX_LABELS;
use perfbase_core::MAX_CHECKS;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
struct Lists {
    labels: Vec<String>,
    /// Each label's group (1-based, 0 for none).
    group_of: Vec<u16>,
    groups: Vec<String>,
    checks: Vec<String>,
    metrics: Vec<(String, MetricKind)>,
}

/// The run's names, in the order they were first seen.
#[derive(Default)]
pub(crate) struct Names {
    lists: Mutex<Lists>,
}

/// Finds `name` in `list`, or adds it while there is room: its 0-based place.
fn place(list: &mut Vec<String>, name: &str, room: usize) -> Option<usize> {
    match list.iter().position(|n| n == name) {
        Some(i) => Some(i),
        None if list.len() < room => {
            list.push(name.to_string());
            Some(list.len() - 1)
        }
        None => None,
    }
}

impl Names {
    fn lists(&self) -> std::sync::MutexGuard<'_, Lists> {
        // A panic elsewhere while holding the lock leaves lists that are still whole.
        self.lists.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The label (1-based) of request `name` in group `group` (empty for none); 0 once
    /// [`MAX_LABELS`] are in use, so the request counts in the totals only.
    fn label(&self, group: &str, name: &str) -> u16 {
        let mut l = self.lists();
        let g = if group.is_empty() {
            0
        } else {
            place(&mut l.groups, group, MAX_LABELS).map_or(0, |i| i as u16 + 1)
        };
        let shown = if group.is_empty() {
            name.to_string()
        } else {
            format!("{group}: {name}")
        };
        match place(&mut l.labels, &shown, MAX_LABELS) {
            Some(i) => {
                if l.group_of.len() <= i {
                    l.group_of.push(g);
                }
                i as u16 + 1
            }
            None => 0,
        }
    }

    /// The bit of check `name`, or None once [`MAX_CHECKS`] are in use.
    fn check(&self, name: &str) -> Option<u8> {
        place(&mut self.lists().checks, name, MAX_CHECKS).map(|i| i as u8)
    }

    pub(crate) fn labels(&self) -> Vec<String> {
        self.lists().labels.clone()
    }

    pub(crate) fn groups(&self) -> Vec<String> {
        self.lists().groups.clone()
    }

    pub(crate) fn group(&self, label: u16) -> u16 {
        let l = self.lists();
        (label as usize)
            .checked_sub(1)
            .and_then(|i| l.group_of.get(i).copied())
            .unwrap_or(0)
    }

    pub(crate) fn checks(&self) -> Vec<String> {
        self.lists().checks.clone()
    }

    /// The number of a new metric `name` of `kind`, the same on every worker; an error a
    /// script can be shown when the name is not one a threshold can name, is taken by another
    /// kind, or there are [`MAX_METRICS`] already.
    pub(crate) fn metric(&self, name: &str, kind: MetricKind) -> Result<u16, String> {
        let shape = name.len() <= 128
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !shape {
            return Err(format!(
                "metric name '{name}' must be letters, digits and '_' (at most 128, not starting \
                 with a digit), so that a threshold can name it"
            ));
        }
        if perfbase_core::metric::reserved(name) {
            return Err(format!(
                "metric name '{name}' is one of perfbase's own (thresholds read it as that); \
                 choose another"
            ));
        }
        let mut l = self.lists();
        if let Some(i) = l.metrics.iter().position(|(n, _)| n == name) {
            let had = l.metrics[i].1;
            return if had == kind {
                Ok(i as u16)
            } else {
                Err(format!("metric '{name}' is already a {}", had.name()))
            };
        }
        if l.metrics.len() >= MAX_METRICS {
            return Err(format!("a script may have at most {MAX_METRICS} metrics"));
        }
        l.metrics.push((name.to_string(), kind));
        Ok(l.metrics.len() as u16 - 1)
    }

    pub(crate) fn metrics(&self) -> Vec<(String, MetricKind)> {
        self.lists().metrics.clone()
    }
}

/// One worker's view of [`Names`]: what it has seen, without the lock.
#[derive(Default)]
pub(crate) struct Seen {
    /// Requests outside any group, by name (looked up without an allocation).
    plain: RefCell<HashMap<String, u16>>,
    labels: RefCell<HashMap<(String, String), u16>>,
    checks: RefCell<HashMap<String, Option<u8>>>,
}

impl Seen {
    pub(crate) fn label(&self, names: &Names, group: &str, name: &str) -> u16 {
        if group.is_empty() {
            if let Some(&l) = self.plain.borrow().get(name) {
                return l;
            }
            let l = names.label(group, name);
            self.plain.borrow_mut().insert(name.to_string(), l);
            return l;
        }
        if let Some(&l) = self
            .labels
            .borrow()
            .get(&(group.to_string(), name.to_string()))
        {
            return l;
        }
        let l = names.label(group, name);
        self.labels
            .borrow_mut()
            .insert((group.to_string(), name.to_string()), l);
        l
    }

    pub(crate) fn check(&self, names: &Names, name: &str) -> Option<u8> {
        if let Some(&b) = self.checks.borrow().get(name) {
            return b;
        }
        let b = names.check(name);
        self.checks.borrow_mut().insert(name.to_string(), b);
        b
    }
}

/// A request's default name: its method and its URL's path with the parts that look like
/// identifiers (all digits, or 16 and more hex digits and dashes, as UUIDs) as `{id}`, so
/// `/items/42` and `/items/43` are one endpoint. The query is left out.
pub(crate) fn template(method: &str, path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut out = String::with_capacity(method.len() + 1 + path.len());
    out.push_str(method);
    out.push(' ');
    for (i, part) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        let hexish = part.len() >= 16
            && part.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
            && part.bytes().any(|b| b.is_ascii_digit());
        out.push_str(if digits || hexish { "{id}" } else { part });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_in_a_path_become_one_template() {
        assert_eq!(template("GET", "/items/42?x=1"), "GET /items/{id}");
        assert_eq!(
            template("DELETE", "/u/3f2a9c1e-0b7d-4e7f-9a55-0c1d2e3f4a5b/cart"),
            "DELETE /u/{id}/cart"
        );
        assert_eq!(template("GET", "/v2/items"), "GET /v2/items");
        assert_eq!(template("GET", "/"), "GET /");
    }

    #[test]
    fn names_are_numbered_once_and_groups_kept_per_label() {
        let n = Names::default();
        let seen = Seen::default();
        assert_eq!(seen.label(&n, "", "GET /a"), 1);
        assert_eq!(seen.label(&n, "cart", "GET /a"), 2);
        assert_eq!(seen.label(&n, "", "GET /a"), 1);
        assert_eq!(n.labels(), ["GET /a", "cart: GET /a"]);
        assert_eq!((n.group(1), n.group(2)), (0, 1));
        assert_eq!(seen.check(&n, "is 200"), Some(0));
        assert_eq!(Seen::default().check(&n, "is 200"), Some(0));
        for i in 0..MAX_LABELS {
            seen.label(&n, "", &format!("GET /{i}"));
        }
        assert_eq!(seen.label(&n, "", "GET /overflow"), 0);
    }

    #[test]
    fn metrics_are_numbered_once_and_their_names_checked() {
        let n = Names::default();
        assert_eq!(n.metric("waiting", MetricKind::Trend), Ok(0));
        assert_eq!(n.metric("logins", MetricKind::Counter), Ok(1));
        assert_eq!(n.metric("waiting", MetricKind::Trend), Ok(0));
        let e = n.metric("waiting", MetricKind::Rate).unwrap_err();
        assert_eq!(e, "metric 'waiting' is already a trend");
        assert!(n
            .metric("p95", MetricKind::Gauge)
            .unwrap_err()
            .contains("perfbase's own"));
        assert!(n
            .metric("a b", MetricKind::Gauge)
            .unwrap_err()
            .contains("letters"));
        assert!(n.metric("9lives", MetricKind::Gauge).is_err());
        for i in 2..MAX_METRICS {
            n.metric(&format!("m{i}"), MetricKind::Counter).unwrap();
        }
        assert!(n
            .metric("one_more", MetricKind::Counter)
            .unwrap_err()
            .contains("at most"));
        assert_eq!(n.metrics().len(), MAX_METRICS);
    }
}
