//! Giving back the memory of exited threads: compaction and merging.
//!
//! An exited thread is replaced, in one step under the registry lock, by a
//! [`Compacted`] copy of only its retained samples, under the same name, serial and
//! ids. Its rings go back to the pool for new threads (only when nothing else holds
//! them, after resetting their count, so a recycled ring never shows an old thread's
//! samples). Beyond the configured number of exited threads, the oldest are merged into
//! one `<exited threads>` entry per id keeping the newest `capacity` samples, with every
//! count summed, so memory stays bounded under any amount of thread churn.

use super::{Lists, Registry, ThreadShared};
use crate::config;
use crate::diagnostics::{Anomalies, Unpaired};
use crate::record::alloc::Allocs;
use crate::record::node::{RingKey, merge_by_path};
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::PoisonError;

/// An exited thread reduced to its retained samples.
pub(crate) struct Compacted {
    pub(crate) serial: u64,
    pub(crate) name: String,
    pub(crate) anomalies: Anomalies,
    /// Frames that ended without their Stop, per id index.
    pub(crate) unpaired: Vec<(u32, Unpaired)>,
    pub(crate) components: Vec<CompactRing>,
    /// Allocations counted while no scope was open on the thread.
    pub(crate) outside: Allocs,
    /// The first allocation in an allocation-free scope: its node's position in
    /// `components`, and its size.
    pub(crate) first_breach: Option<(u32, u64)>,
}

/// One ring's retained samples of an exited thread (or of the merged threads).
#[derive(Clone)]
pub(crate) struct CompactRing {
    /// What the ring recorded (positions are in the same thread's list, or the merged
    /// list).
    pub(crate) key: RingKey,
    /// Self time of the `seen` scopes, summed.
    pub(crate) own_ticks: u64,
    /// Allocations counted in the node.
    pub(crate) allocs: Allocs,
    pub(crate) seen: u64,
    pub(crate) capacity: usize,
    pub(crate) samples: VecDeque<u64>,
}

impl CompactRing {
    /// Index (in the recording sequence) of the first retained sample.
    pub(crate) fn first(&self) -> u64 {
        self.seen - self.samples.len() as u64
    }
}

/// The oldest compacted threads, merged together once there are too many.
#[derive(Clone, Default)]
pub(crate) struct Merged {
    pub(crate) threads: u64,
    pub(crate) anomalies: Anomalies,
    /// Frames that ended without their Stop, per id index, summed over the threads.
    pub(crate) unpaired: Vec<(u32, Unpaired)>,
    pub(crate) components: Vec<CompactRing>,
    /// Allocations counted while no scope was open on the threads, summed.
    pub(crate) outside: Allocs,
}

/// Name under which merged threads appear.
pub(crate) const MERGED_NAME: &str = "<exited threads>";

impl Registry {
    /// Replaces exited threads by compact copies of their retained samples and
    /// recycles freed rings. Returns how many threads it compacted.
    pub(crate) fn compact(&self) -> usize {
        // 1. Which threads have exited.
        let done: Vec<Arc<ThreadShared>> = self
            .view()
            .live
            .iter()
            .filter(|t| t.exited())
            .cloned()
            .collect();
        if done.is_empty() {
            return 0;
        }
        // 2. Copy their retained samples, without the lock. latte's own (internal)
        //    threads are dropped, not kept.
        let compacted: Vec<Arc<Compacted>> = done
            .iter()
            .filter(|t| !t.internal())
            .map(|t| Arc::new(compact_copy(t)))
            .collect();
        // 3. Swap them in, in one step.
        self.update(|lists| {
            let mut next = lists.clone();
            let gone: HashSet<*const ThreadShared> = done.iter().map(Arc::as_ptr).collect();
            next.live.retain(|t| !gone.contains(&Arc::as_ptr(t)));
            next.exited.extend(compacted.iter().cloned());
            next.exited.sort_by_key(|c| c.serial);
            next
        });
        let n = done.len();
        // 4. Recycle rings nothing else holds.
        for thread in done {
            self.recycle_rings(thread);
        }
        n
    }

    /// Returns the rings of a compacted thread to the pool, if nothing else holds it.
    fn recycle_rings(&self, thread: Arc<ThreadShared>) {
        let rings = Arc::into_inner(thread)
            .map(|t| t.rings.into_inner().unwrap_or_else(PoisonError::into_inner))
            .and_then(Arc::into_inner)
            .unwrap_or_default();
        for (_, ring) in rings {
            if let Some(ring) = Arc::into_inner(ring) {
                self.recycle(ring);
            }
        }
    }

