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
#[path = "aarch64.rs"]
mod arch;
#[cfg(target_arch = "x86_64")]
#[path = "x86_64.rs"]
mod arch;
mod os;

use crate::platform::{ClockChoice, Decision, Facts};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

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

/// Every clock but the hardware one, and the first read that decides.
#[inline(never)]
fn read_other(mode: Mode) -> Stamp {
    match SELECTED.load(Relaxed) {
        OS => Stamp {
            ticks: os::now(),
            cpu: CPU_UNKNOWN,
        },
        MOCK => Stamp {
            ticks: MOCK_TICKS.load(Relaxed),
            cpu: CPU_UNKNOWN,
        },
        _ => {
            select();
            read(mode)
        }
    }
}

const UNDECIDED: u8 = 0;
const HARDWARE: u8 = 1;
const OS: u8 = 2;
const MOCK: u8 = 3;

/// The clock every read uses, set once.
static SELECTED: AtomicU8 = AtomicU8::new(UNDECIDED);
/// The configured choice (`ClockChoice as u8`), read when deciding.
static CHOICE: AtomicU8 = AtomicU8::new(u8::MAX);
static MOCK_TICKS: AtomicU64 = AtomicU64::new(1);

struct Selected {
    facts: Facts,
    decision: Decision,
}

fn selection() -> &'static Selected {
    static SELECTION: OnceLock<Selected> = OnceLock::new();
    SELECTION.get_or_init(|| {
        let choice = match CHOICE.load(Relaxed) {
            0 => ClockChoice::Auto,
            1 => ClockChoice::Hardware,
            2 => ClockChoice::Os,
            _ => choice_from_env(),
        };
        let facts = crate::platform::gather();
        let decision = crate::platform::decide(&facts, choice);
        let _ = SELECTED.compare_exchange(
            UNDECIDED,
            if decision.hardware { HARDWARE } else { OS },
            Relaxed,
            Relaxed,
        );
        Selected { facts, decision }
    })
}

/// `LATTE_CLOCK=os|hardware|tsc|auto`; anything else (or unset) is `auto`.
fn choice_from_env() -> ClockChoice {
    match std::env::var("LATTE_CLOCK")
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Ok("os") => ClockChoice::Os,
        Ok("hardware" | "tsc") => ClockChoice::Hardware,
        _ => ClockChoice::Auto,
    }
}

#[cold]
fn select() {
    selection();
}

/// Chooses the clock: call before anything records (the agent's builder does).
/// `LATTE_CLOCK=os|tsc|auto` in the environment does the same when this is not called.
///
/// Every sample must come from one clock, so the choice cannot change once made:
/// asking for a different one afterwards is [`Error::ClockAlreadySelected`](crate::Error::ClockAlreadySelected).
///
/// ```
/// use latte::platform::ClockChoice;
/// let chosen = latte::clock::decision().hardware;
/// // Re-asking for what was decided is fine; a change is refused.
/// let same = if chosen { ClockChoice::Hardware } else { ClockChoice::Os };
/// assert!(latte::clock::select_clock(same).is_ok());
/// let other = if chosen { ClockChoice::Os } else { ClockChoice::Hardware };
/// assert!(latte::clock::select_clock(other).is_err() || !chosen);
/// ```
pub fn select_clock(choice: ClockChoice) -> Result<(), crate::Error> {
    if SELECTED.load(Relaxed) == UNDECIDED {
        CHOICE.store(choice as u8, Relaxed);
        selection();
    }
    let hardware = SELECTED.load(Relaxed) == HARDWARE;
    let wanted = crate::platform::decide(&selection().facts, choice).hardware;
    if SELECTED.load(Relaxed) == MOCK || hardware == wanted {
        Ok(())
    } else {
        Err(crate::Error::ClockAlreadySelected { hardware })
    }
}

/// Which clock latte reads, and why (decided on first use).
pub fn decision() -> &'static Decision {
    &selection().decision
}

/// The platform facts gathered when the clock was chosen.
pub fn facts() -> &'static Facts {
    &selection().facts
}

/// Test support: from now on every read returns the mock counter. Only possible
/// before anything has read the clock.
#[doc(hidden)]
pub fn __install_mock() -> bool {
    matches!(
        SELECTED.compare_exchange(UNDECIDED, MOCK, Relaxed, Relaxed),
        Ok(_) | Err(MOCK)
    )
}

/// Test support: sets the mock counter.
#[doc(hidden)]
pub fn __set_mock(ticks: u64) {
    MOCK_TICKS.store(ticks, Relaxed);
}

/// The counter the decided clock reads.
///
/// ```
/// let source = latte::clock::source();
/// println!("latte reads {source}");
/// ```
pub fn source() -> Source {
    select();
    match SELECTED.load(Relaxed) {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        HARDWARE => arch::SOURCE,
        MOCK => Source::Mock,
        _ => Source::OsMonotonic,
    }
}

/// The counter's frequency as the hardware states it (ticks per ns), where it does:
/// `CNTFRQ_EL0` on aarch64, exactly 1 for the nanosecond OS clock, `None` for the TSC.
pub(crate) fn nominal_ticks_per_ns() -> Option<f64> {
    match source() {
        Source::OsMonotonic | Source::Mock => Some(1.0),
        _ => hardware_nominal_hz().map(|hz| hz as f64 / 1e9),
    }
}

/// Whether this target has a hardware counter latte can read.
pub(crate) const fn hardware_ticks_available() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// A Fast read of the hardware counter, whatever clock is selected (for timing it).
pub(crate) fn hardware_ticks() -> u64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    return arch::fast();
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return os::now();
}

/// The hardware counter's stated frequency in Hz (aarch64 `CNTFRQ_EL0`).
pub(crate) fn hardware_nominal_hz() -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    return Some(arch::frequency_hz());
    #[cfg(not(target_arch = "aarch64"))]
    return None;
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
    /// A test's mock counter.
    #[doc(hidden)]
    Mock,
}

impl core::fmt::Display for Source {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Source::Tsc => "TSC",
            Source::ArmGenericTimer => "CNTVCT_EL0",
            Source::OsMonotonic => "OS monotonic clock",
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
}
