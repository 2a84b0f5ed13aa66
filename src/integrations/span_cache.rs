//! The `tracing` bridge's per-thread table from a span id to its component's index
//! and its busy total, which spares an enter or exit every registry lookup; the busy
//! totals themselves; and the guard that keeps the table out of thread teardown.
#![allow(unsafe_code)] // a `&'static SpanBusy` kept in an `AtomicPtr`

use crate::record::Exit;
use crate::record::fork::PerProcess;
use std::cell::Cell;
use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed,
};
use std::sync::{Mutex, PoisonError};
use thread_local::ThreadLocal;

/// Slots in each thread's [`SpanCache`]: enough for the spans one thread keeps
/// entered or re-enters, small enough to stay in a few cache lines (24 bytes each).
const SLOTS: usize = 64;

/// One span's busy time so far: the sum of its polls' enter-to-exit ticks, on every
/// thread that polled it. Recorded as one sample when the span closes.
///
/// Never freed: taken from the closing thread's spare or a per-process pool when a
/// span is made and given back when it closes, so a reference to one is `'static` and
/// a table slot that still pointed at one after its span closed (which the closing
/// protocol rules out, see [`SpanCache::forget`]) could only misattribute, never read
/// freed memory. The pool and the spares hold as many as were ever open at once, and
/// one per thread.
pub(super) struct SpanBusy {
    ticks: AtomicU64,
    /// The polls' self times (their ticks less the scopes closed inside them), summed.
    own: AtomicU64,
    /// The call-tree node of the last poll measured, and the serial of the thread
    /// whose stack held it: where the total is recorded if that thread closes it.
    node: AtomicU64,
    serial: AtomicU64,
    /// Whether a poll was measured: only then is the total recorded.
    polled: AtomicBool,
    /// The index of the span's per-poll component (`per_poll`), else 0.
    poll: AtomicU32,
}

impl SpanBusy {
    /// Adds one poll: relaxed adds (a span may be polled on two threads at once),
    /// its place, and, on its first poll, a store.
    #[inline(always)]
    pub(super) fn add(&self, exit: &Exit) {
        self.ticks.fetch_add(exit.ticks, Relaxed);
        self.own.fetch_add(exit.own, Relaxed);
        self.node.store(exit.node, Relaxed);
        self.serial.store(exit.serial, Relaxed);
        if !self.polled.load(Relaxed) {
            self.polled.store(true, Relaxed);
        }
    }

    /// The index of the span's per-poll component.
    #[inline(always)]
    pub(super) fn poll(&self) -> u32 {
        self.poll.load(Relaxed)
    }

    /// The total, if any poll was measured (at the span's close): ticks, self time,
    /// and the last poll's place.
    pub(super) fn total(&self) -> Option<Exit> {
        self.polled.load(Relaxed).then(|| Exit {
            ticks: self.ticks.load(Relaxed),
            own: self.own.load(Relaxed),
            node: self.node.load(Relaxed),
            serial: self.serial.load(Relaxed),
        })
    }
}

/// Spans' busy totals not in use, per process (a forked child starts its own pool:
/// the parent's lock may be held).
static POOL: PerProcess<Mutex<Vec<&'static SpanBusy>>> = PerProcess::new(|| Mutex::new(Vec::new()));

/// One busy total not in use, kept by the thread that closed its span for the next span
/// it makes, so that a thread making and closing spans one after another takes no lock;
/// given to the pool at the thread's exit.
struct Spare(Cell<Option<&'static SpanBusy>>);

impl Drop for Spare {
    fn drop(&mut self) {
        if let Some(busy) = self.0.take() {
            to_pool(busy);
        }
    }
}

thread_local! {
    static SPARE: Spare = const { Spare(Cell::new(None)) };
}

/// A zeroed busy total for a new span whose per-poll component is `poll` (0: none).
pub(super) fn take_busy(poll: u32) -> &'static SpanBusy {
    let spare = SPARE.try_with(|s| s.0.take()).ok().flatten();
    let pooled = spare.or_else(|| {
        POOL.get()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    });
    let busy = pooled.unwrap_or_else(|| {
        Box::leak(Box::new(SpanBusy {
            ticks: AtomicU64::new(0),
            own: AtomicU64::new(0),
            node: AtomicU64::new(0),
            serial: AtomicU64::new(0),
            polled: AtomicBool::new(false),
            poll: AtomicU32::new(0),
        }))
    });
    busy.poll.store(poll, Relaxed);
    busy
}

/// Gives a closed span's busy total back, zeroed: to this thread's spare if it has
/// none, else to the pool.
pub(super) fn give_back(busy: &'static SpanBusy) {
    busy.ticks.store(0, Relaxed);
    busy.own.store(0, Relaxed);
    busy.node.store(0, Relaxed);
    busy.serial.store(0, Relaxed);
    busy.polled.store(false, Relaxed);
    let kept = SPARE.try_with(|s| match s.0.get() {
        None => {
            s.0.set(Some(busy));
            true
        }
        Some(_) => false,
    });
    if kept != Ok(true) {
        to_pool(busy);
    }
}

