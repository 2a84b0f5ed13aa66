//! Reports cover the whole run, not the ring's window: every sample counted, tails
//! exact to the histogram's precision, periodic reports that add up to the final one.

use crate::common::{self, Rng, SharedSink, exclusive, json_row};
use latte::{Cleaning, Data, Format, Id, Unit};
use std::time::{Duration, Instant};

/// The ring is far smaller than the run: the window would hold a quarter of it (the
/// fast half's last values only). At the writer's pace (at most 100,000 samples/s) it
/// takes 2.6 s to lap, so a drain woken late on a loaded machine still reads every
/// sample: with a ring of 32,768 (0.33 s), 17,410 samples were lost once, on a 2-core
/// machine whose CPU pressure stood at 60% (other builds).
const CAPACITY: usize = 1 << 18;

fn me() -> String {
    std::thread::current().name().unwrap().to_owned()
}

/// The order statistic of rank `ceil(num / den * n)`, computed in integers.
fn exact_quantile(sorted: &[u64], num: u64, den: u64) -> u64 {
    let n = sorted.len() as u64;
    let rank = (num * n).div_ceil(den).max(1);
    sorted[rank as usize - 1]
}

fn within(got: f64, exact: u64, rel: f64) -> bool {
    (got - exact as f64).abs() <= rel * exact as f64
}

/// `n` values: the first half slow (around 20,000 ticks), the second fast (around 200),
/// one in 10,000 five times its neighbours. The ring's window would see only the fast
/// end, the whole run sees both.
fn slow_then_fast(n: u64) -> Vec<u64> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|i| {
            let base = if i < n / 2 { 19_000 } else { 190 };
            base + rng.next() % (base / 10)
                + if rng.next().is_multiple_of(10_000) {
                    5 * base
                } else {
                    0
                }
        })
        .collect()
}

/// Records `values` under `id` at most 100,000 per second: 500 every 5 ms, sleeping
/// between (the pace leaves the CPU to the rest of the suite). A writer that was
/// descheduled does not catch up with a longer burst (that is another workload: faster
/// than the drain reads, on any ring).
fn record_paced(id: &'static Id, values: &[u64]) {
    const STEP: Duration = Duration::from_millis(5);
    let mut due = Instant::now();
    for batch in values.chunks(500) {
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        for &v in batch {
            latte::record(id, v);
        }
        due = (due + STEP).max(Instant::now());
    }
}

#[test]
fn a_million_samples_through_a_small_ring_are_all_counted() {
    let _one = exclusive();
    static SLOW_THEN_FAST: Id = Id::new("whole_run_million");
    let sink = SharedSink::default();
    let guard = latte::builder()
        .ring_capacity(CAPACITY)
        .cleaning(Cleaning::OFF)
        .unit(Unit::Cycles)
        .data(Data::Raw)
        .format(Format::Json)
        .sink(sink.clone())
        .start()
        .unwrap();
    const N: u64 = 1_000_000;
    let values = slow_then_fast(N);
    let began = Instant::now();
    record_paced(&SLOW_THEN_FAST, &values);
    guard.stop().unwrap();
    let report = sink.json_reports().pop().expect("a final report");
    let s = json_row(&report, &me(), "whole_run_million").expect("the row");
    let count = |k: &str| s[k].as_u64().unwrap();
    assert_eq!(
        (
            count("seen"),
            count("samples"),
            count("lost"),
            s["cleaned"]["samples"].as_u64().unwrap()
        ),
        (N, N, 0, N),
        "{s}"
    );
    let mut sorted = values;
    sorted.sort_unstable();
    for (key, num, den) in [("median", 1, 2), ("p99", 99, 100), ("p999", 999, 1000)] {
        let exact = exact_quantile(&sorted, num, den);
        let got = s[key].as_f64().unwrap();
        assert!(within(got, exact, 1e-3), "{key}: {got} vs exact {exact}");
    }
    assert_eq!(s["max"].as_f64().unwrap(), *sorted.last().unwrap() as f64);
    assert_eq!(s["min"].as_f64().unwrap(), sorted[0] as f64);
    let mean = sorted.iter().sum::<u64>() as f64 / N as f64;
    assert!(
        (s["avg"].as_f64().unwrap() - mean).abs() <= 1e-9 * mean,
        "{s}"
    );
    println!(
        "recorded {N} in {:.1} s: p99 {} (exact {})",
        began.elapsed().as_secs_f64(),
        s["p99"],
        exact_quantile(&sorted, 99, 100)
    );
}

