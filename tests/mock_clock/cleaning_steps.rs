//! Acceptance 5: cleaning on a counter that moves in steps. With a mock counter stepping
//! 10 ns and 1 µs and latencies without outliers, cleaning removes at most 0.1% of the
//! samples; injected preemption spikes are every one of them counted as BYPASS.
//!
//! Scopes are recorded through `latte::start`/`latte::stop` with the mock counter set to
//! the true start and stop times (in ns, so 1 tick per ns) quantised down to the step,
//! as a coarse counter would read them. The report is built from the capture with a
//! hand-made calibration whose resolution is the step: under the mock,
//! `latte::analyze::calibration()` measures a frozen counter (0 ticks/ns, resolution
//! 1,024), which says nothing about the steps simulated here.
//!
//! Why the step floor matters: at 1 µs steps, a scope of a few hundred ns reads 0 or
//! 1,000 ticks. When fewer than a quarter of the readings are 1,000 (latencies under
//! 250 ns on average), the median and both quartiles are 0: the IQR is 0 and the old
//! zero-IQR spread, 0.25 x median, is 0 too, floored at 1 tick. The fences are then
//! [-1.5, 1.5] and every 1,000-tick reading (here ~18% of the samples) is an "outlier".
//! With the spread at least one step (1,000 ticks) the fences are [-1,500, 1,500] and
//! nothing is removed. `the_old_rule_fails_on_coarse_steps` shows it by cleaning the
//! same capture with a resolution of 1 tick.

use crate::common::{self, Rng};
use crate::mock;
use latte::analyze::Calibration;
use latte::report::Summary;
use latte::{Cleaning, Data, Id, Mode, Report, ReportOptions, Unit};
use std::time::Duration;

/// Scopes per case: fewer than a ring holds (65,536), so the capture has them all.
const SCOPES: usize = 50_000;

/// Preemption spikes injected per case.
const SPIKES: usize = 50;

/// True latencies in ns, without outliers. Tukey's fences flag about 0.7% of a normal
/// distribution, so "no outliers" means bounded tails: a triangular distribution (the
/// sum of two uniforms), whose fences lie well outside its support.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// 60 to 300 ns, mean 180: at 1 µs steps, ~18% of the readings are one step.
    Short,
    /// 400 to 800 ns, mean 600: at 1 µs steps, ~60% of the readings are one step.
    Long,
}

impl Shape {
    fn latency(self, rng: &mut Rng) -> u64 {
        match self {
            Shape::Short => 60 + rng.below(121) + rng.below(121),
            Shape::Long => 400 + rng.below(201) + rng.below(201),
        }
    }
}

/// Records scopes of `id` lasting `latencies` (true ns) on a counter that moves in
/// `step`-tick steps. Scopes start at random times, so at a random phase of the step.
fn record(id: &Id, latencies: &[u64], step: u64, rng: &mut Rng) {
    let mut t = 1_000_000u64;
    for &latency in latencies {
        t += 500 + rng.below(20_000);
        latte::test_hooks::set_mock_ticks(t / step * step);
        latte::start(id, Mode::Fast);
        t += latency;
        latte::test_hooks::set_mock_ticks(t / step * step);
        latte::stop(id, Mode::Fast);
    }
}

/// A counter with 1 tick per ns moving in `resolution`-tick steps; no overhead.
fn calibration(resolution: u64) -> Calibration {
    Calibration {
        ticks_per_ns: 1.0,
        accuracy: 0.0,
        resolution,
        scope: [[0; 3]; 3],
        pulse: 0,
        inside: [[0.0; 3]; 3],
        took: Duration::ZERO,
    }
}

/// This thread's row of `id` in a report of the current capture: raw ticks, default
/// cleaning.
fn cleaned(id: &str, cal: &Calibration) -> Summary {
    let options = ReportOptions {
        unit: Unit::Cycles,
        data: Data::Raw,
        cleaning: Cleaning::default(),
        ..ReportOptions::default()
    };
    let report = Report::from_capture(&latte::capture(), cal, &options);
    let me = std::thread::current()
        .name()
        .expect("test threads are named")
        .to_owned();
    report
        .threads
        .iter()
        .filter(|t| t.name == me && !t.exited)
        .flat_map(|t| &t.rows)
        .find(|r| r.component == id)
        .unwrap_or_else(|| panic!("no row {id}"))
        .stats
}

/// This thread's recorded ticks of `id`.
fn ticks(id: &str) -> Vec<u64> {
    common::my_samples(id).iter().map(|s| s.ticks()).collect()
}

/// Samples removed, at most 0.1% of `of`.
fn at_most_a_thousandth(removed: u64, of: u64) -> bool {
    removed * 1_000 <= of
}

static QUIET: [Id; 4] = [
    Id::new("steps/quiet 10ns short"),
    Id::new("steps/quiet 10ns long"),
    Id::new("steps/quiet 1us short"),
    Id::new("steps/quiet 1us long"),
];

