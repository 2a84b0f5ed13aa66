//! The single-writer sample ring, readable while its owner records.
//!
//! # Protocol
//!
//! The owning thread is the only writer. `head` holds twice the number of samples ever
//! pushed, plus one while a push is in flight, so index `i` lives in slot `i & mask`
//! until index `i + capacity` overwrites it.
//!
//! ```text
//! writer (push v at index h):     reader (count = head / 2):
//!   head = 2h + 1  (claim)          h1 = head.load(Acquire) / 2
//!   fence(Release)                  copy slots of indices max(0, h1 - N) .. h1
//!   slot[h & mask].store(v)         fence(Acquire)
//!   head.store(2h + 2, Release)     h2 = ceil(head.load(Relaxed) / 2)
//!                                   keep indices >= h2 - N
//! ```
//!
//! Why it holds: `head / 2 >= i + 1` (read with Acquire) means the store of index `i`
//! happened before the copy (the claim is a read-modify-write, so it continues the
//! release sequence of the publishing store before it), so the copy sees index `i`'s
//! value or a later one. A later value came from the push of some `k >= i + N`; the
//! writer's release fence before that slot store pairs with the reader's acquire fence
//! after the copy, so everything the writer did before it — including its claim,
//! `head = 2k + 1` — is visible to the second head load, which reads that claim or a
//! later value. Every later value is at least `2k + 1`, and an even one at least
//! `2k + 2` (the head only grows but where a claim is given back: a refused claim puts
//! back the odd value it found, a cancelled one `2k'` for a later `k' > k`), so
//! `h2 >= k + 1 >= i + N + 1`, and `i` is dropped. So an odd head (a push in flight,
//! whose slot store may land before its head store) costs the read one sample more than
//! the published count says, and an even one none: a ring read while its writer is
//! between pushes is read exactly, even when it is exactly full (DESIGN.md's rule,
//! `h2 + 1 - N` for every head, gives up its oldest sample). On x86_64 both fences
//! compile to nothing.
//!
//! The "obvious" protocol — no fences, keep indices `>= h2 - N` — hands back samples
//! with the wrong index when the copy races the writer; so does dropping the margin of
//! a push in flight (an odd head read as the published count); the loom models below
//! show all of them.
//!
//! When no writer can run (the owner has exited, or the owner is the reader) the copy
//! is exact and no margin is needed: [`Ring::read`] takes that as `quiet`.
//!
//! # Signal handlers
//!
//! A signal handler runs on the owning thread between two of its instructions, so it
//! can push into a ring whose push it interrupted. The claim makes that visible: it is
//! one instruction on x86_64 (a `xadd` without `lock`, which a signal cannot split,
//! and which costs no more than the load it replaces) and a relaxed read-modify-write
//! elsewhere. A claim that finds a push in flight (`head` odd) takes nothing back from
//! it: it is undone and refused, and the caller counts the sample as re-entrant. So
//! an interrupted push always completes with its own value, and no sample is lost
//! without a count. See `docs/signal-safety.md`.
#![allow(unsafe_code)]

mod claim;
mod grow;

use super::budget::RINGS;
use super::sync::{AtomicU64, Ordering, fence, load_own};
use claim::add_own;
pub(super) use claim::claim_head;
pub(crate) use grow::KEPT_SMALL;
use grow::{FINAL, Gens};
use std::sync::atomic::{AtomicPtr as OwnPtr, AtomicU64 as OwnU64};

/// A power-of-two ring of `u64` samples with a total-pushed counter, which starts small
/// and grows on its writer's side (see `grow.rs`). `repr(C)`: the words the hot path
/// reads first, in the order it reads them.
#[repr(C)]
pub(crate) struct Ring {
    /// Twice the samples ever pushed, plus one while a push is in flight.
    head: AtomicU64,
    /// Ticks of the owner's previous pulse of this ring's id; 0 = no baseline yet.
    /// Read and written by the owning thread only, inside a claim.
    pulse_last: AtomicU64,
    /// The writer's view of its current slots: read and written by the owning thread
    /// (and a signal handler on it) only, so plain `std` atomics, outside the model.
    /// Index `i` lives in slot `i & mask` (`mask` is the capacity's, fixed, so the hot
    /// path's `and` reads it from memory); a slot at or past `len` means the ring must
    /// grow first (see `grow.rs`). A ring the memory cap kept below its capacity wraps
    /// at `len` instead, every push through the cold path.
    slots: OwnPtr<AtomicU64>,
    mask: u64,
    len: OwnU64,
    /// The self time of every scope pushed so far (its ticks minus those of the
    /// scopes closed inside it), summed: the call-tree node's exact self time (see
    /// `record/node.rs`). Written by the owning thread only (one instruction a
    /// signal handler cannot split, as the claim), read by anyone.
    own_ticks: OwnU64,
    /// Every generation of slots, for readers and for growth (cold paths only: last,
    /// past the words the hot path touches).
    gens: Box<Gens>,
    /// The allocations counted in this node (`alloc/`): past everything the
    /// recording path touches.
    allocs: super::alloc::Cells,
}

