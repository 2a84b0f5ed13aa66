//! Own binary: the footprint it checks counts every thread the process ever ran.
//!
//! 10,000 short-lived threads that each record: latte's memory stays under its
//! documented bound and every sample is accounted for.

mod common;
use latte::Id;

const THREADS: usize = 10_000;
const WAVE: usize = 50;
const PER_THREAD: u64 = 20;
const MAX_EXITED: usize = 256;

static CHURN: Id = Id::new("churn");

#[test]
fn ten_thousand_short_lived_threads() {
    let guard = latte::builder()
        .max_exited_threads(MAX_EXITED)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    let mut peak_reserved = 0;
    common::churn(THREADS, WAVE, "churn-", &CHURN, PER_THREAD, |_| {
        peak_reserved = peak_reserved.max(latte::collect::footprint().ring_bytes_reserved);
    });
    // A report runs the drain's housekeeping: compact exited threads, fold the oldest.
    guard.report().unwrap();

    capture_accounts_for_every_sample();
    whole_run_report_counts_every_sample();

    let f = latte::collect::footprint();
    let bound = common::assert_churn_footprint(&f, THREADS as u64, MAX_EXITED as u64, PER_THREAD);
    println!(
        "after {THREADS} threads: {f:?}; bound {bound} B; at most {peak_reserved} B of ring address space reserved at once"
    );
    guard.stop().unwrap();
}

/// Every sample is in the capture: kept exited threads plus the folded entry.
fn capture_accounts_for_every_sample() {
    let capture = latte::capture();
    let seen: u64 = capture
        .threads
        .iter()
        .filter(|t| t.name.starts_with("churn-") || t.name == "<exited threads>")
        .filter_map(|t| t.component("churn"))
        .map(|c| c.seen)
        .sum();
    assert_eq!(
        seen,
        THREADS as u64 * PER_THREAD,
        "every sample accounted for"
    );
    let folded = capture
        .thread("<exited threads>")
        .expect("the oldest threads are merged");
    let c = folded.component("churn").unwrap();
    assert_eq!(c.samples.len(), c.capacity.min(c.seen as usize));
    assert!(folded.exited);
}

/// The whole-run report counts every sample too, folded threads included, and its
/// histograms hold every value: 0..PER_THREAD from each thread.
fn whole_run_report_counts_every_sample() {
    let options = latte::ReportOptions {
        cleaning: latte::Cleaning::OFF,
        unit: latte::Unit::Cycles,
        data: latte::Data::Raw,
        ..latte::ReportOptions::default()
    };
    let report = latte::Report::collect(&options);
    let rows: Vec<_> = report
        .threads
        .iter()
        .filter(|t| t.name.starts_with("churn-") || t.name == "<exited threads>")
        .filter_map(|t| t.rows.iter().find(|r| r.component == "churn"))
        .collect();
    let total: u64 = rows.iter().map(|r| r.stats.seen).sum();
    let folded: u64 = rows.iter().map(|r| r.stats.samples + r.stats.lost).sum();
    assert_eq!((total, folded), (THREADS as u64 * PER_THREAD, total));
    let all = report
        .all_threads
        .iter()
        .find(|r| r.component == "churn")
        .unwrap();
    assert_eq!(all.stats.samples, THREADS as u64 * PER_THREAD);
    assert_eq!(
        (all.stats.min, all.stats.max),
        (0.0, (PER_THREAD - 1) as f64)
    );
    assert!(
        report
            .threads
            .iter()
            .any(|t| t.name == "<exited threads>" && t.rows.iter().any(|r| r.stats.seen > 0))
    );
}
