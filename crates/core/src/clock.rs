//! Wall-clock labels: RFC 3339 UTC text (`2026-11-21T09:04:32.123Z`) for a result's
//! `started_at` and the store's `saved_at`, one format everywhere so they sort as text.
//! Durations never come from here: they come from the monotonic clock.
//!
//! The calendar arithmetic is jiff's; this module only fixes the formats perfbase writes.

use jiff::Timestamp;
use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as RFC 3339 UTC with milliseconds.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// RFC 3339 UTC text of a wall-clock time, always with milliseconds (truncated) and `Z`, so
/// every label has the same width and text order is time order; times before 1970 read as
/// the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    // jiff's Display of a timestamp is RFC 3339 in UTC; the precision fixes the fraction at
    // three digits (".000" included), which the stored labels have always had.
    format!("{:.3}", timestamp(t))
}

/// A wall-clock time in UTC in a `strftime`-style format (jiff's `strtime`: `%Y%m%d-%H%M%S`,
/// `%3f` for milliseconds), for stamps in file names. A format jiff cannot print (an unknown
/// directive) gives the RFC 3339 text instead, never a panic.
pub fn format_utc(t: SystemTime, format: &str) -> String {
    jiff::fmt::strtime::format(format, timestamp(t)).unwrap_or_else(|_| rfc3339(t))
}

/// Re-writes an RFC 3339 label (any offset, any fraction) as UTC in a `strftime`-style
/// format, e.g. for a consumer that wants no fraction or zone; `None` when `text` is not
/// RFC 3339 (a hand-edited result) or the format cannot be printed.
pub fn reformat_utc(text: &str, format: &str) -> Option<String> {
    let t: Timestamp = text.trim().parse().ok()?;
    jiff::fmt::strtime::format(format, t).ok()
}

/// Parses an RFC 3339 time (any offset) or whole seconds since the epoch.
pub fn parse_time(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(UNIX_EPOCH + std::time::Duration::from_secs(secs));
    }
    let t: Timestamp = text.parse().map_err(|_| {
        format!(
            "'{text}' is no time: write RFC 3339 (2026-11-25T14:00:00Z) or seconds since the epoch"
        )
    })?;
    Ok(UNIX_EPOCH + std::time::Duration::from_nanos(t.as_nanosecond().max(0) as u64))
}

/// The instant of a `SystemTime`, clamped to what labels can show: before 1970 (a clock set
/// wrong) reads as the epoch, as it always has, and past jiff's last instant (the end of
/// year 9999) as that instant.
fn timestamp(t: SystemTime) -> Timestamp {
    if t <= UNIX_EPOCH {
        return Timestamp::UNIX_EPOCH;
    }
    Timestamp::try_from(t).unwrap_or(Timestamp::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_251_872_123);
        assert_eq!(rfc3339(t), "2026-11-21T09:04:32.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
        let end = UNIX_EPOCH + Duration::from_secs(1_767_225_599);
        assert_eq!(rfc3339(end), "2025-12-31T23:59:59.000Z");
    }

    #[test]
    fn labels_keep_their_width_and_truncate_to_the_millisecond() {
        // 999.999999 ms stays in its millisecond (truncated, as subsec_millis did), so a label
        // never reads later than the instant it names.
        let t = UNIX_EPOCH + Duration::new(1_767_225_599, 999_999_999);
        assert_eq!(rfc3339(t), "2025-12-31T23:59:59.999Z");
        let t = UNIX_EPOCH + Duration::new(1_767_225_599, 1_000_000);
        assert_eq!(rfc3339(t), "2025-12-31T23:59:59.001Z");
        // Before 1970 reads as the epoch.
        let before = UNIX_EPOCH - Duration::from_secs(86_400);
        assert_eq!(rfc3339(before), "1970-01-01T00:00:00.000Z");
        // Every label is 24 characters: the store sorts them as text.
        for secs in [0u64, 9, 86_399, 951_782_400, 4_102_444_800] {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(secs)).len(), 24);
        }
    }

    #[test]
    fn stamps_and_reformatting() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_251_872_123);
        assert_eq!(format_utc(t, "%Y%m%d-%H%M%S"), "20261121-090432");
        assert_eq!(format_utc(t, "%Y%m%dT%H%M%S"), "20261121T090432");
        assert_eq!(format_utc(t, "%Y%m%d%H%M%S%3f"), "20261121090432123");
        // A directive jiff does not know falls back to the label, not a panic.
        assert_eq!(format_utc(t, "%J"), "2026-11-21T09:04:32.123Z");

        let iso = "%Y-%m-%dT%H:%M:%S";
        assert_eq!(
            reformat_utc("2026-11-21T09:04:32.123Z", iso).as_deref(),
            Some("2026-11-21T09:04:32")
        );
        // Another offset is moved to UTC; a fraction is dropped, not rounded up.
        assert_eq!(
            reformat_utc("2026-11-21T10:04:32.999+01:00", iso).as_deref(),
            Some("2026-11-21T09:04:32")
        );
        assert_eq!(reformat_utc("yesterday", iso), None);
        assert_eq!(reformat_utc("", iso), None);
    }
}
