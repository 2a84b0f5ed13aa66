//! Calibrated time is accurate: busy-waits of known length come out within
//! 2% + 200 ns of the truth in every mode, and empty scopes come out at ~0.

mod common;
use latte::{Cleaning, Data, Id, Mode, Report, ReportOptions, Unit};
use std::time::{Duration, Instant};

/// Spins for at least `d`; returns how long the spin took by `Instant`.
fn spin(d: Duration) -> Duration {
    let t = Instant::now();
    loop {
        let e = t.elapsed();
        if e >= d {
            return e;
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn leak_id(name: String) -> &'static Id {
    Box::leak(Box::new(Id::new(Box::leak(name.into_boxed_str()))))
}

fn calibrated_report() -> Report {
    Report::collect(&ReportOptions {
        unit: Unit::Time,
        data: Data::Calibrated,
        cleaning: Cleaning::OFF,
    })
}

fn my_row<'a>(report: &'a Report, id: &str) -> &'a latte::report::Summary {
    let me = std::thread::current().name().unwrap().to_owned();
    let thread = report
        .threads
        .iter()
        .find(|t| t.name == me && !t.exited)
        .unwrap();
    &thread
        .rows
        .iter()
        .find(|r| r.component == id)
        .unwrap()
        .stats
}

#[test]
fn busy_waits_of_known_length_in_every_mode() {
    let cases = [(1u64, 400), (10, 200), (100, 60), (1_000, 15)];
    let mut failures = Vec::new();
    for mode in Mode::ALL {
        for (us, reps) in cases {
            let id = leak_id(format!("acc_{mode}_{us}us"));
            let truth: Vec<f64> = (0..reps)
                .map(|_| {
                    latte::start(id, mode);
                    let t = spin(Duration::from_micros(us));
                    latte::stop(id, mode);
                    t.as_nanos() as f64
                })
                .collect();
            let truth = median(truth);
            let report = calibrated_report();
            let got = my_row(&report, id.name()).median;
            let tolerance = 0.02 * truth + 200.0;
            eprintln!(
                "{mode} {us:>5} us: truth {truth:>11.1} ns, latte {got:>11.1} ns, error {:>+8.1} ns (allowed {tolerance:.1})",
                got - truth
            );
            if (got - truth).abs() > tolerance {
                failures.push(format!("{mode} {us} us: truth {truth} ns, latte {got} ns"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "calibration is for optimised code; an unoptimised recorder's cost wobbles by \
              whole counter steps. CI runs this with --release on both clocks"
)]
fn empty_scopes_come_out_at_about_zero_and_never_negative() {
    const BATCHES: usize = 10;
    const PER_BATCH: usize = 500;
    let cal = latte::analyze::calibration();
    for start in Mode::ALL {
        for stop in Mode::ALL {
            let id = leak_id(format!("acc_empty_{start}{stop}"));
            for _ in 0..BATCHES * PER_BATCH {
                latte::start(id, start);
                latte::stop(id, stop);
            }
            // Never negative, whatever the machine does.
            let report = calibrated_report();
            let s = my_row(&report, id.name());
            for v in [s.avg, s.median, s.min, s.max, s.p90, s.p99, s.p999] {
                assert!(v >= 0.0 && v.is_finite());
            }
            // "About zero", robust to a busy machine the way calibration is: the
            // smallest batch median of calibrated ticks.
            let overhead = cal.scope_overhead(start, stop);
            let samples = common::my_samples(id.name());
            let best = samples
                .chunks(PER_BATCH)
                .map(|batch| {
                    let mut t: Vec<u64> = batch
                        .iter()
                        .map(|s| s.ticks().saturating_sub(overhead))
                        .collect();
                    t.sort_unstable();
                    t[t.len() / 2]
                })
                .min()
                .unwrap();
            eprintln!(
                "{start}{stop}: report median {:.2} ns, best batch median {best} ticks, overhead {overhead} ticks, resolution {} ticks",
                s.median, cal.resolution
            );
            // At most one counter step, or half of what was subtracted where the counter
            // is finer than that (the OS clock counts single nanoseconds and jitters).
            let bound = cal.resolution.max(overhead / 2);
            assert!(
                best <= bound,
                "{start}{stop}: best batch median {best} ticks > {bound}"
            );
        }
    }
}
