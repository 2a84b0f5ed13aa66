//! What one recording thread shares with readers, and the lock discipline of the
//! registry (in debug builds a marker says whether the calling thread holds a registry
//! lock, so a test allocator can check nothing is allocated or freed under one).

use crate::diagnostics::{Counters, Unpaired, UnpairedKind, bump};
use crate::record::flight::Flight;
use crate::record::local::Local;
use crate::record::node::RingKey;
use crate::record::open;
use crate::record::ring::Ring;
use crate::record::sync::{AtomicBool, Mutex, MutexGuard, Ordering};
use std::sync::atomic::{AtomicPtr, AtomicU64};
use std::sync::{Arc, PoisonError};

/// A thread's rings with what each records, in order of first use.
pub(crate) type RingList = Arc<Vec<(RingKey, Arc<Ring>)>>;

/// A thread's scopes that ended without their Stop, per id index, in order of first
/// such scope.
pub(crate) type UnpairedList = Arc<Vec<(u32, Unpaired)>>;

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
    /// Allocations counted while no scope was open on the thread (`record/alloc/`).
    pub(crate) outside: crate::record::alloc::Cells,
    /// The first allocation in an allocation-free scope: its node and size.
    pub(crate) breach: crate::record::alloc::Breach,
    /// Copy-on-write like `rings`: the per-id split of three of the `counters`.
    unpaired: Mutex<UnpairedList>,
    /// Copy-on-write like `rings`: the per-id split of the `over_cap` counter. Read
    /// through [`unpaired`](Self::unpaired).
    capped: Mutex<CountList>,
    /// Copy-on-write like `rings`: the timers cancelled per id (no thread counter: a
    /// cancel is not an anomaly). Read through [`unpaired`](Self::unpaired).
    cancelled: Mutex<CountList>,
    /// The thread's recorder, for readers of its open scopes: set once the recorder
    /// has its stack, cleared by the recorder's destructor (see
    /// [`open_scopes`](Self::open_scopes)).
    pub(crate) recorder: Link<Local>,
    /// The flight recorder's buffer of the thread's recent scopes, when it was on as
    /// the thread registered (`config::flight_entries`).
    pub(crate) flight: Option<Flight>,
}

/// A pointer that one thread publishes so that others can read what it points at
/// while it lives: set and cleared under a lock that a reader holds while it uses the
/// pointer. The owner clears it before the pointee goes, so a reader holding the lock
/// and seeing it set reads live memory; and whatever the owner wrote before setting it
/// is visible to that reader (the lock orders them).
pub(crate) struct Link<T> {
    /// Accessed under the lock only: the atomic is just a raw pointer that is `Send`
    /// without an `unsafe impl`.
    ptr: Mutex<AtomicPtr<T>>,
}

impl<T> Link<T> {
    pub(crate) fn new() -> Link<T> {
        Link {
            ptr: Mutex::new(AtomicPtr::new(std::ptr::null_mut())),
        }
    }

