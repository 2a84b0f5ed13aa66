//! The recorder's cold paths: first use of a thread and of an id on it, getting both
//! ready ahead of a hot loop (`prepare`), and an implausible delta.
//! Each is `#[cold]` and `#[inline(never)]`, so the hot functions in `local.rs` stay a
//! few instructions long. The stack's own cold paths (a full stack, a missed Stop) are
//! in `stack.rs`.

use super::local::{Entry, Local, torn_down};
use super::registry::{self, ThreadShared};
use super::ring::Ring;
use super::stack::Stack;
use crate::config;
use crate::diagnostics::bump;
use std::cell::Cell;
use std::sync::Arc;

impl Local {
    /// Runs `f` as a cold path, unless one is already running on this thread (then
    /// the record is counted as re-entrant and dropped).
    pub(super) fn cold<R>(&self, f: impl FnOnce(&Local, &ThreadShared) -> R) -> Option<R> {
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
    pub(super) fn pulse_slow(&self, idx: u32, now: u64) {
        self.cold(|l, _| {
            l.grow_table(idx);
            if let Some(entry) = l.entry(idx) {
                entry.pulse_last.set(now); // first pulse: baseline only
            }
        });
    }

    #[cold]
    #[inline(never)]
    pub(super) fn store_slow(&self, idx: u32, sample: u64) {
        self.cold(|l, shared| {
            let ring = Arc::new(registry::global().ring(config::ring_capacity()));
            let fresh = [(idx, ring.clone())];
            shared.add_rings(&fresh);
            l.install_table(l.table_len_for(idx), &fresh);
            ring.push(sample);
        });
    }

    /// Makes everything the hot path touches for `indices` exist and backed by memory:
    /// the thread's registration, its stack, its table entries and a ring per index,
    /// with every page written. See [`prepare`](crate::record::prepare).
    #[cold]
    #[inline(never)]
    pub(super) fn prepare(&self, indices: &[u32]) {
        self.cold(|l, shared| {
            Stack::of(l).touch();
            let mut wanted = indices.to_vec();
            wanted.sort_unstable();
            wanted.dedup();
            let Some(&highest) = wanted.last() else {
                return;
            };
            let has_ring = |i: u32| l.entry(i).is_some_and(|e| e.ring.is_some());
            let fresh: Vec<(u32, Arc<Ring>)> = wanted
                .iter()
                .filter(|&&i| !has_ring(i))
                .map(|&i| {
                    (
                        i,
                        Arc::new(registry::global().ring(config::ring_capacity())),
                    )
                })
                .collect();
            if !fresh.is_empty() || highest as usize >= l.entry_count() {
                shared.add_rings(&fresh);
                l.install_table(l.table_len_for(highest), &fresh);
            }
            for &i in &wanted {
                if let Some(ring) = l.entry(i).and_then(|e| e.ring.as_deref()) {
                    ring.prefault();
                }
            }
        });
    }

    #[cold]
    pub(super) fn clock_anomaly(&self) {
        self.cold(|_, shared| bump(&shared.counters.clock_anomalies, 1));
    }

    /// Makes sure the table has an entry for `idx`.
    fn grow_table(&self, idx: u32) {
        if (idx as usize) >= self.entry_count() {
            self.install_table(self.table_len_for(idx), &[]);
        }
    }

    /// The length the table needs for an entry at `idx`: the current one, or grown
    /// geometrically.
    fn table_len_for(&self, idx: u32) -> usize {
        let len = self.entry_count();
        if (idx as usize) < len {
            return len;
        }
        (idx as usize + 1).max(len * 2).max(16)
    }

    /// Copy-on-write: installs a new table of `len` entries (at least the current
    /// length) copied from the current one, with each of `rings` set at its index.
    /// Entries are replaced, never mutated behind a reference handed out earlier.
    fn install_table(&self, len: usize, rings: &[(u32, Arc<Ring>)]) {
        let mut tables = self.tables.borrow_mut();
        let mut new: Vec<Entry> = (0..len)
            .map(|i| {
                let old = tables.last().and_then(|t| t.get(i));
                Entry {
                    ring: old.and_then(|e| e.ring.clone()),
                    pulse_last: Cell::new(old.map_or(0, |e| e.pulse_last.get())),
                }
            })
            .collect();
        for (at, ring) in rings {
            new[*at as usize].ring = Some(ring.clone());
        }
        let new = new.into_boxed_slice();
        self.table.set(&*new as *const [Entry]);
        tables.push(new);
    }

    fn entry_count(&self) -> usize {
        self.table.get().len()
    }
}
