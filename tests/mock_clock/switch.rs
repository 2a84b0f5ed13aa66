//! The runtime switch (`latte::set_recording`) on a counter under the test's control: a
//! scope is recorded iff recording was on at its Start, the stack stays balanced
//! across a switch (no orphan, unmatched Stop or anomaly), a parent keeps an exact self
//! time, pulses and records store nothing while off and the first pulse after a pause
//! only sets a baseline, and the report says how long recording was off.

use crate::common::on_named_thread;
use crate::{at, mock, raw_report};
use latte::{Id, Mode, Timer};

/// Puts recording back on when the test ends, passed or not (the other tests of this
/// binary record).
struct On;

impl Drop for On {
    fn drop(&mut self) {
        latte::set_recording(true);
    }
}

#[test]
fn a_scope_records_iff_recording_was_on_at_its_start() {
    static OUTER: Id = Id::new("switch_outer");
    static INNER: Id = Id::new("switch_inner");
    static LATE: Id = Id::new("switch_late");
    static TIMER: Id = Id::new("switch_timer");
    let _clock = mock();
    let _on = On;
    let thread = on_named_thread("switch_thread", || {
        at(1_000);
        latte::start(&OUTER, Mode::Fast); // on: recorded
        assert!(latte::set_recording(false));
        at(1_100);
        latte::start(&INNER, Mode::Fast); // off: not recorded, still on the stack
        at(1_300);
        latte::stop(&INNER, Mode::Fast);
        at(1_400);
        latte::start(&LATE, Mode::Fast); // off at its Start, on at its Stop
        let timer = Timer::start(&TIMER, Mode::Fast, Mode::Fast);
        assert!(!latte::set_recording(true));
        at(1_500);
        latte::stop(&LATE, Mode::Fast);
        drop(timer);
        at(2_000);
        latte::stop(&OUTER, Mode::Fast);
    });
    assert_eq!(latte::snapshot("switch_outer"), [1_000]);
    for off in ["switch_inner", "switch_late", "switch_timer"] {
        assert_eq!(latte::snapshot(off), [0u64; 0], "{off}");
    }
    // Balanced: nothing orphaned, unmatched or implausible.
    for frames in &thread.unpaired {
        assert_eq!(
            frames.counts.total(),
            0,
            "{}: {:?}",
            frames.name,
            frames.counts
        );
    }
    assert_eq!(thread.anomalies.total(), 0, "{:?}", thread.anomalies);
    // The outer scope's self time leaves out the unrecorded scopes inside it (200 +
    // 100 ticks), as it would have with recording on.
    let report = raw_report();
    let me = report
        .threads
        .iter()
        .find(|t| t.name == "switch_thread")
        .unwrap();
    let outer = me
        .tree
        .iter()
        .find(|n| n.row.component == "switch_outer")
        .unwrap();
    assert_eq!(outer.self_time.unwrap().total, 700.0);
    // ... and those are time the tree cannot place.
    assert_eq!(outer.account.unwrap().not_attributed, 300);
}

#[test]
fn pulses_and_records_store_nothing_while_off_and_no_pulse_spans_a_pause() {
    static PULSE: Id = Id::new("switch_pulse");
    static RECORD: Id = Id::new("switch_record");
    let _clock = mock();
    let _on = On;
    on_named_thread("switch_pulses", || {
        // 100 ticks apart while on; the pause's pulses store nothing and the first
        // one after it only sets a new baseline.
        for t in [10_000, 10_100] {
            at(t);
            latte::pulse(&PULSE);
        }
        latte::set_recording(false);
        for t in [20_000, 30_000] {
            at(t);
            latte::pulse(&PULSE);
            latte::record(&RECORD, 7);
        }
        latte::set_recording(true);
        for t in [90_000, 90_050] {
            at(t);
            latte::pulse(&PULSE);
        }
        latte::record(&RECORD, 9);
    });
    assert_eq!(latte::snapshot("switch_pulse"), [100, 50]);
    assert_eq!(latte::snapshot("switch_record"), [9]);
}

#[test]
fn the_report_says_how_long_recording_was_off() {
    let _clock = mock();
    let _on = On;
    let before = latte::collect::recording().pauses;
    for _ in 0..2 {
        latte::set_recording(false);
        latte::set_recording(true);
    }
    latte::set_recording(false);
    let report = raw_report();
    let off = report.recording_off.expect("recording was off");
    assert_eq!((off.pauses, off.now), (before + 3, true));
    assert!(off.seconds > 0.0);
    let mut table = Vec::new();
    report.write(&mut table, latte::Format::default()).unwrap();
    let table = String::from_utf8(table).unwrap();
    let pauses = format!(
        "({} pauses with latte::set_recording); it is off now",
        before + 3
    );
    assert!(table.contains("recording was off for "), "{table}");
    assert!(table.contains(&pauses), "{table}");
    latte::set_recording(true);
    assert!(!raw_report().recording_off.unwrap().now);
    assert!(latte::collect::recording().on);
}
