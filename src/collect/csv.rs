//! CSV export of raw samples: one row per retained sample, for analysis elsewhere.

use super::{Capture, SampleKind};
use crate::error::Error;
use serde::Serialize;
use std::sync::Arc;

/// The header row, also written when there are no samples.
const HEADER: [&str; 9] = [
    "thread",
    "thread_serial",
    "component",
    "ticks",
    "ns",
    "kind",
    "migrated",
    "index",
    "seen",
];

/// Scope kinds by `[start][stop]` (`Mode as usize`): start letter, then stop letter.
const SCOPE_KINDS: [[&str; 3]; 3] = [["FF", "FM", "FH"], ["MF", "MM", "MH"], ["HF", "HM", "HH"]];
const TIMER_KINDS: [[&str; 3]; 3] = [
    ["timer FF", "timer FM", "timer FH"],
    ["timer MF", "timer MM", "timer MH"],
    ["timer HF", "timer HM", "timer HH"],
];
const BUSY_KINDS: [[&str; 3]; 3] = [
    ["busy FF", "busy FM", "busy FH"],
    ["busy MF", "busy MM", "busy MH"],
    ["busy HF", "busy HM", "busy HH"],
];

#[derive(Serialize)]
struct CsvRow<'a> {
    thread: &'a str,
    thread_serial: u64,
    component: &'a str,
    ticks: u64,
    ns: f64,
    kind: &'static str,
    migrated: bool,
    index: u64,
    seen: u64,
}

impl Capture {
    /// Ring window, raw: writes every retained sample as one CSV row.
    ///
    /// The ring window only: the newest samples each ring still holds, not the whole
    /// run (reports cover that). Columns:
    /// `thread,thread_serial,component,ticks,ns,kind,migrated,index,seen`, where
    ///
    /// * `ticks` is the raw delta, with no overhead subtracted, and
    ///   `ns = ticks / ticks_per_ns` (use the calibrated frequency,
    ///   `latte::analyze::calibration().ticks_per_ns`);
    /// * `kind` is the scope's timer modes, start letter then stop letter (`FF`, `FM`, ...,
    ///   `HH`; see [`Mode::letter`](crate::Mode::letter)) of a scope on the stack, the
    ///   same after `timer ` for a scope measured off the stack (a
    ///   [`Timer`](crate::Timer)) and after `busy ` for a `tracing` span's busy time,
    ///   or `pulse`, or `recorded` for a value given to [`record`](fn@crate::record);
    /// * `migrated` (`true`/`false`) says whether the scope started and stopped on different
    ///   CPUs (known in Mid and Hard modes only);
    /// * `index` is the sample's place in its (thread, component)'s recording sequence
    ///   (0 for the first ever), and `seen` how many that (thread, component) recorded:
    ///   the samples not in the file (`seen` minus its rows, indices below the first
    ///   row's) were overwritten before the capture.
    ///
    /// Threads come in capture order (order of first record), components in order of first
    /// use, samples oldest first. The header row is written even when there are no samples.
    ///
    /// A writer that fails is [`Error::Csv`], with the writer's error as its source.
    ///
    /// ```
    /// use latte::Id;
    /// static PARSE: Id = Id::new("doc_csv_parse");
    /// latte::record(&PARSE, 120);
    ///
    /// let mut out = Vec::new();
    /// let ticks_per_ns = latte::analyze::calibration().ticks_per_ns;
    /// latte::capture().write_csv(ticks_per_ns, &mut out)?;
    /// let text = String::from_utf8(out).unwrap();
    /// assert!(text.starts_with("thread,thread_serial,component,ticks,ns,kind,migrated,index,seen\n"));
    /// let row = text.lines().find(|l| l.contains(",doc_csv_parse,")).unwrap();
    /// # // The recording thread's name: `main` in a program (and here, unless rustdoc
    /// # // runs this example on a thread of its own, as it does under a cross runner).
    /// # let main = std::thread::current().name().unwrap_or("main").to_owned();
    /// assert!(row.starts_with(&format!("{main},")) && row.contains(",120,"));
    /// assert!(row.ends_with(",recorded,false,0,1"));
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn write_csv(&self, ticks_per_ns: f64, out: impl std::io::Write) -> Result<(), Error> {
        // Every row has the header's nine fields and serialises as plain values, so
        // what can fail is the writer: its I/O error is passed on unchanged.
        self.write_rows(ticks_per_ns, out).map_err(|e| {
            let io = match e.into_kind() {
                csv::ErrorKind::Io(io) => io,
                other => std::io::Error::other(format!("{other:?}")),
            };
            Error::Csv(Arc::new(io))
        })
    }

