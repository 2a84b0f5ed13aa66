//! Own binary: it times busy-waits, so no other test may load the CPU in its process, and its
//! own tests take turns.
//!
//! Calibrated time is accurate: busy-waits of known length come out within
//! 2% + 200 ns + two counter steps of the truth in every mode (the step is the one
//! calibration measured for the clock in use: ~10 ns on the reference x86_64 guest,
//! ~1 us under qemu-user), the same check rejects them when the frequency is off by
//! 5%, and empty scopes come out at ~0.

mod common;
use latte::{Cleaning, Data, Id, Mode, Report, ReportOptions, Unit};
use std::sync::OnceLock;
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
        ..ReportOptions::default()
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

/// What one `Instant::now()` costs, ns: the fastest of 20 runs of 1,000 back-to-back
/// reads. A scope around [`spin`] holds one read more than the spin's length by
/// `Instant` does (the start of the first read, before its value is taken, and the
/// rest of the last one): ~40 ns natively (vDSO), 130-220 ns under Wine, whose
/// `QueryPerformanceCounter` leaves the Windows side for the host's clock (measured
/// 2026-11-27, 2 vCPU Intel Xeon KVM guest). Measured with each wait, not once per
/// process: in one CI run it read 465 ns at the start (the guest's clock turned slow
/// for a moment) and ~37 ns during the waits, and the cached figure put every truth
/// 425 ns too long.
fn clock_read_ns() -> f64 {
    (0..20)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..1_000 {
                std::hint::black_box(Instant::now());
            }
            t.elapsed().as_nanos() as f64 / 1_000.0
        })
        .fold(f64::INFINITY, f64::min)
}

/// One busy wait, measured: its mode and length, the truth (median spin length by
/// `Instant`, plus the one read of `Instant` that the scope holds beyond it, ns) and
/// latte's calibrated median (ns).
struct Wait {
    mode: Mode,
    us: u64,
    truth: f64,
    got: f64,
}

/// The waits: 1 us to 1 ms, with the repetitions each gets.
const CASES: [(u64, usize); 4] = [(1, 400), (10, 200), (100, 60), (1_000, 15)];

/// The tests of this file take turns: each loads the CPU, and a busy wait measured
/// while another test records and collects reports on the second core read several
/// hundred ns long on a shared host (CI, 2026-11-27: every Hard wait +780..+940 ns).
fn turn() -> std::sync::MutexGuard<'static, ()> {
    static CPU: std::sync::Mutex<()> = std::sync::Mutex::new(());
    CPU.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Measures one busy wait `reps` times under a fresh id (`attempt` names it).
fn measure(mode: Mode, us: u64, reps: usize, attempt: u32) -> Wait {
    let id = leak_id(format!("acc_{mode}_{us}us_{attempt}"));
    let truth: Vec<f64> = (0..reps)
        .map(|_| {
            latte::start(id, mode);
            let t = spin(Duration::from_micros(us));
            latte::stop(id, mode);
            t.as_nanos() as f64
        })
        .collect();
    // The read's cost as it was during these waits.
    let read_ns = clock_read_ns();
    let report = calibrated_report();
    let got = my_row(&report, id.name()).median;
    Wait {
        mode,
        us,
        truth: median(truth) + read_ns,
        got,
    }
}

/// The busy waits, measured once per process (on the thread of the first test that
/// asks, which holds its [`turn`]): every mode, 1 us to 1 ms.
fn waits() -> &'static [Wait] {
    static WAITS: OnceLock<Vec<Wait>> = OnceLock::new();
    WAITS.get_or_init(|| {
        Mode::ALL
            .into_iter()
            .flat_map(|mode| CASES.map(|(us, reps)| measure(mode, us, reps, 0)))
            .collect()
    })
}

/// The measured step of the clock in use, in ns.
fn step_ns() -> f64 {
    let cal = latte::analyze::calibration();
    cal.resolution as f64 / cal.ticks_per_ns
}

