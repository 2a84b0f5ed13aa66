//! Each thread's part of the spans it made or entered, kept by that thread in a
//! direct-mapped table of its own keyed by span id: the span's components, the sum of
//! the polls it measured (its part of the span's busy time), and, on the thread that
//! made the span, its lifetime timer. A span's close takes every thread's part and adds
//! them up. A span's whole life on one thread touches only that thread's table: no
//! registry lookup, no lock, no allocation.
//!
//! A slot holds one live span; a span whose slot already holds another on that thread
//! keeps that thread's part in the span's registry extensions instead (the layer's
//! `Spilled`, see `tracing.rs`).
//!
//! # The slot protocol
//!
//! Only the owning thread writes a slot's part, and only while the slot is empty
//! (claiming it: the part's words, then the span id, released) or holds a span it is
//! measuring (a poll's sums, which happen before the span's close). The span id is
//! cleared, released, only by the thread that closes that span, after it has read the
//! part. So an owner that finds its slot empty (acquired) writes after the closer's
//! reads, and a closer that finds its span's id (acquired) reads the words the owner
//! wrote for that span: no compare-and-swap is needed. `loom_model.rs` checks it.
#![allow(unsafe_code)] // a lifetime's `&'static Id` kept in an `AtomicPtr`

use crate::record::sync::{AtomicPtr, AtomicU64, Ordering::Acquire, Ordering::Relaxed};
use crate::record::sync::{Ordering::Release, load_own};
use crate::record::{Exit, Id, Timer};
use std::cell::Cell;
use thread_local::ThreadLocal;

/// Slots in each thread's table: more than the spans one thread usually keeps alive at
/// once (11 words each, 5.5 KiB a thread).
#[cfg(not(latte_loom))]
pub(super) const SLOTS: usize = 64;
/// Two under loom: the model needs two ids in one slot, and loom tracks every atomic.
#[cfg(latte_loom)]
pub(super) const SLOTS: usize = 2;

/// A thread's part of one span.
#[derive(Debug)]
pub(super) struct Part {
    /// The span's component, and its per-poll component (0: none).
    pub(super) busy: u32,
    pub(super) poll: u32,
    /// The sum of this thread's measured polls; `None` before the first.
    pub(super) total: Option<Exit>,
    /// The span's lifetime, kept by the part of the thread that made it.
    pub(super) lifetime: Option<Timer<'static>>,
}

impl Part {
    pub(super) fn new(busy: u32, poll: u32, lifetime: Option<Timer<'static>>) -> Part {
        Part {
            busy,
            poll,
            total: None,
            lifetime,
        }
    }

    /// Adds a measured poll.
    pub(super) fn add(&mut self, exit: &Exit) {
        self.total = Some(match &self.total {
            Some(old) => sum(old, exit),
            None => *exit,
        });
    }

    /// Adds `other`'s polls and keeps a lifetime from either. The place of the sum
    /// (where it is recorded) is that of a part measured on the thread numbered
    /// `here` (the closing thread), when there is one: the total is recorded into its
    /// call-tree node only there.
    pub(super) fn merge(&mut self, other: Part, here: u64) {
        self.total = match (self.total, other.total) {
            (Some(mine), Some(theirs)) if theirs.serial == here && mine.serial != here => {
                Some(sum(&mine, &theirs))
            }
            (Some(mine), Some(theirs)) => Some(sum(&theirs, &mine)),
            (mine, theirs) => mine.or(theirs),
        };
        if self.lifetime.is_none() {
            self.lifetime = other.lifetime;
        }
    }
}

/// `old` with the poll `new` added: ticks and self times summed, at `new`'s place.
pub(super) fn sum(old: &Exit, new: &Exit) -> Exit {
    Exit {
        ticks: old.ticks.wrapping_add(new.ticks),
        own: old.own.wrapping_add(new.own),
        node: new.node,
        serial: new.serial,
    }
}

