//! A ring far too small for a tight loop: samples are lost, and every one is counted.
//! The ring capacity is a process-wide setting: the test holds `common::exclusive_with`.

use crate::common;
use latte::{Cleaning, Id, Report, ReportOptions};

const CAPACITY: usize = 64;
const THREADS: usize = 3;
const PER_THREAD: u64 = 2_000_000;

static TIGHT: Id = Id::new("lost_tight");

#[test]
fn seen_is_folded_plus_lost_per_thread_and_id() {
    let _rings = common::exclusive_with(|b| b.ring_capacity(CAPACITY));
    std::thread::scope(|s| {
        for k in 0..THREADS {
            std::thread::Builder::new()
                .name(format!("lost-{k}"))
                .spawn_scoped(s, || {
                    for v in 0..PER_THREAD {
                        latte::record(&TIGHT, v % 100);
                        if v.is_multiple_of(4) {
                            latte::latte_start!("lost_scope");
                            latte::latte_stop!("lost_scope");
                        }
                    }
                })
                .unwrap();
        }
    });
    let options = ReportOptions {
        cleaning: Cleaning::OFF,
        ..ReportOptions::default()
    };
    let report = Report::collect(&options);
    let mut lost = 0;
    for k in 0..THREADS {
        let t = report
            .threads
            .iter()
            .find(|t| t.name == format!("lost-{k}"))
            .expect("every writer is in the report");
        for (id, recorded) in [("lost_tight", PER_THREAD), ("lost_scope", PER_THREAD / 4)] {
            let s = &t.rows.iter().find(|r| r.component == id).unwrap().stats;
            assert_eq!(s.seen, recorded, "{id} on lost-{k}");
            assert_eq!(s.samples + s.lost, s.seen, "{id} on lost-{k}: {s:?}");
            assert_eq!(s.cleaned.samples, s.samples, "cleaning is off");
            lost += s.lost;
        }
    }
    assert!(lost > 0, "a 64-slot ring in a tight loop must lap");
    let all = |id: &str| {
        let row = report
            .all_threads
            .iter()
            .find(|r| r.component == id)
            .unwrap();
        row.stats
    };
    let tight = all("lost_tight");
    assert_eq!(tight.seen, PER_THREAD * THREADS as u64);
    assert_eq!(tight.samples + tight.lost, tight.seen);
    println!(
        "lost {lost} of {} samples",
        PER_THREAD * THREADS as u64 * 5 / 4
    );
}
