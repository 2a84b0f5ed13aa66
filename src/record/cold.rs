//! The recorder's cold paths: first use of a thread and of an id on it, getting both
//! ready ahead of a hot loop (`prepare`), and an implausible delta.
//! Each is `#[cold]` and `#[inline(never)]`, so the hot functions in `local.rs` stay a
//! few instructions long. The stack's own cold paths (a full stack, a missed Stop) are
//! in `stack.rs`.

use super::id_table::Entry;
use super::local::{Local, torn_down};
use super::node::RingKey;
use super::registry::{self, ThreadShared};
use super::ring::Ring;
use super::stack::Stack;
use super::word::signal_fence;
use crate::config;
use crate::diagnostics::bump;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

impl Local {
    /// Runs `f` as a cold path, unless one is already running on this thread (then
    /// the record is counted as re-entrant and dropped).
    pub(super) fn cold<R>(&self, f: impl FnOnce(&Local, &ThreadShared) -> R) -> Option<R> {
        // A load and a store, not a swap: a signal handler that runs between them
        // finishes its own cold path before this one starts, so it cannot overlap it.
        if self.in_cold.load(Relaxed) {
            self.reentrant();
            return None;
        }
        self.in_cold.store(true, Relaxed);
        signal_fence();
        super::alloc::hook(self);
        let shared = self.shared.get_or_init(registry::register);
        let r = f(self, shared);
        signal_fence();
        self.in_cold.store(false, Relaxed);
        Some(r)
    }

    /// Counts a record dropped because it was made inside another record on this
    /// thread: a signal handler that interrupted a push into the same ring or a cold
    /// path, or an instrumented allocator called from a cold path.
    #[cold]
    #[inline(never)]
    pub(super) fn reentrant(&self) {
        match self.shared.get() {
            Some(shared) => bump(&shared.counters.reentrant, 1),
            None => torn_down(),
        }
    }

    /// A push into `ring` whose claimed index `h` is past its slots: grows the ring
    /// (or, the memory cap refusing, now or before, lets it wrap where it is) and
    /// stores `value`.
    /// Inside another cold path (a signal handler's record) nothing is allocated: the
    /// claim is given back and the record counted as re-entrant.
    #[cold]
    #[inline(never)]
    pub(super) fn grow(&self, ring: &Ring, h: u64, value: u64) {
        if self.cold(|_, _| ring.grow()).is_some() {
            ring.commit_grown(h, value);
        } else {
            ring.cancel(h);
        }
    }

    /// First pulse of `idx` on this thread: makes its ring and sets the baseline.
    #[cold]
    #[inline(never)]
    pub(super) fn pulse_slow(&self, idx: u32) {
        self.cold(|l, shared| {
            let Some(ring) = l.make_ring(shared, idx) else {
                return;
            };
            match ring.claim() {
                Some(h) => {
                    // First pulse: baseline only (none while recording is off).
                    let now = crate::clock::ticks();
                    ring.swap_pulse(if super::switch::paused() { 0 } else { now });
                    ring.cancel(h);
                }
                None => l.reentrant(),
            }
        });
    }

    #[cold]
    #[inline(never)]
    /// First store of `idx` on this thread: makes its ring and stores `sample`, with
    /// `own` ticks of self time (0 for a pulse or a record).
    pub(super) fn store_slow(&self, idx: u32, sample: u64, own: u64) {
        self.cold(|l, shared| {
            let Some(ring) = l.make_ring(shared, idx) else {
                return;
            };
            if ring.push(sample) {
                ring.add_own(own);
            } else {
                l.reentrant();
            }
        });
    }

    /// Makes `idx`'s ring on this thread (cold paths only) and returns it; `None`
    /// past the memory cap, with the record counted as dropped under `idx`.
    pub(super) fn make_ring(&self, shared: &ThreadShared, idx: u32) -> Option<Arc<Ring>> {
        let ring = self.root_ring(shared, idx);
        if ring.is_none() {
            self.count_over_cap(shared, idx);
        }
        ring
    }

    /// Makes `idx`'s ring on this thread (its call-tree node at the root), or `None`
    /// past the memory cap, counting nothing (a Start: its Stop counts the drop).
    pub(super) fn root_ring(&self, shared: &ThreadShared, idx: u32) -> Option<Arc<Ring>> {
        let ring = self.new_ring(shared, idx, false)?;
        let ring = self.list(shared, RingKey::root(idx), ring);
        self.install_rings(self.table_len_for(idx), &[(idx, ring.clone())]);
        Some(ring)
    }

    /// A ring for `idx` on this thread, charged against the memory cap (latte's own
    /// threads are not charged); `None` if the cap refused this id here, now or
    /// before (then it stays refused on this thread). It starts small and grows,
    /// unless `full` (for `prepare`): then it is made at its capacity.
    pub(super) fn new_ring(&self, shared: &ThreadShared, idx: u32, full: bool) -> Option<Ring> {
        if self.capped.borrow().contains_key(&idx) {
            return None;
        }
        let cap = (!shared.internal()).then(config::memory_cap);
        let capacity = config::ring_capacity();
        // A prepared ring is made whole: its thread asked for no growth in its loop.
        let first = if full {
            capacity
        } else {
            capacity.min(config::RING_START)
        };
        let ring = registry::global().ring(capacity, first, cap);
        if ring.is_none() {
            let count = shared.add_capped(idx);
            self.capped.borrow_mut().insert(idx, count);
        }
        ring
    }