static SPIKED: [Id; 4] = [
    Id::new("steps/spiked 10ns short"),
    Id::new("steps/spiked 10ns long"),
    Id::new("steps/spiked 1us short"),
    Id::new("steps/spiked 1us long"),
];

/// (id, step, shape) for every case.
fn cases(ids: &'static [Id; 4]) -> [(&'static Id, u64, Shape); 4] {
    [
        (&ids[0], 10, Shape::Short),
        (&ids[1], 10, Shape::Long),
        (&ids[2], 1_000, Shape::Short),
        (&ids[3], 1_000, Shape::Long),
    ]
}

#[test]
fn steps_without_outliers_are_kept() {
    let _clock = mock();
    let mut rng = Rng(0x5eed_0010);
    for (id, step, shape) in cases(&QUIET) {
        let latencies: Vec<u64> = (0..SCOPES).map(|_| shape.latency(&mut rng)).collect();
        record(id, &latencies, step, &mut rng);
    }
    for (id, step, shape) in cases(&QUIET) {
        let what = format!("{} ({shape:?}, step {step})", id.name());
        let recorded = ticks(id.name());
        assert_eq!(recorded.len(), SCOPES, "{what}");
        assert!(recorded.iter().all(|t| t % step == 0), "{what}: quantised");
        let s = cleaned(id.name(), &calibration(step));
        assert_eq!((s.samples, s.lost), (SCOPES as u64, 0), "{what}");
        assert!(
            at_most_a_thousandth(s.bypass + s.outliers, s.samples),
            "{what}: cleaning removed {} bypass + {} outliers of {}",
            s.bypass,
            s.outliers,
            s.samples
        );
    }
}

#[test]
fn the_old_rule_fails_on_coarse_steps() {
    // The case the step floor is for (see the module docs): 1 µs steps, short scopes.
    let _clock = mock();
    static ID: Id = Id::new("steps/old rule");
    let mut rng = Rng(0x5eed_0011);
    let latencies: Vec<u64> = (0..SCOPES)
        .map(|_| Shape::Short.latency(&mut rng))
        .collect();
    record(&ID, &latencies, 1_000, &mut rng);
    let recorded = ticks(ID.name());
    let one_step = recorded.iter().filter(|&&t| t == 1_000).count() as u64;
    assert!(
        recorded.iter().all(|&t| t == 0 || t == 1_000),
        "a scope under 1 µs reads 0 or one step"
    );
    // The scenario: more than 0.1% but under a quarter of the readings are one step, so
    // the median and both quartiles are 0.
    assert!(
        !at_most_a_thousandth(one_step, SCOPES as u64) && 4 * one_step < SCOPES as u64,
        "{one_step} one-step readings"
    );
    let s = cleaned(ID.name(), &calibration(1_000));
    assert_eq!(
        (s.bypass, s.outliers),
        (0, 0),
        "the spread is at least a step"
    );
    // A 1-tick resolution is the old rule: spread max(0.25 x 0, 1) = 1 tick, fences
    // [-1.5, 1.5], so exactly the one-step readings are removed.
    let old = cleaned(ID.name(), &calibration(1));
    assert_eq!((old.bypass, old.outliers), (0, one_step));
    assert!(!at_most_a_thousandth(
        old.bypass + old.outliers,
        old.samples
    ));
}

#[test]
fn preemption_spikes_are_bypass() {
    let _clock = mock();
    let mut rng = Rng(0x5eed_0012);
    for (id, step, shape) in cases(&SPIKED) {
        let mut latencies: Vec<u64> = (0..SCOPES - SPIKES)
            .map(|_| shape.latency(&mut rng))
            .collect();
        for _ in 0..SPIKES {
            // 1 to 10 ms, anywhere in the sequence.
            let at = rng.below(latencies.len() as u64 + 1) as usize;
            latencies.insert(at, 1_000_000 + rng.below(9_000_001));
        }
        record(id, &latencies, step, &mut rng);
    }
    for (id, step, shape) in cases(&SPIKED) {
        let what = format!("{} ({shape:?}, step {step})", id.name());
        let s = cleaned(id.name(), &calibration(step));
        assert_eq!((s.samples, s.lost), (SCOPES as u64, 0), "{what}");
        // Every spike (at least 1 ms) is above both 10 x the median (at most 10 µs
        // here) and the median + 2 µs; no other reading (at most 1 µs) is.
        assert_eq!(s.bypass, SPIKES as u64, "{what}: {s:?}");
        assert!(
            s.cleaned.max < 1_000_000.0 && s.max >= 1_000_000.0,
            "{what}: the spikes are what was bypassed: {s:?}"
        );
        assert!(
            at_most_a_thousandth(s.outliers, s.samples - SPIKES as u64),
            "{what}: {} outliers besides the spikes",
            s.outliers
        );
    }
}
