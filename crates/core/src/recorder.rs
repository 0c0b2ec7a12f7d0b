//! The recorder: one per worker, fed one timed outcome at a time, merged exactly at the end of
//! a phase. HDR histograms (hdrhistogram crate) keep every latency at 3 significant digits, so
//! merging recorders gives the same percentiles as recording everything in one place.

use crate::availability::Availability;
pub use crate::histogram::{new_histogram, HIGHEST_US, SIGFIG, UNIT_PER_S};
use crate::metric::{MetricKind, MetricSet, MetricStats, Samples};
use crate::outcome::{CheckBits, Class, Outcome, MAX_CHECKS};
pub use crate::tally::{CheckCount, GroupStats, IterationStats, LabelStats};
use crate::timeline::Timeline;
use crate::timing::TimingStats;
use hdrhistogram::Histogram;
use std::time::Duration;

/// How many distinct error messages are kept as samples.
pub const MAX_ERROR_SAMPLES: usize = 16;
/// The most kinds of operation (endpoints) a run reports apart. Each keeps its own full
/// histogram (about 190 KB per worker), so a driver with more groups the rest under one name.
pub const MAX_LABELS: usize = 64;
/// Status codes are counted in a flat array indexed by code; codes above this are folded into 0.
const STATUS_SLOTS: usize = 600;

fn as_us(d: Duration) -> u64 {
    (d.as_micros() as u64).min(HIGHEST_US)
}

/// One distinct error message and how often it was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorSample {
    pub class: Class,
    pub message: String,
    pub count: u64,
}

/// Counters and histograms of one worker (or, after merging, of one phase).
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Response time: from the intended start (open model) or the actual send (closed model).
    pub response: Histogram<u64>,
    /// Service time: from the actual send. Kept only in the open model, where it differs.
    pub service: Option<Histogram<u64>>,
    classes: [u64; Class::COUNT],
    status: Box<[u64]>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Operations that could not start on schedule (open model).
    pub late: u64,
    /// Operations whose intended start fell inside the send window but that could not start
    /// within the timeout of it (open model: no free session under the in-flight cap). Each
    /// is also recorded as a `timeout` error, its wait as a lower bound of its latency.
    pub unsent: u64,
    /// Open model: operations that started inside the send window (the achieved rate's
    /// numerator; ops planned inside the window may still start after it closes).
    pub started_in_window: u64,
    /// Operations in flight when the phase was cut off (deadline grace or Ctrl-C); not recorded.
    pub aborted: u64,
    samples: Vec<ErrorSample>,
    pub timeline: Timeline,
    /// The stretches without a successful operation ([`Availability`]).
    pub availability: Availability,
    /// Per kind of operation, when the driver names them ([`Recorder::with_labels`]):
    /// `by_label[i]` holds the outcomes of label `i + 1`.
    by_label: Vec<LabelStats>,
    /// HTTP/1.1's split of each request's time, from its first timed outcome on.
    pub timing: Option<Box<TimingStats>>,
    /// Streamed replies' messages and gaps, from the first stream on.
    pub stream: Option<Box<crate::stream::StreamStats>>,
    /// Journeys: each op's iteration ([`Recorder::with_iterations`]).
    pub iterations: Option<Box<IterationStats>>,
    /// Journeys: each named check's passes and failures, in the driver's order.
    checks: Vec<CheckCount>,
    /// Journeys: each group's durations, in the driver's order.
    groups: Vec<GroupStats>,
    /// Scripts: each of their own metrics, in the driver's order.
    metrics: MetricSet,
}

impl Recorder {
    /// A copy of the counters and histograms for a live export: without the per-second
    /// timeline (which grows with the run) and the error samples.
    pub fn live_copy(&self) -> Recorder {
        Recorder {
            response: self.response.clone(),
            service: self.service.clone(),
            classes: self.classes,
            status: self.status.clone(),
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
            late: self.late,
            unsent: self.unsent,
            started_in_window: self.started_in_window,
            aborted: self.aborted,
            samples: Vec::new(),
            timeline: Timeline::new(),
            availability: Availability::new(),
            by_label: self.by_label.clone(),
            timing: self.timing.clone(),
            stream: self.stream.clone(),
            iterations: self.iterations.clone(),
            checks: self.checks.clone(),
            groups: self.groups.clone(),
            metrics: self.metrics.clone(),
        }
    }

