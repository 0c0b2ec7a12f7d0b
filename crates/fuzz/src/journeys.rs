//! The harnesses of a journey's templates and captures and of endless event streams: text
//! and bytes a server sends, through the code a run uses.

/// A journey's template or capture (the first byte's low bits say which), over text and a
/// body from outside: a template renders hostile values without ending its request target; a
/// regex capture from the body is a part of the body.
pub(crate) fn journey(input: &[u8]) -> bool {
    use perfbase_drivers::http::journey::fuzz;
    let Some((&mode, rest)) = input.split_first() else {
        return false;
    };
    let rest = &rest[..rest.len().min(crate::engine::SHORT)];
    let text = String::from_utf8_lossy(rest);
    let (first, body) = text.split_once('\n').unwrap_or((&text, ""));
    match mode & 3 {
        0 => fuzz::template(&text, true),
        1 => fuzz::template(&text, false),
        2 => fuzz::capture(Some(first), None, body.as_bytes()),
        _ => fuzz::capture(None, Some(first), body.as_bytes()),
    }
}

/// An event stream that never ends, as a body repeated (the second byte says how often, up to
/// 256 times) and fed in pieces (the first byte: format and piece size): what the stream holds
/// stays bounded however many events came, and the count does not depend on the pieces.
pub(crate) fn stream_growth(input: &[u8]) -> bool {
    use perfbase_core::stream::GAPS_LISTED;
    use perfbase_drivers::http::{count_events, stream_held, HELD_AT_MOST};
    let [flags, times, body @ ..] = input else {
        return false;
    };
    let body = &body[..body.len().min(64)];
    let kind: &[u8] = if flags & 1 == 1 {
        b"application/x-ndjson"
    } else {
        b"text/event-stream"
    };
    let times = usize::from(*times) + 1;
    let Some((events, listed, held)) = stream_held(kind, body, usize::from(flags >> 1), times)
    else {
        return false;
    };
    assert!(listed <= GAPS_LISTED, "{listed} gaps listed");
    assert!(held <= HELD_AT_MOST, "{held} bytes held");
    let whole = body.repeat(times);
    assert_eq!(
        count_events(kind, &whole, whole.len()),
        Some(events),
        "split-dependent"
    );
    events > 0
}
