//! Every thread that has recorded, alive or exited: the one place readers cross into
//! the recording threads.
//!
//! A thread registers on its first cold-path call and appends to its own ring list
//! when it first uses an id; both take a lock that readers hold only long enough to
//! clone a list of `Arc`s. The hot path never touches either.

use crate::record::ring::Ring;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What one thread shares with readers.
pub(crate) struct ThreadShared {
    /// 1-based order in which threads first recorded.
    pub(crate) serial: u64,
    /// The thread's name, or `thread-<serial>` when it has none.
    pub(crate) name: String,
    rings: Mutex<Vec<(u32, Arc<Ring>)>>,
    exited: AtomicBool,
    /// latte's own threads (calibration): hidden from captures and reports.
    internal: AtomicBool,
    pub(crate) counters: Counters,
}

/// Misuse and anomaly counters of one thread. Written only by the owning thread (a
/// load and a store, no locked instruction), read by anyone.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) overflowed_starts: AtomicU64,
    pub(crate) empty_stops: AtomicU64,
    pub(crate) unmatched_stops: AtomicU64,
    pub(crate) orphaned_frames: AtomicU64,
    pub(crate) clock_anomalies: AtomicU64,
    pub(crate) open_at_exit: AtomicU64,
    pub(crate) reentrant: AtomicU64,
}

/// Adds `n` to a counter that only the calling thread writes.
pub(crate) fn bump(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).saturating_add(n),
        Ordering::Relaxed,
    );
}

/// Records dropped because the calling thread's recorder was already torn down (a
/// record from another thread-local's destructor after latte's own ran).
pub(crate) static TEARDOWN_DROPS: AtomicU64 = AtomicU64::new(0);

static THREADS: Mutex<Vec<Arc<ThreadShared>>> = Mutex::new(Vec::new());
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here is a single push or clone: a panic cannot leave the
    // data half-updated, so a poisoned lock is safe to use.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ThreadShared {
    pub(crate) fn add_ring(&self, id: u32, ring: Arc<Ring>) {
        lock(&self.rings).push((id, ring));
    }

    /// The thread's rings, in order of first use.
    pub(crate) fn rings(&self) -> Vec<(u32, Arc<Ring>)> {
        lock(&self.rings).clone()
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

/// Registers the calling thread.
pub(crate) fn register() -> Arc<ThreadShared> {
    let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
    let name = std::thread::current()
        .name()
        .map_or_else(|| format!("thread-{serial}"), str::to_owned);
    let shared = Arc::new(ThreadShared {
        serial,
        name,
        rings: Mutex::new(Vec::new()),
        exited: AtomicBool::new(false),
        internal: AtomicBool::new(false),
        counters: Counters::default(),
    });
    lock(&THREADS).push(shared.clone());
    shared
}

/// Every registered thread, in registration order.
pub(crate) fn threads() -> Vec<Arc<ThreadShared>> {
    lock(&THREADS).clone()
}
