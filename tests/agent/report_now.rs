//! Report-now while 8 threads record: every report consistent (`seen = folded + lost`),
//! totals exact at the end.

use crate::common::{self, SharedSink, json_row};
use latte::{Cleaning, Data, Format, Id, Unit};
use std::sync::atomic::{AtomicBool, Ordering};

const THREADS: u64 = 8;
/// Each writer records at least this many, and keeps going until enough reports ran.
const MIN_RECORDS: u64 = 50_000;
const REPORTS: usize = 8;
const CAPACITY: usize = 1 << 12;

static OWN: [Id; THREADS as usize] = [
    Id::new("now_0"),
    Id::new("now_1"),
    Id::new("now_2"),
    Id::new("now_3"),
    Id::new("now_4"),
    Id::new("now_5"),
    Id::new("now_6"),
    Id::new("now_7"),
];

/// Checks every writer row of a JSON report; with `totals`, the exact final counts.
fn check(report: &serde_json::Value, totals: Option<&[u64]>) -> usize {
    let mut rows = 0;
    for k in 0..THREADS {
        let Some(s) = json_row(report, &format!("now-{k}"), OWN[k as usize].name()) else {
            assert!(totals.is_none(), "thread now-{k} missing");
            continue;
        };
        let (seen, folded, lost, samples) = (
            s["seen"].as_u64().unwrap(),
            s["samples"].as_u64().unwrap(),
            s["lost"].as_u64().unwrap(),
            s["cleaned"]["samples"].as_u64().unwrap(),
        );
        // Whole-run counts: every sample recorded so far is folded or counted lost.
        assert!(folded + lost == seen && samples == folded, "{s}");
        if folded == 0 {
            continue;
        }
        // Values are thread << 40 | sequence: min and max must be this thread's, in range.
        for key in ["min", "max"] {
            let v = s[key].as_f64().unwrap() as u64;
            assert_eq!(v >> 40, k, "a sample of another thread in now-{k}: {s}");
            assert!(v & ((1 << 40) - 1) < seen, "sample beyond seen");
        }
        if let Some(totals) = totals {
            let written = totals[k as usize];
            assert_eq!(seen, written, "{s}");
            // The last sample written is the maximum; the first one folded is
            // sequence 0 unless it was lost.
            assert_eq!(s["max"].as_f64().unwrap() as u64, k << 40 | (written - 1));
            if lost == 0 {
                assert_eq!(s["min"].as_f64().unwrap() as u64, k << 40);
            }
        }
        rows += 1;
    }
    rows
}

#[test]
fn report_now_while_eight_threads_record() {
    let _one = common::exclusive();
    let sink = SharedSink::default();
    let guard = latte::builder()
        .ring_capacity(CAPACITY)
        .format(Format::Json)
        .cleaning(Cleaning::OFF)
        .unit(Unit::Cycles)
        .data(Data::Raw)
        .sink(sink.clone())
        .final_report(false)
        .start()
        .unwrap();
    // The start-up calibration runs at the lowest priority: against eight spinning
    // writers on two cores it would take tens of seconds, and the first report waits
    // for it. Have it done first; this test is about reports taken during recording.
    let _ = latte::analyze::calibration();
    let stop = AtomicBool::new(false);
    let mut reports = 0;
    let totals: Vec<u64> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..THREADS)
            .map(|k| {
                let stop = &stop;
                std::thread::Builder::new()
                    .name(format!("now-{k}"))
                    .spawn_scoped(s, move || {
                        let mut seq = 0;
                        while seq < MIN_RECORDS || !stop.load(Ordering::Relaxed) {
                            latte::record(&OWN[k as usize], k << 40 | seq);
                            seq += 1;
                        }
                        seq
                    })
                    .unwrap()
            })
            .collect();
        while reports < REPORTS {
            guard.report().unwrap();
            reports += 1;
        }
        stop.store(true, Ordering::Relaxed);
        writers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    guard.report().unwrap();
    let all = sink.json_reports();
    assert_eq!(all.len(), reports + 1);
    let during: usize = all[..reports].iter().map(|r| check(r, None)).sum();
    assert!(during > 0, "no report saw the writers at work");
    assert_eq!(check(all.last().unwrap(), Some(&totals)), THREADS as usize);
    println!("{reports} reports while recording, {during} writer rows checked, totals {totals:?}");
    guard.stop().unwrap();
}
