//! How a ring grows: on its writer's side, one doubling at a time, without a lock.
//!
//! A ring starts with [`RING_START`](crate::config::RING_START) slots and doubles each
//! time a push would first overwrite a sample, up to its capacity; the generations of
//! slots it has had are `first << g` long. While it may still grow, index `i` lives in
//! slot `i` (the writer's mask is the capacity's), so a generation is never overwritten:
//! at index `len` the push finds its slot past the slots and takes the cold path, which
//! makes the next generation, copies the `len` samples into the same places, and
//! publishes it. Only the last generation (the capacity, or the slots the memory cap
//! let it keep) wraps, and the state says so with [`FINAL`].
//!
//! ```text
//! writer (holding the claim of index h = len):   reader (its turn taken):
//!   new = copy of slots[0 .. len], 2 * len long     h1 = head.load(Acquire) / 2
//!   arrays[g + 1] = new            (Release)        s = state.load(Acquire)
//!   state = g + 1 (| FINAL if last) (Release)       copy indices < h1 from arrays[gen(s)]
//!   commit h into new                               fence(Acquire)
//! or, the cap refusing:                             s2 = state.load(Relaxed)
//!   state = g | FINAL (Release)                     s2 == s | FINAL: the ring's rule
//!   commit h into slots[h & (len - 1)]: it wraps    (keep >= ceil(head2 / 2) - N); else exact
//!   from now, every push through the cold path
//! ```
//!
//! Why the reader may read generation `gen(s)` for every index below `h1`: an index
//! past `len(g)` is published only after the state moved past `g` (or to `g | FINAL`,
//! when the slots stay), so the acquire of `h1` makes `s` at least that; and an index
//! pushed before generation `g` was made was copied into it before its release. Why a
//! generation that is not `FINAL` needs no margin: its slots are overwritten only after
//! `FINAL` is stored, before the writer's release fence; a copy that saw an overwritten
//! value synchronises with that fence through the reader's acquire fence, so `s2` then
//! shows `FINAL` on the same generation, and the ring's own rule applies.
//!
//! Retired generations (any but the current one) are read only by readers that loaded
//! an older state; the writer never goes back to them. Readers take turns (a mutex the
//! writer never touches), and the reader holding the turn frees every generation older
//! than the state it loaded: a later reader loads that state or a newer one. The loom
//! model in `tests.rs` checks growth, refusal and freeing against a concurrent reader.

use super::{RINGS, Ring};
use crate::record::sync::{AtomicPtr, AtomicU64, Ordering, load_own, yield_now};
use std::sync::atomic::{AtomicBool as OwnBool, AtomicU64 as StatU64};

/// Set in the state when the current generation is the last: its slots wrap.
pub(super) const FINAL: u64 = 1 << 63;

/// Growths the memory cap refused since the process started: those rings keep the
/// slots they have and wrap there.
pub(crate) static KEPT_SMALL: StatU64 = StatU64::new(0);

/// A ring's generations of slots.
pub(super) struct Gens {
    /// The current generation, with [`FINAL`] once its slots are the last.
    state: AtomicU64,
    /// Generation `g`'s `first << g` slots; null before it is made and once freed.
    arrays: Box<[AtomicPtr<AtomicU64>]>,
    /// Slots of generation 0.
    first: usize,
    /// Readers take turns (see the module docs): the process id of the reader whose
    /// turn it is, 0 when it is nobody's ([`Gens::reader_turn`]).
    turn: AtomicU64,
    /// Every page of the last generation has been written ([`Ring::prefault`]); only
    /// the footprint estimate reads it.
    prefaulted: OwnBool,
    /// Whether the slots are charged against the memory cap (not for latte's own
    /// threads); given back when they are freed.
    charged: bool,
    /// Tests and loom models: every growth is refused, as by a memory cap with no room left.
    #[cfg(any(test, latte_loom))]
    pub(super) refuse_growth: bool,
}

impl Gens {
    pub(super) fn new(first: usize, capacity: usize) -> Gens {
        let count = (capacity / first).trailing_zeros() as usize + 1;
        let arrays: Box<[AtomicPtr<AtomicU64>]> = (0..count)
            .map(|_| AtomicPtr::new(std::ptr::null_mut()))
            .collect();
        arrays[0].store(leak(zeroed_slots(first)), Ordering::Relaxed);
        let last = if count == 1 { FINAL } else { 0 };
        Gens {
            state: AtomicU64::new(last),
            arrays,
            first,
            turn: AtomicU64::new(0),
            prefaulted: OwnBool::new(false),
            charged: false,
            #[cfg(any(test, latte_loom))]
            refuse_growth: false,
        }
    }

    /// Slots of generation `g`.
    fn len_of(&self, g: usize) -> usize {
        self.first << g
    }

    /// The generation `state` names.
    fn gen_of(state: u64) -> usize {
        (state & !FINAL) as usize
    }

