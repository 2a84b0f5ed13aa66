//! `Report::focus`: filter by id pattern, sort by any column,
//! keep the top N, in every section; a bad pattern is an error naming it.

use crate::common;
use latte::report::{Column, Focus, Sort};
use latte::{Cleaning, Error, Id, Report, ReportOptions};

fn report() -> Report {
    static IDS: [Id; 4] = [
        Id::new("focus/parse"),
        Id::new("focus/route"),
        Id::new("focus/send"),
        Id::new("other/log"),
    ];
    // (samples, value): counts and values differ, in opposite orders.
    let plan = [(4u64, 400u64), (8, 300), (2, 200), (9, 100)];
    std::thread::Builder::new()
        .name("focus-thread".into())
        .spawn(move || {
            for (id, (n, v)) in IDS.iter().zip(plan) {
                (0..n).for_each(|_| latte::record(id, v));
            }
        })
        .unwrap()
        .join()
        .unwrap();
    Report::collect(&ReportOptions {
        cleaning: Cleaning::OFF,
        ..ReportOptions::default()
    })
}

fn names(rows: &[latte::report::Row]) -> Vec<&str> {
    rows.iter().map(|r| r.component.as_str()).collect()
}

/// The components of the report's series, in order: those of ALL THREADS.
fn series_components(report: &Report) -> Vec<&str> {
    let series = report
        .series
        .as_ref()
        .expect("a whole-run report has a series");
    series
        .components
        .iter()
        .map(|c| c.component.as_str())
        .collect()
}

fn thread_rows(report: &Report) -> Vec<&str> {
    let t = report
        .threads
        .iter()
        .find(|t| t.name == "focus-thread")
        .unwrap();
    names(&t.rows)
}

#[test]
fn filter_sort_and_top_apply_to_every_section() {
    let report = report();
    let sorted = |column, descending, top| {
        let focus = Focus {
            ids: Some("focus/*".into()),
            sort: Some(Sort { column, descending }),
            top,
            threads: None,
        };
        report.focus(&focus).unwrap()
    };
    let by_samples = sorted(Column::Samples, true, None);
    assert_eq!(
        thread_rows(&by_samples),
        ["focus/route", "focus/parse", "focus/send"]
    );
    assert_eq!(
        names(&by_samples.all_threads),
        ["focus/route", "focus/parse", "focus/send"]
    );
    let by_p99 = sorted(Column::P99, false, None);
    assert_eq!(
        thread_rows(&by_p99),
        ["focus/send", "focus/route", "focus/parse"]
    );
    let by_name = sorted(Column::Component, true, Some(2));
    assert_eq!(thread_rows(&by_name), ["focus/send", "focus/route"]);
    assert_eq!(names(&by_name.all_threads), ["focus/send", "focus/route"]);
    // The series follows ALL THREADS.
    for focused in [&by_samples, &by_p99, &by_name] {
        assert_eq!(series_components(focused), names(&focused.all_threads));
    }

    // No pattern: every component; top 1 by MAX.
    let top = report
        .focus(&Focus {
            sort: Some(Sort {
                column: Column::Max,
                descending: true,
            }),
            top: Some(1),
            ..Focus::default()
        })
        .unwrap();
    assert_eq!(thread_rows(&top), ["focus/parse"]);
    // Unfocused, the report is unchanged.
    assert_eq!(report.focus(&Focus::default()).unwrap(), report);
}

#[test]
fn a_bad_pattern_is_an_error_that_names_it() {
    let err = report()
        .focus(&Focus {
            ids: Some("focus/[".into()),
            ..Focus::default()
        })
        .unwrap_err();
    assert!(matches!(&err, Error::Pattern { pattern, .. } if pattern == "focus/["));
    let message = err.to_string();
    assert!(
        message.contains("\"focus/[\"") && message.contains("glob"),
        "{message}"
    );
}

#[test]
fn the_agent_writes_focused_reports_and_refuses_a_bad_pattern() {
    let _one = common::exclusive();
    let bad = Focus {
        ids: Some("[".into()),
        ..Focus::default()
    };
    let err = latte::builder().focus(bad).start().unwrap_err();
    assert!(matches!(err, Error::Pattern { .. }), "{err}");

    let sink = common::SharedSink::default();
    let focus = Focus {
        ids: Some("focus/p*".into()),
        threads: Some("focus-thread".into()),
        ..Focus::default()
    };
    let guard = latte::builder()
        .focus(focus)
        .format(latte::Format::Json)
        .sink(sink.clone())
        .start()
        .unwrap();
    let _ = report(); // records focus/parse, focus/route, ...
    guard.stop().unwrap();
    let reports = sink.json_reports();
    let json = &reports[0];
    let rows: Vec<&str> = json["all_threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["component"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["focus/parse"]);
}

#[test]
fn a_thread_pattern_keeps_those_threads_and_all_threads_covers_only_them() {
    static SHARED: Id = Id::new("threads/shared");
    for (name, n) in [("engine-1", 3u64), ("engine-2", 4), ("logger-1", 50)] {
        common::on_named_thread(name, move || (0..n).for_each(|v| latte::record(&SHARED, v)));
    }
    let focus = Focus {
        threads: Some("engine-*".into()),
        ..Focus::default()
    };
    let all_seen = |r: &Report| {
        r.all_threads
            .iter()
            .find(|row| row.component == SHARED.name())
            .map(|row| row.stats.seen)
    };
    // Where the report is made: ALL THREADS over the engines only.
    let made = Report::collect_focused(&ReportOptions::default(), &focus).unwrap();
    let mut names: Vec<&str> = made.threads.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert!(names.iter().all(|n| n.starts_with("engine-")), "{names:?}");
    assert!(names.contains(&"engine-1") && names.contains(&"engine-2"));
    assert_eq!(all_seen(&made), Some(7));
    // The series is over every thread: a report of some has none.
    assert_eq!(made.series, None);
    // On a finished report: the sections go, ALL THREADS stays as it was.
    let full = Report::collect(&ReportOptions::default());
    let after = full.focus(&focus).unwrap();
    assert!(after.threads.iter().all(|t| t.name.starts_with("engine-")));
    assert_eq!(all_seen(&after), all_seen(&full));
    assert_eq!(after.series, full.series);
    assert_eq!(all_seen(&full), Some(57));
    // A bad thread pattern is the same error as a bad id pattern.
    let bad = Focus {
        threads: Some("engine-[".into()),
        ..Focus::default()
    };
    let err = Report::collect_focused(&ReportOptions::default(), &bad).unwrap_err();
    assert!(matches!(&err, Error::Pattern { pattern, .. } if pattern == "engine-["));
}