/// One slot: a span id (0: empty) and that span's part, as words.
pub(super) struct Slot {
    span: AtomicU64,
    /// `busy | poll << 32`.
    ids: AtomicU64,
    ticks: AtomicU64,
    own: AtomicU64,
    node: AtomicU64,
    serial: AtomicU64,
    /// 1 once a poll was measured.
    polled: AtomicU64,
    /// The lifetime timer's id (null: none) and words ([`Timer::into_words`]).
    life: AtomicPtr<Id>,
    life_words: [AtomicU64; 3],
}

/// One thread's table.
pub(super) struct SpanCache {
    slots: Box<[Slot]>,
}

impl Slot {
    fn empty() -> Slot {
        let zero = || AtomicU64::new(0);
        Slot {
            span: zero(),
            ids: zero(),
            ticks: zero(),
            own: zero(),
            node: zero(),
            serial: zero(),
            polled: zero(),
            life: AtomicPtr::new(std::ptr::null_mut()),
            life_words: [zero(), zero(), zero()],
        }
    }
}

impl Default for SpanCache {
    fn default() -> SpanCache {
        SpanCache {
            slots: (0..SLOTS).map(|_| Slot::empty()).collect(),
        }
    }
}

/// Where an owner found its part of a span.
pub(super) enum Found<'a> {
    /// In its slot: the span's components.
    Here(&'a Slot, u32, u32),
    /// Not in this table.
    Elsewhere,
}

impl SpanCache {
    /// The slot of a span id: one multiply, the top bits (span ids are slab indices,
    /// so the low bits alone would cluster).
    #[inline(always)]
    fn slot(&self, span: u64) -> &Slot {
        let hash = span.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SLOTS.trailing_zeros());
        &self.slots[hash as usize % SLOTS]
    }

    /// The owner: this table's part of `span`, if it is in its slot.
    #[inline(always)]
    pub(super) fn find(&self, span: u64) -> Found<'_> {
        let slot = self.slot(span);
        // Relaxed: this thread wrote its own span's id; a closer of another span may
        // empty the slot meanwhile, and this thread then finds it empty or not its own.
        if slot.span.load(Relaxed) != span {
            return Found::Elsewhere;
        }
        let ids = load_own(&slot.ids);
        Found::Here(slot, ids as u32, (ids >> 32) as u32)
    }

    /// The owner: puts its part of `span` in its slot if the slot is empty; else hands
    /// the part back (the slot holds another live span).
    #[inline(always)]
    pub(super) fn insert(&self, span: u64, part: Part) -> Result<(), Part> {
        let Part {
            busy,
            poll,
            total,
            lifetime,
        } = part;
        self.put(span, (busy, poll), total, lifetime)
    }

    /// The owner: puts a new span's part (no poll measured yet) in its slot if the
    /// slot is empty; else hands the part back. [`insert`](Self::insert) without a
    /// [`Part`] in between, for the path every span takes.
    #[inline(always)]
    pub(super) fn insert_new(
        &self,
        span: u64,
        ids: (u32, u32),
        lifetime: Option<Timer<'static>>,
    ) -> Result<(), Part> {
        self.put(span, ids, None, lifetime)
    }

    #[inline(always)]
    fn put(
        &self,
        span: u64,
        (busy, poll): (u32, u32),
        total: Option<Exit>,
        lifetime: Option<Timer<'static>>,
    ) -> Result<(), Part> {
        let slot = self.slot(span);
        // Acquire: the closer that emptied the slot read it before it let go.
        if slot.span.load(Acquire) != 0 {
            return Err(Part {
                busy,
                poll,
                total,
                lifetime,
            });
        }
        slot.ids
            .store(u64::from(busy) | u64::from(poll) << 32, Relaxed);
        match total {
            Some(total) => {
                slot.ticks.store(total.ticks, Relaxed);
                slot.own.store(total.own, Relaxed);
                slot.node.store(total.node, Relaxed);
                slot.serial.store(total.serial, Relaxed);
                slot.polled.store(1, Relaxed);
            }
            // A part's place (node, serial) is read only once a poll was measured.
            None => {
                slot.ticks.store(0, Relaxed);
                slot.own.store(0, Relaxed);
                slot.polled.store(0, Relaxed);
            }
        }
        match lifetime.map(Timer::into_words) {
            Some((id, words)) => {
                for (word, value) in slot.life_words.iter().zip(words) {
                    word.store(value, Relaxed);
                }
                slot.life.store(std::ptr::from_ref(id).cast_mut(), Relaxed);
            }
            None => slot.life.store(std::ptr::null_mut(), Relaxed),
        }
        // Release: a closer that reads the id reads the part with it.
        slot.span.store(span, Release);
        Ok(())
    }

    /// Takes `span`'s part out of this table (any thread; `span` is closing, so no
    /// owner adds to it any more), leaving its slot empty.
    #[inline(always)]
    pub(super) fn take(&self, span: u64) -> Option<Part> {
        let slot = self.slot(span);
        if slot.span.load(Acquire) != span {
            return None;
        }
        let ids = slot.ids.load(Relaxed);
        let total = (slot.polled.load(Relaxed) != 0).then(|| Exit {
            ticks: slot.ticks.load(Relaxed),
            own: slot.own.load(Relaxed),
            node: slot.node.load(Relaxed),
            serial: slot.serial.load(Relaxed),
        });
        let life = slot.life.load(Relaxed);
        let words = [0, 1, 2].map(|k| slot.life_words[k].load(Relaxed));
        // Release: the owner claims the slot again only after these reads.
        slot.span.store(0, Release);
        // SAFETY: a non-null `life` was stored by `insert` from a `&'static Id`.
        let lifetime = unsafe { life.as_ref() }.map(|id| Timer::from_words(id, words));
        Some(Part {
            busy: ids as u32,
            poll: (ids >> 32) as u32,
            total,
            lifetime,
        })
    }
}

