//! The `tracing` bridge's per-thread table from a span id to its component's index,
//! which spares an enter or exit every registry lookup; and the guard that keeps it
//! out of thread teardown.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use thread_local::ThreadLocal;

/// Slots in each thread's [`SpanCache`]: enough for the spans one thread keeps
/// entered or re-enters, small enough to stay in a few cache lines (16 bytes each).
const SLOTS: usize = 64;

/// One thread's direct-mapped table from a span id to its component's index. Written
/// by its own thread; a slot's `span` is also cleared by whichever thread closes that
/// span. A slot is read as a pair: `index` is written by the owning thread only, before
/// `span`, so a `span` that matches always comes with its own `index`.
pub(super) struct SpanCache {
    slots: [Slot; SLOTS],
}

struct Slot {
    /// The span id (`span::Id::into_u64`), 0 when empty.
    span: AtomicU64,
    /// Its component's dense index.
    index: AtomicU32,
}

impl Default for SpanCache {
    fn default() -> SpanCache {
        SpanCache {
            slots: [const {
                Slot {
                    span: AtomicU64::new(0),
                    index: AtomicU32::new(0),
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

    #[inline(always)]
    pub(super) fn get(&self, span: u64) -> Option<u32> {
        let slot = self.slot(span);
        (slot.span.load(Relaxed) == span).then(|| slot.index.load(Relaxed))
    }

    pub(super) fn insert(&self, span: u64, index: u32) {
        let slot = self.slot(span);
        slot.index.store(index, Relaxed);
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
pub(super) fn local(cache: &ThreadLocal<SpanCache>) -> Option<&SpanCache> {
    match STATE.with(Cell::get) {
        LIVE => Some(cache.get_or_default()),
        NEW => Some(first(cache)),
        _ => None,
    }
}

#[cold]
#[inline(never)]
fn first(cache: &ThreadLocal<SpanCache>) -> &SpanCache {
    let cache = cache.get_or_default();
    let state = if GONE.try_with(|_| ()).is_ok() {
        LIVE
    } else {
        TORN_DOWN
    };
    STATE.with(|s| s.set(state));
    cache
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
        cache.insert(7, 70);
        assert_eq!(cache.get(7), Some(70));
        let other = (8..)
            .find(|&k| std::ptr::eq(cache.slot(k), cache.slot(7)))
            .unwrap();
        cache.insert(other, 80);
        assert_eq!((cache.get(7), cache.get(other)), (None, Some(80)));
        cache.forget(7); // not in its slot any more: the other span stays
        assert_eq!(cache.get(other), Some(80));
    }

    #[test]
    fn closing_a_span_clears_it_from_every_thread_s_table() {
        let caches = ThreadLocal::<SpanCache>::new();
        let (a, b) = (11, 12);
        let mine = local(&caches).unwrap();
        mine.insert(a, 1);
        // Two threads alive at once (an exited thread's table goes to the next thread).
        let (cached, closed) = (std::sync::Barrier::new(3), std::sync::Barrier::new(3));
        let after = std::thread::scope(|s| {
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let cache = local(&caches).unwrap();
                        cache.insert(a, 1);
                        cache.insert(b, 2);
                        cached.wait();
                        closed.wait();
                        (cache.get(a), cache.get(b))
                    })
                })
                .collect();
            cached.wait();
            // Asserted after the scope: a panic here would leave the workers waiting.
            let before = caches.iter().filter(|c| c.get(a) == Some(1)).count();
            for cache in caches.iter() {
                cache.forget(a); // what on_close does
            }
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