/// Is `got` (ns) an accurate reading of `wait`? Within 2% (the frequency and the
/// spin's own jitter) + 200 ns (the recorder's cost wobbling around its calibrated
/// overhead) + two steps of the counter: each end of a scope reads a counter that
/// moves in steps of `step_ns`, so the length read is up to a step either way of the
/// truth, and the overhead subtracted is whole steps too.
fn check(wait: &Wait, got: f64, step_ns: f64) -> Result<(), String> {
    let tolerance = 0.02 * wait.truth + 200.0 + 2.0 * step_ns;
    let (mode, us, truth) = (wait.mode, wait.us, wait.truth);
    eprintln!(
        "{mode} {us:>5} us: truth {truth:>11.1} ns, latte {got:>11.1} ns, error {:>+8.1} ns (allowed {tolerance:.1})",
        got - truth
    );
    if (got - truth).abs() > tolerance {
        return Err(format!("{mode} {us} us: truth {truth} ns, latte {got} ns"));
    }
    Ok(())
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "an unoptimised recorder's cost wobbles past the 200 ns allowed (Hard 10 us read \
              +821 ns in a debug build on the OS clock, 2026-11-27). CI runs this with \
              --release on both clocks"
)]
fn busy_waits_of_known_length_in_every_mode() {
    let _turn = turn();
    let step_ns = step_ns();
    eprintln!(
        "counter step {step_ns:.2} ns; one Instant::now() {:.1} ns",
        clock_read_ns()
    );
    // A wait that misses is measured again, twice at most, under a new id: a host that
    // slows the clock for a moment (a neighbour on the core, a clock read turned slow)
    // misses once, while a wrong frequency or overhead misses every time (the test
    // below shows the check rejects a frequency 5% off).
    let failures: Vec<String> = waits()
        .iter()
        .filter_map(|first| {
            let reps = CASES.iter().find(|(us, _)| *us == first.us).unwrap().1;
            let mut last = check(first, first.got, step_ns).err()?;
            for attempt in 1..=2 {
                eprintln!("  measuring {} {} us again", first.mode, first.us);
                let again = measure(first.mode, first.us, reps, attempt);
                match check(&again, again.got, step_ns) {
                    Ok(()) => return None,
                    Err(e) => last = e,
                }
            }
            Some(last)
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_check_fails_when_the_frequency_is_off_by_five_percent() {
    let _turn = turn();
    // Ticks converted with a frequency `off` times the true one read 1/off as long.
    // Off by 5%, a 1 ms wait reads ~50 us wrong, well outside the 20.2 us + two
    // steps allowed (two steps are 2 us under qemu-user, 20 ns on the reference x86_64).
    let step_ns = step_ns();
    for off in [0.95, 1.05] {
        for mode in Mode::ALL {
            let wait = waits()
                .iter()
                .find(|w| w.mode == mode && w.us == 1_000)
                .unwrap();
            assert!(
                check(wait, wait.got / off, step_ns).is_err(),
                "{mode}: a frequency off by a factor {off} went unnoticed"
            );
        }
    }
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "calibration is for optimised code; an unoptimised recorder's cost wobbles by \
              whole counter steps. CI runs this with --release on both clocks"
)]
fn empty_scopes_come_out_at_about_zero_and_never_negative() {
    let _turn = turn();
    const ROUNDS: usize = 30;
    const PER_BATCH: usize = 500;
    let cal = latte::analyze::calibration();
    let ids: Vec<(Mode, Mode, &Id)> = Mode::ALL
        .into_iter()
        .flat_map(|start| Mode::ALL.into_iter().map(move |stop| (start, stop)))
        .map(|(start, stop)| (start, stop, leak_id(format!("acc_empty_{start}{stop}"))))
        .collect();
    // Round by round, one batch of every pair in each, as calibration takes its own:
    // a slow spell of a shared guest (seen 2026-11-27 on a 2 vCPU Intel Xeon KVM guest:
    // every scope 2-20 times its cost for milliseconds) then lands in a few rounds of
    // every pair, not in all the batches of one. Between rounds, the calibrated report.
    for _ in 0..ROUNDS {
        for &(start, stop, id) in &ids {
            for _ in 0..PER_BATCH {
                latte::start(id, start);
                latte::stop(id, stop);
            }
        }
        // Never negative, whatever the machine does.
        let report = calibrated_report();
        for &(start, stop, id) in &ids {
            let s = my_row(&report, id.name());
            for v in [s.avg, s.median, s.min, s.max, s.p90, s.p99, s.p999] {
                assert!(v >= 0.0 && v.is_finite(), "{start}{stop}: {v} in {s:?}");
            }
        }
    }
    // "About zero": the smallest batch median of calibrated ticks is at most one
    // counter step, or half of what was subtracted where the counter is finer than that
    // (the OS clock counts single nanoseconds and jitters). A calibration that
    // subtracted nothing, or another pair's overhead, misses by the whole overhead.
    let failures: Vec<String> = ids
        .iter()
        .filter_map(|&(start, stop, id)| {
            let overhead = cal.scope_overhead(start, stop);
            let best = common::my_samples(id.name())
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
            let bound = cal.resolution.max(overhead / 2);
            eprintln!(
                "{start}{stop}: best batch median {best} ticks, overhead {overhead} ticks, bound {bound}"
            );
            (best > bound).then(|| format!("{start}{stop}: best batch median {best} ticks > {bound}"))
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}
