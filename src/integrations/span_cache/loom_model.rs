//! The loom model of the slot protocol: an owner claiming its slot for a new span
//! while another thread closes the span the slot held.
//!
//! `RUSTFLAGS="--cfg latte_loom" cargo test --release -p latte-telemetry-loom` (loom/)

use super::*;
use loom::sync::Arc;
use loom::thread;

crate::record::sync::loom_models![
    loom_a_closer_takes_its_span_s_whole_part_beside_an_owner_claiming_the_slot,
];

/// A poll of `ticks` at node `node`.
fn poll(ticks: u64, node: u64) -> Exit {
    Exit {
        ticks,
        own: ticks / 2,
        node,
        serial: 3,
    }
}

/// The owner made span 1 and measured two polls of it (before the close, as the
/// registry orders them). Then, at once: the owner makes span `other`, whose slot is
/// span 1's, and measures a poll of it if it got the slot; another thread closes span 1.
/// The closer gets span 1's whole part, never a word of the other span's; the owner's
/// part of the other span, when it got the slot, is whole too.
fn loom_a_closer_takes_its_span_s_whole_part_beside_an_owner_claiming_the_slot() {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    loom::model(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cache = Arc::new(SpanCache::default());
        let other = (2..)
            .find(|&k| std::ptr::eq(cache.slot(k), cache.slot(1)))
            .expect("two ids share a slot");
        cache.insert_new(1, (10, 11), None).unwrap();
        let Found::Here(slot, ..) = cache.find(1) else {
            panic!("span 1 is in its slot")
        };
        slot.add(&poll(4, 100));
        slot.add(&poll(6, 200));
        let closer = {
            let cache = cache.clone();
            thread::spawn(move || cache.take(1).expect("span 1's part"))
        };
        // A schedule point: without it loom runs the closer only after the owner's
        // insert and explores one execution.
        thread::yield_now();
        // The claim of a span its thread made (`insert_new`, as every span's first):
        // the slot's words zeroed over span 1's.
        let claimed = cache.insert_new(other, (20, 0), None).is_ok();
        if claimed && let Found::Here(slot, ..) = cache.find(other) {
            slot.add(&poll(7, 300));
        }
        let closed = closer.join().unwrap();
        let total = closed.total.expect("two polls");
        assert_eq!(
            (closed.busy, closed.poll, total.ticks, total.own, total.node),
            (10, 11, 10, 5, 200)
        );
        let after = cache.take(other);
        assert_eq!(claimed, after.is_some());
        if let Some(part) = after {
            let total = part.total.expect("one poll");
            assert_eq!((part.busy, total.ticks, total.node), (20, 7, 300));
        }
    });
    // Guard against a model that silently stops exploring: the owner's claim both
    // before and after the close, and the reads around it.
    assert!(runs.load(std::sync::atomic::Ordering::Relaxed) >= 4);
}