/// What one read of a ring returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingRead {
    /// Samples ever pushed (the head at the start of the read).
    pub(crate) seen: u64,
    /// Index of the first sample appended to the output.
    pub(crate) first: u64,
    /// Samples appended to the output.
    pub(crate) kept: u64,
}

/// What a push did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// The sample is in the ring.
    Stored,
    /// Nothing stored: it interrupted a push into this ring on the same thread.
    Busy,
    /// Nothing stored yet: index `h` is claimed, and the ring must grow (a cold path:
    /// [`Ring::grow`]) before [`Ring::commit`] can store it, or the claim be cancelled.
    Full(u64),
}

impl Ring {
    /// A ring of `capacity` samples, starting at [`RING_START`](crate::config::RING_START)
    /// slots (or `capacity`, if smaller). `capacity` must be a power of two (checked
    /// by configuration before any ring is made). Tests only: latte's rings are made
    /// by the registry, which says where they start.
    #[cfg(any(test, latte_loom))]
    pub(crate) fn new(capacity: usize) -> Ring {
        Ring::growing(capacity.min(crate::config::RING_START), capacity)
    }

    /// A ring of `capacity` samples starting at `first` slots (both powers of two).
    pub(crate) fn growing(first: usize, capacity: usize) -> Ring {
        debug_assert!(capacity.is_power_of_two() && first.is_power_of_two());
        debug_assert!(first <= capacity);
        let gens = Box::new(Gens::new(first, capacity));
        let slots = gens.current().0;
        Ring {
            head: AtomicU64::new(0),
            pulse_last: AtomicU64::new(0),
            slots: OwnPtr::new(slots),
            mask: capacity as u64 - 1,
            len: OwnU64::new(first as u64),
            own_ticks: OwnU64::new(0),
            gens,
            allocs: super::alloc::Cells::default(),
        }
    }

    /// A ring of `capacity` starting at `first` slots, charged against the memory cap
    /// `cap`, or `None` (nothing allocated) if the cap cannot afford its first slots.
    pub(crate) fn within(first: usize, capacity: usize, cap: u64) -> Option<Ring> {
        RINGS
            .try_charge(crate::config::ring_bytes(first), cap)
            .then(|| {
                let mut ring = Ring::growing(first, capacity);
                ring.gens.set_charged();
                ring
            })
    }

    /// Charges this (uncharged) ring's slots against `cap`; `false` if the cap cannot
    /// afford them. A ring already charged stays as it is.
    pub(crate) fn charge(&mut self, cap: u64) -> bool {
        self.gens.charge(cap)
    }

    /// Capacity in samples: the most it will ever hold (its configured capacity, or
    /// its current slots if the memory cap refused it more).
    pub(crate) fn capacity(&self) -> usize {
        self.gens.capacity()
    }

    /// Bytes of slots the ring holds now, retired generations not yet freed included.
    pub(crate) fn reserved_bytes(&self) -> u64 {
        self.gens.reserved_bytes()
    }

    /// Appends a sample; `false` if nothing was stored because it interrupted a push
    /// into this ring on the same thread. Grows the ring if needed. Only the owning
    /// thread may call this; the recorder's hot path uses [`try_push`](Self::try_push).
    pub(crate) fn push(&self, value: u64) -> bool {
        match self.try_push(value) {
            Pushed::Stored => true,
            Pushed::Busy => false,
            Pushed::Full(h) => {
                self.grow();
                self.commit_grown(h, value);
                true
            }
        }
    }

    /// Appends a sample if the ring has room for it. Only the owning thread may call
    /// this.
    #[inline(always)]
    pub(crate) fn try_push(&self, value: u64) -> Pushed {
        match self.claim() {
            Some(h) if self.commit(h, value) => Pushed::Stored,
            Some(h) => Pushed::Full(h),
            None => Pushed::Busy,
        }
    }

