//! Timer reads: the three [`Mode`]s and the raw counter behind them.
//!
//! | mode | x86_64 | aarch64 | other targets |
//! |------|--------|---------|---------------|
//! | [`Mode::Fast`] | `RDTSC` | `MRS CNTVCT_EL0` | OS monotonic clock (ns) |
//! | [`Mode::Mid`]  | `RDTSCP` | `ISB; MRS CNTVCT_EL0` | OS monotonic clock (ns) |
//! | [`Mode::Hard`] | `LFENCE; RDTSCP` | `ISB; MRS CNTVCT_EL0; ISB` | OS monotonic clock (ns) |
//!
//! `RDTSC` does not wait for earlier instructions, so Fast can be read before the work
//! it is meant to follow has finished; it costs least. `RDTSCP` waits for earlier
//! instructions to execute, and also returns `IA32_TSC_AUX`, which Linux fills with the
//! CPU (and NUMA node) number: Mid and Hard use it to flag a scope that started on one
//! CPU and stopped on another. Hard adds `LFENCE` so that earlier loads have completed
//! too. These are the same three strengths as the C++ original.
//!
//! The hot path stores raw ticks; conversion to time happens on the analysis side.

#[cfg(target_arch = "aarch64")]
mod aarch64;
mod named;
mod os;
mod select;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
use aarch64 as arch;
#[cfg(target_arch = "x86_64")]
use x86_64 as arch;

pub use crate::platform::{ClockChoice, Decision};
pub use select::{decision, source};
// For the macros only (`__private`). Also exported here, hidden, because rustc names a
// type by its bare name in errors only when a public path to it exists outside a
// `#[doc(hidden)]` module: a misspelt mode then reads "not found in `FastMidOrHard`".
#[doc(hidden)]
pub use named::FastMidOrHard;
// The agent reads the facts and the builder chooses the clock.
#[cfg_attr(not(feature = "agent"), allow(unused_imports))]
pub(crate) use select::{facts, select_clock};
#[cfg(feature = "test-hooks")]
pub(crate) use select::{install_mock, set_mock, set_mock_core};

use select::read_other;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use select::{HARDWARE, SELECTED};
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use std::sync::atomic::Ordering::Relaxed;

/// How strongly a timer read is ordered against the instructions around it.
///
/// A scope's start and stop modes are chosen independently; the pair travels with
/// every sample so calibration can subtract the overhead of exactly that pair.
///
/// ```
/// use latte::Mode;
/// assert!(Mode::Fast < Mode::Hard);
/// assert_eq!(Mode::ALL.len(), 3);
/// assert_eq!(Mode::Mid.to_string(), "Mid");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Mode {
    /// Unordered counter read (`RDTSC`): cheapest.
    #[default]
    Fast = 0,
    /// Read that waits for earlier instructions (`RDTSCP`), with the CPU id.
    Mid = 1,
    /// Fully ordered read (`LFENCE; RDTSCP`), with the CPU id.
    Hard = 2,
}

impl Mode {
    /// The three modes, weakest first.
    pub const ALL: [Mode; 3] = [Mode::Fast, Mode::Mid, Mode::Hard];

    /// One-letter label used in report tables (`F`, `M`, `H`).
    pub const fn letter(self) -> char {
        match self {
            Mode::Fast => 'F',
            Mode::Mid => 'M',
            Mode::Hard => 'H',
        }
    }

    pub(crate) const fn from_bits(bits: u64) -> Mode {
        match bits & 3 {
            0 => Mode::Fast,
            1 => Mode::Mid,
            _ => Mode::Hard,
        }
    }
}

impl core::fmt::Display for Mode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Mode::Fast => "Fast",
            Mode::Mid => "Mid",
            Mode::Hard => "Hard",
        })
    }
}

/// The CPU id reported when the read does not know it (Fast mode, non-x86 targets).
pub const CPU_UNKNOWN: u32 = u32::MAX;

/// One timer read: the counter value and, where the mode provides it, the CPU id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Counter ticks (TSC cycles on x86_64, generic-timer ticks on aarch64,
    /// nanoseconds on the portable fallback).
    pub ticks: u64,
    /// `IA32_TSC_AUX` as returned by `RDTSCP` (on Linux: `node << 12 | cpu`), or
    /// [`CPU_UNKNOWN`].
    pub cpu: u32,
}

/// Reads the counter in the given mode.
///
/// This is the raw read the recorder uses; it is public so benchmarks and users can
/// compare against it. On first use it decides which clock to read (see
/// [`decision`]); afterwards the hardware path is one relaxed load and a compare in
/// front of the counter instruction.
///
/// ```
/// use latte::{clock, Mode};
/// let a = clock::read(Mode::Hard);
/// let b = clock::read(Mode::Hard);
/// assert!(b.ticks.wrapping_sub(a.ticks) < 1 << 40);
/// ```
#[inline(always)]
pub fn read(mode: Mode) -> Stamp {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if SELECTED.load(Relaxed) == HARDWARE {
        return hardware_read(mode);
    }
    read_other(mode)
}

