//! Ring capacity, wrap-around, totals and lazy reservation. The capacity is
//! process-wide: the tests that set it hold `common::exclusive_with`.

use crate::common::{self, mine, my_component, new_ring_capacity};
use latte::collect::Sample;
use latte::{Error, Id, Mode};

/// 256-sample rings until the guard drops.
fn small_rings() -> common::Exclusive {
    common::exclusive_with(|b| b.ring_capacity(256))
}

#[test]
fn wrap_keeps_exactly_the_newest_capacity_samples_in_order() {
    let _rings = small_rings();
    static WRAP: Id = Id::new("wrap");
    for v in 0..1_000u64 {
        latte::record(&WRAP, v);
    }
    let c = my_component("wrap").unwrap();
    assert_eq!(c.capacity, 256);
    assert_eq!(c.seen, 1_000);
    assert_eq!(c.overwritten(), 1_000 - 256);
    let kept: Vec<u64> = c.samples.iter().map(|s| s.ticks()).collect();
    assert_eq!(kept, (744..1_000).collect::<Vec<_>>());
    // Read from another thread while this one is alive but between pushes: the
    // reader finds no push in flight (a margin for one would give up exactly the
    // oldest sample, never more), so it keeps them all.
    let from_outside = std::thread::scope(|s| s.spawn(|| latte::snapshot("wrap")).join().unwrap());
    assert_eq!(from_outside, kept);
}

#[test]
fn exited_threads_rings_read_exactly() {
    let _rings = small_rings();
    static EXITED: Id = Id::new("wrap_exited");
    std::thread::Builder::new()
        .name("wrap_exited".into())
        .spawn(|| (0..300).for_each(|v| latte::record(&EXITED, v)))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(
        latte::snapshot("wrap_exited"),
        (44..300).collect::<Vec<_>>()
    );
}

#[test]
fn invalid_capacities_are_clear_errors() {
    let _rings = small_rings();
    for bad in [
        0,
        1,
        3,
        1000,
        65_535,
        latte::collect::Limit::RING_CAPACITY.max * 2,
    ] {
        let err = latte::builder().ring_capacity(bad).start().unwrap_err();
        assert_eq!(err, Error::RingCapacity { requested: bad });
        let msg = err.to_string();
        assert!(
            msg.contains(&bad.to_string()) && msg.contains("power of two"),
            "{msg}"
        );
    }
    // Refused values changed nothing: new rings still get the configured capacity.
    assert_eq!(new_ring_capacity("wrap_after_refusals"), 256);
    let err = latte::builder().stack_depth(0).start().unwrap_err();
    assert_eq!(err, Error::StackDepth { requested: 0 });
    assert!(std::error::Error::source(&err).is_none());
}

#[test]
fn no_ring_until_a_scope_opens_or_a_pulse_needs_a_baseline() {
    let _shared = common::shared();
    // An id that only appears in the code makes nothing. A start makes its call-tree
    // node (a ring, empty until the Stop); a first pulse stores nothing either, but
    // makes the ring that keeps its baseline.
    let _never = Id::new("lazy_never");
    latte::start(&Id::new("lazy_open"), Mode::Fast);
    latte::latte_pulse!("lazy_pulse");
    let me = mine();
    assert!(me.component("lazy_never").is_none());
    assert_eq!(me.component("lazy_open").map(|c| c.seen), Some(0));
    assert_eq!(me.component("lazy_pulse").map(|c| c.seen), Some(0));
}

#[test]
fn implausible_values_are_discarded_and_counted() {
    let _shared = common::shared();
    static BIG: Id = Id::new("implausible");
    latte::record(&BIG, latte::collect::Sample::MAX_TICKS);
    latte::record(&BIG, latte::collect::Sample::MAX_TICKS + 1);
    latte::record(&BIG, u64::MAX); // what a counter that went backwards yields
    let me = mine();
    assert_eq!(me.anomalies.clock_anomalies, 2);
    let kept: Vec<Sample> = me.component("implausible").unwrap().samples.clone();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].ticks(), latte::collect::Sample::MAX_TICKS);
}
