//! The single-writer sample ring, readable while its owner records.
//!
//! # Protocol
//!
//! The owning thread is the only writer. `head` counts every sample ever pushed, so
//! index `i` lives in slot `i & mask` until index `i + capacity` overwrites it.
//!
//! ```text
//! writer (push v at index h):     reader:
//!   fence(Release)                  h1 = head.load(Acquire)
//!   slot[h & mask].store(v)         copy slots of indices max(0, h1 - N) .. h1
//!   head.store(h + 1, Release)      fence(Acquire)
//!                                   h2 = head.load(Relaxed)
//!                                   keep indices >= h2 + 1 - N
//! ```
//!
//! Why it holds: `head >= i + 1` (read with Acquire) means the store of index `i`
//! happened before the copy, so the copy sees index `i`'s value or a later one. A later
//! value came from the push of some `k >= i + N`; the writer's release fence before that
//! slot store pairs with the reader's acquire fence after the copy, so everything the
//! writer did before it — including publishing `head = k` — is visible to the second
//! head load: `h2 >= k >= i + N`, and `i` is dropped. The `+ 1` covers the push of index
//! `h2` itself, whose slot store may land before its head store. On x86_64 both fences
//! compile to nothing and the writer is two plain `mov`s.
//!
//! The "obvious" protocol — no fences, keep indices `>= h2 - N` — hands back samples
//! with the wrong index when the copy races the writer; the loom model below shows both.
//!
//! When no writer can run (the owner has exited, or the owner is the reader) the copy
//! is exact and the `+ 1` margin is not needed: [`Ring::read`] takes that as `quiet`.
#![allow(unsafe_code)]

use super::sync::{AtomicBool, AtomicU64, Ordering, fence, load_own};

/// A power-of-two ring of `u64` samples with a total-pushed counter.
pub(crate) struct Ring {
    head: AtomicU64,
    mask: u64,
    slots: Box<[AtomicU64]>,
    /// Every page of `slots` has been written ([`Ring::prefault`]); only the footprint
    /// estimate reads it.
    prefaulted: AtomicBool,
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

impl Ring {
    /// A ring of `capacity` samples. `capacity` must be a power of two (checked by
    /// configuration before any ring is made).
    pub(crate) fn new(capacity: usize) -> Ring {
        debug_assert!(capacity.is_power_of_two());
        Ring {
            head: AtomicU64::new(0),
            mask: capacity as u64 - 1,
            slots: zeroed_slots(capacity),
            prefaulted: AtomicBool::new(false),
        }
    }

    /// Capacity in samples.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Appends a sample. Only the owning thread may call this.
    #[inline(always)]
    pub(crate) fn push(&self, value: u64) {
        let h = load_own(&self.head);
        fence(Ordering::Release);
        self.slots[(h & self.mask) as usize].store(value, Ordering::Relaxed);
        self.head.store(h.wrapping_add(1), Ordering::Release);
    }

    /// Forgets every sample, for reuse by another thread. The caller owns the ring
    /// outright (it came out of an `Arc` with no other reference), so nothing can
    /// read or write it concurrently.
    pub(crate) fn reset(&self) {
        self.head.store(0, Ordering::Relaxed);
    }

    /// Writes every slot no sample has reached yet (with 0, which no reader sees: they
    /// read only indices below the head), so the OS backs all of the ring's pages now
    /// rather than on the pushes that first reach them. Only the owning thread may call
    /// this; the head and the retained samples are unchanged.
    pub(crate) fn prefault(&self) {
        let first_unwritten = load_own(&self.head).min(self.slots.len() as u64) as usize;
        for slot in &self.slots[first_unwritten..] {
            // `black_box`: a store of a known 0 into memory from `alloc_zeroed` could
            // be dropped by the optimiser, and then the page would not be written.
            slot.store(std::hint::black_box(0), Ordering::Relaxed);
        }
        self.prefaulted.store(true, Ordering::Relaxed);
    }

    /// Memory the OS backs for this ring: the pages samples (or [`Ring::prefault`])
    /// have reached.
    pub(crate) fn resident_bytes(&self) -> u64 {
        const PAGE: u64 = 4096;
        let written = if self.prefaulted.load(Ordering::Relaxed) {
            self.slots.len() as u64
        } else {
            self.seen()
        };
        let touched = written.min(self.slots.len() as u64) * 8;
        touched.div_ceil(PAGE) * PAGE + 64
    }

