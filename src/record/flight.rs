//! The flight recorder's per-thread buffer: the thread's most recent closed scopes,
//! each with its start and end ticks, its id and its depth, readable while the thread
//! records.
//!
//! A fixed number of entries (a power of two), overwritten oldest first: its memory is
//! fixed from the start (24 bytes an entry). The protocol is the sample ring's (see
//! `ring/mod.rs`) with three words a slot instead of one: the owner claims the next
//! index (`head` odd), fences, stores the slot's words and publishes `head`; a reader
//! copies what the head it read covers, fences, reads the head again and keeps only
//! the indices no push can have overwritten during its copy. A torn entry is never
//! kept: an entry is kept only if no store of a later entry into its slot can have
//! landed before the copy (the loom model in `flight/loom_model.rs` checks that every
//! kept entry's three words belong together).
//!
//! A push that interrupts a push on the same thread (a signal handler's) finds the
//! claim taken and stores nothing: the caller counts it, as for the rings.

use super::ring::claim_head;
use super::sync::{AtomicU64, Ordering, fence};

/// The tick that is zero on timelines' axis: the latest agent's start (0 until one
/// starts: a timeline read without an agent then counts from its first scope).
pub(crate) static ORIGIN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// One closed scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The tick its Start read.
    pub(crate) start: u64,
    /// The tick its Stop read.
    pub(crate) end: u64,
    /// Its id's index.
    pub(crate) idx: u32,
    /// Its depth on the thread's stack (0: opened on an empty stack).
    pub(crate) depth: u32,
}

/// One entry's words.
struct Slot {
    start: AtomicU64,
    end: AtomicU64,
    /// The id's index in the low 32 bits, the depth in the high.
    what: AtomicU64,
}

/// A thread's buffer of its recent scopes: one writer (the owning thread), any readers.
pub(crate) struct Flight {
    /// Twice the entries ever pushed, plus one while a push is in flight.
    head: AtomicU64,
    mask: u64,
    slots: Box<[Slot]>,
}

impl Flight {
    /// A buffer of `capacity` entries (a power of two, at least 1).
    pub(crate) fn new(capacity: usize) -> Flight {
        debug_assert!(capacity.is_power_of_two());
        Flight {
            head: AtomicU64::new(0),
            mask: capacity as u64 - 1,
            slots: (0..capacity)
                .map(|_| Slot {
                    start: AtomicU64::new(0),
                    end: AtomicU64::new(0),
                    what: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    /// The entries it holds at most.
    #[cfg(any(test, latte_loom))]
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Bytes its entries take.
    pub(crate) fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }

    /// Appends `e`, overwriting the oldest entry once full; `false` (nothing stored) if
    /// it interrupted a push on the same thread. Only the owning thread may call this.
    #[inline(always)]
    pub(crate) fn push(&self, e: Entry) -> bool {
        let old = claim_head(&self.head);
        if old & 1 != 0 {
            // A signal handler that interrupted a push: the push resumes as it was.
            self.head.store(old, Ordering::Relaxed);
            return false;
        }
        // Pairs with the reader's acquire fence after its copy: a reader that sees any
        // of these stores sees the claim above in its second head read.
        fence(Ordering::Release);
        let slot = &self.slots[((old >> 1) & self.mask) as usize];
        slot.start.store(e.start, Ordering::Relaxed);
        slot.end.store(e.end, Ordering::Relaxed);
        slot.what.store(
            u64::from(e.idx) | u64::from(e.depth) << 32,
            Ordering::Relaxed,
        );
        self.head.store(old + 2, Ordering::Release);
        true
    }

    /// Appends to `out` the entries of index `since` and later that the buffer still
    /// holds, oldest first, and returns the index of the first one appended (`since`,
    /// or later if older ones were overwritten) and the entries pushed so far. `quiet`:
    /// no push can run meanwhile (the owner is the reader, or has exited), so every
    /// copied entry is exact.
    #[cfg_attr(not(feature = "json"), allow(dead_code))] // read by `flight::timeline`
    pub(crate) fn read(&self, since: u64, quiet: bool, out: &mut Vec<Entry>) -> (u64, u64) {
        let n = self.slots.len() as u64;
        let h1 = self.head.load(Ordering::Acquire) >> 1;
        let lo = since.max(h1.saturating_sub(n)).min(h1);
        let at = out.len();
        out.extend((lo..h1).map(|i| {
            let slot = &self.slots[(i & self.mask) as usize];
            let what = slot.what.load(Ordering::Relaxed);
            Entry {
                start: slot.start.load(Ordering::Relaxed),
                end: slot.end.load(Ordering::Relaxed),
                idx: what as u32,
                depth: (what >> 32) as u32,
            }
        }));
        if quiet {
            return (lo, h1);
        }
        fence(Ordering::Acquire);
        let h2 = self.head.load(Ordering::Relaxed) >> 1;
        // The push of index h2 may have stored into its slot before its head store.
        let first = (h2 + 1).saturating_sub(n).clamp(lo, h1);
        out.drain(at..at + (first - lo) as usize);
        (first, h1)
    }
}

#[cfg(all(test, not(latte_loom)))]
mod tests {
    use super::*;

    fn entry(k: u64) -> Entry {
        Entry {
            start: k * 10,
            end: k * 10 + 5,
            idx: k as u32,
            depth: (k % 3) as u32,
        }
    }

    #[test]
    fn keeps_the_newest_entries_oldest_first() {
        let f = Flight::new(4);
        assert_eq!((f.capacity(), f.bytes()), (4, 96));
        for k in 0..6 {
            assert!(f.push(entry(k)));
        }
        let mut out = Vec::new();
        assert_eq!(f.read(0, true, &mut out), (2, 6));
        assert_eq!(out, (2..6).map(entry).collect::<Vec<_>>());
        // Beside a possible writer, the oldest slot may be the next push's: left out.
        out.clear();
        assert_eq!(f.read(0, false, &mut out), (3, 6));
        assert_eq!(out, (3..6).map(entry).collect::<Vec<_>>());
        out.clear();
        assert_eq!(f.read(5, true, &mut out), (5, 6));
        assert_eq!(out, [entry(5)]);
        out.clear();
        assert_eq!(f.read(6, false, &mut out), (6, 6));
        assert!(out.is_empty());
    }

    #[test]
    fn a_reader_beside_a_writer_keeps_only_whole_entries_in_order() {
        let f = std::sync::Arc::new(Flight::new(64));
        let writer = {
            let f = f.clone();
            std::thread::spawn(move || {
                for k in 0..200_000 {
                    f.push(entry(k));
                }
            })
        };
        let mut since = 0;
        let mut checked = 0;
        while since < 200_000 {
            let mut out = Vec::new();
            let (first, _) = f.read(since, false, &mut out);
            for (i, e) in out.iter().enumerate() {
                assert_eq!(*e, entry(first + i as u64));
            }
            checked += out.len();
            since = first + out.len() as u64;
        }
        writer.join().unwrap();
        assert!(checked > 0);
    }

    #[test]
    fn a_push_inside_a_push_stores_nothing() {
        let f = Flight::new(2);
        // A claim held, as by a push a signal handler interrupted.
        f.head.store(1, Ordering::Relaxed);
        assert!(!f.push(entry(1)));
        assert_eq!(f.head.load(Ordering::Relaxed), 1);
    }
}

#[cfg(latte_loom)]
pub(crate) mod loom_model;
