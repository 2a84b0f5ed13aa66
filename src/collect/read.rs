//! Reading every ring's retained window, live threads while they record: what a
//! [`Capture`] and [`snapshot`](super::snapshot) are made of.

use super::{Anomalies, Capture, ComponentCapture, IdUnpaired, Sample, ThreadCapture, Unpaired};
use crate::record::local;
use crate::record::node::RingKey;
use crate::record::registry::{self, CompactRing, MERGED_NAME, TEARDOWN_DROPS, ThreadShared};
use crate::record::ring::{Ring, RingRead};
use crate::record::{alloc, id};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

/// A thread's components before their names are looked up: (dense index, component
/// with a placeholder name).
type Indexed = Vec<(u32, ComponentCapture)>;

/// A thread before names are looked up: the capture, its components, its frame counts.
type Unnamed = (ThreadCapture, Indexed, Vec<(u32, Unpaired)>);

/// Reads every thread (or only component `only`), live ones while they record.
pub(super) fn read(only: Option<u32>) -> Capture {
    alloc::uncounted(|| read_all(only))
}

fn read_all(only: Option<u32>) -> Capture {
    registry::compact();
    let view = registry::global().view();
    let mut threads: Vec<Unnamed> = Vec::new();
    let me = local::current_shared();
    for thread in view.live.iter().filter(|t| !t.internal()) {
        threads.push(read_live(thread, me.as_ref(), only));
    }
    for c in &view.exited {
        let mut t = compacted(c.serial, &c.name, c.anomalies, &c.components, only);
        t.0.outside_allocs = alloc::installed().then_some(c.outside);
        t.0.alloc_breach = c.first_breach.map(|(at, size)| (at as usize, size));
        threads.push((t.0, t.1, c.unpaired.clone()));
    }
    if let Some(f) = &view.merged {
        let mut t = compacted(0, MERGED_NAME, f.anomalies, &f.components, only);
        t.0.outside_allocs = alloc::installed().then_some(f.outside);
        threads.push((t.0, t.1, f.unpaired.clone()));
    }
    // Capture order: order of first record (the merged threads are the oldest).
    threads.sort_by_key(|(t, _, _)| t.serial);
    // Names are read after the rings, so every ring's id is already interned.
    let names = id::names();
    Capture {
        threads: threads
            .into_iter()
            .map(|(mut t, indexed, unpaired)| {
                t.components = indexed
                    .into_iter()
                    .map(|(i, c)| ComponentCapture {
                        name: names[i as usize],
                        ..c
                    })
                    .collect();
                t.unpaired = unpaired
                    .into_iter()
                    .map(|(i, counts)| IdUnpaired {
                        name: names[i as usize],
                        counts,
                    })
                    .collect();
                t
            })
            .collect(),
        teardown_drops: TEARDOWN_DROPS.load(Relaxed),
        process_allocs: alloc::installed().then(alloc::process),
    }
}

/// A live thread's rings, read while it may be recording.
fn read_live(thread: &ThreadShared, me: Option<&Arc<ThreadShared>>, only: Option<u32>) -> Unnamed {
    // `exited` is read before the rings: once it is set, no push can follow, so the
    // read can be exact. The reader's own rings cannot move under it either.
    let exited = thread.exited();
    let quiet = exited || me.is_some_and(|me| std::ptr::eq(&**me, thread));
    let mut buf = Vec::new();
    let components = thread
        .rings()
        .iter()
        .filter(|(k, _)| only.is_none_or(|o| o == k.idx))
        .map(|(k, ring)| {
            let own = ring.own_ticks();
            let RingRead { seen, first, .. } = read_ring(ring, quiet, &mut buf);
            let samples = buf.iter().map(|&w| Sample::from_bits(w)).collect();
            let c = component(seen, ring.capacity(), first, samples);
            (
                k.idx,
                ComponentCapture {
                    parent: parent(k),
                    self_ticks: Some(own),
                    allocs: alloc::installed().then(|| ring.allocs().read()),
                    ..c
                },
            )
        })
        .collect();
    let mut t = thread_capture(thread.serial, &thread.name, exited, thread.counters.read());
    t.outside_allocs = alloc::installed().then(|| thread.outside.read());
    t.alloc_breach = thread.first_breach().map(|(at, size)| (at as usize, size));
    (t, components, Vec::clone(&thread.unpaired()))
}

/// A compacted (or merged) thread's retained samples.
fn compacted(
    serial: u64,
    name: &str,
    anomalies: Anomalies,
    rings: &[CompactRing],
    only: Option<u32>,
) -> (ThreadCapture, Indexed) {
    let components = rings
        .iter()
        .filter(|r| only.is_none_or(|o| o == r.key.idx))
        .map(|r| {
            let samples = r.samples.iter().map(|&w| Sample::from_bits(w)).collect();
            let c = component(r.seen, r.capacity, r.first(), samples);
            let parent = parent(&r.key);
            (
                r.key.idx,
                ComponentCapture {
                    parent,
                    self_ticks: Some(r.own_ticks),
                    allocs: alloc::installed().then_some(r.allocs),
                    ..c
                },
            )
        })
        .collect();
    (thread_capture(serial, name, true, anomalies), components)
}

fn thread_capture(serial: u64, name: &str, exited: bool, anomalies: Anomalies) -> ThreadCapture {
    ThreadCapture {
        serial,
        name: name.to_owned(),
        exited,
        anomalies,
        components: Vec::new(),
        unpaired: Vec::new(),
        outside_allocs: None,
        alloc_breach: None,
    }
}

fn component(seen: u64, capacity: usize, first: u64, samples: Vec<Sample>) -> ComponentCapture {
    ComponentCapture {
        name: "",
        seen,
        capacity,
        first,
        samples,
        parent: None,
        self_ticks: None,
        allocs: None,
    }
}

/// A ring's parent node, as a capture names it.
fn parent(key: &RingKey) -> Option<usize> {
    key.parent.map(|p| p as usize)
}

/// Reads a ring into `buf`, again (up to 3 times) if a writer overwrote more than
/// half of what the ring holds while it was being copied. That only happens when the
/// reader is descheduled mid-copy; the protocol then rightly drops what it cannot
/// vouch for, and a second copy usually gets it all.
fn read_ring(ring: &Ring, quiet: bool, buf: &mut Vec<u64>) -> RingRead {
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
