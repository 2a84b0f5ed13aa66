//! The per-thread recorder: the SoA stack of open scopes and the id -> ring table.
//!
//! Everything here is touched by its own thread only, through `Cell`s; what readers
//! need (rings, counters) lives in the thread's [`ThreadShared`]. The hot functions are
//! `#[inline(always)]` and do no allocation, locking or syscall; first use of the
//! thread, of an id on the thread, and every misuse go through `#[cold]` functions.
#![allow(unsafe_code)]

use super::ring::Ring;
use super::sample::{
    CPU_MASK, CPU_SHIFT, DELTA_MASK, MIGRATED, PULSE, RECORD, START_MASK, START_SHIFT, STOP_SHIFT,
};
use crate::clock::{self, Mode, Stamp};
use crate::registry::{self, ThreadShared, bump};
use std::cell::{Cell, OnceCell, RefCell};
use std::ptr::{self, NonNull};
use std::sync::Arc;

thread_local! {
    static LOCAL: Local = const { Local::new() };
}

/// Runs `f` on this thread's recorder, or counts a record dropped during teardown.
#[inline(always)]
pub(crate) fn with(f: impl FnOnce(&Local)) {
    if LOCAL.try_with(f).is_err() {
        torn_down();
    }
}

#[cold]
#[inline(never)]
fn torn_down() {
    registry::TEARDOWN_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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

/// Open scopes, structure-of-arrays: start ticks and tags in separate arrays.
struct Stack {
    ticks: Box<[Cell<u64>]>,
    tags: Box<[Cell<u64>]>,
}

/// One id's slot in the thread's table.
struct Entry {
    ring: Option<Arc<Ring>>,
    /// Ticks of the previous pulse of this id; 0 = no baseline yet.
    pulse_last: Cell<u64>,
}

pub(crate) struct Local {
    /// Open scopes, including ones ignored because the stack was full.
    depth: Cell<u32>,
    stack: OnceCell<Stack>,
    /// The current table (the last of `tables`), indexed by id index.
    table: Cell<*const [Entry]>,
    /// Every table this thread has had. Old ones are kept until the thread exits so a
    /// reference into one can never dangle, even if a signal handler records while the
    /// interrupted code holds one; tables grow geometrically, so this costs < 2x.
    tables: RefCell<Vec<Box<[Entry]>>>,
    shared: OnceCell<Arc<ThreadShared>>,
    /// Set while a cold path runs, so a record made from inside it (say, by an
    /// instrumented global allocator) is counted instead of re-entering.
    in_cold: Cell<bool>,
}

impl Local {
    const fn new() -> Local {
        Local {
            depth: Cell::new(0),
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
    fn entry(&self, idx: u32) -> Option<&Entry> {
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
        // ignored frames above a full stack (depth > len) to the caller's cold path.
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

    /// Builds the sample for a closed scope and stores it.
    #[inline(always)]
    pub(crate) fn finish(&self, idx: u32, tag: u64, start_ticks: u64, mode: Mode, now: Stamp) {
        let start_mode = tag & START_MASK;
        // Known only when both reads came from RDTSCP. (Stop reaches this through one
        // shared `LocalKey::try_with`, so `mode` is a run-time value here: a `cmov`.)
        let migrated = mode != Mode::Fast
            && start_mode != (Mode::Fast as u64) << START_SHIFT
            && (tag >> CPU_SHIFT) & CPU_MASK != u64::from(now.cpu) & CPU_MASK;
        let meta = start_mode | (mode as u64) << STOP_SHIFT | if migrated { MIGRATED } else { 0 };
        self.store(idx, now.ticks.wrapping_sub(start_ticks), meta);
    }

    /// Stores `delta | meta` in the id's ring, or counts an implausible delta.
    #[inline(always)]
    fn store(&self, idx: u32, delta: u64, meta: u64) {
        if delta > DELTA_MASK {
            return self.clock_anomaly();
        }
        match self.entry(idx).and_then(|e| e.ring.as_deref()) {
            Some(ring) => ring.push(delta | meta),
            None => self.store_slow(idx, delta | meta),
        }
    }

    // ---------------------------------------------------------------- cold path

    /// Runs `f` as a cold path, unless one is already running on this thread (then
    /// the record is counted as re-entrant and dropped).
    fn cold<R>(&self, f: impl FnOnce(&Local, &ThreadShared) -> R) -> Option<R> {
        if self.in_cold.replace(true) {
            match self.shared.get() {
                Some(shared) => bump(&shared.counters.reentrant, 1),
                None => torn_down(),
            }
            return None;
        }
        let shared = self.shared.get_or_init(registry::register);
        let r = f(self, shared);
        self.in_cold.set(false);
        Some(r)
    }

    #[cold]
    #[inline(never)]
    fn start_slow(&self, idx: u32, mode: Mode) {
        self.cold(|l, shared| {
            let d = l.depth.get() as usize;
            let stack = l.stack.get_or_init(|| {
                let n = crate::config::stack_depth();
                Stack {
                    ticks: (0..n).map(|_| Cell::new(0)).collect(),
                    tags: (0..n).map(|_| Cell::new(0)).collect(),
                }
            });
            if d < stack.ticks.len() {
                push_frame(stack, d, idx, mode);
            } else {
                // Full: ignore this Start but keep its place, so its Stop is absorbed
                // and the frames below keep pairing.
                bump(&shared.counters.overflowed_starts, 1);
            }
            l.depth.set(l.depth.get().saturating_add(1));
        });
    }

    #[cold]
    #[inline(never)]
    fn stop_slow(&self, idx: u32, mode: Mode, now: Stamp) {
        let found = self.cold(|l, shared| {
            let d = l.depth.get() as usize;
            let Some(stack) = l.stack.get().filter(|_| d > 0) else {
                bump(&shared.counters.empty_stops, 1);
                return None;
            };
            if d > stack.tags.len() {
                // The matching Start was ignored on a full stack (and counted there).
                l.depth.set(d as u32 - 1);
                return None;
            }
            // The top is another id: a Stop was missed. Search down for ours; the
            // frames above it will never be closed correctly, so they are dropped and
            // counted rather than mispaired with later Stops.
            match (0..d - 1)
                .rev()
                .find(|&k| stack.tags[k].get() as u32 == idx)
            {
                Some(k) => {
                    bump(&shared.counters.orphaned_frames, (d - 1 - k) as u64);
                    l.depth.set(k as u32);
                    Some((stack.tags[k].get(), stack.ticks[k].get()))
                }
                None => {
                    bump(&shared.counters.unmatched_stops, 1);
                    None
                }
            }
        });
        if let Some(Some((tag, start_ticks))) = found {
            self.finish(idx, tag, start_ticks, mode, now);
        }
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

    #[cfg(feature = "tracing")]
    #[cold]
    #[inline(never)]
    fn stop_unordered_slow(&self, idx: u32, mode: Mode, now: Stamp) {
        let found = self.cold(|l, shared| {
            let d = (l.depth.get() as usize).min(l.stack.get().map_or(0, |s| s.tags.len()));
            let stack = l.stack.get()?;
            let Some(k) = (0..d).rev().find(|&k| stack.tags[k].get() as u32 == idx) else {
                bump(&shared.counters.unmatched_stops, 1);
                return None;
            };
            let frame = (stack.tags[k].get(), stack.ticks[k].get());
            // Close frame k; the frames above it move down one place and stay open.
            for j in k..d - 1 {
                stack.tags[j].set(stack.tags[j + 1].get());
                stack.ticks[j].set(stack.ticks[j + 1].get());
            }
            if l.depth.get() as usize > d {
                // Starts ignored on a full stack sit above: the top real slot now stands
                // for one of them, which has no data. Id index 0 is never handed out,
                // so this tombstone never matches a Stop.
                stack.tags[d - 1].set(0);
            }
            l.depth.set(l.depth.get() - 1);
            bump(&shared.counters.unordered_stops, 1);
            Some(frame)
        });
        if let Some(Some((tag, start_ticks))) = found {
            self.finish(idx, tag, start_ticks, mode, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn pulse_slow(&self, idx: u32, now: u64) {
        self.cold(|l, _| {
            l.grow_table(idx);
            if let Some(entry) = l.entry(idx) {
                entry.pulse_last.set(now); // first pulse: baseline only
            }
        });
    }

    #[cold]
    #[inline(never)]
    fn store_slow(&self, idx: u32, sample: u64) {
        self.cold(|l, shared| {
            l.grow_table(idx);
            let ring = Arc::new(registry::global().ring(crate::config::ring_capacity()));
            shared.add_ring(idx, ring.clone());
            let mut tables = l.tables.borrow_mut();
            // Copy-on-write: a new table with the ring installed. Entries are replaced,
            // never mutated behind a reference handed out earlier.
            let old = tables.last().expect("grow_table installed a table");
            let new: Box<[Entry]> = old
                .iter()
                .enumerate()
                .map(|(i, e)| Entry {
                    ring: if i == idx as usize {
                        Some(ring.clone())
                    } else {
                        e.ring.clone()
                    },
                    pulse_last: Cell::new(e.pulse_last.get()),
                })
                .collect();
            l.table.set(&*new as *const [Entry]);
            tables.push(new);
            ring.push(sample);
        });
    }

    #[cold]
    fn clock_anomaly(&self) {
        self.cold(|_, shared| bump(&shared.counters.clock_anomalies, 1));
    }

    /// Makes sure the table has an entry for `idx`.
    fn grow_table(&self, idx: u32) {
        let len = self.entry_count();
        if (idx as usize) < len {
            return;
        }
        let new_len = (idx as usize + 1).max(len * 2).max(16);
        let mut tables = self.tables.borrow_mut();
        let new: Box<[Entry]> = (0..new_len)
            .map(|i| match tables.last().and_then(|t| t.get(i)) {
                Some(e) => Entry {
                    ring: e.ring.clone(),
                    pulse_last: Cell::new(e.pulse_last.get()),
                },
                None => Entry {
                    ring: None,
                    pulse_last: Cell::new(0),
                },
            })
            .collect();
        self.table.set(&*new as *const [Entry]);
        tables.push(new);
    }

    fn entry_count(&self) -> usize {
        self.table.get().len()
    }
}

/// The stack tag of a Start of `idx` read in `mode` at `now`.
#[inline(always)]
pub(crate) fn tag(idx: u32, mode: Mode, now: Stamp) -> u64 {
    u64::from(idx) | (u64::from(now.cpu) & CPU_MASK) << CPU_SHIFT | (mode as u64) << START_SHIFT
}

/// Writes frame `d`; the timer is read last, after all bookkeeping.
#[inline(always)]
fn push_frame(stack: &Stack, d: usize, idx: u32, mode: Mode) {
    let now = clock::read(mode);
    let tag = u64::from(idx)
        | (u64::from(now.cpu) & CPU_MASK) << CPU_SHIFT
        | (mode as u64) << START_SHIFT;
    stack.tags[d].set(tag);
    stack.ticks[d].set(now.ticks);
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.get() {
            bump(&shared.counters.open_at_exit, u64::from(self.depth.get()));
            shared.retire();
        }
    }
}
