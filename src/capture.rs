//! Reading what the threads recorded, while they keep recording.
//!
//! This is the plain-data boundary between recording and analysis: a [`Capture`] is a
//! copy of every ring's retained samples plus every thread's counters, taken without
//! stopping or slowing any writer.

use crate::record::local;
use crate::record::ring::{Ring, RingRead};
use crate::record::{id, sample::Sample};
use crate::registry::{self, CompactRing, FOLDED_NAME};
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
    /// Index, in the (thread, id)'s recording sequence, of `samples[0]`: the samples
    /// are indices `first .. seen`.
    pub first: u64,
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
    /// Scopes closed out of LIFO order by the `tracing` bridge: recorded correctly, the
    /// scopes opened after them kept open (see [`tracing`](crate::tracing)).
    pub unordered_stops: u64,
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
    fn fields(&self) -> [u64; 8] {
        [
            self.overflowed_starts,
            self.empty_stops,
            self.unmatched_stops,
            self.unordered_stops,
            self.orphaned_frames,
            self.clock_anomalies,
            self.open_at_exit,
            self.reentrant,
        ]
    }

    fn from_fields(f: [u64; 8]) -> Anomalies {
        let [
            overflowed_starts,
            empty_stops,
            unmatched_stops,
            unordered_stops,
            orphaned_frames,
            clock_anomalies,
            open_at_exit,
            reentrant,
        ] = f;
        Anomalies {
            overflowed_starts,
            empty_stops,
            unmatched_stops,
            unordered_stops,
            orphaned_frames,
            clock_anomalies,
            open_at_exit,
            reentrant,
        }
    }

    /// Field-wise sum (saturating).
    pub fn plus(&self, other: &Anomalies) -> Anomalies {
        let (a, b) = (self.fields(), other.fields());
        Anomalies::from_fields(std::array::from_fn(|i| a[i].saturating_add(b[i])))
    }

    /// Field-wise difference since an earlier reading of the same counters (saturating).
    pub fn since(&self, earlier: &Anomalies) -> Anomalies {
        let (a, b) = (self.fields(), earlier.fields());
        Anomalies::from_fields(std::array::from_fn(|i| a[i].saturating_sub(b[i])))
    }

    /// The sum of all counters (saturating).
    pub fn total(&self) -> u64 {
        self.fields().into_iter().fold(0, u64::saturating_add)
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
    registry::compact();
    let me = local::current_shared();
    let view = registry::global().view();
    let mut buf = Vec::new();
    let wanted = |i: &u32| only.is_none_or(|o| o == *i);
    // (serial, name, exited, anomalies, [(id index, seen, capacity, first, samples)])
    type Raw = (
        u64,
        String,
        bool,
        Anomalies,
        Vec<(u32, u64, usize, u64, Vec<Sample>)>,
    );
    let mut raw: Vec<Raw> = Vec::new();
    for thread in view.live.iter().filter(|t| !t.internal()) {
        // `exited` is read before the rings: once it is set, no push can follow, so
        // the read can be exact. The reader's own rings cannot move under it either.
        let exited = thread.exited();
        let quiet = exited || me.as_ref().is_some_and(|me| Arc::ptr_eq(me, thread));
        let components = thread
            .rings()
            .iter()
            .filter(|(i, _)| wanted(i))
            .map(|(i, ring)| {
                let i = *i;
                let RingRead { seen, first, .. } = read_live(ring, quiet, &mut buf);
                let samples = buf.iter().map(|&w| Sample::from_bits(w)).collect();
                (i, seen, ring.capacity(), first, samples)
            })
            .collect();
        raw.push((
            thread.serial,
            thread.name.clone(),
            exited,
            thread.counters.read(),
            components,
        ));
    }
    let compact = |rings: &[CompactRing]| {
        rings
            .iter()
            .filter(|r| wanted(&r.id))
            .map(|r| {
                let samples = r.samples.iter().map(|&w| Sample::from_bits(w)).collect();
                (r.id, r.seen, r.capacity, r.first(), samples)
            })
            .collect::<Vec<_>>()
    };
    for c in &view.exited {
        raw.push((
            c.serial,
            c.name.clone(),
            true,
            c.anomalies,
            compact(&c.components),
        ));
    }
    if let Some(f) = &view.folded {
        raw.push((
            0,
            FOLDED_NAME.to_owned(),
            true,
            f.anomalies,
            compact(&f.components),
        ));
    }
    // Capture order: order of first record (the folded threads are the oldest).
    raw.sort_by_key(|r| r.0);
    // Names are read after the rings, so every ring's id is already interned.
    let names = id::names();
    Capture {
        threads: raw
            .into_iter()
            .map(
                |(serial, name, exited, anomalies, components)| ThreadCapture {
                    serial,
                    name,
                    exited,
                    anomalies,
                    components: components
                        .into_iter()
                        .map(|(i, seen, capacity, first, samples)| ComponentCapture {
                            id: names[i as usize],
                            seen,
                            capacity,
                            first,
                            samples,
                        })
                        .collect(),
                },
            )
            .collect(),
        teardown_drops: registry::TEARDOWN_DROPS.load(Relaxed),
    }
}

