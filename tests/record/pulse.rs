//! Pulse: the first call per thread is a baseline, later ones record the delta.

use crate::common::{self, my_component, my_samples};
use latte::collect::SampleKind;

#[test]
fn n_pulses_record_n_minus_one_samples() {
    let _shared = common::shared();
    for _ in 0..100 {
        latte::latte_pulse!("pulse_n");
    }
    let c = my_component("pulse_n").unwrap();
    assert_eq!(c.samples.len(), 99);
    assert!(c.samples.iter().all(|s| s.kind() == SampleKind::Pulse));
}

#[test]
fn pulse_delta_is_the_gap_between_calls() {
    let _shared = common::shared();
    // Containment on one thread's monotonic counter, no timing assumption:
    // a scope inside the gap <= the pulse delta <= a scope around both pulses.
    latte::latte_start!("pulse_outer");
    latte::latte_pulse!("pulse_gap");
    latte::latte_start!("pulse_inner");
    std::thread::sleep(std::time::Duration::from_millis(1));
    latte::latte_stop!("pulse_inner");
    latte::latte_pulse!("pulse_gap");
    latte::latte_stop!("pulse_outer");
    let t = |id| my_component(id).unwrap().samples[0].ticks();
    assert_eq!(my_component("pulse_gap").unwrap().samples.len(), 1);
    assert!(t("pulse_inner") <= t("pulse_gap") && t("pulse_gap") <= t("pulse_outer"));
}

#[test]
fn each_thread_has_its_own_baseline() {
    let _shared = common::shared();
    latte::latte_pulse!("pulse_threads");
    std::thread::Builder::new()
        .name("pulse_other".into())
        .spawn(|| {
            // This thread's first pulse is a baseline even though main has pulsed.
            latte::latte_pulse!("pulse_threads");
            latte::latte_pulse!("pulse_threads");
        })
        .unwrap()
        .join()
        .unwrap();
    latte::latte_pulse!("pulse_threads");
    let capture = latte::capture();
    let other = capture.thread("pulse_other").unwrap();
    assert_eq!(other.component("pulse_threads").unwrap().samples.len(), 1);
    assert_eq!(my_component("pulse_threads").unwrap().samples.len(), 1);
}

#[test]
fn pulse_and_scopes_of_one_id_share_its_ring() {
    let _shared = common::shared();
    latte::latte_pulse!("pulse_mixed");
    latte::latte_start!("pulse_mixed");
    latte::latte_stop!("pulse_mixed");
    latte::latte_pulse!("pulse_mixed");
    let kinds: Vec<_> = my_samples("pulse_mixed").iter().map(|s| s.kind()).collect();
    assert_eq!(kinds.len(), 2);
    assert!(matches!(kinds[0], SampleKind::Scope { .. }));
    assert_eq!(kinds[1], SampleKind::Pulse);
}
