//! Streamed HTTP responses: server-sent events (`text/event-stream`, OpenAI-style token streams
//! among them) and JSON lines, counted event by event as their bytes arrive, with the time of
//! each ([`Clock`], which gRPC's streams share).
//!
//! A response is read as a stream when its `Content-Type` says so ([`Format::of`]); any other
//! body is counted and dropped as before, without a byte looked at. An event's time is the
//! time of the read that completed it: events one read brought came together (a gap of 0).
//!
//! What counts as an event:
//! - **Server-sent events** (WHATWG HTML, "Server-sent events"): lines up to a blank line, of
//!   which at least one is a `data` field. Comments (`:`), `event`, `id` and `retry` alone
//!   dispatch nothing. `data: [DONE]`, the end marker of OpenAI's streams, is not an event.
//!   A JSON `data` with a `choices` array (an OpenAI chat or completion chunk) is one only
//!   when a choice carries text (`delta.content`, `delta.reasoning_content`, `text`) or a tool
//!   call: the role-only opening chunk and the closing usage chunk are not tokens.
//! - **JSON lines** (`application/x-ndjson`, `application/jsonl`, …): every line that is not
//!   blank.

use perfbase_core::outcome::StreamReply;
use std::time::Instant;

/// The longest event (or line) whose content is looked at; beyond it the event still counts,
/// and a longer `data` is taken for content (a chunk that long carries text).
const KEPT_DATA: usize = 64 * 1024;

/// How a streamed body is divided into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Sse,
    Lines,
}

impl Format {
    /// The format a `Content-Type` value names, `None` for a body read whole.
    pub(crate) fn of(content_type: &[u8]) -> Option<Format> {
        let essence = content_type
            .split(|b| *b == b';')
            .next()
            .unwrap_or(b"")
            .trim_ascii();
        let is = |name: &str| essence.eq_ignore_ascii_case(name.as_bytes());
        if is("text/event-stream") {
            Some(Format::Sse)
        } else if [
            "application/x-ndjson",
            "application/ndjson",
            "application/jsonl",
            "application/jsonlines",
            "application/x-jsonlines",
            "application/json-lines",
            "application/stream+json",
        ]
        .into_iter()
        .any(is)
        {
            Some(Format::Lines)
        } else {
            None
        }
    }
}

/// The deadline a stream is cut at for a run `timeout`: 2 % (at least 5 ms, at most 100 ms)
/// before the engine abandons the op, so the driver ends the stream itself and keeps what it
/// brought (a gRPC call's DEADLINE_EXCEEDED comes first, as a gRPC client would report it).
pub(crate) fn stream_deadline(timeout: std::time::Duration) -> std::time::Duration {
    let margin = (timeout / 50).clamp(
        std::time::Duration::from_millis(5),
        std::time::Duration::from_millis(100),
    );
    timeout.saturating_sub(margin).max(timeout / 2)
}

/// The outcome of a stream cut at the deadline `length` after `messages` came.
pub(crate) fn cut(length: std::time::Duration, messages: u64) -> String {
    format!(
        "the stream was cut at the deadline ({length:?}) after {messages} message{}",
        if messages == 1 { "" } else { "s" }
    )
}

/// When each message of a stream arrived: the first, and the gaps between consecutive ones.
#[derive(Debug, Default)]
pub(crate) struct Clock {
    pub(crate) count: u64,
    pub(crate) first: Option<Instant>,
    last: Option<Instant>,
    gaps: perfbase_core::stream::Gaps,
}

impl Clock {
    /// `done` messages completed by the bytes that just arrived (no clock read for none).
    pub(crate) fn arrived(&mut self, done: u64) {
        if done == 0 {
            return;
        }
        let now = Instant::now();
        self.count += done;
        self.first.get_or_insert(now);
        if let Some(l) = self.last.replace(now) {
            self.gaps.push_n(super::conn::micros(now - l), 1);
        }
        // Messages one read completed came together: gaps of 0 after the first of them.
        self.gaps.push_n(0, done - 1);
    }

    /// The stream's figures, timed from `sent` to `end`.
    pub(crate) fn reply(self, sent: Instant, end: Instant) -> StreamReply {
        StreamReply {
            messages: self.count,
            gaps: self.gaps,
            first_us: self.first.map_or(0, |f| {
                super::conn::micros(f.saturating_duration_since(sent))
            }),
            total_us: super::conn::micros(end.saturating_duration_since(sent)),
        }
    }
}