/// Reads a ring into `buf`, again (up to 3 times) if a writer overwrote more than
/// half of what the ring holds while it was being copied. That only happens when the
/// reader is descheduled mid-copy; the protocol then rightly drops what it cannot
/// vouch for, and a second copy usually gets it all.
fn read_live(ring: &Ring, quiet: bool, buf: &mut Vec<u64>) -> RingRead {
    let mut attempt = 0;
    loop {
        buf.clear();
        let read = ring.read(quiet, buf);
        attempt += 1;
        let full = read.seen.min(ring.capacity() as u64);
        if quiet || read.kept * 2 >= full || attempt == 3 {
            return read;
        }
    }
}

/// Memory latte holds for its samples, and the threads behind it.
///
/// ```
/// latte::latte_pulse!("doc_footprint");
/// latte::latte_pulse!("doc_footprint");
/// let f = latte::footprint();
/// assert!(f.live_threads >= 1 && f.rings >= 1 && f.bytes > 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Footprint {
    /// Estimated bytes in use: ring pages samples have reached, compacted samples of
    /// exited threads, pooled rings, and ~2 KiB per live thread.
    pub bytes: u64,
    /// Address space reserved by live rings (backed by memory only where written).
    pub ring_bytes_reserved: u64,
    /// Live rings.
    pub rings: u64,
    /// Threads still running that have recorded.
    pub live_threads: u64,
    /// Exited threads kept individually (compacted to their retained samples).
    pub exited_threads: u64,
    /// Exited threads folded into the `<exited threads>` entry.
    pub folded_threads: u64,
}

/// latte's current memory footprint (after compacting exited threads).
pub fn footprint() -> Footprint {
    registry::compact();
    registry::global().footprint()
}

/// Hands out only what was recorded since the previous call: the basis of periodic
/// reports.
///
/// Each call captures everything and keeps, per (thread, id), only samples whose index
/// in the recording sequence is past the previous call's `seen`; `seen` becomes the
/// number recorded since then, and anomaly counters become increments too. Samples
/// recorded and already overwritten between two calls count in `seen` but are gone.
///
/// ```
/// use latte::{Cursor, Id};
/// static TICK: Id = Id::new("doc_cursor");
/// let mut cursor = Cursor::new();
/// latte::record(&TICK, 1);
/// latte::record(&TICK, 2);
/// let first = cursor.capture();
/// assert_eq!(first.component("doc_cursor").unwrap().samples.len(), 2);
/// latte::record(&TICK, 3);
/// let second = cursor.capture();
/// let c = second.component("doc_cursor").unwrap();
/// assert_eq!((c.seen, c.samples[0].ticks()), (1, 3));
/// assert!(cursor.capture().component("doc_cursor").is_none()); // nothing new
/// ```
#[derive(Debug, Default)]
pub struct Cursor {
    seen: std::collections::HashMap<(u64, &'static str), u64>,
    anomalies: std::collections::HashMap<u64, Anomalies>,
    teardown_drops: u64,
}

impl Cursor {
    /// A cursor whose first capture returns everything recorded so far.
    pub fn new() -> Cursor {
        Cursor::default()
    }

    /// Everything recorded since the previous call (or since the start).
    ///
    /// The `<exited threads>` entry (exited threads folded together once more than
    /// [`max_exited_threads`](crate::Builder::max_exited_threads) are kept) is left out:
    /// the agent folds only threads its periodic capture has already seen.
    pub fn capture(&mut self) -> Capture {
        let mut capture = capture();
        capture
            .threads
            .retain(|t| t.name != FOLDED_NAME || t.serial != 0);
        for t in &mut capture.threads {
            t.components.retain_mut(|c| {
                let mark = self.seen.entry((t.serial, c.id)).or_insert(0);
                let since = (*mark).min(c.seen);
                let skip = since.saturating_sub(c.first).min(c.samples.len() as u64) as usize;
                c.samples.drain(..skip);
                c.first += skip as u64;
                c.seen -= since;
                *mark += c.seen;
                c.seen > 0
            });
            let before = self
                .anomalies
                .insert(t.serial, t.anomalies)
                .unwrap_or_default();
            t.anomalies = t.anomalies.since(&before);
        }
        capture
            .threads
            .retain(|t| !t.components.is_empty() || t.anomalies.total() > 0);
        let drops = capture.teardown_drops;
        capture.teardown_drops = drops.saturating_sub(self.teardown_drops);
        self.teardown_drops = drops;
        capture
    }
}

/// The calling thread's retained samples of id index `idx` (exact: the reader is the
/// writer). Used by calibration, which records on its own internal thread.
pub(crate) fn own_samples(idx: u32) -> Vec<u64> {
    let mut out = Vec::new();
    if let Some(me) = local::current_shared() {
        for (_, ring) in me.rings().iter().filter(|(i, _)| *i == idx) {
            ring.read(true, &mut out);
        }
    }
    out
}
