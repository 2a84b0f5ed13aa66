//! Reading what the threads recorded, while they keep recording.
//!
//! Two kinds of read, both without stopping or slowing any writer:
//!
//! - **The whole run** (`ledger.rs`, crate-internal): every sample folded into
//!   per-kind histograms with exact counts and sums, every overwritten one counted as
//!   lost; what reports are made of. `window.rs` cuts the windows a report covers
//!   from it: the whole run (since the start, or since [`reset`]) and one interval.
//!   Features that keep their own view of the samples (the series log, the flight
//!   recorder's triggers) watch the folds (`watch.rs`).
//! - **The ring window** ([`Capture`]): a copy of the newest samples each ring still
//!   holds, raw, plus every thread's counters. [`snapshot`] reads one component's
//!   windows and [`Capture::write_csv`] writes a capture's raw samples.
//!
//! [`prepare`] readies a thread's rings before it records.

#[cfg(feature = "agent")]
mod buckets;
#[cfg(feature = "csv")]
mod csv;
#[cfg(feature = "agent")]
mod ledger;
#[cfg(feature = "agent")]
mod parts;
mod read;
#[cfg(feature = "agent")]
mod tally;
#[cfg(feature = "agent")]
mod totals;
#[cfg(feature = "agent")]
mod watch;
#[cfg(feature = "agent")]
mod window;

pub use crate::config::Limit;
pub use crate::diagnostics::{Anomalies, Footprint, Unpaired};
pub use crate::record::{Sample, SampleKind, Switch, prepare, recording};

// The whole run, which only the agent reads.
#[cfg(all(feature = "agent", feature = "test-hooks"))]
pub(crate) use watch::hook as fold_clock;
#[cfg(feature = "agent")]
pub(crate) use {
    buckets::Buckets,
    ledger::fold,
    parts::ThreadPart,
    tally::{Exact, Tally, skewness},
    totals::{ComponentTotals, ThreadTotals, Totals},
    watch::{FoldWatch, Watches, watch, watch_once, with_watch},
    window::{take_interval, whole_run},
};

use crate::record::alloc::Allocs;
use crate::record::local;
use crate::record::registry;
use crate::record::{Id, id};
use std::sync::atomic::Ordering::Relaxed;

/// Every ring's retained window, per thread: the newest samples of each (thread, id),
/// up to the ring's capacity, plus counts of everything recorded. Reports cover the
/// whole run instead; a capture is for looking at raw samples.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// Every thread that has recorded, alive or exited, in order of first record.
    pub threads: Vec<ThreadCapture>,
    /// Records dropped because they were made after the calling thread's recorder had
    /// been torn down (from another thread-local's destructor).
    pub teardown_drops: u64,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: what threads
    /// without a recorder allocated (before their first record, after their recorder
    /// was torn down at exit). `None` without one.
    pub process_allocs: Option<Allocs>,
}

/// One thread's share of a [`Capture`].
#[derive(Clone, Debug)]
pub struct ThreadCapture {
    /// 1-based order in which the thread first recorded.
    pub serial: u64,
    /// The thread's name, or `thread-<serial>`.
    pub name: String,
    /// Whether the thread had exited when the capture was taken.
    pub exited: bool,
    /// Misuse and clock anomalies counted on this thread.
    pub anomalies: Anomalies,
    /// One entry per component the thread recorded, in order of first use.
    pub components: Vec<ComponentCapture>,
    /// One entry per id with scopes that ended without their Stop (abandoned,
    /// orphaned, open at exit), records dropped past the memory cap or timers
    /// cancelled, in order of the first such event: the per-id split of those four
    /// `anomalies`, and the cancels (which are not anomalies).
    pub unpaired: Vec<IdUnpaired>,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: what the
    /// thread allocated while no scope was open on it. `None` without one.
    pub outside_allocs: Option<Allocs>,
    /// Its first allocation in a scope declared allocation-free
    /// ([`forbid`](crate::alloc::forbid)): the node's index in `components` and the
    /// size in bytes.
    pub alloc_breach: Option<(usize, u64)>,
}

/// One (thread, id)'s scopes that ended without their Stop, records dropped past the
/// memory cap, and timers cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdUnpaired {
    /// The id's name.
    pub name: &'static str,
    /// How many ended which way.
    pub counts: Unpaired,
}