    /// An empty recorder; `open_model` also keeps service times.
    pub fn new(open_model: bool) -> Recorder {
        Recorder {
            response: new_histogram(SIGFIG),
            service: open_model.then(|| new_histogram(SIGFIG)),
            classes: [0; Class::COUNT],
            status: vec![0; STATUS_SLOTS].into_boxed_slice(),
            bytes_in: 0,
            bytes_out: 0,
            late: 0,
            unsent: 0,
            started_in_window: 0,
            aborted: 0,
            samples: Vec::new(),
            timeline: Timeline::new(),
            availability: Availability::new(),
            by_label: Vec::new(),
            timing: None,
            stream: None,
            iterations: None,
            checks: Vec::new(),
            groups: Vec::new(),
            metrics: MetricSet::default(),
        }
    }

    /// Also keeps the script metrics of `defs` (the driver's
    /// [`metrics`](crate::Driver::metrics); at most [`MAX_METRICS`](crate::metric::MAX_METRICS)).
    pub fn with_metrics(mut self, defs: &[(String, MetricKind)]) -> Recorder {
        self.metrics = MetricSet::default();
        self.metrics.grow(defs);
        self
    }

    /// Each script metric's figures, in the driver's order (empty without).
    pub fn metrics(&self) -> &[MetricStats] {
        self.metrics.stats()
    }

    /// Adds a step's metric values, set at `at` on the run's clock.
    pub fn add_samples(&mut self, samples: &Samples, at: Duration) {
        self.metrics.add(samples, at);
    }

    /// Also keeps the durations of the groups named `names` (the driver's
    /// [`groups`](crate::Driver::groups); at most [`MAX_LABELS`]).
    pub fn with_groups(mut self, names: &[String]) -> Recorder {
        self.groups = names
            .iter()
            .take(MAX_LABELS)
            .map(|n| GroupStats {
                name: n.clone(),
                duration: new_histogram(SIGFIG),
            })
            .collect();
        self
    }

    /// Each group's durations, in the driver's order (empty without groups).
    pub fn groups(&self) -> &[GroupStats] {
        &self.groups
    }

    /// Records one pass through group `group` (1-based) that took `took`.
    pub fn record_group(&mut self, group: u16, took: Duration) {
        if let Some(g) = (group as usize)
            .checked_sub(1)
            .and_then(|i| self.groups.get_mut(i))
        {
            g.duration.saturating_record(as_us(took));
        }
    }

    /// Also keeps each op's iteration duration (a driver whose ops are journeys).
    pub fn with_iterations(mut self) -> Recorder {
        self.iterations = Some(Box::new(IterationStats::new()));
        self
    }

    /// Also counts the checks named `names` (the driver's
    /// [`check_names`](crate::Driver::check_names); at most [`MAX_CHECKS`] are kept).
    pub fn with_checks(mut self, names: &[String]) -> Recorder {
        self.checks = names
            .iter()
            .take(MAX_CHECKS)
            .map(|n| CheckCount {
                name: n.clone(),
                passed: 0,
                failed: 0,
            })
            .collect();
        self
    }

    /// Each named check's counts, in the driver's order (empty without checks).
    pub fn checks(&self) -> &[CheckCount] {
        &self.checks
    }

    /// Records the end of an op's iteration: `took` from its intended start to its last
    /// response, `ok` when every request of it succeeded. Ignored without
    /// [`Recorder::with_iterations`].
    pub fn record_iteration(&mut self, took: Duration, ok: bool) {
        if let Some(it) = self.iterations.as_mut() {
            it.duration.saturating_record(as_us(took));
            if ok {
                it.ok += 1;
            } else {
                it.failed += 1;
            }
        }
    }

    /// Counts the checks of `bits` (a response's, or a script's outside any response).
    pub fn count_checks(&mut self, bits: CheckBits) {
        for (i, c) in self.checks.iter_mut().enumerate() {
            c.passed += (bits.passed >> i) & 1;
            c.failed += (bits.failed >> i) & 1;
        }
    }

    /// Also keeps figures per kind of operation, named by `names` (the driver's
    /// [`labels`](crate::Driver::labels); at most [`MAX_LABELS`] are kept).
    pub fn with_labels(mut self, names: &[String]) -> Recorder {
        self.by_label = names
            .iter()
            .take(MAX_LABELS)
            .map(|n| LabelStats::new(n.clone()))
            .collect();
        self
    }

