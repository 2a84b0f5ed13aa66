//! The 64-bit sample word and the stack tag word. The layout is private: readers see
//! [`Sample`] through its accessors, and build one (in tests, say) with [`Sample::new`].
//!
//! ```text
//! sample:  63   59 58 57 56  55 54 53 52 51                                  0
//!          [zero] [off] [M] [stop] [start] [ delta ticks (52 bits)           ]
//!                   |    |    start = 3: not a scope (stop = 0 pulse, 1 record)
//!                   |    migrated: Start and Stop read different CPU ids
//!                   off the stack: 0 a stack scope, 1 a Timer, 2 a span's busy time
//!
//! stack tag: [O] [ 0 ] [start mode at 52..54] [cpu id, 20 bits, 32..52] [id, 32 bits]
//!             O (bit 63): opened while recording was off (`switch.rs`)
//! ```
//!
//! Keeping the start mode at the same bit position in the tag and in the sample makes
//! building a sample one AND and two ORs. A delta needs at most 52 bits (about 10 days
//! of cycles at 5 GHz); anything larger means the counter went backwards or jumped, and
//! is discarded and counted instead of stored.

use crate::clock::{Mode, Stamp};

pub(crate) const DELTA_MASK: u64 = (1 << 52) - 1;
pub(crate) const START_SHIFT: u32 = 52;
pub(crate) const STOP_SHIFT: u32 = 54;
pub(crate) const START_MASK: u64 = 3 << START_SHIFT;
pub(crate) const MIGRATED: u64 = 1 << 56;
pub(crate) const PULSE: u64 = 3 << START_SHIFT;
pub(crate) const RECORD: u64 = 3 << START_SHIFT | 1 << STOP_SHIFT;
pub(crate) const CPU_SHIFT: u32 = 32;
pub(crate) const CPU_MASK: u64 = (1 << 20) - 1;
/// In a stack tag: the scope was opened while recording was off, and records nothing.
pub(crate) const OFF: u64 = 1 << 63;
const HOW_SHIFT: u32 = 57;
const HOW_MASK: u64 = 3 << HOW_SHIFT;
/// In a scope sample: measured off the stack, by a [`Timer`](crate::Timer) (wall time,
/// nothing known of what ran inside it).
pub(crate) const TIMER: u64 = 1 << HOW_SHIFT;
/// In a scope sample: a `tracing` span's busy time (the sum of its enter/exit pairs,
/// or one of them), not one Start/Stop pair's wall time.
pub(crate) const BUSY: u64 = 2 << HOW_SHIFT;

/// The meta bits of a scope sample whose Start wrote `tag` and whose Stop read `now`
/// in `mode`.
#[inline(always)]
pub(crate) fn scope_meta(tag: u64, mode: Mode, now: Stamp) -> u64 {
    let start_mode = tag & START_MASK;
    // Known only when both reads came from RDTSCP. Inlined at a `latte_stop!`, `mode`
    // is a constant: a Fast Stop compiles no migration check at all.
    let migrated = mode != Mode::Fast
        && start_mode != (Mode::Fast as u64) << START_SHIFT
        && (tag >> CPU_SHIFT) & CPU_MASK != u64::from(now.cpu) & CPU_MASK;
    start_mode | (mode as u64) << STOP_SHIFT | if migrated { MIGRATED } else { 0 }
}

/// The stack tag of a Start of `idx` read in `mode` at `now`.
#[inline(always)]
pub(crate) fn tag(idx: u32, mode: Mode, now: Stamp) -> u64 {
    u64::from(idx) | (u64::from(now.cpu) & CPU_MASK) << CPU_SHIFT | (mode as u64) << START_SHIFT
}

