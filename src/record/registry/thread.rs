//! What one recording thread shares with readers, and the lock discipline of the
//! registry (in debug builds a marker says whether the calling thread holds a registry
//! lock, so a test allocator can check nothing is allocated or freed under one).

use crate::diagnostics::{Counters, FrameCounts, FrameEnd, bump};
use crate::record::ring::Ring;
use crate::record::sync::{AtomicBool, Mutex, MutexGuard, Ordering};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, PoisonError};

/// A thread's rings with their id indices, in order of first use.
pub(crate) type RingList = Arc<Vec<(u32, Arc<Ring>)>>;

/// A thread's frames that ended without their Stop, per id index, in order of first
/// such frame.
pub(crate) type FrameList = Arc<Vec<(u32, FrameCounts)>>;

/// Per id index, a count written by the owning thread only (a load and a store) and
/// read by anyone: the records an id dropped past the memory cap, the timers of an id
/// cancelled. In order of the first such event.
pub(crate) type CountList = Arc<Vec<(u32, Arc<AtomicU64>)>>;

/// What one thread shares with readers.
pub(crate) struct ThreadShared {
    /// 1-based order in which threads first recorded.
    pub(crate) serial: u64,
    /// The thread's name, or `thread-<serial>` when it has none.
    pub(crate) name: String,
    /// Copy-on-write: readers clone the `Arc`, the owner swaps in a new list.
    pub(super) rings: Mutex<RingList>,
    exited: AtomicBool,
    /// latte's own threads (calibration): hidden from captures and reports.
    internal: AtomicBool,
    pub(crate) counters: Counters,
    /// Copy-on-write like `rings`: the per-id split of three of the `counters`.
    frames: Mutex<FrameList>,
    /// Copy-on-write like `rings`: the per-id split of the `over_cap` counter. Read
    /// through [`frames`](Self::frames).
    capped: Mutex<CountList>,
    /// Copy-on-write like `rings`: the timers cancelled per id (no thread counter: a
    /// cancel is not an anomaly). Read through [`frames`](Self::frames).
    cancelled: Mutex<CountList>,
}

/// Records dropped because the calling thread's recorder was already torn down (a
/// record from another thread-local's destructor after latte's own ran).
pub(crate) static TEARDOWN_DROPS: AtomicU64 = AtomicU64::new(0);

pub(super) fn lock<T>(m: &Mutex<T>) -> Locked<'_, T> {
    // Every critical section here is a push, a swap or a clone: a panic cannot leave
    // the data half-updated, so a poisoned lock is safe to use.
    let guard = m.lock().unwrap_or_else(PoisonError::into_inner);
    #[cfg(debug_assertions)]
    HELD.with(|h| h.set(h.get() + 1));
    Locked(guard)
}

#[cfg(debug_assertions)]
thread_local! {
    /// Registry locks the thread holds (debug builds): lets a test's allocator check
    /// that nothing is allocated or freed under one.
    static HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Whether the calling thread holds a registry lock (always `false` in release).
#[cfg(feature = "test-hooks")]
pub(crate) fn lock_held() -> bool {
    #[cfg(debug_assertions)]
    return HELD.try_with(|h| h.get() > 0).unwrap_or(false);
    #[cfg(not(debug_assertions))]
    return false;
}

/// A registry lock guard; in debug builds it keeps [`lock_held`] true while it lives.
pub(super) struct Locked<'a, T>(MutexGuard<'a, T>);

impl<T> std::ops::Deref for Locked<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Locked<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> Drop for Locked<'_, T> {
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        let _ = HELD.try_with(|h| h.set(h.get() - 1));
    }
}

impl ThreadShared {
    pub(crate) fn new(serial: u64, name: String) -> ThreadShared {
        ThreadShared {
            serial,
            name,
            rings: Mutex::new(Arc::new(Vec::new())),
            exited: AtomicBool::new(false),
            internal: AtomicBool::new(false),
            counters: Counters::default(),
            frames: Mutex::new(Arc::new(Vec::new())),
            capped: Mutex::new(Arc::new(Vec::new())),
            cancelled: Mutex::new(Arc::new(Vec::new())),
        }
    }

