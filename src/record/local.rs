//! The per-thread recorder: the SoA stack of open scopes and the id -> ring table.
//!
//! Everything here is touched by its own thread only (and by signal handlers that
//! interrupt it, hence relaxed atomics rather than `Cell`s, see [`Word`]); what readers
//! need (rings, counters) lives in the thread's [`ThreadShared`]. The hot functions are
//! `#[inline(always)]` and do no allocation, locking or syscall; first use of the
//! thread, of an id on the thread, and every misuse go through the `#[cold]` functions
//! in `cold.rs`.
#![allow(unsafe_code)]

use super::flight::{self, Flight};
use super::id_table::{Entry, Tables};
use super::node;
use super::registry::{TEARDOWN_DROPS, ThreadShared};
use super::ring::{Pushed, Ring};
use super::sample::{DELTA_MASK, MIGRATED, OFF, PULSE, RECORD, scope_meta, tag};
use super::stack::{Stack, StackScope};
use super::switch;
use super::word::{Word, Word32, signal_fence};
use crate::clock::{self, Mode, Stamp};
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeMap;
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};

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
        // (all its mutability is in atomics and cold-path cells), so this one aliases
        // nothing mutable.
        Ok(local) => f(unsafe { &*local }),
        Err(_) => torn_down(),
    }
}

/// Runs `f` on this thread's recorder, or on `None` once it was torn down (cold
/// paths only: the closure is not inlined as [`with`]'s is).
pub(super) fn with_ref<R>(f: impl FnOnce(Option<&Local>) -> R) -> R {
    match LOCAL.try_with(ptr::from_ref) {
        // SAFETY: as in `with`: the thread's live `Local`, which outlives this call.
        Ok(local) => f(Some(unsafe { &*local })),
        Err(_) => f(None),
    }
}

