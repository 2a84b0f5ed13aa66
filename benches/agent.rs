//! Does the agent disturb the recording threads? Fast Start+Stop cost on a pinned
//! recording thread with the drain thread idle, and with it writing full reports
//! back to back (each one reads every ring, including the one being written).
//!
//! `cargo bench --bench agent`. Trials alternate idle / reporting, 60 of each, 100,000
//! Start+Stop pairs per trial, so machine noise lands on both alike; the ratio of
//! medians is printed against the 5% target.

use latte::{Mode, clock, latte_start, latte_stop};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
    let guard = latte::builder()
        .sink(std::io::sink())
        .final_report(false)
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
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
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
        println!("drain idle:       median {i:7.1} cycles per Start+Stop");
        println!(
            "drain reporting:  median {b:7.1} cycles per Start+Stop ({} full reports during the run)",
            reports.load(Ordering::Relaxed)
        );
        println!(
            "ratio reporting / idle: {:.3} (target <= 1.05) {}",
            b / i,
            if b / i <= 1.05 { "met" } else { "MISSED" }
        );
    });
    guard.stop().expect("stop");
}
