//! Periodic reports carry only what was recorded since the previous one.

use crate::common::{SharedSink, exclusive, json_row};
use latte::{Cleaning, Data, Format, Id, Unit};
use std::time::{Duration, Instant};

fn me() -> String {
    std::thread::current().name().unwrap().to_owned()
}

fn seen(report: &serde_json::Value, component: &str) -> u64 {
    json_row(report, &me(), component).map_or(0, |s| s["seen"].as_u64().unwrap())
}

#[test]
fn each_periodic_report_shows_only_new_samples() {
    let _one = exclusive();
    static A: Id = Id::new("periodic_a");
    static B: Id = Id::new("periodic_b");
    let sink = SharedSink::default();
    let guard = latte::builder()
        .format(Format::Json)
        .cleaning(Cleaning::OFF)
        .unit(Unit::Cycles)
        .data(Data::Raw)
        .sink(sink.clone())
        .start()
        .unwrap();

    (0..100).for_each(|v| latte::record(&A, v));
    guard.report_interval().unwrap();
    (100..130).for_each(|v| latte::record(&A, v));
    (0..5).for_each(|v| latte::record(&B, v));
    guard.report_interval().unwrap();
    guard.report_interval().unwrap();

    let reports = sink.json_reports();
    assert_eq!(reports.len(), 3);
    assert_eq!(
        (
            seen(&reports[0], "periodic_a"),
            seen(&reports[0], "periodic_b")
        ),
        (100, 0)
    );
    assert_eq!(
        (
            seen(&reports[1], "periodic_a"),
            seen(&reports[1], "periodic_b")
        ),
        (30, 5)
    );
    // The second report's statistics are over the 30 new values only (100..130).
    let a = json_row(&reports[1], &me(), "periodic_a").unwrap();
    assert_eq!(
        (a["min"].as_f64(), a["max"].as_f64()),
        (Some(100.0), Some(129.0))
    );
    assert_eq!(
        (
            seen(&reports[2], "periodic_a"),
            seen(&reports[2], "periodic_b")
        ),
        (0, 0)
    );
    assert_eq!(
        reports[1]["label"]
            .as_str()
            .map(|l| l.starts_with("periodic #2")),
        Some(true)
    );
    guard.stop().unwrap();
}

