//! The drain thread's loop.

use super::Command;
use crate::analyze::{self, Context, calibration};
use crate::collect::{self, Cursor};
use crate::config::ReportOptions;
use crate::error::Error;
use crate::record::registry;
use crate::report::{Format, Report};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often exited threads are compacted.
const HOUSEKEEPING: Duration = Duration::from_millis(100);

pub(super) struct Drain {
    pub(super) rx: Receiver<Command>,
    pub(super) sink: Box<dyn Write + Send>,
    pub(super) options: ReportOptions,
    pub(super) format: Format,
    pub(super) periodic: Option<Duration>,
    pub(super) final_report: bool,
    pub(super) sink_errors: Arc<AtomicU64>,
}

impl Drain {
    pub(super) fn run(mut self) {
        // Calibrate at start-up, off the user's threads, so reports need not wait.
        calibration();
        let mut cursor = Cursor::new();
        let mut periodic_count = 0u64;
        let mut last_periodic = Instant::now();
        let mut next_periodic = self.periodic.map(|p| Instant::now() + p);
        let mut next_housekeeping = Instant::now() + HOUSEKEEPING;
        loop {
            let deadline = next_periodic.map_or(next_housekeeping, |p| p.min(next_housekeeping));
            match self.rx.recv_deadline(deadline) {
                Ok(Command::Report(reply)) => {
                    self.housekeeping(false);
                    let _ = reply.send(self.whole_run(None));
                }
                Ok(Command::ReportInterval(reply)) => {
                    let r = self.since(&mut cursor, &mut periodic_count, &mut last_periodic);
                    let _ = reply.send(r);
                }
                Ok(Command::Shutdown(reply)) => {
                    let _ = reply.send(self.finish());
                    return;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The guard was leaked or forgotten: still leave the final report.
                    let _ = self.finish();
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            let now = Instant::now();
            if let (Some(due), Some(interval)) = (next_periodic, self.periodic)
                && now >= due
            {
                if self
                    .since(&mut cursor, &mut periodic_count, &mut last_periodic)
                    .is_err()
                {
                    self.sink_errors.fetch_add(1, Ordering::Relaxed);
                }
                // Skip missed ticks rather than bursting to catch up.
                next_periodic = Some(
                    due + interval * (1 + ((now - due).as_nanos() / interval.as_nanos()) as u32),
                );
            }
            if now >= next_housekeeping {
                self.housekeeping(false);
                next_housekeeping = now + HOUSEKEEPING;
            }
        }
    }

    /// Compacts exited threads; folds the oldest beyond the limit unless a periodic
    /// capture still has to see them (`after_periodic` says one just did).
    fn housekeeping(&self, after_periodic: bool) {
        registry::compact();
        if self.periodic.is_none() || after_periodic {
            registry::fold_excess();
        }
    }

    /// A report of what was recorded since the previous one.
    fn since(
        &mut self,
        cursor: &mut Cursor,
        count: &mut u64,
        last: &mut Instant,
    ) -> Result<(), Error> {
        let capture = cursor.capture();
        self.housekeeping(true);
        *count += 1;
        let label = format!(
            "periodic #{count}, last {:.2} s",
            last.elapsed().as_secs_f64()
        );
        let report = self.assemble(&capture, Some(label));
        *last = Instant::now();
        self.write(&report)
    }

    fn finish(&mut self) -> Result<(), Error> {
        if !self.final_report {
            return Ok(());
        }
        self.housekeeping(false);
        self.whole_run(Some("final".into()))
    }

    /// Writes a report of everything recorded so far.
    fn whole_run(&mut self, label: Option<String>) -> Result<(), Error> {
        let report = self.assemble(&collect::capture(), label);
        self.write(&report)
    }

    /// The report of `capture`, describing this process now.
    fn assemble(&self, capture: &collect::Capture, label: Option<String>) -> Report {
        let context = Context { label, live: true };
        analyze::assemble(capture, calibration(), &self.options, context)
    }

    fn write(&mut self, report: &Report) -> Result<(), Error> {
        report
            .write(&mut self.sink, self.format)
            .and_then(|()| self.sink.flush())
            .map_err(|e| Error::Sink(Arc::new(e)))
    }
}
