//! Every thread that has recorded, alive or exited: the one place readers cross into
//! the recording threads, and where exited threads' memory is given back.
//!
//! A thread registers on its first cold-path call and appends to its own ring list
//! when it first uses an id; both take a lock that readers hold only long enough to
//! clone a list of `Arc`s. The hot path never touches either.
//!
//! A thread's recorder marks its [`ThreadShared`] as exited (Release) from its
//! thread-local destructor; no push can follow. Compaction (`compact.rs`) then
//! replaces it by a copy of its retained samples, and merges the oldest exited threads
//! together beyond the configured limit. A reader always sees a thread either live or
//! compacted (or merged), never both and never neither.

mod compact;
mod thread;

pub(crate) use compact::{CompactRing, MERGED_NAME};
#[cfg(feature = "test-hooks")]
pub(crate) use thread::lock_held;
pub(crate) use thread::{Link, TEARDOWN_DROPS, ThreadShared};

use super::fork::PerProcess;
use super::ring::Ring;
use super::sync::Mutex;
use crate::diagnostics::Footprint;
use arrayvec::ArrayVec;
use compact::{Compacted, Merged};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, LazyLock, PoisonError};
use thread::lock;

/// Every thread latte knows, as one immutable value: a reader takes the whole
/// (consistent) set by cloning one `Arc`; a writer builds a new set and swaps it in.
#[derive(Clone, Default)]
pub(crate) struct Lists {
    pub(crate) live: Vec<Arc<ThreadShared>>,
    pub(crate) exited: Vec<Arc<Compacted>>,
    pub(crate) merged: Option<Arc<Merged>>,
}

/// A consistent view of every thread.
pub(crate) type View = Arc<Lists>;

/// The list of threads and their memory.
///
/// No lock a reader takes is held across an allocation, a free or I/O: under `lists`
/// a reader clones an `Arc` and a writer swaps one; under `pool` rings are moved in and
/// out of a fixed-capacity `ArrayVec`. Writers (cold paths) take turns on `writers` and
/// build their new lists there.
pub(crate) struct Registry {
    lists: Mutex<Arc<Lists>>,
    /// Serialises writers (registration, compaction, merging: cold paths only), so a
    /// writer builds its new lists once instead of retrying against the others. Readers
    /// never take it. Allocation happens under this lock, never under `lists`.
    writers: Mutex<()>,
    next_serial: AtomicU64,
    /// Rings of exited threads, for reuse. Fixed capacity: moving a ring in or out
    /// never allocates, so it is safe under the lock.
    pool: Mutex<ArrayVec<Ring, POOL_RINGS>>,
}

/// Rings kept for reuse at most.
const POOL_RINGS: usize = 16;

impl Registry {
    pub(crate) fn new() -> Registry {
        Registry {
            lists: Mutex::new(Arc::new(Lists::default())),
            writers: Mutex::new(()),
            next_serial: AtomicU64::new(1),
            pool: Mutex::new(ArrayVec::new()),
        }
    }

    /// Registers a thread.
    pub(crate) fn register(&self, name: Option<&str>) -> Arc<ThreadShared> {
        let serial = self
            .next_serial
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = name.map_or_else(|| format!("thread-{serial}"), str::to_owned);
        let shared = Arc::new(ThreadShared::new(serial, name));
        self.update(|lists| {
            let mut next = lists.clone();
            next.live.push(shared.clone());
            next
        });
        shared
    }

    /// Every thread, live or exited, in one consistent view.
    pub(crate) fn view(&self) -> View {
        lock(&self.lists).clone()
    }

    /// Replaces the lists by `change(current)`. Writers take turns (`writers`), so the
    /// new lists are built once, outside the lock readers take; that lock is held only
    /// to swap one `Arc`, and the replaced lists are freed after it is released.
    fn update(&self, change: impl FnOnce(&Lists) -> Lists) {
        // Not `lock()`: building the new lists (allocating) under the writers' turn is
        // the point; readers never wait for it.
        let _turn = self.writers.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.view();
        let next = Arc::new(change(&current));
        let old = std::mem::replace(&mut *lock(&self.lists), next);
        drop(old);
    }