impl Slot {
    /// The owner: adds a measured poll to its part.
    #[inline(always)]
    pub(super) fn add(&self, exit: &Exit) {
        let slot = self;
        slot.ticks
            .store(load_own(&slot.ticks).wrapping_add(exit.ticks), Relaxed);
        slot.own
            .store(load_own(&slot.own).wrapping_add(exit.own), Relaxed);
        slot.node.store(exit.node, Relaxed);
        slot.serial.store(exit.serial, Relaxed);
        slot.polled.store(1, Relaxed);
    }
}

/// One layer's tables, one per thread that used the layer, and how many were made.
pub(super) struct Tables {
    cache: ThreadLocal<SpanCache>,
    /// Tables made (a thread that inherits an exited thread's table makes none): while
    /// it is 1 and the table is the closing thread's, a close looks in that one alone
    /// instead of walking every bucket of `cache`.
    made: std::sync::atomic::AtomicUsize,
    /// This layer's key for [`LAST`]: unique in the process, 0 until first used.
    key: std::sync::atomic::AtomicU64,
}

/// The next [`Tables`] key.
static NEXT_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Tables {
    pub(super) const fn new() -> Tables {
        Tables {
            cache: ThreadLocal::new(),
            made: std::sync::atomic::AtomicUsize::new(0),
            key: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// This layer's key, given on first use.
    fn key(&self) -> u64 {
        match self.key.load(Relaxed) {
            0 => {
                let fresh = NEXT_KEY.fetch_add(1, Relaxed);
                match self.key.compare_exchange(0, fresh, Relaxed, Relaxed) {
                    Ok(_) => fresh,
                    Err(given) => given,
                }
            }
            key => key,
        }
    }

    /// This thread's table when it is the one this thread used last (one thread-local
    /// load and a compare, where `ThreadLocal::get` takes a dozen instructions).
    #[inline(always)]
    fn last(&self) -> Option<&SpanCache> {
        let (key, table) = LAST.with(Cell::get);
        if key == 0 || key != self.key.load(Relaxed) {
            return None;
        }
        // SAFETY: `LAST` holds a non-zero key only as `remember` set it on this
        // thread, with this thread's entry of the `ThreadLocal` of the `Tables` that
        // has the key. Keys are never given twice, so that `Tables` is `self`, which
        // is alive. A `ThreadLocal` keeps its entries on the heap (moving `self` does
        // not move them) until it is dropped, and an entry is this thread's until the
        // thread exits; `Gone` clears `LAST` in this thread's teardown, before the
        // `ThreadLocal`'s guard hands the thread's entries to another thread.
        Some(unsafe { &*table })
    }

    /// Makes `table` (this thread's) the one [`last`](Self::last) finds, while the
    /// thread is live.
    fn remember(&self, table: &SpanCache) {
        if STATE.with(Cell::get) == LIVE {
            let key = self.key();
            LAST.with(|l| l.set((key, std::ptr::from_ref(table))));
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
        match self.last() {
            Some(table) => Some(table),
            None => self.local_slow(),
        }
    }

    #[cold]
    #[inline(never)]
    fn local_slow(&self) -> Option<&SpanCache> {
        let table = match STATE.with(Cell::get) {
            LIVE => self.get_or_make(),
            NEW => self.first(),
            _ => return None,
        };
        self.remember(table);
        Some(table)
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

    /// This thread's table when it is the only one: a closing span's parts are all
    /// in it (see [`take`](Self::take)).
    #[inline(always)]
    pub(super) fn only_mine(&self) -> Option<&SpanCache> {
        self.last().filter(|_| self.made.load(Relaxed) == 1)
    }

    /// Takes a closing span's parts out of every thread's table, summed ([`Part::merge`]).
    /// A thread that made or entered the span made its table first, and its part was
    /// written before the close, so a count of 1 read here, with the closing thread
    /// holding a table, means that table is the only one. Else every table is visited.
    #[inline(always)]
    pub(super) fn take(&self, span: u64) -> Option<Part> {
        if let Some(mine) = self.last()
            && self.made.load(Relaxed) == 1
        {
            return mine.take(span);
        }
        self.take_slow(span)
    }

    #[cold]
    #[inline(never)]
    fn take_slow(&self, span: u64) -> Option<Part> {
        let mine = match STATE.with(Cell::get) {
            LIVE => self.cache.get(),
            _ => None,
        };
        if let Some(mine) = mine
            && self.made.load(Relaxed) == 1
        {
            return mine.take(span);
        }
        let mut parts = None;
        let mut here = None;
        for part in self.cache.iter().filter_map(|cache| cache.take(span)) {
            let here = *here.get_or_insert_with(crate::record::thread_serial);
            merge_into(&mut parts, part, here);
        }
        parts
    }

    /// Every thread's table.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = &SpanCache> {
        self.cache.iter()
    }
}

/// Adds `part` to the parts so far ([`Part::merge`]).
pub(super) fn merge_into(parts: &mut Option<Part>, part: Part, here: u64) {
    *parts = Some(match parts.take() {
        Some(mut earlier) => {
            earlier.merge(part, here);
            earlier
        }
        None => part,
    });
}

const NEW: u8 = 0;
const LIVE: u8 = 1;
const TORN_DOWN: u8 = 2;

/// Marks this thread's teardown when dropped.
struct Gone;

impl Drop for Gone {
    fn drop(&mut self) {
        let _ = STATE.try_with(|s| s.set(TORN_DOWN));
        let _ = LAST.try_with(|l| l.set((0, std::ptr::null())));
    }
}

thread_local! {
    /// Whether this thread's `SpanCache`s may be used (no destructor: always readable).
    static STATE: Cell<u8> = const { Cell::new(NEW) };
    static GONE: Gone = const { Gone };
    /// The table this thread used last: its layer's key (0: none) and its address.
    static LAST: Cell<(u64, *const SpanCache)> = const { Cell::new((0, std::ptr::null())) };
}

#[cfg(latte_loom)]
pub(crate) mod loom_model;

#[cfg(test)]
mod tests;
