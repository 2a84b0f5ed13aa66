//! Capacities, depths and the slowest list at and past their limits: each value either starts an agent that then records and reports as
//! documented, or makes `start()` return the documented error, asserted by value.
//! Periods of 0, 1 ns and `Duration::MAX` are in `survival.rs`.
//!
//! The settings are process-wide and stay after an agent stops, so every test holds
//! `common::exclusive()` (which puts the defaults back when it drops), sets what it
//! relies on, and records on fresh threads (a depth applies to threads that start
//! recording later, a capacity to rings made later).

use crate::common;
use latte::collect::Limit;
use latte::{Builder, Cleaning, Error, Guard, Id, Mode, Report, ReportOptions};

/// A quiet agent (no output, no final report) with `settings`.
fn start(settings: impl FnOnce(Builder) -> Builder) -> Result<Guard, Error> {
    settings(latte::builder().sink(std::io::sink()).final_report(false)).start()
}

/// Raw ticks, no cleaning: report values are exactly the recorded ones.
fn raw() -> ReportOptions {
    ReportOptions {
        cleaning: Cleaning::OFF,
        unit: latte::Unit::Cycles,
        data: latte::Data::Raw,
        ..ReportOptions::default()
    }
}

/// The all-threads row of `component` in a whole-run report.
fn whole_run_row(component: &str) -> latte::report::Row {
    Report::collect(&raw())
        .all_threads
        .into_iter()
        .find(|r| r.component == component)
        .unwrap_or_else(|| panic!("no row for {component}"))
}

#[test]
fn ring_capacities_past_the_limits_are_refused_by_value() {
    let _one = common::exclusive();
    assert_eq!(Limit::RING_CAPACITY.min, 2);
    assert_eq!(Limit::RING_CAPACITY.max, 1 << 28);
    for bad in [0, 1, 3, 1 << 29, usize::MAX] {
        let err = start(|b| b.ring_capacity(bad)).unwrap_err();
        assert_eq!(err, Error::RingCapacity { requested: bad });
        let message = err.to_string();
        assert!(message.contains(&bad.to_string()), "{message}");
        assert!(
            message.contains("power of two between 2 and 268435456"),
            "{message}"
        );
    }
    // Nothing changed: a ring made now still gets the capacity set before.
    static AFTER: Id = Id::new("limits/capacity_after_refusals");
    let me = common::on_named_thread("limits-after-refusals", || latte::record(&AFTER, 1));
    let ring = me.component(AFTER.name()).unwrap();
    assert_eq!(ring.capacity, Limit::RING_CAPACITY.default);
    common::assert_a_new_agent_can_start();
}

#[test]
fn the_smallest_ring_keeps_the_newest_two_and_counts_the_rest() {
    let _one = common::exclusive();
    let guard = start(|b| b.ring_capacity(Limit::RING_CAPACITY.min)).unwrap();
    static TINY: Id = Id::new("limits/tiny_ring");
    let me = common::on_named_thread("limits-tiny-ring", || {
        for v in 10..15 {
            latte::record(&TINY, v);
        }
    });
    let ring = me.component(TINY.name()).unwrap();
    assert_eq!((ring.capacity, ring.seen), (2, 5));
    let kept: Vec<u64> = ring.samples.iter().map(|s| s.ticks()).collect();
    assert_eq!(kept, [13, 14]);
    assert_eq!(ring.first, 3);

    // The whole run: every sample is folded or counted lost. The newest is always
    // folded; the one before it may be given up, as the read protocol does when the
    // drain reads a full ring whose thread may still push (seen under qemu: 1 folded).
    let stats = whole_run_row(TINY.name()).stats;
    assert_eq!(stats.seen, 5);
    assert_eq!(stats.samples + stats.lost, 5, "{stats:?}");
    assert!(stats.samples >= 1, "{stats:?}");
    assert_eq!(stats.max, 14.0);
    guard.stop().unwrap();
}

#[test]
fn the_largest_ring_capacity_is_accepted() {
    let _one = common::exclusive();
    // Accepted and applied to rings made from now on (2 GiB of address space each,
    // reserved only when a ring is made): starting reserves nothing. Calibration,
    // which records on its own thread, is finished first. One such ring is past the
    // default memory cap (`tests/memory_cap.rs`), so the cap is raised with it.
    let _ = latte::analyze::calibration();
    let before = latte::collect::footprint();
    let guard = start(|b| {
        b.ring_capacity(Limit::RING_CAPACITY.max)
            .memory_cap(1 << 31)
    })
    .unwrap();
    let after = latte::collect::footprint();
    assert_eq!(after.rings, before.rings, "{after:?}");
    assert_eq!(after.ring_bytes_reserved, before.ring_bytes_reserved);
    guard.stop().unwrap();
}