    /// A ring of `capacity`, recycled if the pool has one, else new with `first`
    /// slots (it grows from there). With a `cap`, the ring is charged against it (see
    /// `budget.rs`), and `None` comes back (nothing allocated) if the cap cannot
    /// afford it; without one (latte's own threads) it is not charged.
    pub(crate) fn ring(&self, capacity: usize, first: usize, cap: Option<u64>) -> Option<Ring> {
        let mut pool = lock(&self.pool);
        let pooled = pool
            .iter()
            .position(|r| r.capacity() == capacity)
            .map(|i| pool.swap_remove(i));
        drop(pool);
        match (pooled, cap) {
            (Some(mut ring), Some(cap)) => {
                if ring.charge(cap) {
                    Some(ring)
                } else {
                    self.recycle(ring);
                    None
                }
            }
            (Some(ring), None) => Some(ring),
            (None, Some(cap)) => Ring::within(first, capacity, cap),
            (None, None) => Some(Ring::growing(first, capacity)),
        }
    }

    /// Frees pooled rings, newest first, until `enough()` holds or the pool is empty:
    /// the memory cap takes their bytes back when the whole run's histograms have
    /// grown past it (`budget.rs`).
    pub(crate) fn shed_pool(&self, enough: impl Fn() -> bool) {
        while !enough() {
            let Some(ring) = lock(&self.pool).pop() else {
                return;
            };
            drop(ring); // freed, and its charge given back, outside the lock
        }
    }

    fn recycle(&self, mut ring: Ring) {
        ring.reset();
        let refused = lock(&self.pool).try_push(ring).err();
        drop(refused); // a full pool refuses the ring: it is freed outside the lock
    }

    /// Whether any of the user's threads has recorded anything (a sample, a pulse
    /// baseline, a counted anomaly), live or exited.
    pub(crate) fn anything_recorded(&self) -> bool {
        let view = self.view();
        let recorded = |t: &ThreadShared| {
            t.counters.read().total() > 0 || t.rings().iter().any(|(_, r)| r.seen() > 0)
        };
        !view.exited.is_empty()
            || view.merged.is_some()
            || view.live.iter().any(|t| !t.internal() && recorded(t))
    }

    /// Memory latte holds, estimated from what it allocated.
    pub(crate) fn footprint(&self) -> Footprint {
        let view = self.view();
        let mut f = Footprint {
            live_threads: view.live.iter().filter(|t| !t.internal()).count() as u64,
            exited_threads: view.exited.len() as u64,
            merged_threads: view.merged.as_ref().map_or(0, |f| f.threads),
            memory_cap_used: super::budget::RINGS.charged(),
            memory_cap: crate::config::memory_cap(),
            rings_kept_small: super::ring::KEPT_SMALL.load(std::sync::atomic::Ordering::Relaxed),
            flight_entries: crate::config::flight_entries() as u64,
            flight_window_ns: crate::config::flight_window_ns(),
            ..Footprint::default()
        };
        for t in &view.live {
            f.bytes += PER_THREAD_BYTES;
            if let Some(flight) = t.flight.as_ref().filter(|_| !t.internal()) {
                f.flight_bytes += flight.bytes() as u64;
            }
            f.bytes += t.flight.as_ref().map_or(0, |b| b.bytes() as u64);
            for (_, ring) in t.rings().iter() {
                f.rings += 1;
                f.ring_bytes_reserved += ring.reserved_bytes();
                f.bytes += ring.resident_bytes();
            }
        }
        let compact_bytes = |rings: &[CompactRing]| -> u64 {
            rings.iter().map(|r| r.samples.len() as u64 * 8 + 48).sum()
        };
        for c in &view.exited {
            f.bytes += 128 + c.name.len() as u64 + compact_bytes(&c.components);
            f.bytes += UNPAIRED_ENTRY_BYTES * c.unpaired.len() as u64;
        }
        if let Some(merged) = &view.merged {
            f.bytes += compact_bytes(&merged.components);
            f.bytes += UNPAIRED_ENTRY_BYTES * merged.unpaired.len() as u64;
        }
        for ring in lock(&self.pool).iter() {
            f.bytes += ring.resident_bytes();
        }
        f
    }
}

/// Estimated per-thread cost besides rings: the stack (64 frames x 16 bytes), the table,
/// the shared record.
const PER_THREAD_BYTES: u64 = 2048;

/// One id's unpaired counts, `(u32, Unpaired)`.
const UNPAIRED_ENTRY_BYTES: u64 = 32;

