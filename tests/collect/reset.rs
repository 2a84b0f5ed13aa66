//! `latte::collect::reset()`: a warm-up dropped from every
//! report to come: the whole run, the open interval, and their anomaly counts, while
//! the rings' windows keep their samples. A reset is process-wide: the tests
//! hold `common::exclusive()`.

use crate::common::{self, SharedSink};
use latte::{Cleaning, Data, Format, Id, Report, ReportOptions, Unit};

static WARM: Id = Id::new("reset/warm");
static LATE: Id = Id::new("reset/late");
static MISSED: Id = Id::new("reset/missed");

/// Raw ticks, no cleaning: values are exactly the recorded ones.
fn raw() -> ReportOptions {
    ReportOptions {
        cleaning: Cleaning::OFF,
        unit: latte::Unit::Cycles,
        data: latte::Data::Raw,
        ..ReportOptions::default()
    }
}

/// `id`'s SEEN, MIN and MAX on thread `thread` in a whole-run report, if it has a row.
fn row(report: &Report, thread: &str, id: &Id) -> Option<(u64, f64, f64)> {
    let t = report.threads.iter().find(|t| t.name == thread)?;
    let r = t.rows.iter().find(|r| r.component == id.name())?;
    Some((r.stats.seen, r.stats.min, r.stats.max))
}

#[test]
fn reset_drops_the_warm_up_from_reports_but_not_from_the_rings() {
    let _one = common::exclusive();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::Builder::new()
        .name("reset-worker".into())
        .spawn(move || {
            (0..100).for_each(|v| latte::record(&WARM, 1_000 + v));
            (0..3).for_each(|_| latte::stop(&MISSED, latte::Mode::Fast)); // empty stops
            done_tx.send(()).unwrap();
            rx.recv().unwrap(); // the reset happens here
            (0..10).for_each(|v| latte::record(&WARM, v));
            (0..5).for_each(|v| latte::record(&LATE, v));
            latte::stop(&MISSED, latte::Mode::Fast);
        })
        .unwrap();
    done_rx.recv().unwrap();
    let before = Report::collect(&raw());
    assert_eq!(
        row(&before, "reset-worker", &WARM),
        Some((100, 1_000.0, 1_099.0))
    );

    latte::collect::reset();
    let empty = Report::collect(&raw());
    assert_eq!(
        row(&empty, "reset-worker", &WARM),
        None,
        "nothing since the reset"
    );
    assert!(empty.threads.iter().all(|t| t.name != "reset-worker"));

    tx.send(()).unwrap();
    worker.join().unwrap();
    let after = Report::collect(&raw());
    assert_eq!(row(&after, "reset-worker", &WARM), Some((10, 0.0, 9.0)));
    assert_eq!(row(&after, "reset-worker", &LATE), Some((5, 0.0, 4.0)));
    let t = after
        .threads
        .iter()
        .find(|t| t.name == "reset-worker")
        .unwrap();
    assert_eq!(t.anomalies.empty_stops, 1, "only the one after the reset");
    let all = after
        .all_threads
        .iter()
        .find(|r| r.component == WARM.name())
        .unwrap();
    assert_eq!(all.stats.seen, 10);

    // The ring window still holds all 110 samples.
    assert_eq!(latte::snapshot(WARM.name()).len(), 110);
}

#[test]
fn reset_restarts_the_open_interval() {
    let _one = common::exclusive();
    static TICK: Id = Id::new("reset/interval");
    let sink = SharedSink::default();
    let guard = latte::builder()
        .format(Format::Json)
        .unit(Unit::Cycles)
        .data(Data::Raw)
        .cleaning(Cleaning::OFF)
        .final_report(false)
        .sink(sink.clone())
        .start()
        .unwrap();
    let on_thread = |name: &str, values: std::ops::Range<u64>| {
        common::on_named_thread(name, move || values.for_each(|v| latte::record(&TICK, v)));
    };
    on_thread("reset-i0", 50..53); // dropped: no interval has been taken yet
    latte::collect::reset();
    on_thread("reset-i1", 0..4);
    guard.report_interval().unwrap(); // interval 1: the 4 samples since the reset
    on_thread("reset-i2", 100..120); // in interval 2, then dropped
    latte::collect::reset();
    on_thread("reset-i3", 200..207);
    guard.report_interval().unwrap(); // interval 2: only what followed the reset
    guard.stop().unwrap();

    let reports = sink.json_reports();
    assert_eq!(reports.len(), 2);
    let seen = |report: &serde_json::Value| -> u64 {
        report["all_threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["component"] == TICK.name())
            .map(|r| r["stats"]["seen"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(seen(&reports[0]), 4);
    assert_eq!(seen(&reports[1]), 7);
    let late = common::json_row(&reports[1], "reset-i3", TICK.name()).unwrap();
    assert_eq!(
        (late["min"].as_f64(), late["max"].as_f64()),
        (Some(200.0), Some(206.0))
    );
    for dropped in ["reset-i0", "reset-i2"] {
        assert!(
            reports
                .iter()
                .all(|r| common::json_row(r, dropped, TICK.name()).is_none())
        );
    }
}
