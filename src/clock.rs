//! Time, as the rest of `aic` sees it: a [`Clock`] handed in by the caller,
//! never read from the system in the middle of a stage.
//!
//! Everything that stamps a row (the compilation log, session steps, the cache's
//! "last used" times) or decides an expiry (the prompt and spec caches) asks the
//! clock of its [`Host`](crate::host::Host). A compile's *output* never depends
//! on the clock: only timing fields (`durationMs`) and stored timestamps do.

use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Nanoseconds since the Unix epoch (0 for a clock set before it).
    fn now_ns(&self) -> i64;

    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64 {
        u64::try_from(self.now_ns() / 1_000_000).unwrap_or(0)
    }

    /// Seconds since the Unix epoch.
    fn now_secs(&self) -> u64 {
        u64::try_from(self.now_ns() / 1_000_000_000).unwrap_or(0)
    }
}

/// The system's wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ns(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }
}

/// ISO 8601 UTC with milliseconds and `Z` for Unix milliseconds
/// (`2026-12-01T21:52:50.123Z`); empty for a time out of range.
pub fn iso(ms: u64) -> String {
    jiff::Timestamp::from_millisecond(i64::try_from(ms).unwrap_or(i64::MAX))
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_iso_8601_with_milliseconds() {
        assert_eq!(iso(1_764_626_000_123), "2025-12-01T21:53:20.123Z");
    }

    #[test]
    fn units_agree() {
        let clock = SystemClock;
        let (secs, ms) = (clock.now_secs(), clock.now_ms());
        assert!(ms / 1000 >= secs && ms / 1000 - secs <= 1);
    }

    #[test]
    fn the_system_clock_is_after_2026() {
        assert!(SystemClock.now_secs() > 1_767_225_600);
    }
}
