//! The span tables: slots, parts and a close's sum.

use super::*;

fn poll(ticks: u64, own: u64, node: u64) -> Exit {
    Exit {
        ticks,
        own,
        node,
        serial: 9,
    }
}

/// A poll measured on the calling thread.
fn poll_here(ticks: u64, own: u64, node: u64) -> Exit {
    latte_record_once();
    Exit {
        serial: crate::record::thread_serial(),
        ..poll(ticks, own, node)
    }
}

/// Makes the calling thread's recorder, so that it has a serial.
fn latte_record_once() {
    static ID: crate::record::Id = crate::record::Id::new("span_cache_test");
    crate::record::pulse(&ID);
}

fn here(cache: &SpanCache, span: u64) -> Option<(u32, u32)> {
    match cache.find(span) {
        Found::Here(_, busy, poll) => Some((busy, poll)),
        Found::Elsewhere => None,
    }
}

#[test]
fn a_slot_holds_one_live_span_and_a_colliding_span_is_handed_back() {
    let cache = SpanCache::default();
    assert!(here(&cache, 7).is_none());
    assert!(cache.insert(7, Part::new(70, 71, None)).is_ok());
    assert_eq!(here(&cache, 7), Some((70, 71)));
    let other = (8..)
        .find(|&k| std::ptr::eq(cache.slot(k), cache.slot(7)))
        .unwrap();
    let refused = cache.insert(other, Part::new(80, 0, None)).unwrap_err();
    assert_eq!(refused.busy, 80);
    assert_eq!(
        (here(&cache, 7), here(&cache, other)),
        (Some((70, 71)), None)
    );
    assert!(cache.take(other).is_none()); // not here: the other span stays
    assert!(cache.take(7).is_some());
    assert!(cache.insert(other, Part::new(80, 0, None)).is_ok());
    assert_eq!(here(&cache, other), Some((80, 0)));
}

#[test]
fn a_part_sums_its_polls_at_the_last_poll_s_place() {
    let cache = SpanCache::default();
    cache.insert(3, Part::new(30, 0, None)).unwrap();
    assert!(cache.take(3).unwrap().total.is_none(), "no poll yet");
    cache.insert(3, Part::new(30, 0, None)).unwrap();
    let Found::Here(slot, ..) = cache.find(3) else {
        panic!("in its slot")
    };
    slot.add(&poll(7, 7, 100));
    slot.add(&poll(8, 3, 200));
    let total = cache.take(3).unwrap().total.unwrap();
    assert_eq!(
        (total.ticks, total.own, total.node, total.serial),
        (15, 10, 200, 9)
    );
    assert!(here(&cache, 3).is_none(), "taken");
}

#[test]
fn a_close_takes_and_sums_every_thread_s_part_at_the_closing_thread_s_place() {
    let tables = Tables::new();
    let (a, b) = (11, 12);
    let add = |cache: &SpanCache, span, node| {
        if let Found::Here(slot, ..) = cache.find(span) {
            slot.add(&poll_here(5, 4, node));
        }
    };
    let mine = tables.local().unwrap();
    // One table: a close looks in it without visiting the others.
    mine.insert(a, Part::new(1, 0, None)).unwrap();
    add(mine, a, 1);
    assert_eq!(tables.take(a).unwrap().total.unwrap().ticks, 5);
    assert!(tables.take(a).is_none());
    mine.insert(a, Part::new(1, 0, None)).unwrap();
    add(mine, a, 1);
    // Two threads alive at once (an exited thread's table goes to the next thread).
    let (entered, closed) = (std::sync::Barrier::new(3), std::sync::Barrier::new(3));
    let (before, after, taken) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let cache = tables.local().unwrap();
                    cache.insert(a, Part::new(1, 0, None)).unwrap();
                    add(cache, a, 2);
                    cache.insert(b, Part::new(2, 0, None)).unwrap();
                    entered.wait();
                    closed.wait();
                    (here(cache, a), here(cache, b))
                })
            })
            .collect();
        entered.wait();
        // Asserted after the scope: a panic here would leave the workers waiting.
        let before = tables.iter().filter(|c| here(c, a).is_some()).count();
        let taken = tables.take(a); // what on_close does
        closed.wait();
        let after: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        (before, after, taken)
    });
    assert_eq!(before, 3);
    assert_eq!(after, [(None, Some((2, 0))), (None, Some((2, 0)))]);
    assert!(here(mine, a).is_none());
    let total = taken.unwrap().total.unwrap();
    // Three parts summed; the closing thread's place (node 1) wins.
    assert_eq!((total.ticks, total.own, total.node), (15, 12, 1));
}

/// Each layer's tables are its own: two layers used in turn on one thread each find
/// their own table (the remembered one moves between them), and a layer made after
/// another was dropped (perhaps at its very address) starts from an empty table.
#[test]
fn layers_used_in_turn_find_their_own_tables_and_a_new_layer_never_an_old_one() {
    let (one, two) = (Box::new(Tables::new()), Box::new(Tables::new()));
    one.local().unwrap().insert_new(5, (50, 0), None).unwrap();
    two.local().unwrap().insert_new(5, (60, 0), None).unwrap();
    for _ in 0..3 {
        assert_eq!(here(one.local().unwrap(), 5), Some((50, 0)));
        assert_eq!(here(two.local().unwrap(), 5), Some((60, 0)));
    }
    assert!(!std::ptr::eq(one.local().unwrap(), two.local().unwrap()));
    // The only table a layer has, when this thread used it last: a close looks in it
    // alone. Else the close takes the way that visits every table.
    assert!(one.only_mine().is_none(), "two's table was used last");
    one.local().unwrap();
    assert_eq!(one.only_mine().map(|t| here(t, 5)), Some(Some((50, 0))));
    drop(one);
    let three = Box::new(Tables::new());
    assert!(here(three.local().unwrap(), 5).is_none());
    assert!(three.take(5).is_none());
    assert_eq!(two.take(5).map(|p| p.busy), Some(60));
}
