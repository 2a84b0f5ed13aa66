//! Where the hardware counter's frequency comes from: stated by the platform, or
//! measured against the OS clock. Pure, like [`decide`](super::decide): every OS and
//! architecture is a table row in the tests.

use super::Facts;

/// Where the hardware counter's frequency comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frequency {
    /// The platform states it; calibration keeps it when its own measurement agrees
    /// within 1%, and uses the measurement otherwise.
    Stated {
        /// The stated frequency in Hz.
        hz: u64,
        /// Who states it (`CNTFRQ_EL0`, `sysctl machdep.tsc.frequency`).
        by: &'static str,
    },
    /// Nothing states it: calibration measures it against the OS clock.
    Measured {
        /// What the OS clock (`std::time::Instant`) reads on this OS.
        against: &'static str,
    },
}

impl core::fmt::Display for Frequency {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Frequency::Stated { hz, by } => write!(f, "{by} states {hz} Hz"),
            Frequency::Measured { against } => write!(f, "measured against {against}"),
        }
    }
}

/// Where the frequency of the hardware counter comes from on the platform the facts
/// describe: Windows on x86_64 measures it against `QueryPerformanceCounter`, Apple
/// silicon states it in `CNTFRQ_EL0`, and so on (`frequency_source_table` in
/// `platform::tests` has every case).
pub fn frequency(f: &Facts) -> Frequency {
    let stated_by = match (f.arch.as_str(), f.os.as_str()) {
        ("aarch64", _) => Some("CNTFRQ_EL0"),
        ("x86_64", "macos") => Some("sysctl machdep.tsc.frequency"),
        _ => None,
    };
    match (stated_by, f.counter_hz) {
        (Some(by), Some(hz)) if hz > 0 => Frequency::Stated { hz, by },
        _ => Frequency::Measured {
            against: os_clock(&f.os),
        },
    }
}

/// What `std::time::Instant` reads on each OS.
fn os_clock(os: &str) -> &'static str {
    match os {
        "linux" | "android" => "CLOCK_MONOTONIC",
        "windows" => "QueryPerformanceCounter",
        "macos" | "ios" => "mach_absolute_time",
        _ => "the OS monotonic clock",
    }
}
