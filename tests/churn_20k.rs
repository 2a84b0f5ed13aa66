//! Own binary: the footprint it checks counts every thread the process ever ran.
//!
//! Churn: 20,000 short-lived threads that each record a few samples, with the agent
//! running. Every sample is accounted for (kept exited threads plus the folded
//! `<exited threads>` entry), and the footprint stays under the documented bound.
//!
//! Also prints the most ring address space reserved between waves of threads.

mod common;
use latte::Id;

const THREADS: usize = 20_000;
/// Threads alive at once.
const WAVE: usize = 50;
const PER_THREAD: u64 = 8;
const MAX_EXITED: usize = 256;
const PREFIX: &str = "churn20k-";
const FOLDED: &str = "<exited threads>";

static CHURN: Id = Id::new("churn20k");

#[test]
fn twenty_thousand_short_lived_threads() {
    let started = std::time::Instant::now();
    let guard = latte::builder()
        .max_exited_threads(MAX_EXITED)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    // (bytes reserved, rings, wave) at the peak; the largest `bytes` seen.
    let mut peak = (0, 0, 0);
    let mut peak_bytes = 0;
    common::churn(THREADS, WAVE, PREFIX, &CHURN, PER_THREAD, |wave| {
        let f = latte::collect::footprint();
        if f.ring_bytes_reserved > peak.0 {
            peak = (f.ring_bytes_reserved, f.rings, wave);
        }
        peak_bytes = peak_bytes.max(f.bytes);
    });
    let churned = started.elapsed();
    // A report runs the drain's housekeeping: compact exited threads, fold the oldest.
    guard.report().unwrap();

    let (kept, merged_seen) = capture_accounts_for_every_sample();

    let f = latte::collect::footprint();
    assert_eq!(kept, f.exited_threads, "{f:?}");
    assert_eq!(merged_seen, f.merged_threads * PER_THREAD, "{f:?}");
    let bound = common::assert_churn_footprint(&f, THREADS as u64, MAX_EXITED as u64, PER_THREAD);
    // Between waves too, compaction keeps up with the churn: exited threads give their
    // rings back, so at most the last few waves' rings are ever live (each wave's
    // threads have exited when this is measured; the one just joined, and one the drain
    // may be compacting, can still hold theirs). A registry whose writers retried
    // against each other once let 6,451 rings (3.4 GB of address space) pile up here.
    assert!(
        peak.1 <= 3 * WAVE as u64,
        "{} rings ({} B reserved) live after wave {}: compaction fell behind",
        peak.1,
        peak.0,
        peak.2
    );
    println!(
        "{THREADS} threads ({WAVE} at a time) in {:.2} s; after the report: {f:?}; \
         bound {bound} B; between waves: at most {} B of ring address space reserved \
         ({} rings, after wave {}), at most {peak_bytes} B in use",
        churned.as_secs_f64(),
        peak.0,
        peak.1,
        peak.2
    );
    guard.stop().unwrap();
}

/// Every sample is in the capture: each kept exited thread holds its own, the merged
/// entry the rest. Returns the number of kept threads and the merged entry's count.
fn capture_accounts_for_every_sample() -> (u64, u64) {
    let capture = latte::capture();
    let kept: Vec<_> = capture
        .threads
        .iter()
        .filter(|t| t.name.starts_with(PREFIX))
        .collect();
    for t in &kept {
        assert!(t.exited, "{} is listed as live", t.name);
        let c = t.component(CHURN.name()).expect("the churn id");
        assert_eq!(c.seen, PER_THREAD, "{}", t.name);
        let values: Vec<u64> = c.samples.iter().map(|s| s.ticks()).collect();
        assert_eq!(values, (0..PER_THREAD).collect::<Vec<_>>(), "{}", t.name);
    }
    let folded = capture
        .thread(FOLDED)
        .expect("the oldest threads are merged");
    assert!(folded.exited);
    let fc = folded
        .component(CHURN.name())
        .expect("the churn id, merged");
    assert_eq!(fc.samples.len(), fc.capacity.min(fc.seen as usize));
    assert!(fc.samples.iter().all(|s| s.ticks() < PER_THREAD));

    let kept_seen: u64 = kept
        .iter()
        .filter_map(|t| t.component(CHURN.name()))
        .map(|c| c.seen)
        .sum();
    assert_eq!(
        kept_seen + fc.seen,
        THREADS as u64 * PER_THREAD,
        "every sample accounted for: {} kept threads with {kept_seen}, {fc:?} merged",
        kept.len()
    );
    (kept.len() as u64, fc.seen)
}