    /// Samples ever pushed.
    pub(crate) fn seen(&self) -> u64 {
        self.head.load(Ordering::Acquire)
    }

    /// Appends the retained samples, oldest first, to `out`.
    ///
    /// `quiet` promises that no push can run concurrently (the owner exited, or is the
    /// caller); the read is then exact. Otherwise at most one extra sample — the oldest
    /// — is given up to stay safe against a push in flight.
    pub(crate) fn read(&self, quiet: bool, out: &mut Vec<u64>) -> RingRead {
        self.read_from(0, quiet, out)
    }

    /// Like [`read`](Self::read), but only samples of index `from` or later: what is
    /// new since a previous read whose `seen` was `from`. Samples in `from .. first`
    /// were overwritten before this read reached them.
    pub(crate) fn read_from(&self, from: u64, quiet: bool, out: &mut Vec<u64>) -> RingRead {
        let n = self.slots.len() as u64;
        let h1 = self.head.load(Ordering::Acquire);
        let lo = h1.saturating_sub(n).max(from.min(h1));
        let start = out.len();
        out.extend((lo..h1).map(|i| self.slots[(i & self.mask) as usize].load(Ordering::Relaxed)));
        let first = if quiet {
            lo
        } else {
            fence(Ordering::Acquire);
            let h2 = self.head.load(Ordering::Relaxed);
            (h2 + 1).saturating_sub(n).clamp(lo, h1)
        };
        out.drain(start..start + (first - lo) as usize);
        RingRead {
            seen: h1,
            first,
            kept: h1 - first,
        }
    }
}

impl core::fmt::Debug for Ring {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity", &self.slots.len())
            .field("seen", &self.seen())
            .finish()
    }
}

/// Zero-filled slots from the allocator's zeroed path, so the OS backs pages only when
/// samples reach them: an unwritten ring costs address space, not memory.
#[cfg(not(latte_loom))]
fn zeroed_slots(n: usize) -> Box<[AtomicU64]> {
    use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
    let layout = Layout::array::<AtomicU64>(n).expect("ring capacity is bounded by configuration");
    assert!(layout.size() > 0);
    // SAFETY: the layout has non-zero size (n >= 2, checked above).
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

#[cfg(all(test, not(latte_loom)))]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_newest_in_order() {
        let ring = Ring::new(8);
        for v in 0..21 {
            ring.push(v);
        }
        let mut out = Vec::new();
        let r = ring.read(true, &mut out);
        assert_eq!(out, (13..21).collect::<Vec<_>>());
        assert_eq!((r.seen, r.first, r.kept), (21, 13, 8));
        // A reader that must allow for a push in flight gives up the oldest one.
        out.clear();
        let r = ring.read(false, &mut out);
        assert_eq!(out, (14..21).collect::<Vec<_>>());
        assert_eq!((r.seen, r.first, r.kept), (21, 14, 7));
    }

    #[test]
    fn partial_ring_is_exact_either_way() {
        let ring = Ring::new(8);
        for v in 0..5 {
            ring.push(v * 10);
        }
        for quiet in [true, false] {
            let mut out = vec![99];
            let r = ring.read(quiet, &mut out);
            assert_eq!(out, [99, 0, 10, 20, 30, 40]);
            assert_eq!((r.seen, r.first, r.kept), (5, 0, 5));
        }
    }

    #[test]
    fn read_from_returns_only_what_is_new() {
        let ring = Ring::new(8);
        for v in 0..5 {
            ring.push(v);
        }
        let mut out = Vec::new();
        let r = ring.read_from(3, false, &mut out);
        assert_eq!(
            (out.as_slice(), r.seen, r.first, r.kept),
            (&[3, 4][..], 5, 3, 2)
        );
        // Lapped since index 3: the read starts at the oldest retained sample.
        for v in 5..20 {
            ring.push(v);
        }
        out.clear();
        let r = ring.read_from(5, true, &mut out);
        assert_eq!((r.seen, r.first, r.kept), (20, 12, 8));
        assert_eq!(out, (12..20).collect::<Vec<_>>());
        // Nothing new.
        out.clear();
        assert_eq!(ring.read_from(20, false, &mut out).kept, 0);
        assert!(out.is_empty());
    }

    #[test]
    fn prefault_keeps_the_samples_and_counts_every_page() {
        let ring = Ring::new(1024);
        ring.prefault();
        assert_eq!(ring.resident_bytes(), 1024 * 8 + 64);
        for v in 1..=3 {
            ring.push(v);
        }
        ring.prefault();
        let mut out = Vec::new();
        assert_eq!(ring.read(true, &mut out).seen, 3);
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(Ring::new(1024).resident_bytes(), 64);
    }

    #[test]
    fn empty_ring() {
        let ring = Ring::new(2);
        let mut out = Vec::new();
        assert_eq!(ring.read(false, &mut out).kept, 0);
        assert!(out.is_empty());
        assert_eq!(ring.capacity(), 2);
    }
}

