//! The recorder's cold paths: first use of a thread and of an id on it, and an
//! implausible delta. Each is `#[cold]` and `#[inline(never)]`, so the hot functions
//! in `local.rs` stay a few instructions long. The stack's own cold paths (a full
//! stack, a missed Stop) are in `stack.rs`.

use super::local::{Entry, Local, torn_down};
use super::registry::{self, ThreadShared};
use super::ring::Ring;
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
            shared.add_ring(idx, ring.clone());
            l.grow_table(idx);
            l.install_table(l.entry_count(), Some((idx, ring.clone())));
            ring.push(sample);
        });
    }

    #[cold]
    pub(super) fn clock_anomaly(&self) {
        self.cold(|_, shared| bump(&shared.counters.clock_anomalies, 1));
    }

    /// Makes sure the table has an entry for `idx`.
    fn grow_table(&self, idx: u32) {
        let len = self.entry_count();
        if (idx as usize) >= len {
            self.install_table((idx as usize + 1).max(len * 2).max(16), None);
        }
    }

    /// Copy-on-write: installs a new table of `len` entries (at least the current
    /// length) copied from the current one, with `ring` set at its index. Entries are
    /// replaced, never mutated behind a reference handed out earlier.
    fn install_table(&self, len: usize, ring: Option<(u32, Arc<Ring>)>) {
        let mut tables = self.tables.borrow_mut();
        let new: Box<[Entry]> = (0..len)
            .map(|i| {
                let old = tables.last().and_then(|t| t.get(i));
                Entry {
                    ring: match &ring {
                        Some((at, ring)) if *at as usize == i => Some(ring.clone()),
                        _ => old.and_then(|e| e.ring.clone()),
                    },
                    pulse_last: Cell::new(old.map_or(0, |e| e.pulse_last.get())),
                }
            })
            .collect();
        self.table.set(&*new as *const [Entry]);
        tables.push(new);
    }

    fn entry_count(&self) -> usize {
        self.table.get().len()
    }
}
