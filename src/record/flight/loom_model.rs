//! The loom model of the flight buffer's read protocol: a reader beside a writer keeps
//! only whole entries, each at its own index.
//!
//! `RUSTFLAGS="--cfg latte_loom" cargo test --release -p latte-telemetry-loom` (loom/)

use super::*;
use loom::sync::Arc;
use loom::thread;

crate::record::sync::loom_models![loom_flight_reader_keeps_whole_entries_at_their_indices,];

/// Entry `k`'s words, all three different functions of `k`.
fn entry(k: u64) -> Entry {
    Entry {
        start: k + 1,
        end: k + 100,
        idx: k as u32 + 1_000,
        depth: k as u32 + 7,
    }
}

fn loom_flight_reader_keeps_whole_entries_at_their_indices() {
    loom::model(|| {
        let f = Arc::new(Flight::new(2));
        let writer = {
            let f = f.clone();
            thread::spawn(move || {
                for k in 0..3 {
                    assert!(f.push(entry(k)));
                }
            })
        };
        let mut out = Vec::new();
        let (first, seen) = f.read(0, false, &mut out);
        assert!(first + out.len() as u64 == seen || out.is_empty());
        for (i, e) in out.iter().enumerate() {
            assert_eq!(
                *e,
                entry(first + i as u64),
                "torn or misplaced at {}",
                first + i as u64
            );
        }
        writer.join().unwrap();
        // Quiet now: the last two, exact.
        out.clear();
        assert_eq!(f.read(0, true, &mut out), (1, 3));
        assert_eq!(out, [entry(1), entry(2)]);
    });
}