#[test]
fn stack_depths_past_the_limits_are_refused_by_value() {
    let _one = common::exclusive();
    assert_eq!(Limit::STACK_DEPTH.max, 4096);
    for bad in [0, 4097, usize::MAX] {
        let err = start(|b| b.stack_depth(bad)).unwrap_err();
        assert_eq!(err, Error::StackDepth { requested: bad });
        let message = err.to_string();
        assert!(message.contains(&bad.to_string()), "{message}");
        assert!(message.contains("between 1 and 4096"), "{message}");
    }
    common::assert_a_new_agent_can_start();
}

/// On a new thread: `depth` nested Starts of `outer`, then one of `inner` if asked,
/// then every Stop in reverse order.
fn nest(outer: &'static Id, depth: usize, inner: Option<&'static Id>) {
    (0..depth).for_each(|_| latte::start(outer, Mode::Fast));
    if let Some(inner) = inner {
        latte::start(inner, Mode::Fast);
        latte::stop(inner, Mode::Fast);
    }
    (0..depth).for_each(|_| latte::stop(outer, Mode::Fast));
}

#[test]
fn a_stack_of_one_and_the_deepest_stack_work_as_documented() {
    let _one = common::exclusive();
    for depth in [1, Limit::STACK_DEPTH.max] {
        let guard = start(|b| b.stack_depth(depth)).unwrap();
        let outer: &'static Id = Box::leak(Box::new(Id::new(if depth == 1 {
            "limits/depth_1_outer"
        } else {
            "limits/depth_max_outer"
        })));
        let inner: &'static Id = Box::leak(Box::new(Id::new(if depth == 1 {
            "limits/depth_1_inner"
        } else {
            "limits/depth_max_inner"
        })));

        // Exactly full: every scope pairs, nothing is counted.
        let me = common::on_named_thread(&format!("limits-full-{depth}"), move || {
            nest(outer, depth, None)
        });
        // One node per level: the id's samples are spread over `depth` nodes.
        assert_eq!(me.samples(outer.name()).len(), depth);
        assert_eq!(me.anomalies.total(), 0, "{:?}", me.anomalies);

        // One more: the oldest frame is given up (abandoned, under its id), the newest
        // scope records, and the given-up frame's Stop is absorbed.
        let me = common::on_named_thread(&format!("limits-over-{depth}"), move || {
            nest(outer, depth, Some(inner))
        });
        assert_eq!(me.component(inner.name()).unwrap().seen, 1);
        assert_eq!(me.samples(outer.name()).len(), depth - 1);
        assert_eq!(me.anomalies.abandoned_scopes, 1);
        assert_eq!(me.anomalies.total(), 1, "{:?}", me.anomalies);
        assert_eq!(me.unpaired(outer.name()).abandoned, 1);
        guard.stop().unwrap();
    }
}

#[test]
fn the_slowest_list_at_and_past_its_limit() {
    let _one = common::exclusive();
    assert_eq!(Limit::SLOWEST.max, 1_000);
    let err = start(|b| b.slowest(Limit::SLOWEST.max + 1)).unwrap_err();
    assert_eq!(err, Error::Slowest { requested: 1_001 });
    assert!(err.to_string().contains("at most 1000"), "{err}");

    let guard = start(|b| {
        b.slowest(Limit::SLOWEST.max)
            .ring_capacity(Limit::RING_CAPACITY.default)
    })
    .unwrap();
    static SLOW: Id = Id::new("limits/slowest_max");
    common::on_named_thread("limits-slowest", || {
        // 1..=1,500 in a scattered order (7 and 1,501 are coprime).
        (1..=1_500u64).for_each(|k| latte::record(&SLOW, k * 7 % 1_501));
    });
    let row = whole_run_row(SLOW.name());
    assert_eq!(row.stats.seen, 1_500);
    let slowest: Vec<u64> = row.slowest.iter().map(|s| s.value as u64).collect();
    assert_eq!(slowest, (501..=1_500).rev().collect::<Vec<_>>());
    guard.stop().unwrap();

    // 0 keeps none.
    let guard = start(|b| b.slowest(0)).unwrap();
    static NONE: Id = Id::new("limits/slowest_none");
    common::on_named_thread("limits-slowest-none", || latte::record(&NONE, 5));
    assert!(whole_run_row(NONE.name()).slowest.is_empty());
    guard.stop().unwrap();
}