    /// Merges the oldest compacted threads beyond the configured limit into the
    /// `<exited threads>` entry, as long as `read(serial)` says the whole-run ledger
    /// has read all of the thread (only the ledger's fold calls this, so no sample is
    /// merged away before it was counted).
    pub(crate) fn merge_excess(&self, read: impl Fn(u64) -> bool) {
        let view = self.view();
        let n = view
            .exited
            .len()
            .saturating_sub(config::max_exited_threads());
        let threads: Vec<_> = view.exited[..n]
            .iter()
            .take_while(|c| read(c.serial))
            .cloned()
            .collect();
        if threads.is_empty() {
            return;
        }
        let mut merged = view.merged.as_deref().cloned().unwrap_or_default();
        for t in &threads {
            merge_into(&mut merged, t);
        }
        // Remove the merged threads and install the new merged entry in one swap, so a
        // reader sees each thread either compacted or merged, never neither. Only this
        // function replaces the merged entry, one call at a time (`HOUSEKEEPING`), so
        // the entry read above is still the one in place.
        let merged = Arc::new(merged);
        self.update(|lists: &Lists| {
            let mut next = lists.clone();
            let folded_now: HashSet<*const Compacted> = threads.iter().map(Arc::as_ptr).collect();
            next.exited
                .retain(|c| !folded_now.contains(&Arc::as_ptr(c)));
            next.merged = Some(merged.clone());
            next
        });
    }
}

/// An exact copy of an exited thread's retained samples: the owner has exited, so no
/// push can run during the read.
fn compact_copy(t: &ThreadShared) -> Compacted {
    let components = t
        .rings()
        .iter()
        .map(|(key, ring)| {
            let mut samples = Vec::new();
            let read = ring.read(true, &mut samples);
            CompactRing {
                key: *key,
                own_ticks: ring.own_ticks(),
                allocs: ring.allocs().read(),
                seen: read.seen,
                capacity: ring.capacity(),
                samples: samples.into(),
            }
        })
        .collect();
    Compacted {
        serial: t.serial,
        name: t.name.clone(),
        anomalies: t.counters.read(),
        unpaired: Vec::clone(&t.unpaired()),
        components,
        outside: t.outside.read(),
        first_breach: t.first_breach(),
    }
}

/// Adds one compacted thread to the merged entry: counts summed, the newest `capacity`
/// samples of each id kept.
fn merge_into(merged: &mut Merged, t: &Compacted) {
    merged.threads += 1;
    merged.anomalies = merged.anomalies.plus(&t.anomalies);
    merged.outside = merged.outside.plus(&t.outside);
    for (index, counts) in &t.unpaired {
        match merged.unpaired.iter_mut().find(|(i, _)| i == index) {
            Some((_, sum)) => *sum = sum.plus(counts),
            None => merged.unpaired.push((*index, *counts)),
        }
    }
    let adopt = |r: &CompactRing, key| CompactRing {
        key,
        own_ticks: 0,
        allocs: Allocs::default(),
        seen: 0,
        capacity: r.capacity,
        samples: VecDeque::new(),
    };
    let add = |slot: &mut CompactRing, r: &CompactRing| {
        slot.seen += r.seen;
        slot.own_ticks = slot.own_ticks.wrapping_add(r.own_ticks);
        slot.allocs = slot.allocs.plus(&r.allocs);
        slot.capacity = slot.capacity.max(r.capacity);
        slot.samples.extend(r.samples.iter().copied());
        let excess = slot.samples.len().saturating_sub(slot.capacity);
        slot.samples.drain(..excess);
    };
    let key = |r: &CompactRing| r.key;
    let (into, from) = (&mut merged.components, &t.components);
    merge_by_path(
        into,
        from,
        key,
        |r, k| {
            let mut slot = adopt(r, k);
            add(&mut slot, r);
            slot
        },
        add,
    );
}

#[cfg(all(test, not(latte_loom)))]
mod tests {
    use super::*;
    use crate::diagnostics::UnpairedKind;

    #[test]
    fn unpaired_counts_survive_compaction_and_sum_per_id_when_folded() {
        let (a, b) = (
            ThreadShared::new(1, "a".into()),
            ThreadShared::new(2, "b".into()),
        );
        a.count_unpaired(UnpairedKind::Abandoned, [7, 7, 9]);
        a.count_unpaired(UnpairedKind::OpenAtExit, [9]);
        b.count_unpaired(UnpairedKind::Orphaned, [9, 11]);
        // Records dropped past the memory cap join the same per-id list.
        b.add_capped(11)
            .store(4, std::sync::atomic::Ordering::Relaxed);
        b.add_capped(12)
            .store(5, std::sync::atomic::Ordering::Relaxed);
        // So do cancelled timers.
        b.count_cancel(12);
        b.count_cancel(12);
        let (a, b) = (compact_copy(&a), compact_copy(&b));
        let counts = |abandoned, orphaned, open_at_exit| Unpaired {
            abandoned,
            orphaned,
            open_at_exit,
            ..Unpaired::default()
        };
        let capped = |over_cap, orphaned| Unpaired {
            over_cap,
            ..counts(0, orphaned, 0)
        };
        assert_eq!(a.unpaired, [(7, counts(2, 0, 0)), (9, counts(1, 0, 1))]);
        assert_eq!(
            (a.anomalies.abandoned_scopes, a.anomalies.open_at_exit),
            (3, 1)
        );
        let mut merged = Merged::default();
        merge_into(&mut merged, &a);
        merge_into(&mut merged, &b);
        assert_eq!(
            merged.unpaired,
            [
                (7, counts(2, 0, 0)),
                (9, counts(1, 1, 1)),
                (11, capped(4, 1)),
                (
                    12,
                    Unpaired {
                        cancelled_timers: 2,
                        ..capped(5, 0)
                    }
                )
            ]
        );
        assert_eq!(merged.anomalies.orphaned_scopes, 2);
    }
}