    /// The state, for a reader: acquires the slots it names.
    pub(super) fn state(&self) -> u64 {
        self.state.load(Ordering::Acquire)
    }

    /// The state, after a reader's acquire fence.
    pub(super) fn state_relaxed(&self) -> u64 {
        self.state.load(Ordering::Relaxed)
    }

    /// The slots of the generation `state` names, and their length.
    pub(super) fn slots_of(&self, state: u64) -> (*const AtomicU64, usize) {
        let g = Gens::gen_of(state);
        (self.arrays[g].load(Ordering::Acquire), self.len_of(g))
    }

    /// The current generation's slots and length, for the ring's owner.
    pub(super) fn current(&self) -> (*mut AtomicU64, usize) {
        let g = Gens::gen_of(load_own(&self.state));
        (self.arrays[g].load(Ordering::Relaxed), self.len_of(g))
    }

    /// The most samples the ring will hold.
    pub(super) fn capacity(&self) -> usize {
        let state = self.state.load(Ordering::Relaxed);
        if state & FINAL != 0 {
            self.len_of(Gens::gen_of(state))
        } else {
            self.len_of(self.arrays.len() - 1)
        }
    }

    /// Bytes of every generation not freed.
    pub(super) fn reserved_bytes(&self) -> u64 {
        (0..self.arrays.len())
            .filter(|&g| !self.arrays[g].load(Ordering::Relaxed).is_null())
            .map(|g| crate::config::ring_bytes(self.len_of(g)))
            .sum()
    }

    /// Pages the OS backs: the current generation's written ones, and every retired
    /// one not yet freed (all of whose samples were written).
    pub(super) fn resident_bytes(&self, seen: u64) -> u64 {
        const PAGE: u64 = 4096;
        let g = Gens::gen_of(self.state.load(Ordering::Relaxed));
        let len = self.len_of(g) as u64;
        let written = if self.prefaulted.load(Ordering::Relaxed) {
            len
        } else {
            seen.min(len)
        };
        let retired: u64 = (0..g)
            .filter(|&r| !self.arrays[r].load(Ordering::Relaxed).is_null())
            .map(|r| crate::config::ring_bytes(self.len_of(r)))
            .sum();
        (written * 8).div_ceil(PAGE) * PAGE + retired + 64
    }

    pub(super) fn set_prefaulted(&self) {
        self.prefaulted.store(true, Ordering::Relaxed);
    }

    pub(super) fn set_charged(&mut self) {
        self.charged = true;
    }

    /// Charges the slots held now against `cap` (retired ones are freed first);
    /// `false` if the cap cannot afford them. Slots already charged stay as they are.
    pub(super) fn charge(&mut self, cap: u64) -> bool {
        if !self.charged {
            self.free_retired();
            self.charged = RINGS.try_charge(self.reserved_bytes(), cap);
        }
        self.charged
    }

    /// Takes this reader's turn, waiting (yielding) while another reader of this
    /// process has it.
    ///
    /// The turn is a word holding its reader's process id, not a mutex, because of
    /// `fork`: a reader of the parent (its drain, a report) that had the turn when the
    /// child was forked does not exist in the child, and a mutex it held would stay
    /// held there forever (a forked child's drain hung so, reading a ring it inherited,
    /// 2026-11-27). A turn held by another process's id is that: the child takes it
    /// over. Whatever that reader was doing is safe to take over: copying samples
    /// changes nothing, and freeing a generation is a swap to null then the free, so
    /// the child sees a generation either still listed or gone.
    pub(super) fn reader_turn(&self) -> Turn<'_> {
        let me = u64::from(std::process::id());
        let mut held = 0;
        loop {
            match self
                .turn
                .compare_exchange_weak(held, me, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return Turn(&self.turn),
                // Another reader of this process has it: wait for it to let go.
                Err(now) if now == me => {
                    yield_now();
                    held = 0;
                }
                // Free (0), or held by a reader of the process this one was forked
                // from: try again expecting that.
                Err(now) => held = now,
            }
        }
    }

    /// Frees the generations older than the one `state` names. Only a reader holding
    /// its turn (or the ring's sole owner) may call this: no other reader is inside
    /// them, and a later one loads `state` or a newer one.
    pub(super) fn free_before(&self, state: u64) {
        for g in 0..Gens::gen_of(state) {
            let old = self.arrays[g].swap(std::ptr::null_mut(), Ordering::Relaxed);
            self.free(old, g);
        }
    }

    /// Frees every generation but the current one, the ring owned outright.
    pub(super) fn free_retired(&mut self) {
        let state = load_own(&self.state);
        self.free_before(state);
    }

    /// Frees generation `g`'s slots at `ptr` (nothing if null) and gives back their
    /// charge.
    fn free(&self, ptr: *mut AtomicU64, g: usize) {
        if ptr.is_null() {
            return;
        }
        let len = self.len_of(g);
        // SAFETY: `ptr` came from `leak` of a boxed slice of exactly `len` slots (the
        // length of generation `g`), and was swapped out of `arrays` (or is being
        // dropped with it), so no one else frees it; no reader is inside it (see
        // `free_before`), and the writer left it when the state moved past it.
        drop(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) });
        if self.charged {
            RINGS.release(crate::config::ring_bytes(len));
        }
    }
}