/// One (thread, component) ring's retained samples.
#[derive(Clone, Debug)]
pub struct ComponentCapture {
    /// The component's name (the text of its [`Id`]).
    pub name: &'static str,
    /// Samples ever recorded (kept + overwritten).
    pub seen: u64,
    /// How many samples the ring keeps.
    pub capacity: usize,
    /// Index, in the (thread, component)'s recording sequence, of `samples[0]`: the
    /// samples are indices `first .. seen`.
    pub first: u64,
    /// Retained samples, oldest first.
    pub samples: Vec<Sample>,
    /// The call-tree node this ring records: `None` at the root (scopes opened with
    /// none open below them on the thread, and the id's pulses, records and
    /// [`Timer`](crate::Timer)s), else the index, in the thread's `components`, of
    /// the node it ran under. See `docs/design.md`, "The call tree".
    ///
    /// ```
    /// latte::latte_start!("doc_parent_outer");
    /// latte::latte_start!("doc_parent_inner");
    /// latte::latte_stop!("doc_parent_inner");
    /// latte::latte_stop!("doc_parent_outer");
    /// let capture = latte::capture();
    /// let me = capture.thread(std::thread::current().name().unwrap()).unwrap();
    /// let outer = me.components.iter().position(|c| c.name == "doc_parent_outer");
    /// let inner = me.component("doc_parent_inner").unwrap();
    /// assert_eq!(inner.parent, outer);
    /// // The outer scope's self time leaves out the inner one's.
    /// let outer = me.component("doc_parent_outer").unwrap();
    /// assert!(outer.self_ticks.unwrap() < outer.samples[0].ticks());
    /// assert_eq!(inner.self_ticks, Some(inner.samples[0].ticks()));
    /// ```
    pub parent: Option<usize>,
    /// The self time of all `seen` scopes, summed, in ticks: each scope's ticks minus
    /// those of the scopes closed inside it on its thread. Exact over every scope
    /// recorded, overwritten ones included; 0 for pulses and records. `None` in a
    /// capture made by hand: then no scope had scopes inside it.
    pub self_ticks: Option<u64>,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: what was
    /// allocated and freed while this node was the innermost open scope on its
    /// thread (its self allocations). `None` without one.
    pub allocs: Option<Allocs>,
}

impl ComponentCapture {
    /// Samples recorded but no longer retained (overwritten by newer ones, or given up
    /// because the writer was overwriting them during the read).
    pub fn overwritten(&self) -> u64 {
        self.seen - self.samples.len() as u64
    }
}

impl Capture {
    /// The thread captured under `name` (the first, if several share it).
    pub fn thread(&self, name: &str) -> Option<&ThreadCapture> {
        self.threads.iter().find(|t| t.name == name)
    }

    /// The component `name` of the first thread that recorded it.
    pub fn component(&self, name: &str) -> Option<&ComponentCapture> {
        self.threads.iter().find_map(|t| t.component(name))
    }
}

impl ThreadCapture {
    /// This thread's component `name`, if it recorded one: its first node (its
    /// ring at the root if it has one, else the first path it ran under).
    pub fn component(&self, name: &str) -> Option<&ComponentCapture> {
        let mut nodes = self.components.iter().filter(|c| c.name == name);
        let first = nodes.clone().next();
        nodes.find(|c| c.parent.is_none()).or(first)
    }

    /// Every retained sample of id `name` on this thread, over all its call-tree
    /// nodes: node by node, in the order of `components`, each oldest first (samples
    /// of two nodes carry no order between them). Empty if the id recorded nothing
    /// here.
    ///
    /// ```
    /// use latte::Id;
    /// static WALK: Id = Id::new("doc_samples_walk");
    /// fn walk(depth: u32) {
    ///     latte::start(&WALK, latte::Mode::Fast);
    ///     if depth > 0 {
    ///         walk(depth - 1);
    ///     }
    ///     latte::stop(&WALK, latte::Mode::Fast);
    /// }
    /// walk(2); // three nested scopes of one id: three nodes
    /// let capture = latte::capture();
    /// let me = capture.thread(std::thread::current().name().unwrap()).unwrap();
    /// assert_eq!(me.samples("doc_samples_walk").len(), 3);
    /// assert_eq!(me.component("doc_samples_walk").unwrap().samples.len(), 1);
    /// ```
    pub fn samples(&self, name: &str) -> Vec<Sample> {
        let nodes = self.components.iter().filter(|c| c.name == name);
        nodes.flat_map(|c| c.samples.iter().copied()).collect()
    }

    /// The counts of id `name` on this thread besides its samples: scopes that ended
    /// without their Stop, records past the memory cap, timers cancelled (all zero if
    /// none).
    ///
    /// ```
    /// use latte::{Id, Mode};
    /// static OUTER: Id = Id::new("doc_frames_outer");
    /// static LEAKED: Id = Id::new("doc_frames_leaked");
    /// latte::start(&OUTER, Mode::Fast);
    /// latte::start(&LEAKED, Mode::Fast); // its Stop is missed
    /// latte::stop(&OUTER, Mode::Fast); // closes OUTER, drops LEAKED as an orphan
    /// let capture = latte::capture();
    /// let me = capture.thread(std::thread::current().name().unwrap()).unwrap();
    /// assert_eq!(me.unpaired("doc_frames_leaked").orphaned, 1);
    /// assert_eq!(me.unpaired("doc_frames_outer").total(), 0);
    /// ```
    pub fn unpaired(&self, name: &str) -> Unpaired {
        self.unpaired
            .iter()
            .find(|f| f.name == name)
            .map_or_else(Unpaired::default, |f| f.counts)
    }
}

