//! A missed Stop never stops recording: on a full stack the oldest frame is given up
//! (counted as abandoned under its id), so the newest scopes keep recording, and every
//! frame that ended without its Stop is counted under its own id.
//!
//! Default stack depth (64). Each test runs on its own named thread and reads that
//! thread back from `latte::capture()` after it has exited.

use crate::common;
use latte::collect::Limit;
use latte::collect::{ThreadCapture, Unpaired};
use latte::{latte_start, latte_stop};

const CALLS: u64 = 1_000;
const DEPTH: u64 = Limit::STACK_DEPTH.default as u64;

/// Runs `f` on a new thread `name` and returns its capture, asserting it exited.
fn on_thread(name: &str, f: impl FnOnce() + Send + 'static) -> ThreadCapture {
    let t = common::on_named_thread(name, f);
    assert!(t.exited);
    t
}

/// Samples of `id` recorded on `t`, over all its call-tree nodes.
fn seen(t: &ThreadCapture, id: &str) -> u64 {
    t.components
        .iter()
        .filter(|c| c.name == id)
        .map(|c| c.seen)
        .sum()
}

/// Opens a scope and returns without closing it: the bug under test.
fn leaky_outside() {
    latte_start!("ms_leak_outside");
}

fn leaky_nested() {
    latte_start!("ms_leak_nested");
}

#[test]
fn a_leak_outside_any_scope_does_not_stop_the_scope_beside_it() {
    let _shared = common::shared();
    let t = on_thread("ms-outside", || {
        for _ in 0..CALLS {
            leaky_outside();
            latte_start!("ms_beside");
            latte_stop!("ms_beside");
        }
    });
    let leak = t.unpaired("ms_leak_outside");
    println!(
        "ms_beside: {} samples; ms_leak_outside: {leak:?}; anomalies {:?}",
        seen(&t, "ms_beside"),
        t.anomalies
    );
    // Under the old policy (a Start on a full stack ignored) this was 63.
    assert_eq!(seen(&t, "ms_beside"), CALLS);
    // Once the stack is full, each `ms_beside` Start takes a slot too, giving up one
    // more leaked frame: at exit the stack holds DEPTH - 1 of them, not DEPTH.
    assert_eq!(
        leak,
        Unpaired {
            abandoned: CALLS - (DEPTH - 1),
            orphaned: 0,
            open_at_exit: DEPTH - 1,
            ..Unpaired::default()
        }
    );
    assert_eq!(leak.total(), CALLS, "every leaked frame is counted once");
    assert_eq!(t.unpaired.len(), 1, "only the leaking id: {:?}", t.unpaired);
    assert_eq!(t.anomalies.abandoned_scopes, leak.abandoned);
    assert_eq!(t.anomalies.open_at_exit, leak.open_at_exit);
    assert_eq!(t.anomalies.total(), CALLS, "{:?}", t.anomalies);
    // The report names the leaking id, and the correct scope has every sample.
    let report = latte::Report::collect(&latte::ReportOptions::default());
    let section = report
        .threads
        .iter()
        .find(|t| t.name == "ms-outside")
        .unwrap();
    let named: Vec<_> = section
        .unpaired
        .iter()
        .map(|f| (f.component.as_str(), f.counts))
        .collect();
    assert_eq!(named, [("ms_leak_outside", leak)]);
    let beside = section
        .rows
        .iter()
        .find(|r| r.component == "ms_beside")
        .unwrap();
    assert_eq!(beside.stats.seen, CALLS);
    let mut table = Vec::new();
    report.write(&mut table, latte::Format::default()).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(
        table
            .contains("scopes without their Stop: ms_leak_outside 937 abandoned + 63 open at exit"),
        "{table}"
    );
}

#[test]
fn a_leak_inside_a_scope_is_orphaned_by_its_stop() {
    let _shared = common::shared();
    let t = on_thread("ms-nested", || {
        for _ in 0..CALLS {
            latte_start!("ms_around");
            leaky_nested();
            latte_stop!("ms_around");
        }
    });
    let leak = t.unpaired("ms_leak_nested");
    println!(
        "ms_around: {} samples; ms_leak_nested: {leak:?}",
        seen(&t, "ms_around")
    );
    assert_eq!(seen(&t, "ms_around"), CALLS);
    assert_eq!(
        leak,
        Unpaired {
            orphaned: CALLS,
            ..Unpaired::default()
        }
    );
    assert_eq!(t.unpaired.len(), 1, "{:?}", t.unpaired);
    assert_eq!(t.anomalies.orphaned_scopes, CALLS);
    assert_eq!(t.anomalies.total(), CALLS, "{:?}", t.anomalies);
}

/// `n` nested scopes of one id (a recursive function).
fn recurse(n: u32) {
    latte_start!("ms_recursive");
    if n > 1 {
        recurse(n - 1);
    }
    latte_stop!("ms_recursive");
}

#[test]
fn recursion_deeper_than_the_stack_keeps_the_innermost_and_pairs_afterwards() {
    let _shared = common::shared();
    let t = on_thread("ms-recursion", || {
        recurse(100);
        // The stack's slots now hold frames of this very id from the deep recursion:
        // none may pair with a later Stop.
        for _ in 0..10 {
            recurse(5);
        }
        recurse(100);
    });
    let all = seen(&t, "ms_recursive");
    println!(
        "ms_recursive: {} samples, {:?}; anomalies {:?}",
        all,
        t.unpaired("ms_recursive"),
        t.anomalies
    );
    // Each deep recursion: the 64 innermost record, the 36 outermost are abandoned and
    // their Stops absorbed.
    assert_eq!(all, 64 + 10 * 5 + 64);
    assert_eq!(
        t.unpaired("ms_recursive"),
        Unpaired {
            abandoned: 2 * 36,
            ..Unpaired::default()
        }
    );
    assert_eq!(t.anomalies.total(), 2 * 36, "{:?}", t.anomalies);
    // One call-tree node per level (up to the stack's 64): each under the one before,
    // so a Stop paired with a stale frame would have recorded at the wrong level.
    let levels: Vec<usize> = (0..t.components.len())
        .filter(|&i| t.components[i].name == "ms_recursive")
        .collect();
    for pair in levels.windows(2) {
        assert_eq!(t.components[pair[1]].parent, Some(pair[0]));
    }
}
