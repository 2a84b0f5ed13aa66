//! The per-thread recorder: the SoA stack of open scopes and the id -> ring table.
//!
//! Everything here is touched by its own thread only, through `Cell`s; what readers
//! need (rings, counters) lives in the thread's [`ThreadShared`]. The hot functions are
//! `#[inline(always)]` and do no allocation, locking or syscall; first use of the
//! thread, of an id on the thread, and every misuse go through the `#[cold]` functions
//! in `cold.rs`.
#![allow(unsafe_code)]

use super::registry::{self, TEARDOWN_DROPS, ThreadShared};
use super::ring::Ring;
use super::sample::{
    CPU_MASK, CPU_SHIFT, DELTA_MASK, MIGRATED, PULSE, RECORD, START_MASK, START_SHIFT, STOP_SHIFT,
};
use super::stack::Stack;
use crate::clock::{self, Mode, Stamp};
use std::cell::{Cell, OnceCell, RefCell};
use std::ptr::{self, NonNull};
use std::sync::Arc;

thread_local! {
    static LOCAL: Local = const { Local::new() };
}

/// Runs `f` on this thread's recorder, or counts a record dropped during teardown.
///
/// `f` runs here, in the caller, not inside `LocalKey::try_with`: a `try_with` whose
/// closure holds a whole Stop is too large for the compiler to inline, so it became one
/// out-of-line function shared by every Stop, with the mode and the stamp passed through
/// memory. `try_with` only fetches the address, and stays a few instructions long. For
/// the same reason the callers mark their closures `#[inline(always)]`.
#[inline(always)]
pub(crate) fn with(f: impl FnOnce(&Local)) {
    match LOCAL.try_with(ptr::from_ref) {
        // SAFETY: `try_with` returned the address of this thread's live `Local`. A
        // thread-local value is never moved, and is dropped only by this thread's
        // thread-local destructors, at thread exit: nothing `f` runs can end the thread,
        // so the value outlives this call. Only shared references are ever made to it
        // (all its mutability is in `Cell`s), so this one aliases nothing mutable.
        Ok(local) => f(unsafe { &*local }),
        Err(_) => torn_down(),
    }
}

