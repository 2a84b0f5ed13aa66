//! Any other target: the OS monotonic clock, in nanoseconds since first use.

use std::sync::OnceLock;
use std::time::Instant;

pub(super) const SOURCE: super::Source = super::Source::OsMonotonic;

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

#[inline(always)]
pub(super) fn fast() -> u64 {
    // +1 keeps the first reading away from zero, which pulse uses as "no baseline".
    epoch().elapsed().as_nanos() as u64 + 1
}

#[inline(always)]
pub(super) fn mid() -> (u64, u32) {
    (fast(), super::CPU_UNKNOWN)
}

#[inline(always)]
pub(super) fn hard() -> (u64, u32) {
    (fast(), super::CPU_UNKNOWN)
}

pub(super) fn nominal_ticks_per_ns() -> Option<f64> {
    Some(1.0)
}