/// Ring window: copies every thread's retained samples and counters, while they keep
/// recording.
///
/// Each sample returned is whole and belongs to the (thread, component) it is listed
/// under; see the ring protocol in `docs/design.md`.
///
/// ```
/// use latte::Id;
/// static WORK: Id = Id::new("doc_capture");
/// latte::record(&WORK, 42);
/// let capture = latte::capture();
/// let me = capture.thread(std::thread::current().name().unwrap()).unwrap();
/// let work = me.component("doc_capture").unwrap();
/// assert_eq!((work.seen, work.samples[0].ticks()), (1, 42));
/// ```
pub fn capture() -> Capture {
    read::read(None)
}

/// Ring window of one component: its raw tick samples across all threads (oldest first
/// per thread, threads in order of first record). Safe to call while other threads
/// record.
///
/// Unknown names give an empty vector.
///
/// ```
/// use latte::Id;
/// static STEP: Id = Id::new("doc_snapshot");
/// latte::record(&STEP, 7);
/// std::thread::spawn(|| latte::record(&STEP, 9)).join().unwrap();
/// let mut samples = latte::snapshot("doc_snapshot");
/// samples.sort();
/// assert_eq!(samples, [7, 9]);
/// assert!(latte::snapshot("no such id").is_empty());
/// ```
pub fn snapshot(name: &str) -> Vec<u64> {
    let Some(index) = id::lookup(name) else {
        return Vec::new();
    };
    read::read(Some(index))
        .threads
        .into_iter()
        .flat_map(|t| t.components)
        .flat_map(|c| c.samples)
        .map(Sample::ticks)
        .collect()
}

/// Drops what was recorded so far from every report to come (a warm-up, say): the
/// whole run, its series of blocks (`Report::series`) and the open interval of
/// periodic reports start again from now, with their anomaly counts too. What the rings still hold is untouched, so a
/// [`capture`], a [`snapshot`] and the CSV export still show the newest samples from
/// before. Works with or without an agent; takes the lock reports take, never the
/// recording threads'.
///
/// ```
/// use latte::{Report, ReportOptions};
/// for _ in 0..100 {
///     latte::latte_pulse!("doc_reset_warm"); // warm-up: caches, page faults
/// }
/// latte::collect::reset();
/// for _ in 0..10 {
///     latte::latte_pulse!("doc_reset_warm");
/// }
/// let report = Report::collect(&ReportOptions::default());
/// let row = report.all_threads.iter().find(|r| r.component == "doc_reset_warm").unwrap();
/// assert_eq!(row.stats.seen, 10);
/// ```
#[cfg(feature = "agent")]
pub fn reset() {
    window::reset();
}

/// latte's current memory footprint (after compacting exited threads, waiting for the
/// drain's compaction if one is running; the histograms as of the last fold).
pub fn footprint() -> Footprint {
    registry::compact_waiting();
    let mut f = registry::global().footprint();
    #[cfg(feature = "agent")]
    {
        f.histograms = ledger::HISTOGRAMS.load(Relaxed);
        f.histogram_bytes = ledger::HISTOGRAM_BYTES.load(Relaxed);
    }
    f.drain_cpu_ns = crate::diagnostics::DRAIN_CPU_NS.load(Relaxed);
    f.bytes += f.histogram_bytes;
    f
}

/// The calling thread's retained samples of `id` (exact: the reader is the writer),
/// for latte's own measurements on its internal threads (calibration).
pub(crate) fn own_samples(id: &Id) -> Vec<Sample> {
    let index = id.index();
    let mut out = Vec::new();
    if let Some(me) = local::current_shared() {
        for (_, ring) in me.rings().iter().filter(|(k, _)| k.idx == index) {
            ring.read(true, &mut out);
        }
    }
    out.into_iter().map(Sample::from_bits).collect()
}

/// Whether any of the user's threads has recorded anything so far.
pub(crate) fn anything_recorded() -> bool {
    registry::global().anything_recorded()
}

/// Marks the calling thread as latte's own: its samples are hidden from captures and
/// reports, and dropped when it exits.
pub(crate) fn mark_internal_thread() {
    if let Some(me) = local::register_current() {
        me.mark_internal();
    }
}
