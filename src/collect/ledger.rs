//! The whole run: every sample the rings hand over, folded into per-kind tallies, and
//! every sample they lost, counted.
//!
//! One process-wide [`Ledger`] behind a mutex. [`fold`] reads, from every ring, only
//! the samples recorded since the previous fold (`Ring::read_from`), so a fold costs
//! what was recorded, not what the rings hold. A sample overwritten before any fold
//! read it is *lost*: per (thread, id), `seen = folded + lost` exactly. The drain
//! thread folds before a ring can lap at the peak rate it has seen; [`whole_run`] and
//! [`take_interval`] fold once more before they answer, so a report includes
//! everything recorded before it was asked for.
//!
//! Every fold also shows its samples to the installed observers (`watch.rs`), apart
//! from the windows: they are not cut by intervals, and a reset is told to them too.
//!
//! Exited threads keep their tallies; beyond the exited-thread limit they are merged
//! into one `<exited threads>` entry, in step with the registry's own folding of their
//! raw windows (a thread is folded in the registry only once the ledger has read all
//! of it).

use super::totals::{ComponentTotals, ThreadTotals, Totals};
use super::watch::{self, Watches};
use crate::config;
use crate::diagnostics::{Anomalies, Unpaired};
use crate::record::alloc::Allocs;
use crate::record::budget::RINGS;
use crate::record::fork::PerProcess;
use crate::record::node::RingKey;
use crate::record::registry::{self, CompactRing, TEARDOWN_DROPS, ThreadShared, View};
use crate::record::{id, local};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, PoisonError};

mod open_now;

/// The fold state: the whole run, split in two once anyone asked for an interval.
///
/// Every sample is folded into one tally only, that of the *open* window: the open
/// interval if there is one, else `whole`. The whole run a report shows is `whole`
/// plus the open interval, added up when a report asks (`window.rs`); ending an
/// interval moves its samples into `whole` and empties it. A reset empties both.
pub(super) struct Ledger {
    /// The whole run (since the start, or since the last [`reset`](super::reset)) up
    /// to where the open interval began, and every thread's counters as they are now.
    pub(super) whole: Totals,
    /// The open interval, once anyone asked for one: what was folded since it began,
    /// and the counters' values then. Same threads and components as `whole`, in the
    /// same order.
    pub(super) interval: Option<Totals>,
    /// The counters' values at the last [`reset`](super::reset), if any: threads and
    /// their counters only (no components).
    pub(super) since_reset: Option<Totals>,
    /// The fold's observers, as features installed them (`watch.rs`): they see every
    /// fold's samples, whichever window they went to.
    pub(super) watches: Watches,
    /// Per thread (by serial), per ring in the thread's order: how many of its
    /// samples the ledger has read (its `seen` as of the previous fold), and its
    /// self-time sum then.
    reads: BTreeMap<u64, Vec<Read>>,
    /// Per thread (by serial): its *in no scope* allocations as of the previous fold.
    outside_reads: BTreeMap<u64, Allocs>,
    /// When the previous fold began (ms since the Unix epoch; 0 before the first):
    /// what a fold reads was recorded between then and its own start.
    last_fold_ms: u64,
    /// When the running fold began.
    now_ms: u64,
    /// When the previous fold began, on the monotonic clock (`None` before the first).
    last_fold_at: Option<std::time::Instant>,
    /// The fastest a ring filled (share of its capacity per second, between two
    /// folds) in the folds since the drain last asked ([`fold`]).
    peak_fill_rate: f64,
}

/// Per process: a child forked while the parent's drain held the ledger starts its
/// own (and reads the rings it inherited from their start). The parent's histograms
/// then no longer count against the child's memory cap.
static LEDGER: PerProcess<Mutex<Ledger>> = PerProcess::new(|| {
    RINGS.recharge(HISTOGRAM_BYTES.swap(0, Relaxed), 0);
    HISTOGRAMS.store(0, Relaxed);
    Mutex::new(Ledger {
        whole: Totals::default(),
        interval: None,
        since_reset: None,
        watches: Watches::default(),
        reads: BTreeMap::new(),
        outside_reads: BTreeMap::new(),
        last_fold_ms: 0,
        now_ms: 0,
        last_fold_at: None,
        peak_fill_rate: 0.0,
    })
});

pub(super) fn ledger() -> std::sync::MutexGuard<'static, Ledger> {
    // A fold that panicked midway leaves counts that are still each a true count of
    // something read; carrying on is better than losing the run.
    LEDGER.get().lock().unwrap_or_else(PoisonError::into_inner)
}