#[test]
fn periodic_reports_add_up_to_the_final_one() {
    let _one = exclusive();
    static A: Id = Id::new("whole_run_periodic_a");
    static B: Id = Id::new("whole_run_periodic_b");
    let sink = SharedSink::default();
    let hlog = std::env::temp_dir().join(format!("latte-whole-run-{}.hlog", std::process::id()));
    let guard = latte::builder()
        .ring_capacity(CAPACITY)
        .cleaning(Cleaning::OFF)
        .unit(Unit::Cycles)
        .data(Data::Raw)
        .format(Format::Json)
        .periodic(Duration::from_millis(10))
        .hlog(&hlog)
        .sink(sink.clone())
        .start()
        .unwrap();
    let writer_sink = sink.clone();
    let writer = std::thread::Builder::new()
        .name("whole-run-writer".into())
        .spawn(move || record_across_intervals(&A, 1_000, &writer_sink))
        .unwrap();
    let m = record_across_intervals(&B, 777, &sink);
    let n = writer.join().unwrap();
    guard.stop().unwrap();
    let reports = sink.json_reports();
    let (finals, periodic): (Vec<_>, Vec<_>) = reports
        .iter()
        .partition(|r| r["label"].as_str() == Some("final"));
    assert_eq!(finals.len(), 1);
    assert!(periodic.len() >= 2, "{} periodic reports", periodic.len());
    for (thread, id, recorded) in [
        ("whole-run-writer", "whole_run_periodic_a", n),
        (me().as_str(), "whole_run_periodic_b", m),
    ] {
        let sum = |key: &str| -> u64 {
            periodic
                .iter()
                .filter_map(|r| json_row(r, thread, id))
                .map(|s| s[key].as_u64().unwrap())
                .sum()
        };
        let last = json_row(finals[0], thread, id).expect("final row");
        for key in ["seen", "samples", "lost"] {
            assert_eq!(sum(key), last[key].as_u64().unwrap(), "{id} {key}");
        }
        assert_eq!(last["seen"].as_u64().unwrap(), recorded, "{id}");
        // The interval log, read back with the hdrhistogram crate, holds every
        // folded sample once.
        assert_eq!(logged(&hlog, id), last["samples"].as_u64().unwrap(), "{id}");
        println!("{id}: {recorded} recorded, {} lost", last["lost"]);
    }
    std::fs::remove_file(&hlog).unwrap();
}

/// Records `id` for 150 ms, waits until the agent has written two more periodic
/// reports, then records for another 150 ms: bursts faster than the drain may read
/// (some samples may be lost, and the counts must add up all the same), and on both
/// sides of an interval's end however the threads are scheduled. The second report
/// folded the rings after the first burst ended and was written before the second
/// began, so the id is in at least two intervals of the log. Returns how many it
/// recorded.
fn record_across_intervals(id: &'static Id, modulo: u64, sink: &SharedSink) -> u64 {
    let mut n = 0u64;
    let mut record_for = |period: Duration| {
        let began = Instant::now();
        while began.elapsed() < period {
            latte::record(id, n % modulo);
            n += 1;
        }
    };
    record_for(Duration::from_millis(150));
    let written = sink.text().lines().count();
    let deadline = Instant::now() + Duration::from_secs(30);
    while sink.text().lines().count() < written + 2 {
        assert!(Instant::now() < deadline, "no periodic report within 30 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    record_for(Duration::from_millis(150));
    n
}

/// Total count of the histograms tagged `tag` in an interval log.
fn logged(path: &std::path::Path, tag: &str) -> u64 {
    let counts = common::hlog_interval_counts(path, tag);
    assert!(
        counts.len() >= 2,
        "{} intervals of {tag} logged",
        counts.len()
    );
    counts.iter().sum()
}