/// Reads the counter in Fast mode (ticks only).
///
/// ```
/// let t = latte::clock::ticks();
/// assert!(latte::clock::ticks().wrapping_sub(t) < 1 << 40);
/// ```
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if SELECTED.load(Relaxed) == HARDWARE {
        return arch::fast();
    }
    read_other(Mode::Fast).ticks
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn hardware_read(mode: Mode) -> Stamp {
    match mode {
        Mode::Fast => Stamp {
            ticks: arch::fast(),
            cpu: CPU_UNKNOWN,
        },
        Mode::Mid => {
            let (ticks, cpu) = arch::mid();
            Stamp { ticks, cpu }
        }
        Mode::Hard => {
            let (ticks, cpu) = arch::hard();
            Stamp { ticks, cpu }
        }
    }
}

/// The counter's frequency as the platform states it (ticks per ns), where it does
/// ([`platform::frequency`](crate::platform::frequency)): `CNTFRQ_EL0` on aarch64,
/// `sysctl machdep.tsc.frequency` on x86_64 macOS, exactly 1 for the nanosecond OS
/// clock; `None` where calibration must measure it (the TSC elsewhere).
pub(crate) fn nominal_ticks_per_ns() -> Option<f64> {
    match source() {
        Source::OsMonotonic => Some(1.0),
        #[cfg(feature = "test-hooks")]
        Source::Mock => Some(1.0),
        _ => match crate::platform::frequency(facts()) {
            crate::platform::Frequency::Stated { hz, .. } => Some(hz as f64 / 1e9),
            crate::platform::Frequency::Measured { .. } => None,
        },
    }
}

/// What platform detection needs to know of the hardware counter: how to read it
/// (whatever clock is selected, to time a read) and its stated frequency.
fn hardware_counter() -> crate::platform::Counter {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    let read: Option<fn() -> u64> = Some(arch::fast);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let read: Option<fn() -> u64> = None;
    #[cfg(target_arch = "aarch64")]
    let hz = Some(arch::frequency_hz());
    #[cfg(not(target_arch = "aarch64"))]
    let hz = None;
    crate::platform::Counter { read, hz }
}

/// The hardware or OS counter a build reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// x86_64 time-stamp counter (`RDTSC`/`RDTSCP`).
    Tsc,
    /// aarch64 virtual counter `CNTVCT_EL0`.
    ArmGenericTimer,
    /// The OS monotonic clock (`std::time::Instant`), in nanoseconds.
    OsMonotonic,
    /// A test's mock counter (feature `test-hooks`).
    #[cfg(feature = "test-hooks")]
    Mock,
}

impl core::fmt::Display for Source {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Source::Tsc => "TSC",
            Source::ArmGenericTimer => "CNTVCT_EL0",
            Source::OsMonotonic => "OS monotonic clock",
            #[cfg(feature = "test-hooks")]
            Source::Mock => "mock counter",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_advances() {
        for mode in Mode::ALL {
            let a = read(mode);
            let b = read(mode);
            // Same thread, back to back: the counter never goes backwards by much and
            // never jumps by more than a generous second of ticks.
            let d = b.ticks.wrapping_sub(a.ticks);
            assert!(d < 1 << 40, "{mode}: implausible delta {d}");
        }
    }

    #[test]
    fn ordered_modes_report_a_cpu_on_x86() {
        if source() == Source::Tsc {
            assert_ne!(read(Mode::Mid).cpu, CPU_UNKNOWN);
            assert_ne!(read(Mode::Hard).cpu, CPU_UNKNOWN);
        }
        assert_eq!(read(Mode::Fast).cpu, CPU_UNKNOWN);
    }

    #[test]
    fn mode_bits_round_trip() {
        for mode in Mode::ALL {
            assert_eq!(Mode::from_bits(mode as u64), mode);
        }
    }

    #[test]
    fn this_machine_gathers_facts_and_explains_its_choice() {
        let facts = facts();
        assert_eq!(facts.arch, std::env::consts::ARCH);
        assert!(facts.os_clock_read_ns.is_some_and(|ns| ns > 0.0));
        let decision = decision();
        assert!(!decision.reason.is_empty());
        // What was decided is what is read (unless LATTE_CLOCK forced the OS clock).
        assert_eq!(decision.hardware, source() != Source::OsMonotonic);
    }

    /// The facts gathered here name this OS, and the frequency source follows from them.
    #[test]
    fn this_machine_names_its_os_and_frequency_source() {
        let facts = facts();
        assert_eq!(facts.os, std::env::consts::OS);
        let expected_against = match std::env::consts::OS {
            "linux" => "CLOCK_MONOTONIC",
            "windows" => "QueryPerformanceCounter",
            _ => "",
        };
        if cfg!(target_arch = "x86_64") && !expected_against.is_empty() {
            assert_eq!(
                crate::platform::frequency(facts),
                crate::platform::Frequency::Measured {
                    against: expected_against
                }
            );
        }
        if cfg!(target_os = "linux") {
            assert!(facts.kernel_clocksource.is_some(), "{facts:?}");
        } else {
            assert_eq!(facts.kernel_clocksource, None);
        }
        if cfg!(target_arch = "x86_64") {
            assert!(facts.cpu_model.is_some(), "CPUID's brand string: {facts:?}");
        }
    }
}