    /// Adds rings (owning thread only): the new list is built outside the lock, and
    /// the old one is freed outside it.
    pub(crate) fn add_rings(&self, rings: &[(u32, Arc<Ring>)]) {
        let mut list = Vec::clone(&self.rings());
        list.extend_from_slice(rings);
        let list = Arc::new(list);
        let old = std::mem::replace(&mut *lock(&self.rings), list);
        drop(old);
    }

    /// The thread's rings, in order of first use (an `Arc` clone under the lock).
    pub(crate) fn rings(&self) -> RingList {
        lock(&self.rings).clone()
    }

    /// Counts one frame that ended `end`'s way under each id index of `ids` (owning
    /// thread, cold paths only), per id and in the thread total. Like
    /// [`add_rings`](Self::add_rings), the new list is built and the old one freed outside
    /// the lock.
    pub(crate) fn count_frames(&self, end: FrameEnd, ids: impl IntoIterator<Item = u32>) {
        let mut ids = ids.into_iter().peekable();
        if ids.peek().is_none() {
            return;
        }
        let current = lock(&self.frames).clone();
        let mut list = Vec::clone(&current);
        let mut n = 0;
        for idx in ids {
            entry(&mut list, idx).add(end, 1);
            n += 1;
        }
        bump(self.counters.frames(end), n);
        let list = Arc::new(list);
        let old = std::mem::replace(&mut *lock(&self.frames), list);
        drop(old);
    }

    /// Adds an id whose ring the memory cap refused (owning thread, cold paths only)
    /// and returns its counter of dropped records, shared with the caller.
    pub(crate) fn add_capped(&self, idx: u32) -> Arc<AtomicU64> {
        let count = Arc::new(AtomicU64::new(0));
        let current = lock(&self.capped).clone();
        let mut list = Vec::clone(&current);
        list.push((idx, count.clone()));
        let old = std::mem::replace(&mut *lock(&self.capped), Arc::new(list));
        drop(old);
        count
    }

    /// Counts a cancelled timer of `idx` (owning thread, cold paths only): a load and
    /// a store once the id has a counter here; its first cancel adds one (the new list
    /// built and the old one freed outside the lock).
    pub(crate) fn count_cancel(&self, idx: u32) {
        let current = lock(&self.cancelled).clone();
        if let Some((_, n)) = current.iter().find(|(i, _)| *i == idx) {
            return bump(n, 1);
        }
        let mut list = Vec::clone(&current);
        list.push((idx, Arc::new(AtomicU64::new(1))));
        let old = std::mem::replace(&mut *lock(&self.cancelled), Arc::new(list));
        drop((old, current));
    }

    /// The per-id frame counts, with the records each capped id dropped
    /// ([`FrameCounts::over_cap`]) and the timers cancelled
    /// ([`FrameCounts::cancelled_timers`]).
    pub(crate) fn frames(&self) -> FrameList {
        let frames = lock(&self.frames).clone();
        let capped = lock(&self.capped).clone();
        let cancelled = lock(&self.cancelled).clone();
        if capped.is_empty() && cancelled.is_empty() {
            return frames;
        }
        let mut list = Vec::clone(&frames);
        let counts = |list: &CountList| -> Vec<(u32, u64)> {
            let read = |(idx, n): &(u32, Arc<AtomicU64>)| (*idx, n.load(Ordering::Relaxed));
            list.iter().map(read).collect()
        };
        for (idx, n) in counts(&capped) {
            entry(&mut list, idx).over_cap = n;
        }
        for (idx, n) in counts(&cancelled) {
            entry(&mut list, idx).cancelled_timers = n;
        }
        Arc::new(list)
    }

    /// Marks the thread as gone: no push can follow.
    pub(crate) fn retire(&self) {
        self.exited.store(true, Ordering::Release);
    }

    pub(crate) fn exited(&self) -> bool {
        self.exited.load(Ordering::Acquire)
    }

    pub(crate) fn mark_internal(&self) {
        self.internal.store(true, Ordering::Relaxed);
    }

    pub(crate) fn internal(&self) -> bool {
        self.internal.load(Ordering::Relaxed)
    }
}

/// The counts of `idx` in `list`, added (all zero) if missing.
fn entry(list: &mut Vec<(u32, FrameCounts)>, idx: u32) -> &mut FrameCounts {
    let at = match list.iter().position(|(i, _)| *i == idx) {
        Some(at) => at,
        None => {
            list.push((idx, FrameCounts::default()));
            list.len() - 1
        }
    };
    &mut list[at].1
}
