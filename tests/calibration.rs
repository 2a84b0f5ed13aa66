//! Calibration: frequency against an independent measurement, measured once, hidden
//! from captures. (Overhead correctness is shown by tests/accuracy.rs.)

use latte::{Mode, clock};
use std::time::{Duration, Instant};

#[test]
fn frequency_agrees_with_an_independent_measurement() {
    let cal = latte::calibration();
    // Independent: counter ticks over an OS-clock interval, with the reads paired.
    let (i0, t0) = (Instant::now(), clock::read(Mode::Hard).ticks);
    std::thread::sleep(Duration::from_millis(30));
    let (t1, i1) = (clock::read(Mode::Hard).ticks, Instant::now());
    let independent = t1.wrapping_sub(t0) as f64 / (i1 - i0).as_nanos() as f64;
    let rel = (cal.ticks_per_ns - independent).abs() / independent;
    assert!(
        rel < 0.01,
        "calibrated {} vs independent {independent} ticks/ns",
        cal.ticks_per_ns
    );
    assert!(cal.accuracy > 0.0 || clock::source() != clock::Source::Tsc);
    assert!(cal.accuracy < 1e-3, "stated accuracy {}", cal.accuracy);
    assert!(cal.resolution >= 1);
}

#[test]
fn calibration_is_measured_once_and_reused() {
    let a = latte::calibration() as *const _;
    let b = latte::calibration() as *const _;
    assert_eq!(a, b);
    // Its internal thread never shows up in captures.
    assert!(
        latte::capture()
            .threads
            .iter()
            .all(|t| t.name != "latte-calibrate")
    );
}
