//! Windows: CPUID (read in `gather.rs`) is what latte knows. Windows does not say
//! which counter its own clock (`QueryPerformanceCounter`) reads, nor expose a
//! governor or isolated CPUs: those facts stay unknown rather than guessed.

use crate::platform::Facts;

/// Nothing beyond CPUID to add.
pub(in crate::platform) fn read(_facts: &mut Facts) {}

/// Windows names no kernel clocksource.
pub(crate) fn current_clocksource() -> Option<String> {
    None
}