/// `RUSTFLAGS="--cfg latte_loom" cargo test --lib --release loom`
#[cfg(all(test, latte_loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    const CAP: usize = 2;
    const PUSHES: u64 = 5;

    /// The "obvious" protocol DESIGN.md warns about: no fences, keep `>= h2 - N`.
    fn push_naive(ring: &Ring, value: u64) {
        let h = load_own(&ring.head);
        ring.slots[(h & ring.mask) as usize].store(value, Ordering::Relaxed);
        ring.head.store(h + 1, Ordering::Release);
    }

    fn read_naive(ring: &Ring, out: &mut Vec<u64>) -> u64 {
        let n = ring.slots.len() as u64;
        let h1 = ring.head.load(Ordering::Acquire);
        let lo = h1.saturating_sub(n);
        out.extend((lo..h1).map(|i| ring.slots[(i & ring.mask) as usize].load(Ordering::Relaxed)));
        let h2 = ring.head.load(Ordering::Acquire);
        let first = h2.saturating_sub(n).clamp(lo, h1);
        out.drain(..(first - lo) as usize);
        first
    }

    /// The `+ 1` margin without the fences: interleavings alone cannot break it, but
    /// weak memory can (a slot read sees a newer value than the head read after it).
    fn read_no_fence(ring: &Ring, out: &mut Vec<u64>) -> u64 {
        let n = ring.slots.len() as u64;
        let h1 = ring.head.load(Ordering::Acquire);
        let lo = h1.saturating_sub(n);
        out.extend((lo..h1).map(|i| ring.slots[(i & ring.mask) as usize].load(Ordering::Relaxed)));
        let h2 = ring.head.load(Ordering::Acquire);
        let first = (h2 + 1).saturating_sub(n).clamp(lo, h1);
        out.drain(..(first - lo) as usize);
        first
    }

    /// Runs a writer pushing `value = index` against one concurrent read, and checks
    /// every kept sample carries its own index.
    fn check(push: fn(&Ring, u64), read: fn(&Ring, &mut Vec<u64>) -> u64) {
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loom::model(move || {
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let ring = Arc::new(Ring::new(CAP));
            let writer = {
                let ring = ring.clone();
                thread::spawn(move || {
                    for i in 0..PUSHES {
                        push(&ring, i);
                    }
                })
            };
            let mut out = Vec::new();
            let first = read(&ring, &mut out);
            for (k, &v) in out.iter().enumerate() {
                assert_eq!(
                    v,
                    first + k as u64,
                    "sample at index {} holds {v}",
                    first + k as u64
                );
            }
            assert!(out.len() <= CAP);
            writer.join().unwrap();
            // Once the writer is gone the read is exact.
            let mut out = Vec::new();
            let r = ring.read(true, &mut out);
            assert_eq!(r.seen, PUSHES);
            assert_eq!(out, (PUSHES - CAP as u64..PUSHES).collect::<Vec<_>>());
        });
        // Guard against a model that silently stops exploring (see `sync::load_own`).
        assert!(RUNS.swap(0, std::sync::atomic::Ordering::Relaxed) > 100);
    }

    #[test]
    fn loom_shipped_protocol_never_mislabels() {
        check(Ring::push, |ring, out| ring.read(false, out).first);
    }

    #[test]
    fn loom_margin_without_fences_mislabels() {
        let result = std::panic::catch_unwind(|| check(push_naive, read_no_fence));
        assert!(
            result.is_err(),
            "loom found no bad execution without the fences"
        );
    }

    #[test]
    fn loom_naive_protocol_mislabels() {
        let result = std::panic::catch_unwind(|| check(push_naive, read_naive));
        assert!(
            result.is_err(),
            "loom found no bad interleaving for the naive protocol"
        );
    }
}