#[cold]
#[inline(never)]
pub(super) fn torn_down() {
    TEARDOWN_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Registers the calling thread (if needed) and returns its shared half.
pub(crate) fn register_current() -> Option<Arc<ThreadShared>> {
    LOCAL
        .try_with(|l| l.shared.get_or_init(registry::register).clone())
        .ok()
}

/// The calling thread's shared half, if it has registered and is still alive.
pub(crate) fn current_shared() -> Option<Arc<ThreadShared>> {
    LOCAL.try_with(|l| l.shared.get().cloned()).ok().flatten()
}

/// One id's slot in the thread's table.
pub(super) struct Entry {
    pub(super) ring: Option<Arc<Ring>>,
    /// Ticks of the previous pulse of this id; 0 = no baseline yet.
    pub(super) pulse_last: Cell<u64>,
}

/// Tables a thread has had: one per growth, and growth is geometric, so a handful
/// (a 16-entry table grown to 2^20 ids has had 17). A `Vec`, not a `SmallVec`: inline
/// storage here enlarges the thread-local recorder the hot path reads, and measured
/// ~2% slower on Fast Start+Stop (see docs/design.md, "Dependencies").
pub(super) type Tables = Vec<Box<[Entry]>>;

pub(crate) struct Local {
    /// Open scopes, including ones given up because the stack was full (their Stops
    /// are still to come). The scope opened at depth `p` is at *position* `p`, in slot
    /// `p % len` (see `stack.rs`).
    pub(super) depth: Cell<u32>,
    /// The lowest position whose frame the stack still holds: the ones below were
    /// given up on a full stack. Changed on cold paths only.
    pub(super) floor: Cell<u32>,
    pub(super) stack: OnceCell<Stack>,
    /// The current table (the last of `tables`), indexed by id index.
    pub(super) table: Cell<*const [Entry]>,
    /// Every table this thread has had. Old ones are kept until the thread exits so a
    /// reference into one can never dangle, even if a signal handler records while the
    /// interrupted code holds one; tables grow geometrically, so this costs < 2x.
    pub(super) tables: RefCell<Tables>,
    pub(super) shared: OnceCell<Arc<ThreadShared>>,
    /// Set while a cold path runs, so a record made from inside it (say, by an
    /// instrumented global allocator) is counted instead of re-entering.
    pub(super) in_cold: Cell<bool>,
}

impl Local {
    const fn new() -> Local {
        Local {
            depth: Cell::new(0),
            floor: Cell::new(0),
            stack: OnceCell::new(),
            table: Cell::new(ptr::slice_from_raw_parts(
                NonNull::<Entry>::dangling().as_ptr(),
                0,
            )),
            tables: RefCell::new(Vec::new()),
            shared: OnceCell::new(),
            in_cold: Cell::new(false),
        }
    }

    #[inline(always)]
    pub(super) fn entry(&self, idx: u32) -> Option<&Entry> {
        // SAFETY: `table` is either the initial empty slice (dangling but aligned, length
        // 0) or points at a boxed slice owned by `self.tables`. Boxes are only ever added
        // to `tables`, never removed or mutated, until `self` is dropped, so the slice is
        // valid for the lifetime of `&self`.
        let table = unsafe { &*self.table.get() };
        table.get(idx as usize)
    }

    // ----------------------------------------------------------------- hot path

    #[inline(always)]
    pub(crate) fn start(&self, idx: u32, mode: Mode) {
        let d = self.depth.get() as usize;
        if let Some(stack) = self.stack.get()
            && d < stack.ticks.len()
        {
            push_frame(stack, d, idx, mode);
            self.depth.set(d as u32 + 1);
            return;
        }
        self.start_slow(idx, mode);
    }

    #[inline(always)]
    pub(crate) fn stop(&self, idx: u32, mode: Mode, now: Stamp) {
        if !self.pop_top(idx, mode, now) {
            self.stop_slow(idx, mode, now);
        }
    }

    /// The common case of every Stop: the innermost open scope is `idx`'s. Closes and
    /// records it; `false` (nothing changed) otherwise.
    #[inline(always)]
    fn pop_top(&self, idx: u32, mode: Mode, now: Stamp) -> bool {
        let Some(stack) = self.stack.get() else {
            return false;
        };
        // One unsigned compare sends both the empty stack (depth 0 wraps) and the
        // positions past a full stack (depth > len) to the caller's cold path. So does
        // the id compare for a frame given up on a full stack: its slot holds another
        // frame or the tombstone (see `stack.rs`).
        let top = self.depth.get().wrapping_sub(1) as usize;
        if top >= stack.tags.len() {
            return false;
        }
        let tag = stack.tags[top].get();
        if tag as u32 != idx {
            return false;
        }
        self.depth.set(top as u32);
        self.finish(idx, tag, stack.ticks[top].get(), mode, now);
        true
    }

    #[inline(always)]
    pub(crate) fn pulse(&self, idx: u32, now: u64) {
        if let Some(entry) = self.entry(idx) {
            let last = entry.pulse_last.replace(now);
            if last != 0 {
                self.store(idx, now.wrapping_sub(last), PULSE);
            }
            return;
        }
        self.pulse_slow(idx, now);
    }

    /// Stores a user-supplied tick count.
    #[inline]
    pub(crate) fn record(&self, idx: u32, ticks: u64) {
        self.store(idx, ticks, RECORD);
    }

    #[cfg(feature = "tracing")]
    /// Stop for scopes that may close out of LIFO order (the `tracing` bridge): the
    /// innermost open scope of `idx` is closed and recorded wherever it is in the
    /// stack, and the scopes above it stay open.
    #[inline(always)]
    pub(crate) fn stop_unordered(&self, idx: u32, mode: Mode, now: Stamp) {
        if !self.pop_top(idx, mode, now) {
            self.stop_unordered_slow(idx, mode, now);
        }
    }

    /// Builds the sample for a closed scope and stores it.
    #[inline(always)]
    pub(crate) fn finish(&self, idx: u32, tag: u64, start_ticks: u64, mode: Mode, now: Stamp) {
        let start_mode = tag & START_MASK;
        // Known only when both reads came from RDTSCP. Inlined at a `latte_stop!`, `mode`
        // is a constant: a Fast Stop compiles no migration check at all.
        let migrated = mode != Mode::Fast
            && start_mode != (Mode::Fast as u64) << START_SHIFT
            && (tag >> CPU_SHIFT) & CPU_MASK != u64::from(now.cpu) & CPU_MASK;
        let meta = start_mode | (mode as u64) << STOP_SHIFT | if migrated { MIGRATED } else { 0 };
        self.store(idx, now.ticks.wrapping_sub(start_ticks), meta);
    }

    /// Stores `delta | meta` in the id's ring, or counts an implausible delta.
    #[inline(always)]
    pub(super) fn store(&self, idx: u32, delta: u64, meta: u64) {
        if delta > DELTA_MASK {
            return self.clock_anomaly();
        }
        match self.entry(idx).and_then(|e| e.ring.as_deref()) {
            Some(ring) => ring.push(delta | meta),
            None => self.store_slow(idx, delta | meta),
        }
    }
}

/// The stack tag of a Start of `idx` read in `mode` at `now`.
#[inline(always)]
pub(crate) fn tag(idx: u32, mode: Mode, now: Stamp) -> u64 {
    u64::from(idx) | (u64::from(now.cpu) & CPU_MASK) << CPU_SHIFT | (mode as u64) << START_SHIFT
}

/// Writes frame `d`; the timer is read last, after all bookkeeping.
#[inline(always)]
pub(super) fn push_frame(stack: &Stack, d: usize, idx: u32, mode: Mode) {
    let now = clock::read(mode);
    let tag = u64::from(idx)
        | (u64::from(now.cpu) & CPU_MASK) << CPU_SHIFT
        | (mode as u64) << START_SHIFT;
    stack.tags[d].set(tag);
    stack.ticks[d].set(now.ticks);
}

impl Drop for Local {
    fn drop(&mut self) {
        self.count_open_at_exit();
        if let Some(shared) = self.shared.get() {
            shared.retire();
        }
    }
}
