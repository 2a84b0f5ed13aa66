//! The recorder's cold paths: first use of a thread and of an id on it, and every
//! misuse (a full stack, a Stop with nothing to close, a missed Stop, an implausible
//! delta). Each is `#[cold]` and `#[inline(never)]`, so the hot functions in
//! `local.rs` stay a few instructions long.

use super::local::{Entry, Local, Stack, push_frame, torn_down};
use super::registry::{self, ThreadShared};
use super::ring::Ring;
use crate::clock::{Mode, Stamp};
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
    pub(super) fn start_slow(&self, idx: u32, mode: Mode) {
        self.cold(|l, shared| {
            let d = l.depth.get() as usize;
            let stack = l.stack.get_or_init(|| {
                let n = config::stack_depth();
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
    pub(super) fn stop_slow(&self, idx: u32, mode: Mode, now: Stamp) {
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
    #[cold]
    #[inline(never)]
    pub(super) fn stop_unordered_slow(&self, idx: u32, mode: Mode, now: Stamp) {
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