/// One recorded sample: a tick delta plus how it was taken (one word in the ring; the
/// layout is private).
///
/// ```
/// use latte::collect::{Sample, SampleKind};
/// use latte::{Id, Mode};
/// static ID: Id = Id::new("doc_sample");
/// latte::start(&ID, Mode::Mid);
/// latte::stop(&ID, Mode::Hard);
/// let capture = latte::capture();
/// let sample = capture.component("doc_sample").unwrap().samples[0];
/// assert_eq!(sample.kind(), SampleKind::Scope { start: Mode::Mid, stop: Mode::Hard });
/// assert!(sample.ticks() < 1 << 32);
///
/// let made = Sample::new(120, SampleKind::Pulse, false).unwrap();
/// assert_eq!((made.ticks(), made.kind(), made.migrated()), (120, SampleKind::Pulse, false));
/// assert!(Sample::new(Sample::MAX_TICKS + 1, SampleKind::Recorded, false).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sample(u64);

/// How a [`Sample`] was taken; calibration subtracts the overhead of its kind.
///
/// Only a [`Scope`](SampleKind::Scope) ran on the thread's stack, so only its node of
/// the call tree knows what ran inside it and has a self time; a
/// [`Timer`](SampleKind::Timer) and a span's [`Busy`](SampleKind::Busy) time are
/// scopes measured another way, corrected by the same overhead cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleKind {
    /// A Start/Stop pair on the thread's stack with these timer modes (the macros, a
    /// scope guard, a sync `#[timed]` function).
    Scope {
        /// Mode of the Start read.
        start: Mode,
        /// Mode of the Stop read.
        stop: Mode,
    },
    /// A scope measured off the stack: a [`Timer`](crate::Timer), an `async`
    /// `#[timed]` function, a `tracing` span's lifetime. Wall time from its start to
    /// its stop.
    Timer {
        /// Mode of the start read.
        start: Mode,
        /// Mode of the stop read.
        stop: Mode,
    },
    /// A `tracing` span's busy time: the sum of its enter/exit pairs (or one pair, a
    /// poll, under `"<name> (poll)"`), not the wall time from its first enter to its
    /// last exit.
    Busy {
        /// Mode of each enter read.
        start: Mode,
        /// Mode of each exit read.
        stop: Mode,
    },
    /// The delta between two pulses of the same id on the same thread.
    Pulse,
    /// A value handed to [`record`](crate::record) by the user.
    Recorded,
}

impl SampleKind {
    /// The timer modes of a scope of any kind (stack, timer, busy); `None` for a
    /// pulse or a recorded value.
    ///
    /// ```
    /// use latte::collect::SampleKind;
    /// use latte::Mode::{Fast, Hard};
    /// assert_eq!(SampleKind::Timer { start: Fast, stop: Hard }.modes(), Some((Fast, Hard)));
    /// assert_eq!(SampleKind::Pulse.modes(), None);
    /// ```
    pub const fn modes(self) -> Option<(Mode, Mode)> {
        match self {
            SampleKind::Scope { start, stop }
            | SampleKind::Timer { start, stop }
            | SampleKind::Busy { start, stop } => Some((start, stop)),
            SampleKind::Pulse | SampleKind::Recorded => None,
        }
    }
}

impl Sample {
    /// The largest delta latte stores (2^52 - 1 ticks, about 10 days at 5 GHz); longer
    /// (or negative) deltas are counted as clock anomalies instead.
    pub const MAX_TICKS: u64 = DELTA_MASK;

    /// A sample of `ticks` taken as `kind`; `None` when `ticks` exceeds
    /// [`MAX_TICKS`](Sample::MAX_TICKS).
    pub const fn new(ticks: u64, kind: SampleKind, migrated: bool) -> Option<Sample> {
        if ticks > DELTA_MASK {
            return None;
        }
        let meta = match kind {
            SampleKind::Pulse => PULSE,
            SampleKind::Recorded => RECORD,
            SampleKind::Scope { start, stop }
            | SampleKind::Timer { start, stop }
            | SampleKind::Busy { start, stop } => {
                let how = match kind {
                    SampleKind::Timer { .. } => TIMER,
                    SampleKind::Busy { .. } => BUSY,
                    _ => 0,
                };
                (start as u64) << START_SHIFT | (stop as u64) << STOP_SHIFT | how
            }
        };
        Some(Sample(ticks | meta | if migrated { MIGRATED } else { 0 }))
    }