    /// Counts a record of `idx` dropped past the memory cap.
    pub(super) fn count_over_cap(&self, shared: &ThreadShared, idx: u32) {
        if let Some(count) = self.capped.borrow().get(&idx) {
            bump(count, 1);
            bump(&shared.counters.over_cap, 1);
        }
    }

    /// Makes everything the hot path touches for `indices` exist and backed by memory:
    /// the thread's registration, its stack, its table entries and a ring per index,
    /// with every page written. See [`prepare`](crate::record::prepare).
    #[cold]
    #[inline(never)]
    pub(super) fn prepare(&self, indices: &[u32]) {
        // The clock is chosen on its first read (which measures and reads files): do it
        // now, not in a signal handler's first record.
        crate::clock::ticks();
        self.cold(|l, shared| {
            Stack::of(l).touch();
            let mut wanted = indices.to_vec();
            wanted.sort_unstable();
            wanted.dedup();
            l.prepared.borrow_mut().extend(wanted.iter().copied());
            let Some(&highest) = wanted.last() else {
                return;
            };
            let has_ring = |i: u32| l.ring(i).is_some();
            // Past the memory cap an id gets no ring: its records are counted later.
            let fresh: Vec<(u32, Arc<Ring>)> = wanted
                .iter()
                .filter(|&&i| !has_ring(i))
                .filter_map(|&i| {
                    let ring = l.new_ring(shared, i, true)?;
                    Some((i, l.spares.borrow_mut().house(ring)))
                })
                .collect();
            if !fresh.is_empty() || highest as usize >= l.entry_count() {
                let listed: Vec<_> = fresh
                    .iter()
                    .map(|(i, r)| (RingKey::root(*i), r.clone()))
                    .collect();
                l.list_all(shared, &listed);
                l.install_rings(l.table_len_for(highest), &fresh);
            }
            for &i in &wanted {
                if let Some(ring) = l.ring(i) {
                    ring.prefault();
                }
            }
        });
    }

    /// Counts a cancelled [`Timer`](super::Timer) of `idx` on this thread.
    #[cold]
    #[inline(never)]
    pub(crate) fn cancelled(&self, idx: u32) {
        self.cold(|_, shared| shared.count_cancel(idx));
    }

    /// Counts a delta that cannot be a duration (the counter went backwards or jumped):
    /// as `cross_core` when its two reads ran on cores whose counters may disagree (a
    /// `Timer` closed on another thread, a scope whose reads named two CPUs), as a
    /// clock anomaly otherwise.
    #[cold]
    pub(super) fn implausible(&self, cross_core: bool) {
        self.cold(|_, shared| {
            let c = &shared.counters;
            let counter = if cross_core {
                &c.cross_core
            } else {
                &c.clock_anomalies
            };
            bump(counter, 1);
        });
    }

    /// The length the table needs for an entry at `idx`: the current one, or grown
    /// geometrically.
    pub(super) fn table_len_for(&self, idx: u32) -> usize {
        let len = self.entry_count();
        if (idx as usize) < len {
            return len;
        }
        (idx as usize + 1).max(len * 2).max(16)
    }

    /// Sets each of `rings` (already in the thread's shared ring list, which keeps
    /// them alive) at its index in the table, first growing the table to `len`
    /// entries if it is shorter (a copy; the old table is kept, see `Local::tables`).
    /// An entry is written once, in place, from null.
    fn install_rings(&self, len: usize, rings: &[(u32, Arc<Ring>)]) {
        if len > self.entry_count() {
            self.grow_table(len);
        }
        for (at, ring) in rings {
            let entry = self
                .entry(*at)
                .expect("the table reaches every index installed");
            debug_assert!(entry.ring.load(Relaxed).is_null());
            // The ring is complete before a signal handler can see it in the entry.
            signal_fence();
            entry.ring.store(Arc::as_ptr(ring).cast_mut(), Relaxed);
        }
    }

    /// Installs a new table of `len` entries (more than the current length) copied
    /// from the current one.
    pub(super) fn grow_table(&self, len: usize) {
        let mut tables = self.tables.borrow_mut();
        let new: Vec<Entry> = (0..len)
            .map(|i| Entry::copy_of(tables.last().and_then(|t| t.get(i))))
            .collect();
        tables.push(new.into_boxed_slice());
        let current = tables.last().map_or(&[][..], |t| &t[..]);
        // Only ever read through shared references (`Local::entry`).
        let (base, len) = (current.as_ptr().cast_mut(), current.len());
        // The entries, then the base, then the (larger) length, each visible in that
        // order to a signal handler: see `Local::entry`.
        signal_fence();
        self.table_base.store(base, Relaxed);
        signal_fence();
        self.table_len.store(len, Relaxed);
    }

    fn entry_count(&self) -> usize {
        self.table_len.load(Relaxed)
    }
}
