//! Any other OS: only what the CPU itself tells (CPUID, in `gather.rs`) is known.

use crate::platform::Facts;

/// Nothing beyond CPUID to add.
pub(in crate::platform) fn read(_facts: &mut Facts) {}

/// Unknown here.
pub(crate) fn current_clocksource() -> Option<String> {
    None
}
