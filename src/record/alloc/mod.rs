//! Allocations per scope: a global allocator that counts each allocation and free
//! where the calling thread is, in the call tree.
//!
//! [`Counting`] wraps the allocator a program already has. Each call it passes on is
//! counted in the innermost scope open on the calling thread's stack (its call-tree
//! node, which the stack keeps in each scope: see `stack/mod.rs`), or in the thread's
//! *in no scope* bucket when none is open, or in the *process* bucket when the thread
//! has no recorder (before its first record, and after its recorder was torn down at
//! thread exit). A free counts where it happens, not where the memory was allocated.
//! A reallocation counts as a free of the old size and an allocation of the new.
//!
//! Its own work per call is constant: one read of a `const` thread-local without a
//! destructor (a pointer to the thread's recorder, set by its first cold path and
//! cleared by the recorder's destructor), a few loads of the recorder's stack, and a
//! load and a store on two counters of the node, which only this thread writes. No lock,
//! no allocation, no read-modify-write but in the process bucket. latte's own
//! allocations (a new ring, a new tree path, ring growth, frame marks, reports) run
//! inside the recorder's cold paths and are not counted at all.
//!
//! A [`Timer`](crate::Timer) and a `tracing` span's busy time are not scopes on the
//! stack: what they allocate counts in the stack scope open around them.
#![allow(unsafe_code)]

pub use crate::allocs::{Allocs, ScopeAllocs};
pub(crate) use rules::{Breach, inherit};
pub use rules::{check_no_alloc, forbid};

mod rules;

use super::local::Local;
use super::node;
use super::registry::ThreadShared;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};

/// The counters of one place, written by one thread only (the owner of the node or
/// the bucket): a relaxed load and store each, which readers on other threads read
/// whole or not at all.
#[derive(Default)]
pub(crate) struct Cells {
    count: AtomicU64,
    bytes: AtomicU64,
    frees: AtomicU64,
    freed: AtomicU64,
    /// Set (on a cold path, before the node records) when the scope, or one it runs
    /// inside, was declared allocation-free.
    forbidden: AtomicBool,
}

impl Cells {
    /// Counts an allocation of `size` bytes (owning thread only).
    #[inline(always)]
    fn alloc(&self, size: u64) {
        add(&self.count, 1);
        add(&self.bytes, size);
    }

    /// Counts a free of `size` bytes (owning thread only).
    #[inline(always)]
    fn free(&self, size: u64) {
        add(&self.frees, 1);
        add(&self.freed, size);
    }

    /// What was counted so far.
    pub(crate) fn read(&self) -> Allocs {
        Allocs::new(
            self.count.load(Relaxed),
            self.bytes.load(Relaxed),
            self.frees.load(Relaxed),
            self.freed.load(Relaxed),
        )
    }

    /// Whether the place was declared allocation-free.
    pub(crate) fn forbidden(&self) -> bool {
        self.forbidden.load(Relaxed)
    }

    /// Declares the place allocation-free (cold paths, before it counts anything).
    pub(crate) fn forbid(&self) {
        self.forbidden.store(true, Relaxed);
    }

    /// Forgets everything, for a ring reused by another thread (owned outright).
    pub(crate) fn reset(&self) {
        for c in [&self.count, &self.bytes, &self.frees, &self.freed] {
            c.store(0, Relaxed);
        }
        self.forbidden.store(false, Relaxed);
    }
}

/// Adds `n` to a counter only the calling thread writes: a load and a store, no
/// locked instruction (inlined into the user's allocator calls, as `count` is).
#[inline(always)]
fn add(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed);
}

/// Allocations by threads without a recorder: before their first record, and after
/// their recorder was torn down at exit. Any thread writes it, so with
/// read-modify-writes.
static PROCESS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

/// Set once a [`Counting`] allocator has counted anything: the report shows
/// allocations only then.
static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The calling thread's recorder, once it has one, until its destructor runs.
    /// `const` and without a destructor of its own: reading it never registers one,
    /// which an allocator must not do.
    static HOOK: Cell<*const Local> = const { Cell::new(ptr::null()) };
}

/// Points the allocator at `local`, this thread's recorder (its cold paths call it).
pub(super) fn hook(local: &Local) {
    let _ = HOOK.try_with(|h| h.set(local));
}

/// Forgets this thread's recorder: its destructor calls it first.
pub(super) fn unhook() {
    let _ = HOOK.try_with(|h| h.set(ptr::null()));
}

/// Runs `f`, latte's own work on the calling thread (a capture, a fold, a report, the
/// drain's loop), without counting what it allocates against the scope it runs in.
pub(crate) fn uncounted<R>(f: impl FnOnce() -> R) -> R {
    struct Done<'a>(Option<&'a Local>);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            if let Some(l) = self.0 {
                l.uncounted.set(l.uncounted.get().wrapping_sub(1));
            }
        }
    }
    super::local::with_ref(|local| {
        let done = Done(local.inspect(|l| {
            hook(l);
            l.uncounted.set(l.uncounted.get() + 1);
        }));
        let r = f();
        drop(done);
        r
    })
}

/// Notes that a [`Counting`] allocator runs: a store only the first time, so the
/// line stays shared between the threads that read it.
#[inline(always)]
fn installing() {
    if !INSTALLED.load(Relaxed) {
        INSTALLED.store(true, Relaxed);
    }
}