#[cold]
#[inline(never)]
pub(super) fn torn_down() {
    TEARDOWN_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Registers the calling thread (if needed) and returns its shared half. As a cold
/// path, so a signal handler's record can never re-enter the registration.
pub(crate) fn register_current() -> Option<Arc<ThreadShared>> {
    LOCAL
        .try_with(|l| l.cold(|l, _| l.shared.get().cloned()).flatten())
        .ok()
        .flatten()
}

/// The calling thread's shared half, if it has registered and is still alive.
pub(crate) fn current_shared() -> Option<Arc<ThreadShared>> {
    LOCAL.try_with(|l| l.shared.get().cloned()).ok().flatten()
}

pub(crate) struct Local {
    /// Open scopes, including ones given up because the stack was full (their Stops
    /// are still to come). The scope opened at depth `p` is at *position* `p`, in slot
    /// `p % len` (see `stack.rs`).
    pub(super) depth: Word32,
    /// The lowest position whose scope the stack still holds: the ones below were
    /// given up on a full stack. Changed on cold paths only.
    pub(super) floor: Word32,
    /// The stack's slots: 0 until the stack exists; set after `stack_base`.
    pub(super) stack_len: AtomicUsize,
    /// The stack's words (tags, then start ticks; see [`Stack`]).
    pub(super) stack_base: AtomicPtr<Word>,
    /// Owns the words `stack_base` points at (cold paths only).
    pub(super) stack_words: OnceCell<Box<[Word]>>,
    /// Entries of the current table (the last of `tables`); set after `table_base`
    /// and only ever raised.
    pub(super) table_len: AtomicUsize,
    /// The current table's first entry.
    pub(super) table_base: AtomicPtr<Entry>,
    /// Every table this thread has had. Old ones are kept until the thread exits so a
    /// reference into one can never dangle, even if a signal handler records while the
    /// interrupted code holds one; tables grow geometrically, so this costs < 2x.
    /// Cold paths only.
    pub(super) tables: RefCell<Tables>,
    pub(super) shared: OnceCell<Arc<ThreadShared>>,
    /// Set while a cold path runs, so a record made from inside it (by a signal
    /// handler, or an instrumented global allocator) is counted instead of re-entering.
    pub(super) in_cold: AtomicBool,
    /// Above 0 while latte's own work runs on this thread outside a cold path (a
    /// capture, a fold, a report): the allocations it makes are not counted
    /// (`alloc/`).
    pub(super) uncounted: Word32,
    /// Ids the memory cap refused a ring on this thread, with their counters of
    /// dropped records (shared with `shared`'s list). Cold paths only.
    pub(super) capped: RefCell<BTreeMap<u32, Arc<AtomicU64>>>,
    /// Call-tree paths below the root: (parent node, id index) -> node (the parent
    /// itself for a path folded past the node limit, 0 for one the memory cap
    /// refused). Cold paths only (see `node.rs`).
    pub(super) paths: RefCell<BTreeMap<(u64, u32), u64>>,
    /// Each ring of the thread's list (by address) -> its position there and its id
    /// index. Cold paths only.
    pub(super) positions: RefCell<BTreeMap<u64, (u32, u32)>>,
    /// Allocations the thread's next ring headers go into (see `node::Spares`). Cold
    /// paths only.
    pub(super) spares: RefCell<node::Spares>,
    /// Nodes made below the root, against the node limit. Cold paths only.
    pub(super) below_root: Cell<usize>,
    /// The thread's flight-recorder buffer (in `shared`), or null: set with the stack,
    /// when the flight recorder was on as the thread registered.
    pub(super) flight: AtomicPtr<Flight>,
    /// Ids [`prepare`](super::prepare)d on this thread: their nodes below the root are
    /// made whole, with their pages written, when their path first runs. Cold paths
    /// only.
    pub(super) prepared: RefCell<std::collections::BTreeSet<u32>>,
}

impl Local {
    const fn new() -> Local {
        Local {
            depth: Word32::new(0),
            floor: Word32::new(0),
            stack_len: AtomicUsize::new(0),
            stack_base: AtomicPtr::new(ptr::null_mut()),
            stack_words: OnceCell::new(),
            table_len: AtomicUsize::new(0),
            table_base: AtomicPtr::new(ptr::null_mut()),
            tables: RefCell::new(Vec::new()),
            shared: OnceCell::new(),
            in_cold: AtomicBool::new(false),
            uncounted: Word32::new(0),
            capped: RefCell::new(BTreeMap::new()),
            paths: RefCell::new(BTreeMap::new()),
            positions: RefCell::new(BTreeMap::new()),
            spares: RefCell::new(node::Spares::new()),
            below_root: Cell::new(0),
            flight: AtomicPtr::new(ptr::null_mut()),
            prepared: RefCell::new(std::collections::BTreeSet::new()),
        }
    }

    /// The table entry of `idx`, if the table reaches it.
    #[inline(always)]
    pub(super) fn entry(&self, idx: u32) -> Option<&Entry> {
        // Length first: the writer raises it only after the base points at a table at
        // least that long, and the base only ever moves to a longer table.
        let len = self.table_len.load(Relaxed);
        if idx as usize >= len {
            return None;
        }
        let base = self.table_base.load(Relaxed);
        // SAFETY: `idx < len`, and `base` points at a table of at least `len` entries:
        // every table is a boxed slice owned by `self.tables`, where boxes are only
        // added, never removed or mutated, until `self` is dropped (so the entry lives
        // as long as `&self`), and `install_table` stores the new base before the new,
        // larger length (with a signal fence between), so even a signal handler that
        // interrupted it reads a base whose table is at least `len` long.
        Some(unsafe { &*base.add(idx as usize) })
    }

    /// The ring of `idx`, if this thread has one.
    #[inline(always)]
    pub(super) fn ring(&self, idx: u32) -> Option<&Ring> {
        let ring = self.entry(idx)?.ring.load(Relaxed);
        // SAFETY: a non-null entry points at a ring of this thread's shared ring list
        // (`install_rings` sets it after `add_rings` put the ring there). That list
        // only grows while the thread lives, and the registry takes rings out of it
        // only through `Arc::into_inner` of the `ThreadShared`, which fails while
        // `self.shared` holds it, that is, until `self` is dropped: the ring outlives
        // `&self`.
        (!ring.is_null()).then(|| unsafe { &*ring })
    }

    /// The stack, if this thread has made it.
    #[inline(always)]
    pub(super) fn stack(&self) -> Option<Stack<'_>> {
        let len = self.stack_len.load(Relaxed);
        if len == 0 {
            return None;
        }
        let base = self.stack_base.load(Relaxed);
        // SAFETY: a non-zero `stack_len` is stored only after `stack_base` points at
        // the `word_count(len)` words owned by `self.stack_words` (tags, ticks, then
        // `len + 1` nodes and kids), which are never freed or replaced while `self`
        // lives (see `Stack::of`).
        let (tags, ticks, nodes, kids) = unsafe {
            (
                std::slice::from_raw_parts(base, len),
                std::slice::from_raw_parts(base.add(len), len),
                std::slice::from_raw_parts(base.add(2 * len), len + 1),
                std::slice::from_raw_parts(base.add(3 * len + 1), len + 1),
            )
        };
        Some(Stack {
            tags,
            ticks,
            nodes,
            kids,
        })
    }

    // ----------------------------------------------------------------- hot path

    #[inline(always)]
    pub(crate) fn start(&self, idx: u32, mode: Mode) {
        let d = self.depth.get() as usize;
        if let Some(stack) = self.stack()
            && d < stack.len()
            // The parent's node is in `nodes[d]` (the root's at 0), see `Stack`.
            && let Some(node) = self.child(stack.nodes[d].get(), idx)
        {
            // Depth first: a signal handler that runs before the scope is written
            // opens its scopes above this one, never in its slot.
            self.depth.set(d as u32 + 1);
            signal_fence();
            stack.nodes[d + 1].set(node);
            stack.kids[d + 1].set(0);
            push_scope(stack, d, idx, mode);
            return;
        }
        self.start_slow(idx, mode);
    }

    /// The node of a scope of `idx` opened under the node `parent`, if the id's memo
    /// knows it (see `node.rs`).
    #[inline(always)]
    fn child(&self, parent: u64, idx: u32) -> Option<u64> {
        let [first, second] = &self.entry(idx)?.memo;
        if first.parent.get() == parent {
            return Some(first.node.get());
        }
        if second.parent.get() == parent {
            return Some(second.node.get());
        }
        None
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
        let Some(stack) = self.stack() else {
            return false;
        };
        // One unsigned compare sends both the empty stack (depth 0 wraps) and the
        // positions past a full stack (depth > len) to the caller's cold path. So does
        // the id compare for a scope given up on a full stack: its slot holds another
        // scope or the tombstone (see `stack.rs`).
        let top = self.depth.get().wrapping_sub(1) as usize;
        if top >= stack.len() {
            return false;
        }
        let tag = stack.tags[top].get();
        if tag as u32 != idx {
            return false;
        }
        let start_ticks = stack.ticks[top].get();
        let (node, kids) = (stack.nodes[top + 1].get(), stack.kids[top + 1].get());
        // The scope is read before the depth goes down: a signal handler that runs
        // after may reuse the slot.
        signal_fence();
        self.depth.set(top as u32);
        let scope = StackScope {
            tag,
            ticks: start_ticks,
            node,
            kids,
        };
        // The parent's children's ticks are in `kids[top]` (the root's sink at 0).
        self.close(idx, scope, &stack.kids[top], mode, now);
        true
    }

    /// Records a scope of `idx` closed at `now` (its `scope` already off the stack)
    /// into its node, and adds its ticks to `up`, its parent's children's ticks.
    #[inline(always)]
    pub(super) fn close(&self, idx: u32, scope: StackScope, up: &Word, mode: Mode, now: Stamp) {
        let delta = now.ticks.wrapping_sub(scope.ticks);
        if scope.tag & OFF != 0 {
            return switch::paused_close(delta, up);
        }
        let meta = scope_meta(scope.tag, mode, now);
        if delta > DELTA_MASK {
            return self.implausible(meta & MIGRATED != 0);
        }
        up.set(up.get().wrapping_add(delta));
        // SAFETY: a scope's node word is 0 or was written by `Local::start` from the
        // memo (or by `node_of`): a ring of this thread's list, which `self` keeps
        // alive; the reference does not outlive `&self`.
        let Some(ring) = (unsafe { node::ring_at(scope.node) }) else {
            return self.refused(idx, scope.node);
        };
        ring.add_own(delta.saturating_sub(scope.kids));
        self.push_into(ring, delta | meta);
        self.to_timeline(idx, scope.ticks, now.ticks);
    }

    /// With the flight recorder on, keeps the scope just closed (the depth is its
    /// position: the caller took it off the stack) in the thread's timeline. Off, a
    /// load and a branch.
    #[inline(always)]
    fn to_timeline(&self, idx: u32, start: u64, end: u64) {
        let buffer = self.flight.load(Relaxed);
        if buffer.is_null() {
            return;
        }
        // SAFETY: a non-null `flight` points at the buffer in `self.shared`'s
        // `ThreadShared` (set by `Stack::of`), which `self.shared` keeps alive until
        // `self` is dropped; the reference ends with this call.
        let buffer = unsafe { &*buffer };
        // A push refused because it interrupted one (a signal handler's scope) leaves
        // the scope out of the timeline; its sample is in its ring all the same.
        let _ = buffer.push(flight::Entry {
            start,
            end,
            idx,
            depth: self.depth.get(),
        });
    }

    /// Pushes `value` into `ring` (one of this thread's), growing it or counting a
    /// re-entrant push.
    #[inline(always)]
    fn push_into(&self, ring: &Ring, value: u64) {
        match ring.try_push(value) {
            Pushed::Stored => {}
            Pushed::Busy => self.reentrant(),
            Pushed::Full(h) => self.grow(ring, h, value),
        }
    }

    #[inline(always)]
    pub(crate) fn pulse(&self, idx: u32) {
        let Some(ring) = self.ring(idx) else {
            return self.pulse_slow(idx);
        };
        if switch::paused() {
            return switch::paused_pulse(ring);
        }
        // The timer is read, and the baseline read and replaced, under the ring's
        // claim: a signal handler pulsing the same id before the claim comes before
        // this pulse in time too, and one that interrupts the claim is refused.
        let Some(h) = ring.claim() else {
            return self.reentrant();
        };
        let now = clock::ticks();
        let last = ring.swap_pulse(now);
        let delta = now.wrapping_sub(last);
        if last != 0 && delta <= DELTA_MASK {
            if !ring.commit(h, delta | PULSE) {
                self.grow(ring, h, delta | PULSE);
            }
            return;
        }
        ring.cancel(h);
        if last != 0 {
            self.implausible(false);
        }
    }

    /// Stores a user-supplied tick count.
    #[inline]
    pub(crate) fn record(&self, idx: u32, ticks: u64) {
        if switch::paused() {
            return;
        }
        self.store(idx, ticks, RECORD);
    }

    /// Builds the sample for a scope closed off the stack (a [`Timer`](crate::Timer),
    /// or a span's poll) and stores it at the id's root node, marked `how` (the sample
    /// bits `sample::TIMER` or `sample::BUSY`): no scope of the call tree ran inside it.
    #[inline(always)]
    pub(crate) fn finish(
        &self,
        idx: u32,
        (tag, start_ticks): (u64, u64),
        how: u64,
        mode: Mode,
        now: Stamp,
    ) {
        if tag & OFF != 0 {
            return;
        }
        let delta = now.ticks.wrapping_sub(start_ticks);
        self.store_scope(idx, delta, delta, scope_meta(tag, mode, now) | how);
    }

    /// Stores a scope's sample `delta | meta` with its self time `own` at the id's
    /// root node, or counts an implausible delta.
    #[inline(always)]
    pub(super) fn store_scope(&self, idx: u32, delta: u64, own: u64, meta: u64) {
        if delta > DELTA_MASK {
            return self.implausible(meta & MIGRATED != 0);
        }
        match self.ring(idx) {
            Some(ring) => {
                ring.add_own(own);
                self.push_into(ring, delta | meta);
            }
            None => self.store_slow(idx, delta | meta, own),
        }
    }

    /// Records a `tracing` span's busy total `ticks` (self time `own`) as a scope of
    /// `idx`: into its call-tree node `node` when this is the thread whose stack it
    /// came from (`serial`), else at the id's root node.
    #[cfg(feature = "tracing")]
    #[inline(always)]
    pub(crate) fn record_span(&self, idx: u32, at: (u64, u64), ticks: u64, own: u64, meta: u64) {
        let (node, serial) = at;
        let here = self.shared.get().is_some_and(|s| s.serial == serial);
        let ring = if here {
            // SAFETY: `node` was read from the stack of the thread numbered `serial`,
            // which is this one (serials are never reused), so it is 0 or a ring of
            // this thread's list, which `self` keeps alive; the reference ends with
            // this call.
            unsafe { node::ring_at(node) }
        } else {
            None
        };
        match ring {
            Some(ring) if ticks <= DELTA_MASK => {
                ring.add_own(own);
                self.push_into(ring, ticks | meta);
            }
            _ => self.store_scope(idx, ticks, own, meta),
        }
    }

    /// Stores `delta | meta` in the id's ring, or counts an implausible delta (as
    /// cross-core when its reads named two CPUs).
    #[inline(always)]
    pub(super) fn store(&self, idx: u32, delta: u64, meta: u64) {
        if delta > DELTA_MASK {
            return self.implausible(meta & MIGRATED != 0);
        }
        match self.ring(idx) {
            Some(ring) => self.push_into(ring, delta | meta),
            None => self.store_slow(idx, delta | meta, 0),
        }
    }
}

/// Writes scope `d`, marked [`OFF`] while recording is paused; the timer is read
/// last, after all bookkeeping.
#[inline(always)]
pub(super) fn push_scope(stack: Stack<'_>, d: usize, idx: u32, mode: Mode) {
    let paused = switch::paused_bit();
    let now = clock::read(mode);
    stack.tags[d].set(tag(idx, mode, now) | paused);
    stack.ticks[d].set(now.ticks);
}

impl Drop for Local {
    fn drop(&mut self) {
        // First: what the rest of teardown allocates counts in the process bucket.
        super::alloc::unhook();
        self.count_open_at_exit();
        if let Some(shared) = self.shared.get() {
            // Before any of this recorder's memory goes: no reader of its open scopes
            // can be inside it after this.
            shared.recorder.clear();
            shared.retire();
        }
    }
}