    /// Adds the names past those it has of labels, checks, groups and metrics (a driver whose
    /// names grow during the run, [`Driver::names_grow`](crate::Driver::names_grow)): the
    /// numbers already in use keep their names.
    pub fn grow(
        &mut self,
        labels: &[String],
        checks: &[String],
        groups: &[String],
        metrics: &[(String, MetricKind)],
    ) {
        self.metrics.grow(metrics);
        for n in labels.iter().take(MAX_LABELS).skip(self.by_label.len()) {
            self.by_label.push(LabelStats::new(n.clone()));
        }
        let known = self.checks.len();
        self.checks.extend(
            checks
                .iter()
                .take(MAX_CHECKS)
                .skip(known)
                .map(|n| CheckCount {
                    name: n.clone(),
                    passed: 0,
                    failed: 0,
                }),
        );
        for n in groups.iter().take(MAX_LABELS).skip(self.groups.len()) {
            self.groups.push(GroupStats {
                name: n.clone(),
                duration: new_histogram(SIGFIG),
            });
        }
    }

    /// The figures per kind of operation, in label order (empty without labels).
    pub fn labels(&self) -> &[LabelStats] {
        &self.by_label
    }

    /// Records one completed operation. `response` is the latency the user saw, `service` the
    /// time from the actual send (open model only), `at` when it completed since phase start.
    pub fn record(
        &mut self,
        outcome: &Outcome,
        response: Duration,
        service: Duration,
        at: Duration,
    ) {
        let response_us = as_us(response);
        let n = outcome.batch.max(1) as u64;
        self.response.saturating_record_n(response_us, n);
        if let Some(h) = self.service.as_mut() {
            h.saturating_record_n(as_us(service), n);
        }
        let ok = outcome.batch_ok as u64;
        self.classes[outcome.class.index()] += n - ok;
        self.classes[Class::Ok.index()] += ok;
        let slot = outcome.status as usize;
        self.status[if slot < STATUS_SLOTS { slot } else { 0 }] += n;
        self.bytes_in += outcome.bytes_in;
        self.bytes_out += outcome.bytes_out;
        if outcome.class.is_error() {
            if let Some(detail) = &outcome.detail {
                self.sample(outcome.class, detail, 1);
            }
        }
        let failed = if outcome.class.is_error() { n - ok } else { 0 };
        self.timeline.record_n(at, response_us, n, failed);
        self.availability
            .record(at, n - failed, failed, outcome.class, response_us);
        if outcome.timing.conn != crate::ConnUse::Untimed {
            self.timing
                .get_or_insert_with(Default::default)
                .record(&outcome.timing);
        }
        if let Some(st) = &outcome.stream {
            self.stream.get_or_insert_with(Default::default).record(st);
        }
        if outcome.checks != CheckBits::default() {
            self.count_checks(outcome.checks);
        }
        if let Some(samples) = &outcome.samples {
            self.add_samples(samples, at);
        }
        if outcome.label > 0 {
            if let Some(l) = self.by_label.get_mut(outcome.label as usize - 1) {
                l.response.saturating_record_n(response_us, n);
                l.classes[outcome.class.index()] += n - ok;
                l.classes[Class::Ok.index()] += ok;
                *l.status.entry(outcome.status).or_default() += n;
            }
        }
    }

    /// Records an operation that never started: it waited `waited` for a free session until
    /// its timeout, so its latency is at least that. It goes into the response histogram
    /// (a lower bound, never hidden) and counts as an error, but has no service time.
    pub fn record_unsent(&mut self, outcome: &Outcome, waited: Duration, at: Duration) {
        self.unsent += 1;
        let service = self.service.take();
        self.record(outcome, waited, Duration::ZERO, at);
        self.service = service;
    }