fn to_pool(busy: &'static SpanBusy) {
    let mut pool = POOL.get().lock().unwrap_or_else(PoisonError::into_inner);
    pool.push(busy);
}

/// One thread's direct-mapped table from a span id to its component's index and its
/// busy total. Written by its own thread; a slot's `span` is also cleared by whichever
/// thread closes that span. A slot is read as a whole: `index` and `busy` are written
/// by the owning thread only, before `span`, so a `span` that matches always comes
/// with its own `index` and `busy`.
pub(super) struct SpanCache {
    slots: [Slot; SLOTS],
}

struct Slot {
    /// The span id (`span::Id::into_u64`), 0 when empty.
    span: AtomicU64,
    /// Its component's dense index.
    index: AtomicU32,
    /// Its busy total (a `&'static SpanBusy`), or null for a span without one.
    busy: AtomicPtr<SpanBusy>,
}

impl Default for SpanCache {
    fn default() -> SpanCache {
        SpanCache {
            slots: [const {
                Slot {
                    span: AtomicU64::new(0),
                    index: AtomicU32::new(0),
                    busy: AtomicPtr::new(std::ptr::null_mut()),
                }
            }; SLOTS],
        }
    }
}

impl SpanCache {
    /// The slot of a span id: one multiply, the top bits (span ids are slab indices,
    /// so the low bits alone would cluster).
    #[inline(always)]
    fn slot(&self, span: u64) -> &Slot {
        let hash = span.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SLOTS.trailing_zeros());
        &self.slots[hash as usize % SLOTS]
    }

    /// The component index of `span`, if this table holds it (an enter).
    #[inline(always)]
    pub(super) fn get(&self, span: u64) -> Option<u32> {
        let slot = self.slot(span);
        (slot.span.load(Relaxed) == span).then(|| slot.index.load(Relaxed))
    }

    /// The component index and busy total of `span`, if this table holds it (an exit).
    #[inline(always)]
    pub(super) fn get_with_busy(&self, span: u64) -> Option<(u32, Option<&'static SpanBusy>)> {
        let slot = self.slot(span);
        if slot.span.load(Relaxed) != span {
            return None;
        }
        let busy = slot.busy.load(Relaxed);
        // SAFETY: a non-null `busy` was stored by `insert` from a `&'static SpanBusy`
        // (leaked, never freed), and is only ever read back as a shared reference.
        Some((slot.index.load(Relaxed), unsafe { busy.as_ref() }))
    }

    pub(super) fn insert(&self, span: u64, index: u32, busy: Option<&'static SpanBusy>) {
        let slot = self.slot(span);
        slot.index.store(index, Relaxed);
        let busy = busy.map_or(std::ptr::null_mut(), |b| std::ptr::from_ref(b).cast_mut());
        slot.busy.store(busy, Relaxed);
        slot.span.store(span, Relaxed);
    }

    /// Forgets a closed span. Relaxed is enough: a thread that cached the span did so
    /// while holding it, and the registry's release of that hold happens-before the
    /// close; the close happens-before any use of the id for a new span.
    pub(super) fn forget(&self, span: u64) {
        let _ = self
            .slot(span)
            .span
            .compare_exchange(span, 0, Relaxed, Relaxed);
    }
}

/// One layer's tables, one per thread that used the layer, and how many were made.
pub(super) struct Tables {
    cache: ThreadLocal<SpanCache>,
    /// Tables made (a thread that inherits an exited thread's table makes none): while
    /// it is 1 and the table is the closing thread's, a close clears that one alone
    /// instead of walking every bucket of `cache`.
    made: AtomicUsize,
}

impl Tables {
    pub(super) const fn new() -> Tables {
        Tables {
            cache: ThreadLocal::new(),
            made: AtomicUsize::new(0),
        }
    }

    /// This thread's table, or `None` during thread teardown.
    ///
    /// `ThreadLocal` identifies threads through a thread-local guard of its own, which
    /// panics if touched after its destructor ran. `GONE` is registered right after
    /// this thread's first use of a table, so its destructor is registered after that
    /// guard's and runs before it (thread-local destructors run in reverse order of
    /// registration): while `STATE` is `LIVE`, the table is safe. (Not covered: a
    /// thread whose very first span callback comes from a late thread-local
    /// destructor.)
    #[inline(always)]
    pub(super) fn local(&self) -> Option<&SpanCache> {
        match STATE.with(Cell::get) {
            LIVE => Some(self.get_or_make()),
            NEW => Some(self.first()),
            _ => None,
        }
    }