/// A streamed body's events, fed its bytes (the body's own, without chunk framing) as they
/// arrive.
#[derive(Debug)]
pub(crate) struct Events {
    format: Format,
    /// The current line, up to [`KEPT_DATA`] bytes.
    line: Vec<u8>,
    /// The current line outgrew `line`.
    line_long: bool,
    /// Server-sent events: the current event's `data` lines, joined by `\n`.
    data: Vec<u8>,
    has_data: bool,
    data_long: bool,
    pub(crate) clock: Clock,
}

impl Events {
    pub(crate) fn new(format: Format) -> Events {
        Events {
            format,
            line: Vec::new(),
            line_long: false,
            data: Vec::new(),
            has_data: false,
            data_long: false,
            clock: Clock::default(),
        }
    }

    /// Bytes of the body, in any split.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        let mut done = 0;
        while let Some(i) = bytes.iter().position(|b| *b == b'\n') {
            self.extend_line(&bytes[..i]);
            done += u64::from(self.end_line());
            bytes = &bytes[i + 1..];
        }
        self.extend_line(bytes);
        self.clock.arrived(done);
    }

    /// The body ended: a last line without its newline (JSON lines) or a last event without
    /// its blank line still counts.
    pub(crate) fn finish(&mut self) {
        let mut done = 0;
        if !self.line.is_empty() || self.line_long {
            done += u64::from(self.end_line());
        }
        if self.format == Format::Sse {
            done += u64::from(self.dispatch());
        }
        self.clock.arrived(done);
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        let room = KEPT_DATA.saturating_sub(self.line.len());
        self.line_long |= bytes.len() > room;
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// A line ended: whether it completed an event.
    fn end_line(&mut self) -> bool {
        if self.line.last() == Some(&b'\r') && !self.line_long {
            self.line.pop();
        }
        let counted = match self.format {
            Format::Lines => self.line_long || !self.line.trim_ascii().is_empty(),
            Format::Sse if self.line.is_empty() && !self.line_long => self.dispatch(),
            Format::Sse => {
                self.field();
                false
            }
        };
        self.line.clear();
        self.line_long = false;
        counted
    }

    /// A server-sent event's field line: only `data` matters here.
    fn field(&mut self) {
        let line = &self.line[..];
        let (name, value) = match line.iter().position(|b| *b == b':') {
            Some(0) => return, // a comment
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        if name != b"data" {
            return;
        }
        if self.has_data {
            self.data.push(b'\n');
        }
        self.has_data = true;
        self.data_long |= self.line_long;
        let room = KEPT_DATA.saturating_sub(self.data.len());
        self.data_long |= value.len() > room;
        self.data.extend_from_slice(&value[..value.len().min(room)]);
    }

    /// A blank line: the event so far is dispatched; whether it counts.
    fn dispatch(&mut self) -> bool {
        let counted = self.has_data && (self.data_long || is_content(&self.data));
        self.data.clear();
        self.has_data = false;
        self.data_long = false;
        counted
    }

    /// The stream's figures, timed from `sent` to `end`.
    pub(crate) fn reply(mut self, sent: Instant, end: Instant) -> StreamReply {
        self.finish();
        self.clock.reply(sent, end)
    }
}

/// How many events `body` holds as a response of `content_type` would be read, fed `step`
/// bytes at a time (for fuzzing: the count must not depend on how the bytes arrive); `None`
/// for a type that is not a stream.
pub fn count_events(content_type: &[u8], body: &[u8], step: usize) -> Option<u64> {
    let mut e = Events::new(Format::of(content_type)?);
    for piece in body.chunks(step.max(1)) {
        e.feed(piece);
    }
    e.finish();
    Some(e.clock.count)
}

/// For fuzzing the stream readers' memory: `body` fed `times` times over in pieces of `step`
/// bytes, as a stream that never ends would be. The events counted, the gap values the
/// stream holds one by one (at most [`GAPS_LISTED`](perfbase_core::stream::GAPS_LISTED)) and
/// the bytes its line and event buffers hold (at most about twice [`KEPT_DATA`] each),
/// however long the stream; `None` for a type that is not a stream.
pub fn stream_held(
    content_type: &[u8],
    body: &[u8],
    step: usize,
    times: usize,
) -> Option<(u64, usize, usize)> {
    let mut e = Events::new(Format::of(content_type)?);
    for _ in 0..times {
        for piece in body.chunks(step.max(1)) {
            e.feed(piece);
        }
    }
    let held = e.line.capacity() + e.data.capacity();
    let sent = std::time::Instant::now();
    let reply = e.reply(sent, sent);
    Some((reply.messages, reply.gaps.listed().len(), held))
}

/// The most a stream's line and event buffers hold together, for [`stream_held`]'s callers.
pub const HELD_AT_MOST: usize = 4 * KEPT_DATA;

/// Whether an event's data is content: not OpenAI's `[DONE]`, and for an OpenAI chunk, one
/// whose choices carry text or a tool call.
fn is_content(data: &[u8]) -> bool {
    if data == b"[DONE]" {
        return false;
    }
    if data.first() != Some(&b'{') {
        return true;
    }
    use serde_json::Value;
    let Ok(chunk) = serde_json::from_slice::<Value>(data) else {
        return true;
    };
    let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
        return true;
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).is_some_and(|s| !s.is_empty());
    choices.iter().any(|c| {
        let delta = c.get("delta");
        text(c.get("text"))
            || text(delta.and_then(|d| d.get("content")))
            || text(delta.and_then(|d| d.get("reasoning_content")))
            || delta
                .and_then(|d| d.get("tool_calls"))
                .is_some_and(|t| !t.is_null())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(format: Format, body: &[u8], split: usize) -> u64 {
        let mut e = Events::new(format);
        for part in body.chunks(split.max(1)) {
            e.feed(part);
        }
        e.finish();
        e.clock.count
    }

    #[test]
    fn formats_from_content_types() {
        assert_eq!(
            Format::of(b"text/event-stream; charset=utf-8"),
            Some(Format::Sse)
        );
        assert_eq!(Format::of(b"Application/X-NDJSON"), Some(Format::Lines));
        assert_eq!(Format::of(b"application/json"), None);
        assert_eq!(Format::of(b"text/plain"), None);
    }

    #[test]
    fn server_sent_events_in_any_split() {
        let body = b": keep-alive\n\nevent: tick\ndata: 1\n\nid: 7\ndata: a\r\ndata: b\r\n\r\n\
                     retry: 100\n\ndata\n\ndata: [DONE]\n\n";
        // "1", "a\nb", "" (a bare data field is an event with empty data); not the comment,
        // the retry alone or [DONE].
        for split in [1, 2, 3, 7, 1000] {
            assert_eq!(count(Format::Sse, body, split), 3, "split {split}");
        }
        // A last event without its blank line still counts when the body ends.
        assert_eq!(count(Format::Sse, b"data: x\n\ndata: y\n", 4), 2);
    }

    #[test]
    fn openai_chunks_count_only_when_they_carry_text() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"text\":\"!\"}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\n\n",
            "data: {\"other\":true}\n\n",
            "data: [DONE]\n\n",
        );
        // Three with text, and one JSON event that is no OpenAI chunk.
        assert_eq!(count(Format::Sse, body.as_bytes(), 5), 4);
    }

    #[test]
    fn json_lines_count_every_line_that_is_not_blank() {
        let body = b"{\"a\":1}\n\n{\"a\":2}\r\n   \n{\"a\":3}";
        for split in [1, 4, 100] {
            assert_eq!(count(Format::Lines, body, split), 3, "split {split}");
        }
    }

    #[test]
    fn events_one_read_brings_have_gaps_of_zero_and_a_first_time() {
        let sent = Instant::now();
        let mut e = Events::new(Format::Lines);
        e.feed(b"1\n2\n3\n");
        std::thread::sleep(std::time::Duration::from_millis(20));
        e.feed(b"4\n");
        let r = e.reply(sent, Instant::now());
        assert_eq!(r.messages, 4);
        let gaps = r.gaps.listed();
        assert_eq!(gaps.len(), 3);
        assert_eq!(&gaps[..2], &[0, 0]);
        assert!(gaps[2] >= 20_000, "{gaps:?}");
        assert!(r.total_us >= gaps[2] && r.first_us < 20_000, "{r:?}");
    }

    /// A server streaming as fast as it can does not grow the stream's memory: two million
    /// events, one read each, keep a list of [`GAPS_LISTED`] gaps and a histogram.
    #[test]
    fn an_endless_stream_keeps_bounded_gaps() {
        use perfbase_core::stream::GAPS_LISTED;
        let mut e = Events::new(Format::Sse);
        for _ in 0..2_000_000 {
            e.feed(b"data: a\n\n");
        }
        let r = e.reply(Instant::now(), Instant::now());
        assert_eq!(r.messages, 2_000_000);
        assert_eq!(r.gaps.len(), 1_999_999);
        assert_eq!(r.gaps.listed().len(), GAPS_LISTED);
    }

    #[test]
    fn a_huge_line_still_counts_once() {
        let mut body = b"data: ".to_vec();
        body.extend(std::iter::repeat_n(b'x', 3 * KEPT_DATA));
        body.extend_from_slice(b"\n\ndata: [DONE]\n\n");
        assert_eq!(count(Format::Sse, &body, 4096), 1);
    }
}
