//! CSV export of real samples, parsed back.

use crate::common;
use latte::collect::SampleKind;
use latte::{Id, latte_pulse, latte_start, latte_stop};
use serde::Deserialize;

const THREAD: &str = "csv-export-writer";
static RECORDED: Id = Id::new("csv_export/recorded");

#[derive(Debug, Deserialize)]
struct CsvRow {
    thread: String,
    thread_serial: u64,
    component: String,
    ticks: u64,
    ns: f64,
    kind: String,
    migrated: bool,
    index: u64,
    seen: u64,
}

fn parse(bytes: &[u8]) -> Vec<CsvRow> {
    let mut reader = csv::Reader::from_reader(bytes);
    assert_eq!(
        reader.headers().unwrap(),
        vec![
            "thread",
            "thread_serial",
            "component",
            "ticks",
            "ns",
            "kind",
            "migrated",
            "index",
            "seen"
        ]
    );
    reader.deserialize().map(Result::unwrap).collect()
}

/// On a thread of its own: recorded samples, a Mid/Hard scope, two pulses.
fn record_each_kind_on_a_named_thread() {
    std::thread::Builder::new()
        .name(THREAD.to_owned())
        .spawn(|| {
            latte::record(&RECORDED, 17);
            latte::record(&RECORDED, 1_000_003);
            latte_start!("csv_export/scope", Mid);
            std::hint::black_box((0..100u64).sum::<u64>());
            latte_stop!("csv_export/scope", Hard);
            latte_pulse!("csv_export/pulse");
            latte_pulse!("csv_export/pulse");
            latte::record(&RECORDED, 0);
        })
        .unwrap()
        .join()
        .unwrap();
}

/// One row per retained sample, threads in capture order, samples oldest first; each
/// row's nanoseconds are its ticks at the calibrated frequency.
fn one_row_per_retained_sample(capture: &latte::Capture, rows: &[CsvRow], ticks_per_ns: f64) {
    let expected: Vec<(&str, u64, &str, u64)> = capture
        .threads
        .iter()
        .flat_map(|t| {
            t.components.iter().flat_map(move |c| {
                c.samples
                    .iter()
                    .map(move |s| (t.name.as_str(), t.serial, c.name, s.ticks()))
            })
        })
        .collect();
    let got: Vec<(&str, u64, &str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r.thread.as_str(),
                r.thread_serial,
                r.component.as_str(),
                r.ticks,
            )
        })
        .collect();
    assert_eq!(got, expected);
    for row in rows {
        assert_eq!(row.ns, row.ticks as f64 / ticks_per_ns, "{row:?}");
    }
}

#[test]
fn rows_match_the_capture() {
    let _shared = common::shared();
    record_each_kind_on_a_named_thread();

    let capture = latte::capture();
    let calibration = latte::analyze::calibration();
    let mut buf = Vec::new();
    capture
        .write_csv(calibration.ticks_per_ns, &mut buf)
        .unwrap();
    let rows = parse(&buf);

    one_row_per_retained_sample(&capture, &rows, calibration.ticks_per_ns);

    let me = capture
        .thread(THREAD)
        .expect("the writer thread was captured");
    let mine: Vec<&CsvRow> = rows.iter().filter(|r| r.thread == THREAD).collect();
    assert!(mine.iter().all(|r| r.thread_serial == me.serial));
    let of =
        |id: &str| -> Vec<&CsvRow> { mine.iter().copied().filter(|r| r.component == id).collect() };

    let recorded = of("csv_export/recorded");
    let ticks: Vec<u64> = recorded.iter().map(|r| r.ticks).collect();
    assert_eq!(ticks, [17, 1_000_003, 0]);
    // Indices in the recording sequence, and what the (thread, id) recorded.
    let indices: Vec<(u64, u64)> = recorded.iter().map(|r| (r.index, r.seen)).collect();
    assert_eq!(indices, [(0, 3), (1, 3), (2, 3)]);
    assert!(recorded.iter().all(|r| r.kind == "recorded" && !r.migrated));
    assert_eq!(recorded[1].ns, 1_000_003.0 / calibration.ticks_per_ns);

    let scope = of("csv_export/scope");
    assert_eq!(scope.len(), 1);
    assert_eq!(scope[0].kind, "MH");
    let sample = me.component("csv_export/scope").unwrap().samples[0];
    assert_eq!(
        sample.kind(),
        SampleKind::Scope {
            start: latte::Mode::Mid,
            stop: latte::Mode::Hard
        }
    );
    assert_eq!(
        (scope[0].ticks, scope[0].migrated),
        (sample.ticks(), sample.migrated())
    );

    let pulse = of("csv_export/pulse");
    assert_eq!(pulse.len(), 1, "the first pulse is only the baseline");
    assert_eq!(pulse[0].kind, "pulse");
    assert!(!pulse[0].migrated);

    // Components in order of first use.
    let order: Vec<&str> = me.components.iter().map(|c| c.name).collect();
    assert_eq!(
        order,
        [
            "csv_export/recorded",
            "csv_export/scope",
            "csv_export/pulse"
        ]
    );
}

#[test]
fn empty_capture_still_has_a_header() {
    let _shared = common::shared();
    let mut buf = Vec::new();
    let ticks_per_ns = latte::analyze::calibration().ticks_per_ns;
    latte::Capture::default()
        .write_csv(ticks_per_ns, &mut buf)
        .unwrap();
    assert!(parse(&buf).is_empty());
    assert_eq!(
        buf,
        b"thread,thread_serial,component,ticks,ns,kind,migrated,index,seen\n"
    );
}

/// A writer that takes `room` bytes, then fails with `kind`.
struct Failing {
    room: usize,
    kind: std::io::ErrorKind,
}

impl std::io::Write for Failing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::new(self.kind, "disk full"));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_writer_is_a_latte_error_with_the_writers_error_as_source() {
    let _shared = common::shared();
    use std::error::Error as _;
    static FAILING: Id = Id::new("csv_export/failing");
    for _ in 0..1_000 {
        latte::record(&FAILING, 42);
    }
    let ticks_per_ns = latte::analyze::calibration().ticks_per_ns;
    // At once (the header), and after some rows.
    for room in [0, 1_000] {
        let out = Failing {
            room,
            kind: std::io::ErrorKind::StorageFull,
        };
        let err = latte::capture().write_csv(ticks_per_ns, out).unwrap_err();
        let disk_full = std::io::Error::new(std::io::ErrorKind::StorageFull, "x");
        assert_eq!(err, latte::Error::Csv(std::sync::Arc::new(disk_full)));
        assert!(err.to_string().contains("write_csv"), "{err}");
        let source = err.source().expect("the writer's error");
        assert_eq!(source.to_string(), "disk full");
    }
}