/// A reader's turn ([`Gens::reader_turn`]), given back when dropped.
pub(crate) struct Turn<'a>(&'a AtomicU64);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

impl Drop for Gens {
    fn drop(&mut self) {
        for g in 0..self.arrays.len() {
            let ptr = self.arrays[g].swap(std::ptr::null_mut(), Ordering::Relaxed);
            self.free(ptr, g);
        }
    }
}

impl Ring {
    /// Makes room for the claimed index whose slot is past the current slots: the
    /// next generation, twice as long, or (the memory cap refusing it, now or before)
    /// the current slots for good, which then wrap ([`Ring::commit_grown`] stores
    /// there). Only the owning thread may call this, holding that claim, from a cold
    /// path (it allocates).
    #[cold]
    #[inline(never)]
    pub(crate) fn grow(&self) {
        let state = load_own(&self.gens.state);
        if state & FINAL != 0 {
            // Kept small by the memory cap: it wraps where it is (`commit_grown`).
            return;
        }
        let next = Gens::gen_of(state) + 1;
        if !self.afford(next) {
            self.gens.state.store(state | FINAL, Ordering::Release);
            KEPT_SMALL.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.install(next);
    }

    /// Grows straight to the capacity, if the ring may still grow and the memory cap
    /// affords it (else leaves it as it is), and frees the slots it leaves, so a
    /// prepared ring holds (and is charged) its capacity only. The owning thread only,
    /// holding a claim, on a cold path that may wait for a reader's turn (`prepare`:
    /// never the hot path's growth, which leaves retired slots to the readers).
    pub(super) fn grow_to_capacity(&self) {
        let state = load_own(&self.gens.state);
        let last = self.gens.arrays.len() - 1;
        if state & FINAL == 0 && self.afford(last) {
            self.install(last);
            let _turn = self.gens.reader_turn();
            self.gens.free_before(load_own(&self.gens.state));
        }
    }

    /// Charges generation `g`'s slots if the ring is charged; whether the cap
    /// affords them.
    fn afford(&self, g: usize) -> bool {
        #[cfg(any(test, latte_loom))]
        if self.gens.refuse_growth {
            return false;
        }
        let bytes = crate::config::ring_bytes(self.gens.len_of(g));
        !self.gens.charged || RINGS.try_charge(bytes, crate::config::memory_cap())
    }

    /// Makes generation `g`, copies the current slots into the same places, and
    /// publishes it (see the module docs).
    fn install(&self, g: usize) {
        let (old, old_len) = self.gens.current();
        let len = self.gens.len_of(g);
        let new = zeroed_slots(len);
        for (at, slot) in new.iter().enumerate().take(old_len) {
            // SAFETY: `at < old_len`, the current generation's length; the owner is
            // the only one that frees a current generation (with the ring).
            slot.store(load_own(unsafe { &*old.add(at) }), Ordering::Relaxed);
        }
        let new = leak(new);
        let last = g == self.gens.arrays.len() - 1;
        self.gens.arrays[g].store(new, Ordering::Release);
        let final_bit = if last { FINAL } else { 0 };
        self.gens
            .state
            .store(g as u64 | final_bit, Ordering::Release);
        self.slots.store(new, Ordering::Relaxed);
        self.len.store(len as u64, Ordering::Relaxed);
    }
}

/// A boxed slice's slots as a raw pointer, freed by [`Gens::free`].
fn leak(slots: Box<[AtomicU64]>) -> *mut AtomicU64 {
    Box::into_raw(slots).cast::<AtomicU64>()
}

/// Zero-filled slots from the allocator's zeroed path, so the OS backs pages only when
/// samples reach them: an unwritten ring costs address space, not memory.
#[cfg(not(latte_loom))]
fn zeroed_slots(n: usize) -> Box<[AtomicU64]> {
    use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
    let layout = Layout::array::<AtomicU64>(n).expect("ring capacity is bounded by configuration");
    assert!(layout.size() > 0);
    // SAFETY: the layout has non-zero size (n >= 1, checked above).
    let ptr = unsafe { alloc_zeroed(layout) }.cast::<AtomicU64>();
    if ptr.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `ptr` is a fresh allocation of exactly `n` AtomicU64 with the global
    // allocator and `Layout::array::<AtomicU64>(n)`, which is how `Box<[AtomicU64]>`
    // allocates and frees; an all-zero AtomicU64 is a valid `AtomicU64::new(0)`.
    unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, n)) }
}

#[cfg(latte_loom)]
fn zeroed_slots(n: usize) -> Box<[AtomicU64]> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}