    /// Publishes `target` (owner only).
    pub(crate) fn set(&self, target: &T) {
        let target: *const T = target;
        lock(&self.ptr).store(target.cast_mut(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Withdraws the pointer (owner only), before what it points at goes: once this
    /// returns, no reader is using it or will.
    pub(crate) fn clear(&self) {
        lock(&self.ptr).store(std::ptr::null_mut(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs `read` on the published pointer, under the lock, so its target lives until
    /// `read` returns; `None` when nothing is published. `read` must neither allocate
    /// nor free (a registry lock is held, see `no_alloc_under_lock`).
    pub(crate) fn read<R>(&self, read: impl FnOnce(*const T) -> R) -> Option<R> {
        let ptr = lock(&self.ptr);
        let target = ptr.load(std::sync::atomic::Ordering::Relaxed);
        (!target.is_null()).then(|| read(target))
    }
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
            outside: Default::default(),
            breach: Default::default(),
            unpaired: Mutex::new(Arc::new(Vec::new())),
            capped: Mutex::new(Arc::new(Vec::new())),
            cancelled: Mutex::new(Arc::new(Vec::new())),
            recorder: Link::new(),
            flight: match crate::config::flight_entries() {
                0 => None,
                entries => Some(Flight::new(entries)),
            },
        }
    }

    /// Adds rings (owning thread only), see [`append`].
    pub(crate) fn add_rings(&self, rings: &[(RingKey, Arc<Ring>)]) {
        append(&self.rings, rings);
    }

    /// The thread's rings, in order of first use (an `Arc` clone under the lock).
    pub(crate) fn rings(&self) -> RingList {
        lock(&self.rings).clone()
    }

    /// Counts one scope that ended `end`'s way under each id index of `ids` (owning
    /// thread, cold paths only), per id and in the thread total. Like
    /// [`add_rings`](Self::add_rings), the new list is built and the old one freed outside
    /// the lock.
    pub(crate) fn count_unpaired(&self, end: UnpairedKind, ids: impl IntoIterator<Item = u32>) {
        let mut ids = ids.into_iter().peekable();
        if ids.peek().is_none() {
            return;
        }
        let current = lock(&self.unpaired).clone();
        let mut list = Vec::clone(&current);
        let mut n = 0;
        for idx in ids {
            entry(&mut list, idx).add(end, 1);
            n += 1;
        }
        bump(self.counters.unpaired(end), n);
        let list = Arc::new(list);
        let old = std::mem::replace(&mut *lock(&self.unpaired), list);
        drop(old);
    }

    /// Adds an id whose ring the memory cap refused (owning thread, cold paths only)
    /// and returns its counter of dropped records, shared with the caller.
    pub(crate) fn add_capped(&self, idx: u32) -> Arc<AtomicU64> {
        let count = Arc::new(AtomicU64::new(0));
        append(&self.capped, &[(idx, count.clone())]);
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
        // Built before the lock is taken: the lock is an operand of `replace`, and
        // operands are evaluated in order.
        let list = Arc::new(list);
        let old = std::mem::replace(&mut *lock(&self.cancelled), list);
        drop((old, current));
    }

    /// The per-id scope counts, with the records each capped id dropped
    /// ([`Unpaired::over_cap`]) and the timers cancelled
    /// ([`Unpaired::cancelled_timers`]).
    pub(crate) fn unpaired(&self) -> UnpairedList {
        let scopes = lock(&self.unpaired).clone();
        let capped = lock(&self.capped).clone();
        let cancelled = lock(&self.cancelled).clone();
        if capped.is_empty() && cancelled.is_empty() {
            return scopes;
        }
        let mut list = Vec::clone(&scopes);
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

    /// The scopes the thread has open now (not given up on a full stack), per id
    /// index, counted, in order of their first (outermost) scope; none once the
    /// thread has exited. Safe to call while the thread records, which it does not
    /// slow: read from its stack's atomics, so a snapshot that may be a scope off
    /// while the thread opens and closes them (each scope is read once, at a slightly
    /// different moment).
    pub(crate) fn open_scopes(&self) -> Vec<(u32, u64)> {
        let mut open: Vec<(u32, u64)> = Vec::new();
        for idx in open::open_ids(&self.recorder) {
            match open.iter_mut().find(|(i, _)| *i == idx) {
                Some((_, n)) => *n += 1,
                None => open.push((idx, 1)),
            }
        }
        open
    }

    /// The scopes the thread holds open now, bottom first, with their start ticks (see
    /// [`open::open_stack`]).
    #[cfg_attr(not(feature = "json"), allow(dead_code))] // read by `flight::timeline`
    pub(crate) fn open_stack(&self) -> Vec<open::OpenScope> {
        open::open_stack(&self.recorder)
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
fn entry(list: &mut Vec<(u32, Unpaired)>, idx: u32) -> &mut Unpaired {
    let at = match list.iter().position(|(i, _)| *i == idx) {
        Some(at) => at,
        None => {
            list.push((idx, Unpaired::default()));
            list.len() - 1
        }
    };
    &mut list[at].1
}

/// `RUSTFLAGS="--cfg latte_loom" cargo test --release -p latte-telemetry-loom` (loom/): what a reader of
/// another thread's open scopes relies on (`record/open.rs`).
#[cfg(latte_loom)]
pub(crate) mod loom_model {
    use super::Link;
    use crate::record::sync::{AtomicBool, Ordering};
    use loom::sync::Arc;
    use loom::thread;

    crate::record::sync::loom_models![
        loom_a_link_is_never_read_after_it_is_cleared,
        loom_a_link_without_the_lock_is_read_after_it_is_cleared,
    ];

    /// The owner publishes, clears, then its memory goes (`alive` false); a reader that
    /// finds the link set must find the memory alive, whatever the interleaving.
    pub(super) fn loom_a_link_is_never_read_after_it_is_cleared() {
        loom::model(|| {
            let link = Arc::new(Link::<AtomicBool>::new());
            let alive = Arc::new(AtomicBool::new(true));
            let owner = {
                let (link, alive) = (link.clone(), alive.clone());
                thread::spawn(move || {
                    link.set(&alive);
                    link.clear();
                    alive.store(false, Ordering::Relaxed); // the recorder's memory goes
                })
            };
            link.read(|_| {
                assert!(
                    alive.load(Ordering::Relaxed),
                    "read through a link already cleared"
                )
            });
            owner.join().unwrap();
        });
    }

    /// The same life with a flag instead of the lock: a reader can see the link set,
    /// be overtaken by the clear and the free, and read freed memory. Loom finds it.
    pub(super) fn loom_a_link_without_the_lock_is_read_after_it_is_cleared() {
        let result = std::panic::catch_unwind(|| {
            loom::model(|| {
                let published = Arc::new(AtomicBool::new(false));
                let alive = Arc::new(AtomicBool::new(true));
                let owner = {
                    let (published, alive) = (published.clone(), alive.clone());
                    thread::spawn(move || {
                        published.store(true, Ordering::Release);
                        published.store(false, Ordering::Release);
                        alive.store(false, Ordering::Relaxed);
                    })
                };
                if published.load(Ordering::Acquire) {
                    assert!(alive.load(Ordering::Relaxed), "read after the clear");
                }
                owner.join().unwrap();
            })
        });
        assert!(
            result.is_err(),
            "loom found no read after the clear without the lock"
        );
    }
}

/// Appends `items` to a list readers take clones of (its owning thread only). In place
/// when no reader holds the list and it has room (no allocation under the lock);
/// otherwise a new list with room to spare is built outside the lock, and the old one
/// freed outside it. So a thread that uses 10,000 ids copies its list a few times, not
/// once per id.
fn append<T: Clone>(slot: &Mutex<Arc<Vec<T>>>, items: &[T]) {
    {
        let mut current = lock(slot);
        if let Some(list) = Arc::get_mut(&mut current)
            && list.capacity() - list.len() >= items.len()
        {
            list.extend_from_slice(items);
            return;
        }
    }
    // Only the owner appends, so the list read here is the one replaced below.
    let current = lock(slot).clone();
    let mut list = Vec::with_capacity((current.len() + items.len()).max(current.len() * 2));
    list.extend_from_slice(&current);
    list.extend_from_slice(items);
    drop(current);
    let list = Arc::new(list); // allocated before the lock is taken
    let old = std::mem::replace(&mut *lock(slot), list);
    drop(old);
}
