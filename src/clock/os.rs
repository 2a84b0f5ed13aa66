//! The OS monotonic clock, in nanoseconds since first use: the fallback on every target.

use std::sync::OnceLock;
use std::time::Instant;

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Nanoseconds since the first call, plus one (so no reading is ever 0, which pulse
/// uses as "no baseline").
#[inline]
pub(super) fn now() -> u64 {
    epoch().elapsed().as_nanos() as u64 + 1
}