/// The process's registry.
pub(crate) fn global() -> &'static Registry {
    static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);
    &REGISTRY
}

/// Registers the calling thread in the global registry.
pub(crate) fn register() -> Arc<ThreadShared> {
    global().register(std::thread::current().name())
}

/// One housekeeper at a time. Per process: the drain holds it for a whole compaction,
/// and a child forked meanwhile must not inherit it held (its reports wait for it).
static HOUSEKEEPING: PerProcess<std::sync::Mutex<()>> =
    PerProcess::new(|| std::sync::Mutex::new(()));

/// Runs `f` while holding the housekeeping turn (for the fork test's hook).
#[cfg(feature = "test-hooks")]
pub(crate) fn while_housekeeping<T>(f: impl FnOnce() -> T) -> T {
    let _turn = HOUSEKEEPING
        .get()
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    f()
}

/// Runs `f` unless another thread is already doing housekeeping.
fn exclusive(f: impl FnOnce()) {
    match HOUSEKEEPING.get().try_lock() {
        Ok(_guard) => f(),
        Err(std::sync::TryLockError::Poisoned(_guard)) => f(),
        Err(std::sync::TryLockError::WouldBlock) => {}
    }
}

/// Compacts exited threads (one caller at a time; others skip it).
pub(crate) fn compact() {
    exclusive(|| {
        global().compact();
    });
}

/// Compacts exited threads, waiting for any housekeeping already running (the drain's)
/// to finish first, so every thread that had exited when this was called is compacted
/// when it returns. For readers off the hot path (`collect::footprint`).
pub(crate) fn compact_waiting() {
    let _turn = HOUSEKEEPING
        .get()
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    global().compact();
}

/// Merges exited threads beyond the limit, those `read` allows (see
/// [`Registry::merge_excess`]).
pub(crate) fn merge_excess(read: impl Fn(u64) -> bool) {
    exclusive(|| global().merge_excess(read));
}

/// `RUSTFLAGS="--cfg latte_loom" cargo test --release -p latte-telemetry-loom` (loom/)
#[cfg(latte_loom)]
pub(crate) mod loom_model {
    use super::*;
    use loom::thread;

    pub(crate) use super::thread::loom_model::MODELS as THREAD_MODELS;

    crate::record::sync::loom_models![loom_register_record_retire_vs_compaction,];

    /// Checks a view taken while the writer may still run: the thread is either live
    /// or compacted, never both; live samples carry their own index; a compacted copy
    /// is exact (all pushes happened before `retire`).
    fn check(view: &View) {
        assert!(
            view.live.len() + view.exited.len() <= 1,
            "a thread listed twice"
        );
        for t in &view.live {
            for (_, ring) in t.rings().iter() {
                let mut out = Vec::new();
                let read = ring.read(t.exited(), &mut out);
                for (k, v) in out.iter().enumerate() {
                    assert_eq!(
                        *v,
                        read.first + k as u64,
                        "live sample under the wrong index"
                    );
                }
            }
        }
        for c in &view.exited {
            let r = &c.components[0];
            assert_eq!(r.seen, 3, "compacted before the last push");
            assert_eq!(Vec::from(r.samples.clone()), [1, 2]);
        }
    }

    pub(super) fn loom_register_record_retire_vs_compaction() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        builder.check(|| {
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let registry = Arc::new(Registry::new());
            let writer = {
                let registry = registry.clone();
                thread::spawn(move || {
                    let shared = registry.register(Some("writer"));
                    let ring = Arc::new(registry.ring(2, 2, None).unwrap());
                    shared.add_rings(&[(crate::record::node::RingKey::root(1), ring.clone())]);
                    for v in 0..3 {
                        ring.push(v);
                    }
                    shared.retire();
                })
            };
            registry.compact();
            check(&registry.view());
            writer.join().unwrap();
            registry.compact();
            let view = registry.view();
            check(&view);
            assert!(view.live.is_empty() && view.exited.len() == 1);
            // Its ring went back to the pool, emptied: a new thread never sees old samples.
            let reused = registry.ring(2, 2, None).unwrap();
            let mut out = Vec::new();
            assert_eq!(reused.read(true, &mut out).seen, 0);
        });
        // 628 executions when written; guard against a model that stops exploring.
        assert!(RUNS.load(std::sync::atomic::Ordering::Relaxed) > 100);
    }
}