    /// Counts a failure that has no latency of its own (a consumer that lost its connection,
    /// a message it could not read): classes, status, bytes, samples and the timeline, but
    /// no histogram, so latency figures stay those of real operations.
    pub fn count_unmeasured(&mut self, outcome: &Outcome, at: Duration) {
        let n = outcome.batch.max(1) as u64;
        let ok = outcome.batch_ok as u64;
        self.classes[outcome.class.index()] += n - ok;
        self.classes[Class::Ok.index()] += ok;
        let slot = outcome.status as usize;
        self.status[if slot < STATUS_SLOTS { slot } else { 0 }] += n;
        self.bytes_in += outcome.bytes_in;
        self.bytes_out += outcome.bytes_out;
        if let Some(detail) = outcome
            .detail
            .as_deref()
            .filter(|_| outcome.class.is_error())
        {
            self.sample(outcome.class, detail, 1);
        }
        let failed = if outcome.class.is_error() { n - ok } else { 0 };
        self.timeline.count_n(at, n, failed);
        self.availability
            .record(at, n - failed, failed, outcome.class, 0);
    }

    fn sample(&mut self, class: Class, message: &str, count: u64) {
        // A server writes what it likes: no secret perfbase sent and it echoed, and no
        // escape sequence of its, reaches a terminal, a report or the store.
        let scrubbed = crate::redact::known(message);
        let message = crate::redact::printable(&scrubbed);
        let message = message.as_ref();
        if let Some(s) = self
            .samples
            .iter_mut()
            .find(|s| s.class == class && s.message == message)
        {
            s.count += count;
        } else if self.samples.len() < MAX_ERROR_SAMPLES
            // A class not yet sampled always gets one: many messages of one kind of fault must
            // not hide a different kind (classes are few, so the list stays bounded).
            || !self.samples.iter().any(|s| s.class == class)
        {
            self.samples.push(ErrorSample {
                class,
                message: message.to_string(),
                count,
            });
        }
    }

    /// Completed operations (every class).
    pub fn requests(&self) -> u64 {
        self.classes.iter().sum()
    }

    /// Operations of one class.
    pub fn count(&self, class: Class) -> u64 {
        self.classes[class.index()]
    }

    /// Operations that ended in error (every class but `ok`).
    pub fn errors(&self) -> u64 {
        self.requests() - self.count(Class::Ok)
    }

