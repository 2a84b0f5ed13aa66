//! Ids known only at run time (`Id::intern`): the same text gives the same id, the
//! same component as a static `Id` of that text, and run-time ids appear in reports
//! and captures like static ones, through every recording function.

use crate::common;
use latte::{Id, Mode, Report, ReportOptions, Timer};
use std::time::Duration;

/// The all-threads row of `name` in a whole-run report.
fn row(report: &Report, name: &str) -> Option<latte::report::Row> {
    report
        .all_threads
        .iter()
        .find(|r| r.component == name)
        .cloned()
}

#[test]
fn the_same_text_twice_gives_the_same_id() {
    let _shared = common::shared();
    let text = format!("intern_same_{}", std::process::id());
    let a = Id::intern(&text).unwrap();
    let b = Id::intern(&text.clone()).unwrap();
    assert!(std::ptr::eq(a, b), "one &'static Id per text");
    assert_eq!(a.name(), text);
    let other = Id::intern(&format!("{text}_other")).unwrap();
    assert!(!std::ptr::eq(a, other));
    assert_ne!(a.name(), other.name());
}

#[test]
fn an_interned_id_is_the_component_of_a_static_id_of_its_text() {
    let _shared = common::shared();
    static STATIC: Id = Id::new("intern_static_and_runtime");
    // The static id resolves first here, then the run-time one of the same text.
    latte::start(&STATIC, Mode::Fast);
    latte::stop(&STATIC, Mode::Fast);
    let runtime = Id::intern(&String::from("intern_static_and_runtime")).unwrap();
    latte::start(runtime, Mode::Fast);
    latte::stop(runtime, Mode::Fast);
    latte::record(runtime, 42);
    let report = Report::collect(&ReportOptions::default());
    let rows: Vec<_> = report
        .all_threads
        .iter()
        .filter(|r| r.component == "intern_static_and_runtime")
        .collect();
    assert_eq!(rows.len(), 1, "one component, not two");
    assert_eq!(rows[0].stats.seen, 3);
    assert_eq!(latte::snapshot("intern_static_and_runtime").len(), 3);
}

#[test]
fn run_time_ids_appear_in_the_report_like_static_ones() {
    let _shared = common::shared();
    let venues = ["XNAS", "XLON", "XTKS", "XPAR"];
    let ids: Vec<&'static Id> = venues
        .iter()
        .map(|v| Id::intern(&format!("intern_send_{v}")).unwrap())
        .collect();
    // Prepared like static ids, then recorded 10, 20, 30, 40 times.
    latte::collect::prepare(&ids);
    for (k, id) in ids.iter().enumerate() {
        for _ in 0..10 * (k + 1) {
            latte::start(id, Mode::Mid);
            latte::stop(id, Mode::Mid);
        }
    }
    let report = Report::collect(&ReportOptions::default());
    for (k, v) in venues.iter().enumerate() {
        let name = format!("intern_send_{v}");
        let row = row(&report, &name).unwrap_or_else(|| panic!("no row for {name}"));
        assert_eq!(row.stats.seen, 10 * (k as u64 + 1), "{name}");
        let thread = report
            .threads
            .iter()
            .find(|t| t.rows.iter().any(|r| r.component == name));
        assert!(thread.is_some(), "{name} has a per-thread row too");
    }
}

#[test]
fn every_recording_function_takes_an_interned_id() {
    let _shared = common::shared();
    let id = |what: &str| Id::intern(&format!("intern_fn_{what}")).unwrap();
    for _ in 0..3 {
        latte::pulse(id("pulse"));
    }
    latte::record(id("record"), 1_000);
    drop(latte::scope(id("scope"), Mode::Fast, Mode::Hard));
    let timer = Timer::start(id("timer"), Mode::Fast, Mode::Fast);
    std::thread::spawn(move || drop(timer)).join().unwrap();
    let tick = id("period");
    tick.expect_period(Duration::from_micros(10));
    latte::record(tick, 10_000_000);

    let report = Report::collect(&ReportOptions::default());
    let seen = |what: &str| row(&report, &format!("intern_fn_{what}")).map(|r| r.stats.seen);
    assert_eq!(seen("pulse"), Some(2), "the first pulse is the baseline");
    assert_eq!(seen("record"), Some(1));
    assert_eq!(seen("scope"), Some(1));
    assert_eq!(seen("timer"), Some(1));
    let period = row(&report, "intern_fn_period").unwrap();
    assert!(period.corrected.unwrap().count > period.stats.samples);
}