    /// Rebuilds a sample from the word stored in the ring.
    pub(crate) const fn from_bits(bits: u64) -> Sample {
        Sample(bits)
    }

    /// The bits that say how the sample was taken: equal exactly when the kinds are,
    /// for a reader that groups samples by kind without decoding each one.
    #[inline]
    pub(crate) const fn kind_bits(self) -> u64 {
        self.0 & (START_MASK | 3 << STOP_SHIFT | HOW_MASK)
    }

    /// The word stored in the ring (for tests that fold words by hand).
    #[cfg(test)]
    pub(crate) const fn to_bits(self) -> u64 {
        self.0
    }

    /// The measured delta in counter ticks (cycles on x86_64).
    pub const fn ticks(self) -> u64 {
        self.0 & DELTA_MASK
    }

    /// Whether Start and Stop ran on different CPUs (known in Mid and Hard modes only).
    pub const fn migrated(self) -> bool {
        self.0 & MIGRATED != 0
    }

    /// How the sample was taken.
    pub const fn kind(self) -> SampleKind {
        let start = (self.0 >> START_SHIFT) & 3;
        let stop = (self.0 >> STOP_SHIFT) & 3;
        let (start_mode, stop_mode) = (Mode::from_bits(start), Mode::from_bits(stop));
        match (start, stop, self.0 & HOW_MASK) {
            (3, 0, _) => SampleKind::Pulse,
            (3, _, _) => SampleKind::Recorded,
            (_, _, TIMER) => SampleKind::Timer {
                start: start_mode,
                stop: stop_mode,
            },
            (_, _, BUSY) => SampleKind::Busy {
                start: start_mode,
                stop: stop_mode,
            },
            _ => SampleKind::Scope {
                start: start_mode,
                stop: stop_mode,
            },
        }
    }
}

impl core::fmt::Debug for Sample {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sample")
            .field("ticks", &self.ticks())
            .field("kind", &self.kind())
            .field("migrated", &self.migrated())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        for start in Mode::ALL {
            for stop in Mode::ALL {
                let bits = 1234 | (start as u64) << START_SHIFT | (stop as u64) << STOP_SHIFT;
                let s = Sample::from_bits(bits);
                assert_eq!(s.kind(), SampleKind::Scope { start, stop });
                assert_eq!(s.ticks(), 1234);
                assert!(!s.migrated());
            }
        }
        assert_eq!(Sample::from_bits(PULSE | 7).kind(), SampleKind::Pulse);
        assert_eq!(Sample::from_bits(RECORD | 7).kind(), SampleKind::Recorded);
        assert!(Sample::from_bits(MIGRATED | 7).migrated());
        assert_eq!(
            Sample::from_bits(MIGRATED | DELTA_MASK).ticks(),
            Sample::MAX_TICKS
        );
        for kind in [SampleKind::Pulse, SampleKind::Recorded] {
            for migrated in [false, true] {
                let s = Sample::new(77, kind, migrated).unwrap();
                assert_eq!((s.ticks(), s.kind(), s.migrated()), (77, kind, migrated));
            }
        }
        let scope = SampleKind::Scope {
            start: Mode::Hard,
            stop: Mode::Mid,
        };
        assert_eq!(
            Sample::new(Sample::MAX_TICKS, scope, true).unwrap().kind(),
            scope
        );
        assert_eq!(Sample::new(Sample::MAX_TICKS + 1, scope, true), None);
        // Timers and busy times keep their modes and are told apart from stack scopes,
        // in the kind and in the bits a reader groups samples by.
        for kind in [
            SampleKind::Timer {
                start: Mode::Mid,
                stop: Mode::Fast,
            },
            SampleKind::Busy {
                start: Mode::Fast,
                stop: Mode::Hard,
            },
        ] {
            let s = Sample::new(9, kind, false).unwrap();
            assert_eq!((s.kind(), s.ticks()), (kind, 9));
            assert_eq!(s.kind().modes(), kind.modes());
            let stacked = Sample::new(9, scope, false).unwrap();
            assert_ne!(s.kind_bits(), stacked.kind_bits());
        }
    }
}
