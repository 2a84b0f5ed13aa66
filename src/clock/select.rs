//! The one-time choice of clock: decided from the platform facts on the first read (or
//! forced by `LATTE_CLOCK` or the agent's builder), then fixed for the process, so every
//! sample comes from one clock.

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use super::arch;
use super::{CPU_UNKNOWN, Mode, Source, Stamp, hardware_counter, os, read};
use crate::error::Error;
use crate::platform::{self, ClockChoice, Decision, Facts};
use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

const UNDECIDED: u8 = 0;
pub(super) const HARDWARE: u8 = 1;
const OS: u8 = 2;
const MOCK: u8 = 3;

/// The clock every read uses, set once.
pub(super) static SELECTED: AtomicU8 = AtomicU8::new(UNDECIDED);
/// The configured choice (`ClockChoice as u8`), read when deciding.
static CHOICE: AtomicU8 = AtomicU8::new(u8::MAX);
static MOCK_TICKS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The mock core this thread runs on: the offset its counter reads at (added,
    /// wrapping, to the mock counter) and the CPU id its Mid and Hard reads return.
    static MOCK_CORE: Cell<(u64, u32)> = const { Cell::new((0, CPU_UNKNOWN)) };
}

/// Every clock but the hardware one, and the first read that decides.
#[inline(never)]
pub(super) fn read_other(mode: Mode) -> Stamp {
    match SELECTED.load(Relaxed) {
        OS => Stamp {
            ticks: os::now(),
            cpu: CPU_UNKNOWN,
        },
        MOCK => {
            let (offset, cpu) = MOCK_CORE.get();
            Stamp {
                ticks: MOCK_TICKS.load(Relaxed).wrapping_add(offset),
                cpu: if mode == Mode::Fast { CPU_UNKNOWN } else { cpu },
            }
        }
        _ => {
            select();
            read(mode)
        }
    }
}

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
        let facts = platform::gather(hardware_counter());
        let decision = platform::decide(&facts, choice);
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

/// Chooses the clock (the agent's [`Builder::clock`](crate::Builder::clock)): it must
/// happen before anything records. Every sample must come from one clock, so the
/// choice cannot change once made: asking for a different one afterwards is
/// [`Error::ClockAlreadySelected`].
pub(crate) fn select_clock(choice: ClockChoice) -> Result<(), Error> {
    if SELECTED.load(Relaxed) == UNDECIDED {
        CHOICE.store(choice as u8, Relaxed);
        selection();
    }
    let hardware = SELECTED.load(Relaxed) == HARDWARE;
    let wanted = platform::decide(&selection().facts, choice).hardware;
    if SELECTED.load(Relaxed) == MOCK || hardware == wanted {
        Ok(())
    } else {
        Err(Error::ClockAlreadySelected { hardware })
    }
}

/// Which clock latte reads, and why (decided on first use).
///
/// ```
/// let decision = latte::clock::decision();
/// println!("hardware counter: {} ({})", decision.hardware, decision.reason);
/// ```
pub fn decision() -> &'static Decision {
    &selection().decision
}

/// The platform facts gathered when the clock was chosen.
pub(crate) fn facts() -> &'static Facts {
    &selection().facts
}

/// From now on every read returns the mock counter. Only possible before anything
/// has read the clock.
#[cfg(feature = "test-hooks")]
pub(crate) fn install_mock() -> bool {
    matches!(
        SELECTED.compare_exchange(UNDECIDED, MOCK, Relaxed, Relaxed),
        Ok(_) | Err(MOCK)
    )
}

/// Sets the mock counter.
#[cfg(feature = "test-hooks")]
pub(crate) fn set_mock(ticks: u64) {
    MOCK_TICKS.store(ticks, Relaxed);
}

/// Puts the calling thread on a mock core whose counter reads `offset` ticks ahead of
/// the mock counter (wrapping: `offset.wrapping_neg()` reads behind) and whose Mid and
/// Hard reads return `cpu`.
#[cfg(feature = "test-hooks")]
pub(crate) fn set_mock_core(offset: u64, cpu: u32) {
    MOCK_CORE.set((offset, cpu));
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
        #[cfg(feature = "test-hooks")]
        MOCK => Source::Mock,
        _ => Source::OsMonotonic,
    }
}
