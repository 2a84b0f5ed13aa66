//! The slowest samples of the run, with thread and time; tails corrected for
//! coordinated omission, as HdrHistogram corrects them.

use crate::common;
use hdrhistogram::Histogram;
use latte::report::Focus;
use latte::{Cleaning, Id, Report, ReportOptions};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const SLOWEST: usize = 7;

fn raw() -> ReportOptions {
    ReportOptions {
        cleaning: Cleaning::OFF,
        unit: latte::Unit::Cycles,
        data: latte::Data::Raw,
        ..ReportOptions::default()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A deterministic stream of values.
fn values(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = common::Rng(seed);
    (0..n).map(|_| 100 + rng.below(10_000)).collect()
}

/// Records 50,000 values under `id` on each of two threads, `slowest-0` and `slowest-1`;
/// the injected spikes land in both, between ordinary values. Returns every value.
fn record_with_spikes(id: &'static Id) -> Vec<u64> {
    let spikes = [
        5_000_000u64,
        70_000,
        70_000,
        1_234_567,
        999_999,
        80_001,
        3,
        65_000,
    ];
    let mut recorded = Vec::new();
    for (k, seed) in [(0usize, 7u64), (1, 11)] {
        let mut vals = values(seed, 50_000);
        for (i, &s) in spikes.iter().enumerate().filter(|(i, _)| i % 2 == k) {
            vals[i * 5_000 + 17] = s;
        }
        recorded.extend_from_slice(&vals);
        std::thread::Builder::new()
            .name(format!("slowest-{k}"))
            .spawn(move || vals.iter().for_each(|&v| latte::record(id, v)))
            .unwrap()
            .join()
            .unwrap();
    }
    recorded
}

/// Per thread too: each thread's own largest values.
fn each_thread_lists_its_own_slowest(report: &Report) {
    for t in report
        .threads
        .iter()
        .filter(|t| t.name.starts_with("slowest-"))
    {
        let r = t
            .rows
            .iter()
            .find(|r| r.component == "slowest_work")
            .unwrap();
        assert_eq!(r.slowest.len(), SLOWEST);
        assert!(r.slowest.windows(2).all(|w| w[0].value >= w[1].value));
        assert!(r.slowest.iter().all(|s| s.thread == t.name));
    }
}

#[test]
fn the_slowest_list_is_exactly_the_largest_values() {
    let _slowest = common::exclusive_with(|b| b.slowest(SLOWEST));
    static WORK: Id = Id::new("slowest_work");
    let before = now_ms();
    let mut recorded = record_with_spikes(&WORK);
    let report = Report::collect(&raw());
    let after = now_ms();
    recorded.sort_unstable_by(|a, b| b.cmp(a));
    let row = report
        .all_threads
        .iter()
        .find(|r| r.component == "slowest_work")
        .unwrap();
    let got: Vec<u64> = row.slowest.iter().map(|s| s.value as u64).collect();
    assert_eq!(got, recorded[..SLOWEST], "{:?}", row.slowest);
    for s in &row.slowest {
        assert!(s.thread.starts_with("slowest-"), "{s:?}");
        assert!(s.not_after_ms >= before && s.not_after_ms <= after, "{s:?}");
        assert!(s.not_before_ms <= s.not_after_ms, "{s:?}");
    }
    each_thread_lists_its_own_slowest(&report);
    // The table names them. Focused on this component: the tails block lists the
    // first rows only, and the process holds other tests' components too.
    let focus = Focus {
        ids: Some(WORK.name().into()),
        ..Focus::default()
    };
    let mut table = Vec::new();
    report
        .focus(&focus)
        .unwrap()
        .write(&mut table, latte::Format::default())
        .unwrap();
    let table = String::from_utf8(table).unwrap();
    // The tails block names them, each with its thread.
    let tails = table
        .lines()
        .find(|l| l.starts_with("slowest_work") && l.contains("(slowest-"))
        .unwrap_or_else(|| panic!("no slowest line:\n{table}"));
    assert!(
        tails.contains("5.000 M (slowest-0), 1.235 M (slowest-1)"),
        "{tails}"
    );
}

/// Declares `id`'s period and returns it in ticks. Data in cycles, raw: the period in
/// ticks is the period in ns times the calibrated frequency, as the report computes it.
/// The loop's ordinary values (up to 10,100 ticks) keep within the period on any
/// counter: 20 us, or longer where the counter is slow (62.5 MHz under qemu-user:
/// 20 us is 1,250 ticks).
fn declare_a_period(id: &Id) -> u64 {
    let ticks_per_ns = latte::analyze::calibration().ticks_per_ns;
    let at_least = (20_000.0 / ticks_per_ns).ceil() as u64;
    let period = Duration::from_micros(20).max(Duration::from_nanos(at_least));
    id.expect_period(period);
    (period.as_nanos() as f64 * ticks_per_ns).round() as u64
}

#[test]
fn coordinated_omission_rows_match_hdrhistograms_correction() {
    let _shared = common::shared();
    static LOOP: Id = Id::new("slowest_loop");
    let period_ticks = declare_a_period(&LOOP);
    // A loop that mostly keeps its period and sometimes stalls for many periods.
    let mut vals = values(3, 20_000);
    for i in (0..vals.len()).step_by(997) {
        vals[i] = period_ticks * (5 + i as u64 % 40);
    }
    std::thread::Builder::new()
        .name("co-loop".into())
        .spawn({
            let vals = vals.clone();
            move || vals.iter().for_each(|&v| latte::record(&LOOP, v))
        })
        .unwrap()
        .join()
        .unwrap();
    // HdrHistogram corrects either while recording (`record_correct`, from each
    // value) or afterwards (`clone_correct`, from each bucket's value): latte does the
    // latter on its whole-run histogram.
    let mut while_recording = Histogram::<u64>::new(3).unwrap();
    let mut recorded = Histogram::<u64>::new(3).unwrap();
    for &v in &vals {
        while_recording.record_correct(v, period_ticks).unwrap();
        recorded.record(v).unwrap();
    }
    let afterwards = recorded.clone_correct(period_ticks);
    let report = Report::collect(&raw());
    let row = report
        .all_threads
        .iter()
        .find(|r| r.component == "slowest_loop")
        .unwrap();
    let c = row
        .corrected
        .expect("a declared period gives corrected tails");
    assert_eq!(c.count, afterwards.len(), "{c:?}");
    assert_eq!(c.count, while_recording.len(), "{c:?}");
    assert!(c.count > vals.len() as u64);
    assert_eq!(c.period, period_ticks as f64);
    // Added values come from bucket values, within the largest value's bucket width
    // of the ones `record_correct` adds.
    let coarsest = recorded.equivalent_range(recorded.max()) as f64;
    for (got, q) in [(c.p50, 0.5), (c.p90, 0.9), (c.p99, 0.99), (c.p999, 0.999)] {
        let same = afterwards.value_at_quantile(q);
        let width = afterwards.equivalent_range(same) as f64;
        assert!((got - same as f64).abs() <= width, "q {q}: {got} vs {same}");
        let exact = while_recording.value_at_quantile(q) as f64;
        assert!(
            (got - exact).abs() <= coarsest + width,
            "q {q}: {got} vs {exact}"
        );
    }
    assert_eq!(c.max, *vals.iter().max().unwrap() as f64);
    // The raw tails are not corrected, and are smaller.
    assert!(row.stats.p99 < c.p99, "{:?} vs {c:?}", row.stats);
    // An id without a period has no corrected row.
    static PLAIN: Id = Id::new("slowest_plain");
    latte::record(&PLAIN, 5);
    let report = Report::collect(&raw());
    let plain = report
        .all_threads
        .iter()
        .find(|r| r.component == "slowest_plain");
    assert_eq!(plain.unwrap().corrected, None);
}