    #[inline(always)]
    fn get_or_make(&self) -> &SpanCache {
        self.cache.get_or(|| {
            self.made.fetch_add(1, Relaxed);
            SpanCache::default()
        })
    }

    #[cold]
    #[inline(never)]
    fn first(&self) -> &SpanCache {
        let cache = self.get_or_make();
        let state = if GONE.try_with(|_| ()).is_ok() {
            LIVE
        } else {
            TORN_DOWN
        };
        STATE.with(|s| s.set(state));
        cache
    }

    /// Clears a closed span from every thread's table ([`SpanCache::forget`]). A
    /// thread that cached the span made its table first, and its insert
    /// happened-before the close, so a count of 1 read here, with the closing thread
    /// holding a table, means that table is the only one. Else every table is visited.
    pub(super) fn forget(&self, span: u64) {
        if self.made.load(Relaxed) == 1
            && let Some(mine) = self.cache.get()
        {
            mine.forget(span);
            return;
        }
        for cache in self.cache.iter() {
            cache.forget(span);
        }
    }

    /// Every thread's table.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = &SpanCache> {
        self.cache.iter()
    }
}

const NEW: u8 = 0;
const LIVE: u8 = 1;
const TORN_DOWN: u8 = 2;

/// Marks this thread's teardown when dropped.
struct Gone;

impl Drop for Gone {
    fn drop(&mut self) {
        let _ = STATE.try_with(|s| s.set(TORN_DOWN));
    }
}

thread_local! {
    /// Whether this thread's `SpanCache`s may be used (no destructor: always readable).
    static STATE: Cell<u8> = const { Cell::new(NEW) };
    static GONE: Gone = const { Gone };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_holds_one_span_and_a_colliding_span_takes_it() {
        let cache = SpanCache::default();
        assert_eq!(cache.get(7), None);
        cache.insert(7, 70, None);
        assert_eq!(cache.get(7), Some(70));
        let other = (8..)
            .find(|&k| std::ptr::eq(cache.slot(k), cache.slot(7)))
            .unwrap();
        cache.insert(other, 80, None);
        assert_eq!((cache.get(7), cache.get(other)), (None, Some(80)));
        cache.forget(7); // not in its slot any more: the other span stays
        assert_eq!(cache.get(other), Some(80));
    }

    #[test]
    fn a_slot_keeps_its_span_s_busy_total_and_totals_are_reused_zeroed() {
        let cache = SpanCache::default();
        let busy = take_busy(5);
        cache.insert(3, 30, Some(busy));
        let (index, found) = cache.get_with_busy(3).unwrap();
        assert_eq!(
            (index, found.map(std::ptr::from_ref)),
            (30, Some(std::ptr::from_ref(busy)))
        );
        assert!(busy.total().is_none(), "no poll yet");
        let poll = |ticks, own, node| Exit {
            ticks,
            own,
            node,
            serial: 9,
        };
        busy.add(&poll(7, 7, 100));
        busy.add(&poll(8, 3, 200));
        let total = busy.total().unwrap();
        // Summed, at the last poll's place.
        assert_eq!(
            (total.ticks, total.own, total.node, total.serial),
            (15, 10, 200, 9)
        );
        assert_eq!(busy.poll(), 5);
        cache.insert(4, 40, None); // a span the layer did not see made
        assert!(matches!(cache.get_with_busy(4), Some((40, None))));
        give_back(busy);
        let again = take_busy(0);
        assert!(again.total().is_none() && again.poll() == 0);
        give_back(again);
    }

    #[test]
    fn closing_a_span_clears_it_from_every_thread_s_table() {
        let caches = Tables::new();
        let (a, b) = (11, 12);
        let mine = caches.local().unwrap();
        // One table: a close clears it without visiting the others.
        mine.insert(a, 1, None);
        caches.forget(a);
        assert_eq!(mine.get(a), None);
        mine.insert(a, 1, None);
        // Two threads alive at once (an exited thread's table goes to the next thread).
        let (cached, closed) = (std::sync::Barrier::new(3), std::sync::Barrier::new(3));
        let after = std::thread::scope(|s| {
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let cache = caches.local().unwrap();
                        cache.insert(a, 1, None);
                        cache.insert(b, 2, None);
                        cached.wait();
                        closed.wait();
                        (cache.get(a), cache.get(b))
                    })
                })
                .collect();
            cached.wait();
            // Asserted after the scope: a panic here would leave the workers waiting.
            let before = caches.iter().filter(|c| c.get(a) == Some(1)).count();
            caches.forget(a); // what on_close does
            closed.wait();
            let after: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
            (before, after)
        });
        let (before, after) = after;
        assert_eq!(before, 3);
        assert_eq!(after, [(None, Some(2)), (None, Some(2))]);
        assert_eq!(mine.get(a), None);
    }
}