    /// Claims the next index for a push (owning thread only): `None` if a push into
    /// this ring is already in flight on this thread, that is, if the caller is a
    /// signal handler that interrupted it. A claim must end in [`commit`](Self::commit)
    /// or [`cancel`](Self::cancel) before the thread records into this ring again.
    #[inline(always)]
    pub(crate) fn claim(&self) -> Option<u64> {
        let old = claim_head(&self.head);
        if old & 1 != 0 {
            // Undo this claim: the interrupted one resumes exactly where it was.
            self.head.store(old, Ordering::Relaxed);
            return None;
        }
        Some(old >> 1)
    }

    /// Stores `value` at the claimed index `h` and publishes it; `false` (nothing
    /// stored, the claim still held) if `h`'s slot is past the current slots: the
    /// ring must [`grow`](Self::grow) first.
    #[inline(always)]
    pub(crate) fn commit(&self, h: u64, value: u64) -> bool {
        let at = h & self.mask;
        if at >= self.len.load(Ordering::Relaxed) {
            return false;
        }
        self.store_at(at, h, value);
        true
    }

    /// Stores `value` at the claimed index `h` after [`grow`](Self::grow) made room:
    /// in the slots as they are now, which wrap at their own length if the memory cap
    /// kept the ring small.
    pub(crate) fn commit_grown(&self, h: u64, value: u64) {
        let len = self.len.load(Ordering::Relaxed);
        self.store_at(h & (len - 1), h, value);
    }

    /// Stores `value` in slot `at` (below `len`) for the claimed index `h`, and
    /// publishes it.
    #[inline(always)]
    fn store_at(&self, at: u64, h: u64, value: u64) {
        fence(Ordering::Release);
        // SAFETY: `slots` points at the current generation's `len` slots (the owner
        // sets both together, in `grow.rs`), and every caller has `at < len`. The
        // current generation is freed only once it is no longer current (by a
        // reader, after the owner moved on), or with the ring.
        let slot = unsafe { &*self.slots.load(Ordering::Relaxed).add(at as usize) };
        slot.store(value, Ordering::Relaxed);
        self.head.store(h.wrapping_add(1) << 1, Ordering::Release);
    }

    /// Gives back the claim of index `h` without storing anything.
    #[inline(always)]
    pub(crate) fn cancel(&self, h: u64) {
        self.head.store(h << 1, Ordering::Relaxed);
    }

    /// Adds a scope's self time to [`own_ticks`](Self::own_ticks). Only the owning
    /// thread may call this.
    #[inline(always)]
    pub(crate) fn add_own(&self, ticks: u64) {
        add_own(&self.own_ticks, ticks);
    }

    /// The self time of every scope pushed so far, summed (wrapping).
    pub(crate) fn own_ticks(&self) -> u64 {
        self.own_ticks.load(Ordering::Relaxed)
    }

    /// The allocations counted in this node (see `record/alloc/`).
    pub(crate) fn allocs(&self) -> &super::alloc::Cells {
        &self.allocs
    }

    /// Replaces the previous pulse's ticks by `now` and returns them (0: none). Only
    /// the owning thread may call this, holding a claim, so a handler that pulses the
    /// same id is refused instead of reading the baseline mid-update.
    #[inline(always)]
    pub(crate) fn swap_pulse(&self, now: u64) -> u64 {
        let last = load_own(&self.pulse_last);
        self.pulse_last.store(now, Ordering::Relaxed);
        last
    }

    /// Forgets every sample, for reuse by another thread. The caller owns the ring
    /// outright (it came out of an `Arc` with no other reference), so nothing can
    /// read or write it concurrently. The slots keep the size they grew to.
    pub(crate) fn reset(&mut self) {
        self.head.store(0, Ordering::Relaxed);
        self.pulse_last.store(0, Ordering::Relaxed);
        self.own_ticks.store(0, Ordering::Relaxed);
        self.allocs.reset();
        self.gens.free_retired();
    }