    fn write_rows(&self, ticks_per_ns: f64, out: impl std::io::Write) -> Result<(), csv::Error> {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        writer.write_record(HEADER)?;
        for thread in &self.threads {
            for component in &thread.components {
                for (k, sample) in component.samples.iter().enumerate() {
                    let ticks = sample.ticks();
                    writer.serialize(CsvRow {
                        thread: &thread.name,
                        thread_serial: thread.serial,
                        component: component.name,
                        ticks,
                        ns: ticks as f64 / ticks_per_ns,
                        kind: match sample.kind() {
                            SampleKind::Scope { start, stop } => {
                                SCOPE_KINDS[start as usize][stop as usize]
                            }
                            SampleKind::Timer { start, stop } => {
                                TIMER_KINDS[start as usize][stop as usize]
                            }
                            SampleKind::Busy { start, stop } => {
                                BUSY_KINDS[start as usize][stop as usize]
                            }
                            SampleKind::Pulse => "pulse",
                            SampleKind::Recorded => "recorded",
                        },
                        migrated: sample.migrated(),
                        index: component.first + k as u64,
                        seen: component.seen,
                    })?;
                }
            }
        }
        writer.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Mode;
    use crate::collect::{Anomalies, ComponentCapture, Sample, ThreadCapture};
    use crate::record::sample::{MIGRATED, PULSE, RECORD, START_SHIFT, STOP_SHIFT};

    fn thread(serial: u64, name: &str, components: Vec<ComponentCapture>) -> ThreadCapture {
        ThreadCapture {
            alloc_breach: None,
            outside_allocs: None,
            serial,
            name: name.to_owned(),
            exited: false,
            anomalies: Anomalies::default(),
            components,
            unpaired: Vec::new(),
        }
    }

    fn component(name: &'static str, samples: Vec<u64>) -> ComponentCapture {
        ComponentCapture {
            allocs: None,
            parent: None,
            self_ticks: None,
            name,
            seen: samples.len() as u64,
            capacity: 16,
            first: 0,
            samples: samples.into_iter().map(Sample::from_bits).collect(),
        }
    }

    fn csv(capture: &Capture, ticks_per_ns: f64) -> String {
        let mut out = Vec::new();
        capture.write_csv(ticks_per_ns, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn empty_capture_is_the_header_only() {
        let text = csv(&Capture::default(), 2.0);
        assert_eq!(
            text,
            "thread,thread_serial,component,ticks,ns,kind,migrated,index,seen\n"
        );
    }

    #[test]
    fn every_kind_in_capture_order() {
        let mut scopes = Vec::new();
        for start in Mode::ALL {
            for stop in Mode::ALL {
                scopes.push(10 | (start as u64) << START_SHIFT | (stop as u64) << STOP_SHIFT);
            }
        }
        let capture = Capture {
            process_allocs: None,
            threads: vec![
                thread(1, "main", vec![component("scopes", scopes)]),
                thread(
                    2,
                    "worker, \"2\"",
                    vec![
                        component("tick", vec![PULSE | 5, PULSE | 3]),
                        component("user", vec![RECORD | 9, MIGRATED | 7]),
                    ],
                ),
            ],
            teardown_drops: 0,
        };
        let text = csv(&capture, 2.0);
        let expected = "\
thread,thread_serial,component,ticks,ns,kind,migrated,index,seen
main,1,scopes,10,5.0,FF,false,0,9
main,1,scopes,10,5.0,FM,false,1,9
main,1,scopes,10,5.0,FH,false,2,9
main,1,scopes,10,5.0,MF,false,3,9
main,1,scopes,10,5.0,MM,false,4,9
main,1,scopes,10,5.0,MH,false,5,9
main,1,scopes,10,5.0,HF,false,6,9
main,1,scopes,10,5.0,HM,false,7,9
main,1,scopes,10,5.0,HH,false,8,9
\"worker, \"\"2\"\"\",2,tick,5,2.5,pulse,false,0,2
\"worker, \"\"2\"\"\",2,tick,3,1.5,pulse,false,1,2
\"worker, \"\"2\"\"\",2,user,9,4.5,recorded,false,0,2
\"worker, \"\"2\"\"\",2,user,7,3.5,FF,true,1,2
";
        assert_eq!(text, expected);
    }
}
