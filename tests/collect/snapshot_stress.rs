//! Snapshots and captures while 8 threads record: every sample whole and correctly
//! attributed, and the totals exact once they stop. It sets the ring capacity
//! (`common::exclusive_with`).

use crate::common;
use latte::{Capture, Id};
use std::sync::atomic::{AtomicBool, Ordering};

const THREADS: u64 = 8;
const RECORDS: u64 = 200_000;
const CAPACITY: usize = 1 << 10;

static OWN: [Id; THREADS as usize] = [
    Id::new("stress_own_0"),
    Id::new("stress_own_1"),
    Id::new("stress_own_2"),
    Id::new("stress_own_3"),
    Id::new("stress_own_4"),
    Id::new("stress_own_5"),
    Id::new("stress_own_6"),
    Id::new("stress_own_7"),
];
static SHARED: Id = Id::new("stress_shared");

/// A value that says who wrote it and when: thread in bits 40.., sequence below.
fn value(thread: u64, seq: u64) -> u64 {
    thread << 40 | seq
}

/// Checks one capture; returns how many samples it checked.
fn check(capture: &Capture, finished: bool) -> usize {
    let mut checked = 0;
    for t in capture
        .threads
        .iter()
        .filter(|t| t.name.starts_with("stress-"))
    {
        let k: u64 = t.name["stress-".len()..].parse().unwrap();
        for c in &t.components {
            // Attribution: a thread's own id holds only its own values, and so does
            // its ring of the shared id.
            assert!(
                c.name == OWN[k as usize].name() || c.name == SHARED.name(),
                "{} in {}",
                c.name,
                t.name
            );
            let seqs = common::sequenced(&t.name, c, k, 40);
            assert!(c.samples.len() <= CAPACITY);
            if finished {
                assert_eq!(c.seen, RECORDS, "{} {}", t.name, c.name);
                assert_eq!(c.samples.len(), CAPACITY, "{} {}", t.name, c.name);
                assert_eq!(seqs[0], RECORDS - CAPACITY as u64);
            }
            checked += seqs.len();
        }
    }
    checked
}

#[test]
fn snapshots_while_eight_threads_record() {
    let _rings = common::exclusive_with(|b| b.ring_capacity(CAPACITY));
    let done = AtomicBool::new(false);
    let mut checked = 0;
    let mut captures = 0;
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|k| {
                std::thread::Builder::new()
                    .name(format!("stress-{k}"))
                    .spawn_scoped(s, move || {
                        for seq in 0..RECORDS {
                            latte::record(&OWN[k as usize], value(k, seq));
                            latte::record(&SHARED, value(k, seq));
                        }
                    })
                    .unwrap()
            })
            .collect();
        s.spawn(|| {
            for w in writers {
                w.join().unwrap();
            }
            done.store(true, Ordering::Release);
        });
        while !done.load(Ordering::Acquire) {
            checked += check(&latte::capture(), false);
            // snapshot() of the shared id: every value decodes to a writer thread.
            for v in latte::snapshot("stress_shared") {
                assert!(v >> 40 < THREADS && v & ((1 << 40) - 1) < RECORDS, "{v:#x}");
            }
            captures += 1;
        }
    });
    let last = latte::capture();
    assert_eq!(check(&last, true), (2 * THREADS as usize) * CAPACITY);
    assert_eq!(
        latte::snapshot("stress_shared").len(),
        THREADS as usize * CAPACITY
    );
    assert!(captures > 0);
    println!("{captures} concurrent captures checked {checked} samples");
}
