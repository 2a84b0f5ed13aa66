//! 64 threads x 200,000 records while a reader captures every millisecond: zero
//! mislabelled samples, and exact totals once the writers stop.
//!
//! Each writer `k` records `k << 32 | seq` (`seq` = 0, 1, 2, ...) to its own id and to
//! one shared id, so every sample says which thread wrote it and when. Rings hold
//! 4,096 samples, so each wraps ~49 times. It sets the ring capacity
//! (`common::exclusive_with`).
//!
//! Pacing: the writers register (first record) as they are spawned, then start
//! together and pause [`PAUSE`] after every [`BURST`] records. The pauses only leave
//! CPU time for the reader — with 64 busy writers on a 2-core machine it would get
//! 1/65 of it and capture once or twice — so that many captures overlap the writes
//! and see rings wrap between and during copies. Nothing synchronises a read with a
//! write.

use crate::common;
use latte::collect::SampleKind;
use latte::{Capture, Id};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const THREADS: u64 = 64;
const RECORDS: u64 = 200_000;
const CAPACITY: usize = 1 << 12;
/// Records (to each of the two ids) between a writer's pauses: a quarter ring.
const BURST: u64 = 1 << 10;
/// A writer's pause after each burst.
const PAUSE: Duration = Duration::from_millis(20);
const SEQ_BITS: u32 = 32;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

static SHARED: Id = Id::new("stress64_shared");

/// A value that says who wrote it and when.
fn value(thread: u64, seq: u64) -> u64 {
    thread << SEQ_BITS | seq
}

/// What the checks found in one capture.
#[derive(Default)]
struct Checked {
    samples: usize,
    rings: usize,
    threads: usize,
    /// Rings caught mid-run: written to, not finished.
    in_flight: usize,
}

/// Checks every sample of one capture. `finished`: the writers have all joined, so
/// the totals must be exact.
fn check(capture: &Capture, own: &[&'static Id], finished: bool) -> Checked {
    let mut checked = Checked::default();
    for t in capture
        .threads
        .iter()
        .filter(|t| t.name.starts_with("stress64-"))
    {
        let k: u64 = t.name["stress64-".len()..].parse().unwrap();
        checked.threads += 1;
        assert_eq!(t.anomalies.total(), 0, "{}: {:?}", t.name, t.anomalies);
        for c in &t.components {
            // Attribution: a thread holds its own id and its ring of the shared id,
            // and either ring holds only that thread's values.
            assert!(
                c.name == own[k as usize].name() || c.name == SHARED.name(),
                "{} in {}",
                c.name,
                t.name
            );
            assert!(
                c.samples.iter().all(|s| s.kind() == SampleKind::Recorded),
                "{} {}",
                t.name,
                c.name
            );
            let seqs = common::sequenced(&t.name, c, k, SEQ_BITS);
            assert!(c.samples.len() <= CAPACITY, "{} {}", t.name, c.name);
            assert!(c.seen <= RECORDS, "{} {}: seen {}", t.name, c.name, c.seen);
            if finished {
                assert_eq!(c.seen, RECORDS, "{} {}", t.name, c.name);
                assert_eq!(
                    c.samples.len(),
                    CAPACITY.min(RECORDS as usize),
                    "{} {}",
                    t.name,
                    c.name
                );
                assert_eq!(seqs[0], RECORDS - CAPACITY as u64, "{} {}", t.name, c.name);
            }
            checked.samples += seqs.len();
            checked.rings += 1;
            checked.in_flight += usize::from(c.seen < RECORDS);
        }
    }
    checked
}

/// Every value of the shared id decodes to a writer and a sequence number it wrote.
fn check_shared(values: &[u64]) {
    assert!(values.len() <= THREADS as usize * CAPACITY);
    for &v in values {
        assert!(
            v >> SEQ_BITS < THREADS && v & SEQ_MASK < RECORDS,
            "{v:#x} in {}",
            SHARED.name()
        );
    }
}

/// 64 ids made at runtime, one per writer.
fn own_ids() -> Vec<&'static Id> {
    (0..THREADS)
        .map(|k| {
            &*Box::leak(Box::new(Id::new(Box::leak(
                format!("stress64_{k}").into_boxed_str(),
            ))))
        })
        .collect()
}

/// Writer `k`: its records into its own id and the shared one, in bursts. The first
/// records register the thread and make its rings, as each thread starts; the rest
/// start together.
fn write(k: u64, mine: &'static Id, start: &Barrier) {
    latte::record(mine, value(k, 0));
    latte::record(&SHARED, value(k, 0));
    start.wait();
    for seq in 1..RECORDS {
        latte::record(mine, value(k, seq));
        latte::record(&SHARED, value(k, seq));
        if seq % BURST == BURST - 1 {
            std::thread::sleep(PAUSE);
        }
    }
}

#[test]
fn snapshots_every_millisecond_while_64_threads_record() {
    let _rings = common::exclusive_with(|b| b.ring_capacity(CAPACITY));
    let own = &own_ids()[..];
    assert!(value(THREADS - 1, RECORDS - 1) <= latte::collect::Sample::MAX_TICKS);

    let started = Instant::now();
    let done = AtomicBool::new(false);
    let start = Barrier::new(THREADS as usize);
    let start = &start;
    let (mut captures, mut overlapping, mut max_in_flight) = (0u64, 0u64, 0usize);
    let mut checked = Checked::default();
    let mut writing = Duration::ZERO;
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|k| {
                std::thread::Builder::new()
                    .name(format!("stress64-{k}"))
                    .spawn_scoped(s, move || write(k, own[k as usize], start))
                    .unwrap()
            })
            .collect();
        let done = &done;
        let joiner = s.spawn(move || {
            for w in writers {
                w.join().unwrap();
            }
            done.store(true, Ordering::Release);
            started.elapsed()
        });
        // The reader: a capture and a snapshot every millisecond until they stop.
        while !done.load(Ordering::Acquire) {
            let c = check(&latte::capture(), own, false);
            check_shared(&latte::snapshot(SHARED.name()));
            max_in_flight = max_in_flight.max(c.in_flight);
            overlapping += u64::from(c.in_flight > 0);
            checked.samples += c.samples;
            checked.rings += c.rings;
            captures += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        writing = joiner.join().unwrap();
    });

    let last = check(&latte::capture(), own, true);
    assert_eq!(last.threads, THREADS as usize, "every writer is listed");
    assert_eq!(last.rings, 2 * THREADS as usize, "own + shared per writer");
    assert_eq!(last.samples, 2 * THREADS as usize * CAPACITY);
    let shared = latte::snapshot(SHARED.name());
    check_shared(&shared);
    assert_eq!(shared.len(), THREADS as usize * CAPACITY);
    assert!(overlapping > 0, "no capture overlapped the writers");
    println!(
        "{THREADS} x {RECORDS} records (x2 ids) in {:.2} s; {captures} captures \
         (+ snapshots), {overlapping} of them while rings were being written, checked {} \
         samples in {} rings, up to {max_in_flight} rings in flight in one capture; \
         total {:.2} s",
        writing.as_secs_f64(),
        checked.samples,
        checked.rings,
        started.elapsed().as_secs_f64()
    );
}
