//! Calibration: frequency against an independent measurement, measured once, hidden
//! from captures. (Overhead correctness is shown by tests/accuracy.rs.)

use latte::{Mode, clock};
use std::time::{Duration, Instant};

#[test]
fn frequency_agrees_with_an_independent_measurement() {
    let cal = latte::analyze::calibration();
    // Independent: counter ticks over an OS-clock interval. Each end is one counter
    // read bracketed by two OS-clock reads, the narrowest of 32 tries, so a preemption
    // between the reads cannot skew it.
    let base = Instant::now();
    let end = || {
        (0..32)
            .map(|_| {
                let a = base.elapsed().as_nanos() as f64;
                let t = clock::read(Mode::Hard).ticks;
                let b = base.elapsed().as_nanos() as f64;
                (b - a, (a + b) / 2.0, t)
            })
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .unwrap()
    };
    let (_, ns0, t0) = end();
    std::thread::sleep(Duration::from_millis(30));
    let (_, ns1, t1) = end();
    let independent = t1.wrapping_sub(t0) as f64 / (ns1 - ns0);
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
    let a = latte::analyze::calibration() as *const _;
    let b = latte::analyze::calibration() as *const _;
    assert_eq!(a, b);
    // Its internal thread never shows up in captures.
    assert!(
        latte::capture()
            .threads
            .iter()
            .all(|t| t.name != "latte-calibrate")
    );
}