/// Histograms the ledger held after its last fold, and their bytes (what it has
/// charged against the memory cap).
pub(crate) static HISTOGRAMS: AtomicU64 = AtomicU64::new(0);
pub(crate) static HISTOGRAM_BYTES: AtomicU64 = AtomicU64::new(0);

/// What one fold saw, for the drain's pacing.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FoldStats {
    /// Samples folded.
    pub(crate) folded: u64,
    /// Samples found lost.
    pub(crate) lost: u64,
    /// The largest share of a ring's capacity recorded since the previous fold.
    pub(crate) busiest: f64,
    /// The fastest a ring filled, as a share of its capacity per second, in any fold
    /// since the previous call of [`fold`] (reports fold too, in between).
    pub(crate) fill_rate: f64,
}

/// Folds everything recorded since the previous fold: the drain's pace. Its
/// [`FoldStats::fill_rate`] covers the folds reports made since the previous call.
pub(crate) fn fold() -> FoldStats {
    crate::record::alloc::uncounted(fold_now)
}

fn fold_now() -> FoldStats {
    let mut ledger = ledger();
    let mut stats = ledger.fold();
    stats.fill_rate = std::mem::take(&mut ledger.peak_fill_rate);
    stats
}

/// A thread's counters as the registry holds them: anomalies, and scopes that ended
/// without their Stop per id index.
type Counts<'a> = (Anomalies, &'a [(u32, Unpaired)]);

/// How far the ledger has read one ring: its samples, and its self-time sum.
#[derive(Clone, Copy, Debug, Default)]
struct Read {
    seen: u64,
    own: u64,
    allocs: Allocs,
}

/// Which samples of one ring are new, as the ring (or its compacted copy) reported:
/// `words` then `more` (a compacted copy's two halves), oldest first; and its
/// self-time sum, read before the samples.
struct Batch<'a> {
    own: u64,
    allocs: Allocs,
    seen: u64,
    first: u64,
    words: &'a [u64],
    more: &'a [u64],
}

