//! The runtime switch: [`set_recording`] pauses and resumes recording in every thread.
//!
//! A scope is recorded iff recording was on at its Start. The stack stays balanced
//! while off: a Start pushes its frame as always, with [`OFF`] set in its tag (one
//! load of [`PAUSED`] and an OR, no branch), and its Stop pops it, adds its ticks to
//! its parent's children's ticks (so the parent's self time stays right) and stores
//! nothing. So a switch in the middle of nested scopes leaves no unmatched Stop, no
//! orphan and no misuse count behind. Pulses, `record` and frame marks look at the
//! switch when they run: off, they store nothing, and a pulse forgets its baseline, so
//! the first pulse after recording resumes starts a new one instead of measuring the
//! pause.
//!
//! How long recording was off is kept here (cold: [`set_recording`] takes a lock), and
//! the report says it.

use super::ring::Ring;
use super::sample::{DELTA_MASK, OFF};
use super::word::Word;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// 0 while recording, [`OFF`] while paused: OR-ed into every Start's tag.
static PAUSED: AtomicU64 = AtomicU64::new(0);

/// Pauses and their lengths.
static HISTORY: Mutex<History> = Mutex::new(History {
    since: None,
    before: Duration::ZERO,
    pauses: 0,
});

struct History {
    /// When the current pause began, while paused.
    since: Option<Instant>,
    /// The length of the pauses that ended.
    before: Duration,
    /// Pauses begun.
    pauses: u64,
}

/// [`OFF`] while recording is paused, else 0 (one relaxed load).
#[inline(always)]
pub(crate) fn paused_bit() -> u64 {
    PAUSED.load(Relaxed)
}

/// Whether recording is paused (one relaxed load).
#[inline(always)]
pub(crate) fn paused() -> bool {
    paused_bit() != 0
}

/// Switches recording on (`true`) or off (`false`) in every thread of the process, and
/// returns whether it was on. Off, a Start/Stop pair, a pulse, a `record` and a frame
/// mark store nothing (they cost no more than when on); scopes already open when it
/// goes off are still recorded, scopes opened while off are not, even if they close
/// after it is back on. A switch never leaves an unmatched Stop or a misuse count
/// behind. Reports say how long recording was off
/// ([`Report::recording_off`](crate::Report::recording_off)).
///
/// Recording starts on. Without the `record` feature nothing records anyway.
///
/// ```standalone_crate
/// use latte::Id;
/// static WORK: Id = Id::new("doc_set_recording");
/// assert!(latte::set_recording(false)); // it was on
/// let paused = latte::scope(&WORK, latte::Mode::Fast, latte::Mode::Fast);
/// assert!(!latte::set_recording(true));
/// drop(paused); // opened while off: not recorded
/// drop(latte::scope(&WORK, latte::Mode::Fast, latte::Mode::Fast));
/// assert_eq!(latte::snapshot("doc_set_recording").len(), 1);
/// ```
pub fn set_recording(on: bool) -> bool {
    let mut history = HISTORY.lock().unwrap_or_else(PoisonError::into_inner);
    let was_on = history.since.is_none();
    match (was_on, on) {
        (true, false) => {
            history.since = Some(Instant::now());
            history.pauses += 1;
            PAUSED.store(OFF, Relaxed);
        }
        (false, true) => {
            PAUSED.store(0, Relaxed);
            if let Some(since) = history.since.take() {
                history.before += since.elapsed();
            }
        }
        _ => {}
    }
    was_on
}

/// The Stop of a scope opened while recording was off: nothing is stored, and its
/// ticks still go to its parent's children's ticks (a parent opened while on keeps an
/// exact self time).
#[cold]
#[inline(never)]
pub(super) fn paused_close(delta: u64, up: &Word) {
    if delta <= DELTA_MASK {
        up.set(up.get().wrapping_add(delta));
    }
}

/// A pulse while recording is off: stores nothing and forgets the baseline, so the
/// first pulse after recording resumes starts a new one (claimed, as a pulse is: a
/// signal handler's pulse of the same id cannot interleave).
#[cold]
#[inline(never)]
pub(super) fn paused_pulse(ring: &Ring) {
    if let Some(h) = ring.claim() {
        ring.swap_pulse(0);
        ring.cancel(h);
    }
}

/// Whether recording is on, how long it was off in all, and how many times it was
/// switched off, since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switch {
    /// Recording is on now.
    pub on: bool,
    /// The time it was off, the current pause included.
    pub off_for: Duration,
    /// How many times it was switched off.
    pub pauses: u64,
}

/// The switch's state now: see [`set_recording`].
///
/// ```
/// let now = latte::collect::recording();
/// assert!(now.on || now.pauses > 0);
/// ```
pub fn recording() -> Switch {
    let history = HISTORY.lock().unwrap_or_else(PoisonError::into_inner);
    Switch {
        on: history.since.is_none(),
        off_for: history.before + history.since.map_or(Duration::ZERO, |s| s.elapsed()),
        pauses: history.pauses,
    }
}
