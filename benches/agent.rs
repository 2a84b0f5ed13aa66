//! What the agent costs and how much it keeps up with, in three parts:
//!
//! 1. Does the agent disturb the recording threads? Fast Start+Stop cost on a pinned
//!    recording thread with the drain folding every 1 ms and otherwise idle, and with
//!    it also writing a full report every 1 ms (each fold and report reads the ring
//!    being written). Trials alternate idle / reporting, 60 of each, 100,000
//!    Start+Stop pairs per trial, so machine noise lands on both alike; the ratio of
//!    medians is printed against the 5% target.
//! 2. Sustained 10 million samples per second on one thread, default ring: the share
//!    of samples lost (the drain could not read them before the ring lapped).
//! 3. The drain's cost per folded sample, and the memory of a whole-run histogram, for
//!    a wide spread of values (dense histograms) and a narrow one (table form).
//!
//! `cargo bench --bench agent`; `cargo bench --bench agent -- fold` runs part 3 only
//! (to compare two builds' folds, run alternately).

use latte::{Cleaning, Id, Mode, Report, ReportOptions, clock, latte_start, latte_stop};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CALLS: u64 = 100_000;
const TRIALS: usize = 60;

fn trial() -> f64 {
    let t0 = clock::read(Mode::Hard).ticks;
    for _ in 0..CALLS {
        latte_start!("agent_bench");
        latte_stop!("agent_bench");
    }
    clock::read(Mode::Hard).ticks.wrapping_sub(t0) as f64 / CALLS as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    (v[(v.len() - 1) / 2] + v[v.len() / 2]) / 2.0
}

fn main() {
    if std::env::args().skip(1).any(|a| a == "fold") {
        fold_cost();
        return;
    }
    let guard = latte::builder()
        .sink(std::io::sink())
        .final_report(false)
        .drain_pace(Duration::from_millis(1), Duration::from_millis(1))
        .start()
        .expect("start the agent");
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let reporting = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let reports = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if reporting.load(Ordering::Relaxed) {
                    guard.report().expect("report");
                    reports.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let recorder = s.spawn(|| {
            let pinned = cores
                .last()
                .is_some_and(|&c| core_affinity::set_for_current(c));
            let (mut idle, mut busy) = (Vec::new(), Vec::new());
            trial(); // warm-up: ring created, caches and predictors warm
            for _ in 0..TRIALS {
                reporting.store(false, Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(2)); // let a report finish
                idle.push(trial());
                reporting.store(true, Ordering::Relaxed);
                busy.push(trial());
            }
            stop.store(true, Ordering::Relaxed);
            (pinned, idle, busy)
        });
        let (pinned, idle, busy) = recorder.join().unwrap();
        let (i, b) = (median(idle), median(busy));
        println!(
            "agent bench: {TRIALS} trials per state x {CALLS} Fast Start+Stop, recorder {}",
            if pinned { "pinned" } else { "NOT pinned" }
        );
        println!("drain folding every 1 ms:              median {i:7.1} cycles per Start+Stop");
        println!(
            "drain folding + a report every 1 ms:   median {b:7.1} cycles per Start+Stop ({} reports)",
            reports.load(Ordering::Relaxed)
        );
        println!(
            "ratio reporting / idle: {:.3} (target <= 1.05) {}",
            b / i,
            if b / i <= 1.05 { "met" } else { "MISSED" }
        );
    });
    guard.stop().expect("stop");
    sustained();
    fold_cost();
}

/// Part 2: one thread records 10 million samples per second for 2 s into a default
/// ring, under an agent with default pacing.
fn sustained() {
    const RATE: f64 = 10e6;
    const SECONDS: f64 = 2.0;
    static FAST: Id = Id::new("agent_bench_10m");
    let guard = latte::builder()
        .sink(std::io::sink())
        .final_report(false)
        .start()
        .expect("start the agent");
    let ticks_per_ns = latte::analyze::calibration().ticks_per_ns;
    let step = 1e9 / RATE * ticks_per_ns; // ticks between two samples
    let n = (RATE * SECONDS) as u64;
    let began = Instant::now();
    // One sample every `step` ticks; a recorder that was descheduled does not burst to
    // catch up (that would be a faster workload, not a sustained 10 M/s).
    let mut due = clock::ticks() as f64;
    for i in 0..n {
        while (clock::ticks() as f64) < due {
            std::hint::spin_loop();
        }
        latte::record(&FAST, i & 1023);
        due = (due + step).max(clock::ticks() as f64);
    }
    let took = began.elapsed().as_secs_f64();
    let report = Report::collect(&ReportOptions::default());
    guard.stop().expect("stop");
    let row = report
        .all_threads
        .iter()
        .find(|r| r.component == "agent_bench_10m")
        .expect("the row");
    let s = &row.stats;
    println!(
        "\nsustained: {} samples in {took:.2} s ({:.1} M/s), default ring: {} lost ({:.4}%, goal 0)",
        s.seen,
        s.seen as f64 / took / 1e6,
        s.lost,
        100.0 * s.lost as f64 / s.seen as f64
    );
}

