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
        peak_reserved = peak_reserved.max(latte::footprint().ring_bytes_reserved);
    });
    // A report runs the drain's housekeeping: compact exited threads, fold the oldest.
    guard.report().unwrap();

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
        .expect("the oldest threads are folded");
    let c = folded.component("churn").unwrap();
    assert_eq!(c.samples.len(), c.capacity.min(c.seen as usize));
    assert!(folded.exited);

    let f = latte::footprint();
    let bound = common::assert_churn_footprint(&f, THREADS as u64, MAX_EXITED as u64, PER_THREAD);
    println!(
        "after {THREADS} threads: {f:?}; bound {bound} B; at most {peak_reserved} B of ring address space reserved at once"
    );
    guard.stop().unwrap();
}
