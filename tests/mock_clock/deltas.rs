//! A counter under the test's control: exact deltas, and a counter that goes
//! backwards or jumps by 2^63 is discarded and counted, never an overflow panic (this
//! runs in debug builds, where arithmetic overflow would panic).

use crate::common::{mine, my_component};
use crate::mock;
use latte::{Id, Mode};

fn at(ticks: u64) {
    latte::test_hooks::set_mock_ticks(ticks);
}

#[test]
fn deltas_are_exact() {
    let _clock = mock();
    static ID: Id = Id::new("mock_exact");
    for (start, stop) in [(100, 350), (1_000, 1_000), (u64::MAX - 10, u64::MAX)] {
        at(start);
        latte::start(&ID, Mode::Mid);
        at(stop);
        latte::stop(&ID, Mode::Hard);
    }
    let ticks: Vec<u64> = my_component("mock_exact")
        .unwrap()
        .samples
        .iter()
        .map(|s| s.ticks())
        .collect();
    assert_eq!(ticks, [250, 0, 10]);
    assert_eq!(latte::clock::source(), latte::clock::Source::Mock);
}

#[test]
fn a_counter_that_wraps_around_is_a_normal_delta() {
    let _clock = mock();
    static ID: Id = Id::new("mock_wrap");
    at(u64::MAX - 4);
    latte::start(&ID, Mode::Fast);
    at(5); // wrapped: 10 ticks later
    latte::stop(&ID, Mode::Fast);
    assert_eq!(my_component("mock_wrap").unwrap().samples[0].ticks(), 10);
}

#[test]
fn backwards_and_huge_jumps_are_discarded_and_counted() {
    let _clock = mock();
    static SCOPE: Id = Id::new("mock_bad_scope");
    static PULSE: Id = Id::new("mock_bad_pulse");
    let before = mine_or_default();
    // Backwards by one tick.
    at(1_000);
    latte::start(&SCOPE, Mode::Fast);
    at(999);
    latte::stop(&SCOPE, Mode::Fast);
    // Forwards by 2^63.
    at(10);
    latte::start(&SCOPE, Mode::Hard);
    at(10 + (1 << 63));
    latte::stop(&SCOPE, Mode::Hard);
    // A pulse that sees the counter go backwards, then one that is fine.
    at(5_000);
    latte::pulse(&PULSE);
    at(4_000);
    latte::pulse(&PULSE);
    at(4_100);
    latte::pulse(&PULSE);
    // A stack-free timer across a backwards step.
    at(50);
    let timer = latte::Timer::start(&SCOPE, Mode::Fast, Mode::Fast);
    at(40);
    drop(timer);

    let me = mine();
    assert_eq!(me.anomalies.clock_anomalies - before.clock_anomalies, 4);
    assert!(
        me.samples("mock_bad_scope").is_empty(),
        "no implausible sample stored"
    );
    let pulses: Vec<u64> = me
        .component("mock_bad_pulse")
        .unwrap()
        .samples
        .iter()
        .map(|s| s.ticks())
        .collect();
    assert_eq!(
        pulses,
        [100],
        "the pulse after a bad one measures from the bad one's reading"
    );
    // The stack is consistent afterwards.
    at(7);
    latte::start(&SCOPE, Mode::Fast);
    at(9);
    latte::stop(&SCOPE, Mode::Fast);
    assert_eq!(
        my_component("mock_bad_scope").unwrap().samples[0].ticks(),
        2
    );
}

fn mine_or_default() -> latte::collect::Anomalies {
    let name = std::thread::current().name().unwrap().to_owned();
    latte::capture()
        .thread(&name)
        .map(|t| t.anomalies)
        .unwrap_or_default()
}