    /// Grows the ring to its capacity now (unless the memory cap refuses it: then it
    /// stays as it is), and writes every slot no sample has reached yet (with 0,
    /// which no reader sees: they read only indices below the head), so the OS backs
    /// all of the ring's pages now rather than on the pushes that first reach them.
    /// Only the owning thread may call this, outside any claim; the head and the
    /// retained samples are unchanged.
    pub(crate) fn prefault(&self) {
        // Under a claim, so a signal handler's push into this ring is refused (and
        // counted) rather than landing in slots that are being replaced.
        let Some(h) = self.claim() else {
            return;
        };
        self.grow_to_capacity();
        let len = self.len.load(Ordering::Relaxed);
        let first_unwritten = h.min(len);
        let slots = self.slots.load(Ordering::Relaxed);
        for at in first_unwritten..len {
            // SAFETY: `at < len`, the current slots' length (see `commit`).
            let slot = unsafe { &*slots.add(at as usize) };
            // `black_box`: a store of a known 0 into memory from `alloc_zeroed` could
            // be dropped by the optimiser, and then the page would not be written.
            slot.store(std::hint::black_box(0), Ordering::Relaxed);
        }
        self.gens.set_prefaulted();
        self.cancel(h);
    }

    /// Memory the OS backs for this ring: the pages samples (or [`Ring::prefault`])
    /// have reached, and retired slots not yet freed.
    pub(crate) fn resident_bytes(&self) -> u64 {
        self.gens.resident_bytes(self.seen())
    }

    /// Samples ever pushed.
    pub(crate) fn seen(&self) -> u64 {
        self.head.load(Ordering::Acquire) >> 1
    }

    /// Appends the retained samples, oldest first, to `out`.
    ///
    /// `quiet` promises that no push can run concurrently (the owner exited, or is the
    /// caller); the read is then exact. Otherwise, if a push is in flight when the read
    /// ends, at most one extra sample — the oldest — is given up to stay safe against it.
    pub(crate) fn read(&self, quiet: bool, out: &mut Vec<u64>) -> RingRead {
        self.read_from(0, quiet, out)
    }

    /// Holds this ring's reader turn until the value returned is dropped (tests: a
    /// reader that had its turn when the process forked).
    #[cfg(feature = "test-hooks")]
    pub(crate) fn hold_reader_turn(&self) -> grow::Turn<'_> {
        self.gens.reader_turn()
    }

    /// Like [`read`](Self::read), but only samples of index `from` or later: what is
    /// new since a previous read whose `seen` was `from`. Samples in `from .. first`
    /// were overwritten before this read reached them.
    pub(crate) fn read_from(&self, from: u64, quiet: bool, out: &mut Vec<u64>) -> RingRead {
        // Readers take turns, so the one that frees retired slots knows no other
        // reader is inside them; the writer never waits for this.
        let _turn = self.gens.reader_turn();
        let h1 = self.head.load(Ordering::Acquire) >> 1;
        let state = self.gens.state();
        let (slots, len) = self.gens.slots_of(state);
        let n = len as u64;
        let lo = h1.saturating_sub(n).max(from.min(h1));
        let start = out.len();
        out.extend((lo..h1).map(|i| {
            // SAFETY: `i & (n - 1) < n`, the length of generation `state`'s slots,
            // which no one frees while this reader holds its turn (see `grow.rs`).
            unsafe { &*slots.add((i & (n - 1)) as usize) }.load(Ordering::Relaxed)
        }));
        let first = if quiet {
            lo
        } else {
            fence(Ordering::Acquire);
            let h2 = settled(self.head.load(Ordering::Relaxed));
            // Slots are overwritten only once their generation is the last one (see
            // `grow.rs`); until then everything copied is exact.
            if self.gens.state_relaxed() == state | FINAL {
                h2.saturating_sub(n).clamp(lo, h1)
            } else {
                lo
            }
        };
        out.drain(start..start + (first - lo) as usize);
        self.gens.free_before(state);
        RingRead {
            seen: h1,
            first,
            kept: h1 - first,
        }
    }
}

/// The reader's second head load, `head`, as the count of pushes whose slot stores
/// the copy may have seen: the samples published, plus the push in flight if there is
/// one (`head` odd: its slot store may land before its head store). The module docs
/// say why nothing older than that count less the capacity can have been overwritten.
fn settled(head: u64) -> u64 {
    head.div_ceil(2)
}

impl core::fmt::Debug for Ring {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity", &self.capacity())
            .field("slots", &self.len.load(Ordering::Relaxed))
            .field("seen", &self.seen())
            .finish()
    }
}

#[cfg(latte_loom)]
pub(crate) mod loom_model;
#[cfg(all(test, not(latte_loom)))]
mod tests;
