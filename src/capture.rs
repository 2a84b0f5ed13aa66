//! Reading what the threads recorded, while they keep recording.
//!
//! This is the plain-data boundary between recording and analysis: a [`Capture`] is a
//! copy of every ring's retained samples plus every thread's counters, taken without
//! stopping or slowing any writer.

use crate::record::local;
use crate::record::ring::RingRead;
use crate::record::{id, sample::Sample};
use crate::registry::{self, Counters};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

/// Everything recorded so far, per thread.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// Every thread that has recorded, alive or exited, in order of first record.
    pub threads: Vec<ThreadCapture>,
    /// Records dropped because they were made after the calling thread's recorder had
    /// been torn down (from another thread-local's destructor).
    pub teardown_drops: u64,
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
    /// One entry per id the thread recorded, in order of first use.
    pub components: Vec<ComponentCapture>,
}

/// One (thread, id) ring's samples.
#[derive(Clone, Debug)]
pub struct ComponentCapture {
    /// The id's name.
    pub id: &'static str,
    /// Samples ever recorded (kept + overwritten).
    pub seen: u64,
    /// How many samples the ring keeps.
    pub capacity: usize,
    /// Retained samples, oldest first.
    pub samples: Vec<Sample>,
}

impl ComponentCapture {
    /// Samples recorded but no longer retained (overwritten by newer ones, or given up
    /// because the writer was overwriting them during the read).
    pub fn overwritten(&self) -> u64 {
        self.seen - self.samples.len() as u64
    }
}

/// Counters of everything a thread did that could not be recorded as asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Anomalies {
    /// Starts ignored because the stack was full (their Stops are absorbed).
    pub overflowed_starts: u64,
    /// Stops with no open scope at all.
    pub empty_stops: u64,
    /// Stops whose id matched no open scope (the stack was left as it was).
    pub unmatched_stops: u64,
    /// Open scopes discarded because a Stop for a scope below them arrived first.
    pub orphaned_frames: u64,
    /// Deltas discarded because the counter went backwards or jumped past
    /// [`MAX_DELTA`](crate::MAX_DELTA).
    pub clock_anomalies: u64,
    /// Scopes still open when the thread exited.
    pub open_at_exit: u64,
    /// Records made from inside latte's own first-use path (e.g. by an instrumented
    /// allocator), dropped to avoid recursion.
    pub reentrant: u64,
}

impl Anomalies {
    fn read(c: &Counters) -> Anomalies {
        Anomalies {
            overflowed_starts: c.overflowed_starts.load(Relaxed),
            empty_stops: c.empty_stops.load(Relaxed),
            unmatched_stops: c.unmatched_stops.load(Relaxed),
            orphaned_frames: c.orphaned_frames.load(Relaxed),
            clock_anomalies: c.clock_anomalies.load(Relaxed),
            open_at_exit: c.open_at_exit.load(Relaxed),
            reentrant: c.reentrant.load(Relaxed),
        }
    }

    /// The sum of all counters (saturating).
    pub fn total(&self) -> u64 {
        [
            self.overflowed_starts,
            self.empty_stops,
            self.unmatched_stops,
            self.orphaned_frames,
            self.clock_anomalies,
            self.open_at_exit,
            self.reentrant,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }
}

impl Capture {
    /// The thread captured under `name` (the first, if several share it).
    pub fn thread(&self, name: &str) -> Option<&ThreadCapture> {
        self.threads.iter().find(|t| t.name == name)
    }

    /// The component `id` of the first thread that recorded it.
    pub fn component(&self, id: &str) -> Option<&ComponentCapture> {
        self.threads.iter().find_map(|t| t.component(id))
    }
}

impl ThreadCapture {
    /// This thread's component `id`, if it recorded one.
    pub fn component(&self, id: &str) -> Option<&ComponentCapture> {
        self.components.iter().find(|c| c.id == id)
    }
}

/// Copies every thread's retained samples and counters, while they keep recording.
///
/// Each sample returned is whole and belongs to the (thread, id) it is listed under;
/// see the ring protocol in `docs/design.md`.
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
    collect(None)
}

/// Raw tick samples of `id`, aggregated across all threads (oldest first per thread,
/// threads in order of first record). Safe to call while other threads record.
///
/// Unknown ids give an empty vector.
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
pub fn snapshot(id: &str) -> Vec<u64> {
    let Some(idx) = id::lookup(id) else {
        return Vec::new();
    };
    collect(Some(idx))
        .threads
        .into_iter()
        .flat_map(|t| t.components)
        .flat_map(|c| c.samples)
        .map(Sample::ticks)
        .collect()
}

fn collect(only: Option<u32>) -> Capture {
    let me = local::current_shared();
    let mut buf = Vec::new();
    let threads: Vec<_> = registry::threads()
        .into_iter()
        .filter(|thread| !thread.internal())
        .map(|thread| {
            // `exited` is read before the rings: once it is set, no push can follow, so
            // the read can be exact. The reader's own rings cannot move under it either.
            let exited = thread.exited();
            let quiet = exited || me.as_ref().is_some_and(|me| Arc::ptr_eq(me, &thread));
            let components: Vec<_> = thread
                .rings()
                .into_iter()
                .filter(|(i, _)| only.is_none_or(|o| o == *i))
                .map(|(i, ring)| {
                    buf.clear();
                    let RingRead { seen, .. } = ring.read(quiet, &mut buf);
                    (
                        i,
                        seen,
                        ring.capacity(),
                        buf.iter().map(|&w| Sample::from_bits(w)).collect(),
                    )
                })
                .collect();
            (thread, exited, components)
        })
        .collect();
    // Names are read after the rings, so every ring's id is already interned.
    let names = id::names();
    let threads = threads
        .into_iter()
        .map(|(thread, exited, components)| ThreadCapture {
            serial: thread.serial,
            name: thread.name.clone(),
            exited,
            anomalies: Anomalies::read(&thread.counters),
            components: components
                .into_iter()
                .map(|(i, seen, capacity, samples)| ComponentCapture {
                    id: names[i as usize],
                    seen,
                    capacity,
                    samples,
                })
                .collect(),
        })
        .collect();
    Capture {
        threads,
        teardown_drops: registry::TEARDOWN_DROPS.load(Relaxed),
    }
}

/// The calling thread's retained samples of id index `idx` (exact: the reader is the
/// writer). Used by calibration, which records on its own internal thread.
pub(crate) fn own_samples(idx: u32) -> Vec<u64> {
    let mut out = Vec::new();
    if let Some(me) = local::current_shared() {
        for (_, ring) in me.rings().into_iter().filter(|(i, _)| *i == idx) {
            ring.read(true, &mut out);
        }
    }
    out
}