    /// Non-zero status counts as (code, count), ascending; code 0 means "no status".
    pub fn status_counts(&self) -> Vec<(u16, u64)> {
        self.status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(code, n)| (code as u16, *n))
            .collect()
    }

    /// Non-zero class counts, in [`Class::ALL`] order.
    pub fn class_counts(&self) -> Vec<(Class, u64)> {
        Class::ALL
            .into_iter()
            .map(|c| (c, self.count(c)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// The kept error samples.
    pub fn error_samples(&self) -> &[ErrorSample] {
        &self.samples
    }

    /// Closes the timeline's current second (call once the phase is over).
    pub fn finish(&mut self) {
        self.timeline.flush();
    }

    /// Adds `other` into `self`. Histogram addition is exact: merge(a, b) holds the same
    /// counts as recording a ∪ b into one recorder.
    pub fn merge(&mut self, other: &Recorder) {
        // Both histograms share bounds by construction, so adding cannot fail; if a recorder
        // read from elsewhere had other bounds, saturate rather than lose the merge.
        if self.response.add(&other.response).is_err() {
            for v in other.response.iter_recorded() {
                self.response
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        match (self.service.as_mut(), other.service.as_ref()) {
            (Some(a), Some(b)) => {
                let _ = a.add(b);
            }
            (None, Some(b)) => self.service = Some(b.clone()),
            _ => {}
        }
        for (a, b) in self.classes.iter_mut().zip(other.classes.iter()) {
            *a += b;
        }
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.late += other.late;
        self.unsent += other.unsent;
        self.started_in_window += other.started_in_window;
        self.aborted += other.aborted;
        match (&mut self.timing, &other.timing) {
            (Some(a), Some(b)) => a.merge(b),
            (a @ None, Some(b)) => *a = Some(b.clone()),
            _ => {}
        }
        match (&mut self.stream, &other.stream) {
            (Some(a), Some(b)) => a.merge(b),
            (a @ None, Some(b)) => *a = Some(b.clone()),
            _ => {}
        }
        for s in &other.samples {
            self.sample(s.class, &s.message, s.count);
        }
        match (&mut self.iterations, &other.iterations) {
            (Some(a), Some(b)) => a.merge(b),
            (a @ None, Some(b)) => *a = Some(b.clone()),
            _ => {}
        }
        for g in &other.groups {
            match self.groups.iter().position(|m| m.name == g.name) {
                Some(i) => {
                    let _ = self.groups[i].duration.add(&g.duration);
                }
                None if self.groups.len() < MAX_LABELS => self.groups.push(g.clone()),
                None => {}
            }
        }
        for c in &other.checks {
            match self.checks.iter().position(|m| m.name == c.name) {
                Some(i) => {
                    self.checks[i].passed += c.passed;
                    self.checks[i].failed += c.failed;
                }
                None if self.checks.len() < MAX_CHECKS => self.checks.push(c.clone()),
                None => {}
            }
        }
        self.metrics.merge(&other.metrics);
        self.timeline.merge(&other.timeline);
        self.availability.merge(&other.availability);
        // By name, not by position: a plan's total merges phases of different drivers.
        for l in &other.by_label {
            match self.by_label.iter().position(|m| m.name == l.name) {
                Some(i) => self.by_label[i].merge(l),
                None if self.by_label.len() < MAX_LABELS => self.by_label.push(l.clone()),
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rec(r: &mut Recorder, status: u16, us: u64, at_ms: u64) {
        r.record(
            &Outcome::http(status, 10, 5),
            Duration::from_micros(us),
            Duration::from_micros(us / 2),
            Duration::from_millis(at_ms),
        );
    }

    /// Issue 30, item 7: a server's error text with terminal escapes (retitle, clear screen,
    /// a fake verdict) was kept raw and printed raw.
    #[test]
    fn an_error_sample_keeps_no_escape_sequence() {
        let mut r = Recorder::new(false);
        let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[32mall thresholds passed";
        for _ in 0..2 {
            r.record(
                &Outcome::error(Class::Malformed, hostile),
                Duration::from_micros(5),
                Duration::ZERO,
                Duration::ZERO,
            );
        }
        let s = &r.error_samples()[0];
        assert_eq!(
            s.message,
            "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[32mall thresholds passed"
        );
        assert_eq!((r.error_samples().len(), s.count), (1, 2));
    }

    #[test]
    fn counts_statuses_classes_and_bytes() {
        let mut r = Recorder::new(false);
        rec(&mut r, 200, 100, 0);
        rec(&mut r, 200, 100, 10);
        rec(&mut r, 500, 100, 1500);
        r.record(
            &Outcome::error(Class::Connect, "refused"),
            Duration::from_micros(5),
            Duration::ZERO,
            Duration::from_millis(1600),
        );
        r.finish();
        assert_eq!(r.requests(), 4);
        assert_eq!(r.errors(), 2);
        assert_eq!(r.status_counts(), vec![(0, 1), (200, 2), (500, 1)]);
        assert_eq!(r.count(Class::Http5xx), 1);
        assert_eq!(r.bytes_in, 30);
        assert_eq!(r.error_samples()[0].message, "refused");
        let points = r.timeline.points();
        assert_eq!(points.len(), 2);
        assert_eq!((points[0].requests, points[0].errors), (2, 0));
        assert_eq!((points[1].requests, points[1].errors), (2, 2));
    }

    #[test]
    fn a_batch_counts_every_operation() {
        let mut r = Recorder::new(false);
        r.record(
            &Outcome::ok(0, 0).batch_of(8, 8),
            Duration::from_millis(2),
            Duration::ZERO,
            Duration::ZERO,
        );
        let failed = Outcome::error(Class::ServerError, "2 of 8 failed").batch_of(8, 6);
        r.record(
            &failed,
            Duration::from_millis(3),
            Duration::ZERO,
            Duration::ZERO,
        );
        r.finish();
        assert_eq!(r.requests(), 16);
        assert_eq!(r.count(Class::Ok), 14);
        assert_eq!(r.count(Class::ServerError), 2);
        assert_eq!(r.response.len(), 16);
        assert_eq!(r.timeline.points()[0].requests, 16);
        assert_eq!(r.timeline.points()[0].errors, 2);
    }

    #[test]
    fn unmeasured_failures_are_counted_without_a_latency() {
        let mut r = Recorder::new(false);
        rec(&mut r, 200, 700, 0);
        r.count_unmeasured(
            &Outcome::error(Class::Read, "lost"),
            Duration::from_millis(5),
        );
        r.finish();
        assert_eq!((r.requests(), r.errors()), (2, 1));
        assert_eq!((r.response.len(), r.response.min()), (1, 700));
        assert_eq!(r.error_samples()[0].message, "lost");
        assert_eq!(r.timeline.points()[0].errors, 1);
    }

    #[test]
    fn error_samples_are_bounded_and_counted() {
        let mut r = Recorder::new(false);
        for i in 0..100 {
            let o = Outcome::error(Class::Read, format!("reset {}", i % 20));
            r.record(&o, Duration::ZERO, Duration::ZERO, Duration::ZERO);
        }
        assert_eq!(r.error_samples().len(), MAX_ERROR_SAMPLES);
        assert_eq!(r.error_samples()[0].count, 5);
        // A new kind of fault is still sampled once the list is full.
        r.record(
            &Outcome::error(Class::Timeout, "late"),
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
        );
        assert_eq!(r.error_samples().len(), MAX_ERROR_SAMPLES + 1);
        assert_eq!(r.error_samples()[MAX_ERROR_SAMPLES].class, Class::Timeout);
    }

    #[test]
    fn labelled_outcomes_are_also_counted_per_label_and_merged_by_name() {
        let names = ["GET /a".to_string(), "POST /b".to_string()];
        let mut a = Recorder::new(false).with_labels(&names);
        let record = |r: &mut Recorder, o: Outcome, ms: u64| {
            r.record(
                &o,
                Duration::from_millis(ms),
                Duration::ZERO,
                Duration::ZERO,
            )
        };
        record(&mut a, Outcome::http(200, 0, 0).with_label(1), 1);
        record(&mut a, Outcome::http(200, 0, 0).with_label(1), 3);
        record(&mut a, Outcome::http(429, 0, 0).with_label(2), 20);
        // Unlabelled (a failed connect) and out-of-range labels count only in the totals.
        record(&mut a, Outcome::error(Class::Connect, "refused"), 1);
        record(&mut a, Outcome::http(200, 0, 0).with_label(9), 1);
        assert_eq!(a.requests(), 5);
        let l = a.labels();
        assert_eq!((l[0].name.as_str(), l[0].requests()), ("GET /a", 2));
        assert!(l[0].response.equivalent(l[0].response.max(), 3000));
        assert_eq!(l[1].status_counts(), vec![(429, 1)]);
        assert_eq!(l[1].count(Class::Http4xx), 1);
        // Merged into a recorder that knows other names: same names add up, new ones append.
        let mut total = Recorder::new(false).with_labels(&["POST /b".to_string()]);
        total.merge(&a);
        total.merge(&a);
        let t = total.labels();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].name.as_str(), t[0].requests()), ("POST /b", 2));
        assert_eq!((t[1].name.as_str(), t[1].requests()), ("GET /a", 4));
        assert_eq!(t[1].response.len(), 4);
    }

    proptest! {
        // merge(a, b) == record(a ∪ b): the property that makes per-worker recording exact.
        #[test]
        fn merge_equals_recording_the_union(
            a in proptest::collection::vec((1u64..5_000_000, 0u64..5_000, prop_oneof![Just(200u16), Just(404), Just(503)]), 0..200),
            b in proptest::collection::vec((1u64..5_000_000, 0u64..5_000, prop_oneof![Just(200u16), Just(404), Just(503)]), 0..200),
        ) {
            let mut ra = Recorder::new(true);
            let mut rb = Recorder::new(true);
            let mut all = Recorder::new(true);
            for &(us, at, st) in &a { rec(&mut ra, st, us, at); rec(&mut all, st, us, at); }
            for &(us, at, st) in &b { rec(&mut rb, st, us, at); rec(&mut all, st, us, at); }
            ra.finish(); rb.finish(); all.finish();
            ra.merge(&rb);
            prop_assert_eq!(ra.requests(), all.requests());
            prop_assert_eq!(ra.status_counts(), all.status_counts());
            prop_assert_eq!(ra.class_counts(), all.class_counts());
            prop_assert_eq!(ra.response.len(), all.response.len());
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                prop_assert_eq!(ra.response.value_at_quantile(q), all.response.value_at_quantile(q));
            }
            prop_assert_eq!(ra.service.as_ref().map(|h| h.value_at_quantile(0.99)), all.service.as_ref().map(|h| h.value_at_quantile(0.99)));
            prop_assert_eq!(ra.timeline.points(), all.timeline.points());
        }
    }
}