/// Whether a [`Counting`] allocator has counted anything in this process.
pub(crate) fn installed() -> bool {
    INSTALLED.load(Relaxed)
}

/// The process bucket: what threads without a recorder allocated and freed.
pub(crate) fn process() -> Allocs {
    let [count, bytes, frees, freed] = PROCESS.each_ref().map(|c| c.load(Relaxed));
    Allocs::new(count, bytes, frees, freed)
}

/// Where an allocation counts: in a node's or a thread's cells (with the thread's
/// shared half, for a breach of an allocation-free scope), nowhere (latte's own, made
/// inside a cold path), or in the process bucket (a thread without a recorder).
enum Place<'a> {
    Cells(&'a Cells, &'a ThreadShared),
    Own,
    Process,
}

#[inline(always)]
fn place<'a>() -> Place<'a> {
    let local = HOOK.try_with(Cell::get).unwrap_or(ptr::null());
    if local.is_null() {
        return Place::Process;
    }
    // SAFETY: a non-null `HOOK` points at this thread's `Local`, set by its cold path
    // and cleared first thing by its destructor; a thread-local is never moved, so the
    // recorder is alive and in place until then. Only shared references are made to
    // it (its mutability is in atomics and cells touched by this thread only, and the
    // allocator runs on this thread, between the recorder's own statements only when
    // they allocate, which they do inside a cold path: see `Own`).
    let local = unsafe { &*local };
    local.alloc_place()
}

impl Local {
    /// Where an allocation on this thread counts now.
    #[inline(always)]
    fn alloc_place(&self) -> Place<'_> {
        if self.in_cold.load(Relaxed) || self.uncounted.get() != 0 {
            return Place::Own;
        }
        let Some(shared) = self.shared.get() else {
            return Place::Process;
        };
        let depth = self.depth.get();
        let stack = match self.stack() {
            Some(stack) if depth > self.floor.get() => stack,
            _ => return Place::Cells(&shared.outside, shared),
        };
        // The innermost scope is at position `depth - 1`, in slot `(depth - 1) % len`:
        // its node is one further (see `Stack`).
        let top = depth as usize - 1;
        let slot = if top < stack.len() {
            top
        } else {
            top % stack.len()
        };
        // SAFETY: a node word on this thread's stack is 0, 1, or the address of a ring
        // of this thread's list, which `self` keeps alive; the reference does not
        // outlive `&self`. A slot of a position above the floor holds its scope's node.
        match unsafe { node::ring_at(stack.nodes[slot + 1].get()) } {
            Some(ring) => Place::Cells(ring.allocs(), shared),
            None => Place::Cells(&shared.outside, shared),
        }
    }
}

/// Counts a free of `freed` bytes and an allocation of `allocated` bytes (either or
/// both: a reallocation is the two) where the calling thread is: one lookup.
#[inline(always)]
fn count(freed: Option<usize>, allocated: Option<usize>) {
    let (freed, allocated) = (freed.map(|n| n as u64), allocated.map(|n| n as u64));
    match place() {
        Place::Cells(cells, shared) => {
            if let Some(size) = freed {
                cells.free(size);
            }
            if let Some(size) = allocated {
                cells.alloc(size);
                if cells.forbidden() {
                    rules::breach(cells, shared, size);
                }
            }
        }
        Place::Own => installing(),
        Place::Process => {
            installing();
            for (at, size) in [(2, freed), (0, allocated)] {
                if let Some(size) = size {
                    PROCESS[at].fetch_add(1, Relaxed);
                    PROCESS[at + 1].fetch_add(size, Relaxed);
                }
            }
        }
    }
}

/// A global allocator that counts allocations per scope: each allocation, free and
/// reallocation the wrapped allocator serves is counted in the innermost scope open on
/// the calling thread (see the [module](self) documentation for where else).
///
/// Install it around the allocator the program already uses (`System`, jemalloc,
/// mimalloc):
///
/// ```
/// use latte::alloc::Counting;
/// use std::alloc::System;
///
/// #[global_allocator]
/// static ALLOCATOR: Counting<System> = Counting::new(System);
///
/// fn main() {
///     latte::latte_start!("parse");
///     let words: Vec<String> = "a b c".split(' ').map(str::to_owned).collect();
///     latte::latte_stop!("parse");
///     assert_eq!(words.len(), 3);
///     let capture = latte::capture();
///     let parse = capture.component("parse").unwrap();
///     // The Vec, and a String per word.
///     assert!(parse.allocs.unwrap().count() >= 4);
/// }
/// ```
///
/// Without latte's `record` feature it counts nothing and passes every call through.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counting<A = System>(A);

impl<A> Counting<A> {
    /// Counts the allocations `inner` serves.
    pub const fn new(inner: A) -> Counting<A> {
        Counting(inner)
    }
}

// SAFETY: every call is passed to the wrapped allocator with the caller's arguments
// and its result returned unchanged; the counting beside it touches no memory the
// allocator hands out, never allocates, and never unwinds.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { self.0.alloc(layout) };
        if cfg!(feature = "record") && !p.is_null() {
            count(None, Some(layout.size()));
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if cfg!(feature = "record") && !p.is_null() {
            count(None, Some(layout.size()));
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { self.0.dealloc(ptr, layout) };
        if cfg!(feature = "record") {
            count(Some(layout.size()), None);
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if cfg!(feature = "record") && !p.is_null() {
            count(Some(layout.size()), Some(new_size));
        }
        p
    }
}