/// What one load of part 3 measured.
struct FoldLoad {
    /// The fold's cost per sample, one figure per round.
    per_sample: Vec<f64>,
    /// Samples per round.
    samples: u64,
    /// Histograms the first round added, and their bytes.
    histograms: u64,
    bytes: u64,
}

/// Part 3: with no agent, `ids.len()` ids x `per_id` samples (`value(k, v, round)` for
/// id `k`'s `v`-th) wait in the rings of a thread that has exited; `fold` folds them
/// (and compacts the thread) and says how long the fold took. Five rounds, each on a
/// new thread (so each round's tallies are new too).
fn fold_load(
    ids: &[&'static Id],
    per_id: u64,
    value: fn(usize, u64, u64) -> u64,
    fold: fn() -> Duration,
) -> FoldLoad {
    let mut load = FoldLoad {
        per_sample: Vec::new(),
        samples: ids.len() as u64 * per_id,
        histograms: 0,
        bytes: 0,
    };
    for round in 0..5u64 {
        // Before the thread: the footprint compacts the previous round's exited
        // thread, which is not the fold's work.
        let before = latte::collect::footprint();
        // The recording thread stays alive while the fold is timed, as the threads a
        // drain folds do: an exited thread would be compacted (its retained samples
        // copied) first, a cost of its exit, not of folding.
        let recorded = std::sync::Barrier::new(2);
        let folded = std::sync::Barrier::new(2);
        let took = std::thread::scope(|s| {
            s.spawn(|| {
                for (k, id) in ids.iter().enumerate() {
                    for v in 0..per_id {
                        latte::record(id, value(k, v, round));
                    }
                }
                recorded.wait();
                folded.wait();
            });
            recorded.wait();
            let took = fold();
            folded.wait();
            took
        });
        load.per_sample
            .push(took.as_secs_f64() * 1e9 / load.samples as f64);
        if round == 0 {
            let after = latte::collect::footprint();
            load.histograms = after.histograms - before.histograms;
            load.bytes = after.histogram_bytes - before.histogram_bytes;
        }
    }
    load
}

/// The fold as reports see it: the first report folds and analyses, the second only
/// analyses; the difference is the fold.
fn fold_by_reports() -> Duration {
    let options = ReportOptions {
        cleaning: Cleaning::OFF,
        ..ReportOptions::default()
    };
    let t = Instant::now();
    std::hint::black_box(Report::collect(&options));
    let fold_and_analyse = t.elapsed();
    let t = Instant::now();
    std::hint::black_box(Report::collect(&options));
    fold_and_analyse.saturating_sub(t.elapsed())
}

/// The fold timed alone: `reset` folds, then empties the tallies (keeping their
/// memory). Analysing 1,000 ids takes far longer than folding them, so a difference
/// of two reports would be mostly noise.
fn fold_by_reset() -> Duration {
    let t = Instant::now();
    latte::collect::reset();
    t.elapsed()
}

/// Part 3, two loads. Wide: 16 ids x 60,000 samples spread evenly over 100..5,099
/// ticks (about 3,200 buckets each: dense histograms), the fold timed by reports.
/// Narrow, a trading engine's interned symbols in small: 1,000 ids x 1,000 samples of
/// one code path's quantised TSC deltas ([`narrow_value`]: tens of buckets each, in
/// table form), the fold timed by `reset`.
fn fold_cost() {
    const IDS: usize = 16;
    static BENCH_IDS: [Id; IDS] = [
        Id::new("fold_0"),
        Id::new("fold_1"),
        Id::new("fold_2"),
        Id::new("fold_3"),
        Id::new("fold_4"),
        Id::new("fold_5"),
        Id::new("fold_6"),
        Id::new("fold_7"),
        Id::new("fold_8"),
        Id::new("fold_9"),
        Id::new("fold_10"),
        Id::new("fold_11"),
        Id::new("fold_12"),
        Id::new("fold_13"),
        Id::new("fold_14"),
        Id::new("fold_15"),
    ];
    let wide: Vec<&'static Id> = BENCH_IDS.iter().collect();
    let wide = fold_load(
        &wide,
        60_000,
        |k, v, round| 100 + (v * 7 + k as u64 + round) % 5_000,
        fold_by_reports,
    );
    // Rings of 1,024 samples for the narrow load's 1,000 ids x 5 rounds (the setting
    // stays after the agent stops).
    latte::builder()
        .sink(std::io::sink())
        .final_report(false)
        .ring_capacity(1024)
        .start()
        .expect("start the agent")
        .stop()
        .expect("stop");
    let narrow: Vec<&'static Id> = (0..1_000)
        .map(|k| Id::intern(&format!("symbol_{k}")).expect("below the intern limit"))
        .collect();
    let narrow = fold_load(&narrow, 1_000, narrow_value, fold_by_reset);
    print_fold(&wide, &narrow);
}

/// The narrow load's `v`-th value of id `k` in `round`: 2,600 ticks plus steps of 26,
/// three in four within the first 6 steps, the rest spread over 48 (a splitmix64 draw
/// per value).
fn narrow_value(k: usize, v: u64, round: u64) -> u64 {
    let mut z = (k as u64) << 40 ^ v << 8 ^ round;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let step = match z & 3 {
        0 => (z >> 8) % 48,
        _ => u64::from((z >> 8 | 1 << 5).trailing_zeros()),
    };
    2_600 + 26 * step
}

/// Distinct buckets per id of the narrow load's first round (values above 2,048 ticks
/// fall in buckets 2 ticks wide, so distinct values of steps of 26 are distinct
/// buckets).
fn narrow_buckets() -> f64 {
    let ids = 1_000;
    let distinct: usize = (0..ids)
        .map(|k| {
            let mut values: Vec<u64> = (0..1_000).map(|v| narrow_value(k, v, 0)).collect();
            values.sort_unstable();
            values.dedup();
            values.len()
        })
        .sum();
    distinct as f64 / ids as f64
}

/// The fold's target line and figures, and the histograms' memory.
fn print_fold(wide: &FoldLoad, narrow: &FoldLoad) {
    let fold = median(wide.per_sample.clone());
    // No agent here, so no interval is open: each sample is folded into one window's
    // tally, the whole run's (with an interval open it would be the interval's, still
    // one).
    println!(
        "target {:<52} {fold:>6.1}  (target <= 10) {}",
        "fold, ns per sample (whole-run window only)",
        if fold <= 10.0 { "met" } else { "MISSED" }
    );
    let rounds = |l: &FoldLoad| -> Vec<f64> {
        l.per_sample
            .iter()
            .map(|x| (x * 10.0).round() / 10.0)
            .collect()
    };
    println!(
        "fold: {:.1} ns per sample (median of 5 rounds of {} samples; rounds {:?}); windows fed per sample: 1 (the whole run; no interval open)",
        fold,
        wide.samples,
        rounds(wide)
    );
    println!(
        "memory, wide load: {} histograms (the tallies and the series' open tables, with its closed blocks), {} bytes, {:.1} KiB per histogram (values below 5,100 ticks, ~3,200 buckets each: dense)",
        wide.histograms,
        wide.bytes,
        wide.bytes as f64 / wide.histograms.max(1) as f64 / 1024.0
    );
    println!(
        "narrow load: fold (timed by reset) {:.1} ns per sample (median of 5 rounds of {} samples; rounds {:?})",
        median(narrow.per_sample.clone()),
        narrow.samples,
        rounds(narrow)
    );
    println!(
        "memory, narrow load: {} histograms (the tallies and the series' open tables, with its closed blocks), {} bytes, {:.0} bytes per histogram (1,000 samples, {:.1} buckets each: table form)",
        narrow.histograms,
        narrow.bytes,
        narrow.bytes as f64 / narrow.histograms.max(1) as f64,
        narrow_buckets()
    );
}