#[test]
fn the_timer_writes_periodic_reports_and_none_repeats_a_sample() {
    let _one = exclusive();
    static TICK: Id = Id::new("periodic_timer");
    let sink = SharedSink::default();
    let guard = latte::builder()
        .format(Format::Json)
        .periodic(Duration::from_millis(20))
        .final_report(false)
        .sink(sink.clone())
        .start()
        .unwrap();
    let total_seen = |sink: &SharedSink| -> u64 {
        sink.json_reports()
            .iter()
            .filter(|r| {
                r["label"]
                    .as_str()
                    .is_some_and(|l| l.starts_with("periodic"))
            })
            .map(|r| seen(r, "periodic_timer"))
            .sum()
    };
    // Wait (bounded) until the timer has reported what was recorded.
    let wait_for = |n: u64| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while total_seen(&sink) < n {
            assert!(Instant::now() < deadline, "no periodic report within 30 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    (0..10).for_each(|v| latte::record(&TICK, v));
    wait_for(10);
    (0..7).for_each(|v| latte::record(&TICK, v));
    wait_for(17);
    guard.stop().unwrap();
    // Every sample was reported exactly once across all periodic reports.
    assert_eq!(total_seen(&sink), 17);
    assert!(sink.json_reports().len() >= 2);
}

#[test]
fn periodic_reports_go_to_their_own_sink_with_only_active_components() {
    let _one = exclusive();
    static A: Id = Id::new("periodic_sink_a");
    static B: Id = Id::new("periodic_sink_b");
    let (intervals, main) = (SharedSink::default(), SharedSink::default());
    let guard = latte::builder()
        .format(Format::Json)
        .periodic_sink(intervals.clone())
        .sink(main.clone())
        .start()
        .unwrap();
    (0..5).for_each(|v| latte::record(&A, v));
    guard.report_interval().unwrap(); // A only
    (0..3).for_each(|v| latte::record(&B, v));
    guard.report_interval().unwrap(); // B only: A recorded nothing in it
    guard.stop().unwrap(); // no periodic interval set: the final report only

    let periodic = intervals.json_reports();
    assert_eq!(periodic.len(), 2, "{}", intervals.text());
    assert_eq!(
        (seen(&periodic[0], A.name()), seen(&periodic[0], B.name())),
        (5, 0)
    );
    assert!(
        json_row(&periodic[1], &me(), A.name()).is_none(),
        "an idle component"
    );
    assert_eq!(seen(&periodic[1], B.name()), 3);
    let finals = main.json_reports();
    assert_eq!(finals.len(), 1, "{}", main.text());
    assert_eq!(finals[0]["label"], "final");
    assert_eq!(
        (seen(&finals[0], A.name()), seen(&finals[0], B.name())),
        (5, 3)
    );
}

#[test]
fn periodic_tables_after_the_first_are_compact() {
    let _one = exclusive();
    static C: Id = Id::new("periodic_compact");
    let (intervals, main) = (SharedSink::default(), SharedSink::default());
    let guard = latte::builder()
        .periodic_sink(intervals.clone())
        .sink(main.clone())
        .start()
        .unwrap();
    for _ in 0..3 {
        (0..4).for_each(|v| latte::record(&C, v));
        guard.report_interval().unwrap();
    }
    guard.stop().unwrap();
    let text = intervals.text();
    let reports: Vec<&str> = text.split("LATTE TELEMETRY").skip(1).collect();
    assert_eq!(reports.len(), 3, "{text}");
    assert!(reports[0].contains("ENVIRONMENT") && reports[0].contains("OVERHEAD"));
    for compact in &reports[1..] {
        assert!(compact.contains("periodic_compact"), "{compact}");
        assert!(
            !compact.contains("ENVIRONMENT") && !compact.contains("OVERHEAD"),
            "{compact}"
        );
    }
    assert!(
        main.text().contains("ENVIRONMENT"),
        "the final report is complete"
    );
}

/// The block clock at `ms` for the run's series (`Report::series`), once every fold
/// already under way has finished: a whole-run report waits for the ledger, so the
/// drain's folds from now on read the new time (and fold what was recorded before).
fn block_clock(ms: u64) {
    latte::test_hooks::set_block_clock(Some(ms));
    latte::Report::collect(&latte::ReportOptions::default());
}

/// `id`'s values per block in a whole-run JSON report (empty for a block without).
fn block_values(report: &serde_json::Value, id: &Id) -> Vec<Vec<f64>> {
    let report: latte::Report = serde_json::from_value(report.clone()).unwrap();
    let series = report
        .series
        .as_ref()
        .expect("a whole-run report has a series");
    let c = series.component(id.name()).unwrap();
    (c.blocks.iter())
        .map(|d| {
            d.buckets()
                .flat_map(|b| std::iter::repeat_n(b.value, b.count as usize))
                .collect()
        })
        .collect()
}

#[test]
fn interval_reports_neither_carry_nor_disturb_the_series() {
    let _one = exclusive();
    static A: Id = Id::new("periodic_series_a");
    static B: Id = Id::new("periodic_series_b");
    latte::test_hooks::set_block_clock(Some(0));
    latte::collect::reset(); // blocks count from 0 ms
    let sink = SharedSink::default();
    let guard = latte::builder()
        .format(Format::Json)
        .cleaning(Cleaning::OFF)
        .unit(Unit::Cycles)
        .data(Data::Raw)
        .sink(sink.clone())
        .start()
        .unwrap();
    (1..=10).for_each(|v| latte::record(&A, v));
    guard.report_interval().unwrap(); // block 0
    block_clock(120); // block 2
    (11..=15).for_each(|v| latte::record(&A, v));
    (1..=3).for_each(|v| latte::record(&B, v));
    guard.report_interval().unwrap();
    block_clock(260); // block 5
    latte::record(&A, 16);
    guard.report().unwrap();
    guard.stop().unwrap(); // the final report
    latte::test_hooks::set_block_clock(None);
    latte::collect::reset();

    let reports = sink.json_reports();
    assert_eq!(reports.len(), 4, "{}", sink.text());
    // The intervals: exactly their samples, and no series.
    for r in &reports[..2] {
        assert!(r.get("series").is_none(), "{r}");
    }
    assert_eq!(
        (seen(&reports[0], A.name()), seen(&reports[0], B.name())),
        (10, 0)
    );
    assert_eq!(
        (seen(&reports[1], A.name()), seen(&reports[1], B.name())),
        (5, 3)
    );
    // The whole run on request and the final report: every value in the block it was
    // folded in, whatever the intervals cut.
    for r in &reports[2..] {
        assert_eq!(r["series"]["block_ms"], 50);
        assert_eq!(r["series"]["blocks"], 6);
        let a = block_values(r, &A);
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let five: Vec<f64> = (11..=15).map(f64::from).collect();
        let empty = Vec::new();
        assert_eq!(
            a,
            [ten, empty.clone(), five, empty.clone(), empty, vec![16.0]]
        );
        let b = block_values(r, &B);
        assert_eq!(b[2], [1.0, 2.0, 3.0]);
        assert_eq!(seen(r, A.name()), 16);
    }
}