/// Milliseconds since the Unix epoch, now.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Ledger {
    /// Every window kept: the whole run, the open interval, the counters at the last
    /// reset.
    fn windows(&mut self) -> impl Iterator<Item = &mut Totals> {
        std::iter::once(&mut self.whole)
            .chain(self.interval.as_mut())
            .chain(self.since_reset.as_mut())
    }

    /// The windows that hold samples: the whole run and the open interval.
    fn sampled(&self) -> impl Iterator<Item = &Totals> {
        std::iter::once(&self.whole).chain(self.interval.as_ref())
    }

    pub(super) fn fold(&mut self) -> FoldStats {
        self.now_ms = unix_ms();
        let began = std::time::Instant::now();
        self.watches.begin_fold(watch::clock_ms(began));
        registry::compact();
        let view = registry::global().view();
        let me = local::current_shared();
        let mut stats = FoldStats::default();
        let mut names = Vec::new();
        for thread in view.live.iter().filter(|t| !t.internal()) {
            self.fold_live(thread, me.as_deref(), &mut names, &mut stats);
        }
        for c in &view.exited {
            self.thread(c.serial, &c.name, true, (c.anomalies, &c.unpaired));
            self.outside(c.serial, c.outside);
            self.breach(c.serial, c.first_breach);
            for (k, ring) in c.components.iter().enumerate() {
                let from = self.component(c.serial, k, ring.key, &mut names);
                let read = self.reads[&c.serial][k];
                if from < ring.seen || read.allocs != ring.allocs {
                    let (words, more) = new_words(ring, from);
                    let batch = Batch {
                        own: ring.own_ticks,
                        allocs: ring.allocs,
                        seen: ring.seen,
                        first: ring.seen - (words.len() + more.len()) as u64,
                        words,
                        more,
                    };
                    self.absorb(c.serial, k, from, &batch, &mut stats);
                }
            }
        }
        // After the rings: a frame's nodes are then all listed. Each thread's ended
        // frames (`latte_frame!` marks) go to the observers with the thread's totals in
        // the window this fold's samples go to: the open interval, else the whole run.
        let window = self.interval.as_mut().unwrap_or(&mut self.whole);
        let watches = &mut self.watches;
        crate::record::marks::take_frames(|serial, frames| {
            let mut thread = window.threads.get_mut(&serial);
            for w in watches.armed() {
                w.frames(serial, frames, thread.as_deref_mut());
            }
        });
        self.whole.teardown_drops = TEARDOWN_DROPS.load(Relaxed);
        self.whole.process_allocs = crate::record::alloc::process();
        self.fold_threads_away(&view);
        self.publish_size();
        self.last_fold_ms = self.now_ms;
        // What a ring holds was recorded since the previous fold began (or since the
        // ring was made, later: the rate is then an underestimate).
        if let Some(last) = self.last_fold_at.replace(began) {
            let secs = began.duration_since(last).as_secs_f64();
            if secs > 0.0 {
                self.peak_fill_rate = self.peak_fill_rate.max(stats.busiest / secs);
            }
        }
        stats
    }

    /// Folds what a live thread's rings hold beyond what was read before.
    fn fold_live(
        &mut self,
        thread: &ThreadShared,
        me: Option<&ThreadShared>,
        names: &mut Vec<&'static str>,
        stats: &mut FoldStats,
    ) {
        // `exited` before the rings: once set, no push can follow.
        let exited = thread.exited();
        let quiet = exited || me.is_some_and(|m| std::ptr::eq(m, thread));
        let unpaired = thread.unpaired();
        let counts = (thread.counters.read(), unpaired.as_slice());
        self.thread(thread.serial, &thread.name, exited, counts);
        self.outside(thread.serial, thread.outside.read());
        self.breach(thread.serial, thread.first_breach());
        let mut buf = Vec::new();
        for (k, (key, ring)) in thread.rings().iter().enumerate() {
            let from = self.component(thread.serial, k, *key, names);
            buf.clear();
            let own = ring.own_ticks();
            let allocs = ring.allocs().read();
            let read = ring.read_from(from, quiet, &mut buf);
            let new = read.seen - from;
            stats.busiest = stats.busiest.max(new as f64 / ring.capacity() as f64);
            let batch = Batch {
                own,
                allocs,
                seen: read.seen,
                first: read.first,
                words: &buf,
                more: &[],
            };
            self.absorb(thread.serial, k, from, &batch, stats);
        }
    }

    /// Lets the registry fold exited threads beyond its limit (only those `view`
    /// listed as exited: they have now been read whole), then folds the ledger's
    /// entries of every thread the registry no longer lists the same way.
    fn fold_threads_away(&mut self, view: &View) {
        let read: HashSet<u64> = view.exited.iter().map(|c| c.serial).collect();
        registry::merge_excess(|serial| read.contains(&serial));
        let after = registry::global().view();
        let listed: HashSet<u64> = after
            .live
            .iter()
            .map(|t| t.serial)
            .chain(after.exited.iter().map(|c| c.serial))
            .collect();
        for totals in self.windows() {
            totals.merge_gone(&listed);
        }
        self.reads.retain(|serial, _| listed.contains(serial));
        self.outside_reads
            .retain(|serial, _| listed.contains(serial));
    }

    /// Publishes how many histograms the ledger holds (its observers' tables among
    /// them) and their bytes (all their heap), for
    /// [`footprint`](super::footprint) (which must not wait for the ledger's lock),
    /// and charges their change in bytes against the memory cap (`record/budget.rs`),
    /// freeing pooled rings if that passes the cap.
    pub(super) fn publish_size(&self) {
        let tallies = self
            .sampled()
            .flat_map(|t| t.threads.values())
            .flat_map(|t| &t.components)
            .flat_map(|c| &c.kinds);
        let (mut count, mut bytes) = self.watches.size();
        for (_, tally) in tallies {
            count += 1;
            bytes += tally.heap_bytes();
        }
        HISTOGRAMS.store(count, Relaxed);
        RINGS.recharge(HISTOGRAM_BYTES.swap(bytes, Relaxed), bytes);
        // Past the cap, pooled rings (kept only to spare new threads an allocation)
        // are freed first.
        let cap = config::memory_cap();
        if RINGS.charged() > cap {
            registry::global().shed_pool(|| RINGS.charged() <= cap);
        }
    }

    /// Makes sure thread `serial` has an entry (in the interval too), and updates it.
    fn thread(&mut self, serial: u64, name: &str, exited: bool, counts: Counts<'_>) {
        let (anomalies, unpaired) = counts;
        for (k, totals) in self.windows().enumerate() {
            let t = totals
                .threads
                .entry(serial)
                .or_insert_with(|| ThreadTotals::new(name.to_owned(), exited));
            t.exited = exited;
            if k == 0 {
                t.anomalies = anomalies;
                if t.unpaired.len() != unpaired.len() || unpaired.is_empty() {
                    // Unpaired counts are rare (misuse): names are looked up again
                    // only when an id joins the list.
                    let names = id::names();
                    t.unpaired = unpaired
                        .iter()
                        .map(|(i, c)| (names.get(*i as usize).copied().unwrap_or(""), *c))
                        .collect();
                } else {
                    for (mine, (_, c)) in t.unpaired.iter_mut().zip(unpaired) {
                        mine.1 = *c;
                    }
                }
            }
        }
    }

    /// Folds thread `serial`'s *in no scope* allocations, `now` as counted so far, into
    /// the open window (after [`thread`](Self::thread) made its entry).
    fn outside(&mut self, serial: u64, now: Allocs) {
        let before = self.outside_reads.insert(serial, now).unwrap_or_default();
        let open = self.interval.as_mut().unwrap_or(&mut self.whole);
        let t = open.threads.get_mut(&serial).expect("thread() ran");
        t.outside = t.outside.plus(&now.since(&before));
    }

    /// Notes thread `serial`'s first allocation in an allocation-free scope, in every
    /// window (a whole-run fact, as the counters are).
    fn breach(&mut self, serial: u64, breach: Option<(u32, u64)>) {
        if breach.is_some() {
            for totals in self.windows() {
                if let Some(t) = totals.threads.get_mut(&serial) {
                    t.breach = breach;
                }
            }
        }
    }

    /// Makes sure the `k`-th component of thread `serial` (its `k`-th ring, of
    /// `key`) has an entry in the whole run and the interval; returns how many of the
    /// ring's samples were read before.
    fn component(
        &mut self,
        serial: u64,
        k: usize,
        key: RingKey,
        names: &mut Vec<&'static str>,
    ) -> u64 {
        let index = key.idx;
        for totals in std::iter::once(&mut self.whole).chain(self.interval.as_mut()) {
            let components = &mut totals
                .threads
                .get_mut(&serial)
                .expect("thread() ran")
                .components;
            if components.len() <= k {
                if names.len() <= index as usize {
                    *names = id::names();
                }
                let mut c = ComponentTotals::new(index, names[index as usize]);
                c.parent = key.parent;
                components.push(c);
            }
            debug_assert_eq!(components[k].key(), key);
        }
        let reads = self.reads.entry(serial).or_default();
        if reads.len() <= k {
            reads.resize(k + 1, Read::default());
        }
        reads[k].seen
    }

    /// Folds one batch, read from position `from` on, into the `k`-th component of
    /// `serial` in the open window.
    fn absorb(
        &mut self,
        serial: u64,
        k: usize,
        from: u64,
        batch: &Batch<'_>,
        stats: &mut FoldStats,
    ) {
        let lost = batch.first.saturating_sub(from);
        stats.folded += (batch.words.len() + batch.more.len()) as u64;
        stats.lost += lost;
        let read = &mut self.reads.get_mut(&serial).expect("component() ran")[k];
        let own = batch.own.wrapping_sub(read.own);
        let allocs = batch.allocs.since(&read.allocs);
        *read = Read {
            seen: batch.seen,
            own: batch.own,
            allocs: batch.allocs,
        };
        let keep = config::slowest();
        let when = (self.last_fold_ms, self.now_ms);
        // The open window and the observers, borrowed apart.
        let Ledger {
            whole,
            interval,
            watches,
            ..
        } = self;
        let whole_now = &whole.threads.get(&serial).expect("thread() ran").components[k];
        watches
            .armed()
            .for_each(|w| w.component(serial, k, whole_now));
        let open = interval.as_mut().unwrap_or(whole);
        let c = &mut open
            .threads
            .get_mut(&serial)
            .expect("thread() ran")
            .components[k];
        c.seen += batch.seen - from;
        c.self_ticks = c.self_ticks.wrapping_add(own);
        c.allocs = c.allocs.plus(&allocs);
        c.lost += lost;
        let index = c.index;
        let mut also = |kind, ticks: &[u64]| {
            (watches.armed()).for_each(|w| w.samples(serial, k, index, kind, ticks));
        };
        c.fold(batch.words, keep, when, &mut also);
        c.fold(batch.more, keep, when, &mut also);
    }
}

/// The samples of a compacted ring at index `from` or later, in two parts, oldest
/// first (read in place: the copy is the registry's).
fn new_words(ring: &CompactRing, from: u64) -> (&[u64], &[u64]) {
    let skip = from.saturating_sub(ring.first()) as usize;
    let (a, b) = ring.samples.as_slices();
    match skip.checked_sub(a.len()) {
        None => (&a[skip..], b),
        Some(past) => (&b[past.min(b.len())..], &[]),
    }
}
