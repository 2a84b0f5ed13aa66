//! The running agent's handle, and the commands it sends the drain thread.

use super::failures::Shared;
use super::running::{self, Line};
use super::signals;
use crate::collect::anything_recorded;
use crate::error::Error;
use crate::report::Report;
use crossbeam_channel::Sender;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

/// The hint for a guard dropped before anything was recorded.
const DROPPED_AT_ONCE: &str = "latte: the agent stopped before anything was recorded; \
     if this is `let _ = latte::init()`, the guard dropped at once: bind it with \
     `let _latte = latte::init()?` to keep the agent until the end of the scope";

/// Commands to the drain thread.
pub(crate) enum Command {
    /// Write a whole-run report now.
    Report(Sender<Result<(), Error>>),
    /// Write a report of the interval since the previous periodic report.
    ReportInterval(Sender<Result<(), Error>>),
    /// Final report (if enabled), then exit.
    Shutdown(Sender<Result<(), Error>>),
    /// A fresh whole-run report for an exporter, returned rather than written.
    WholeRun(Sender<Arc<Report>>),
    /// Write a flight-recorder dump now; its file.
    DumpTimeline(Sender<Result<std::path::PathBuf, Error>>),
}

/// The running agent. Dropping it writes the final report and stops the drain thread.
#[must_use = "the agent stops, writing its final report, when the guard drops; bind it: `let _latte = ...`"]
pub struct Guard {
    pub(super) line: Line,
    pub(super) handle: Option<JoinHandle<()>>,
    pub(super) shared: Arc<Shared>,
    /// The process that started the agent: in a forked child the drain thread does
    /// not exist (threads do not survive `fork`), so the guard does nothing there.
    pub(super) pid: u32,
}

impl core::fmt::Debug for Guard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Guard")
            .field("running", &self.handle.is_some())
            .field("sink_errors", &self.sink_errors())
            .finish()
    }
}

impl Guard {
    fn ask<T>(&self, command: impl FnOnce(Sender<T>) -> Command) -> Result<T, Error> {
        if std::process::id() != self.pid {
            return Err(Error::AgentStopped); // a forked child: no drain thread here
        }
        self.line.ask(command)
    }

    /// Makes the drain thread panic after its current command (test hook).
    #[cfg(feature = "test-hooks")]
    pub(crate) fn kill_drain(&self) {
        super::drain::KILL.store(true, Ordering::Relaxed);
    }

    /// Commands waiting for the drain thread (test hook).
    #[cfg(feature = "test-hooks")]
    pub(crate) fn queued(&self) -> usize {
        self.line.tx.len()
    }

    /// Whole run so far: writes a report of everything recorded to the sink; returns
    /// once it is written, with the sink's error if writing failed (the agent keeps
    /// running either way).
    pub fn report(&self) -> Result<(), Error> {
        self.ask(Command::Report)?
    }

    /// Interval: writes a report of only what was recorded since the previous periodic
    /// report (or since start), as a periodic report would, and returns once it is
    /// written.
    pub fn report_interval(&self) -> Result<(), Error> {
        self.ask(Command::ReportInterval)?
    }

    /// Writes every thread's timeline now (the flight recorder's window before this
    /// moment, and the scopes open) as a dump file in
    /// [`dump_dir`](crate::Builder::dump_dir), within its bounds, and returns
    /// its path. Not held back by [`dump_gap`](crate::Builder::dump_gap).
    /// [`Error::Dump`] when the flight recorder is off or the file cannot be
    /// written (counted in the next report too).
    ///
    /// ```
    /// use latte::{Id, Mode};
    /// use std::time::Duration;
    /// static STEP: Id = Id::new("doc_dump_step");
    /// let dir = std::env::temp_dir().join(format!("latte-doc-dump-{}", std::process::id()));
    /// let guard = latte::builder()
    ///     .flight_recorder(Duration::from_secs(1))
    ///     .dump_dir(&dir)
    ///     .final_report(false)
    ///     .start()?;
    /// latte::start(&STEP, Mode::Fast);
    /// latte::stop(&STEP, Mode::Fast);
    /// let file = guard.dump_timeline()?;
    /// let json = std::fs::read_to_string(&file).unwrap();
    /// assert!(json.contains("\"traceEvents\"") && json.contains("doc_dump_step"));
    /// guard.stop()?;
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn dump_timeline(&self) -> Result<std::path::PathBuf, Error> {
        self.ask(Command::DumpTimeline)?
    }

    /// Periodic reports that could not be written so far, and exporters that panicked
    /// while taking a report (each is also shown in the next report that is written,
    /// and returned by [`stop`](Guard::stop)).
    pub fn sink_errors(&self) -> u64 {
        self.shared.sink_errors.load(Ordering::Relaxed)
    }

    /// Stops the agent: writes the last interval (with periodic reports) and the final
    /// report (if enabled), and joins the thread. Returns the final report's error if
    /// it could not be written; else [`Error::PeriodicReports`] if periodic reports
    /// failed during the run (the final report shows them too); else `Ok`.
    ///
    /// Call it before [`std::process::exit`], which runs no destructor: the guard's
    /// drop would not happen. Without the guard at hand, [`Guard::stop_running`] does
    /// the same.
    ///
    /// ```
    /// let guard = latte::builder().sink(std::io::sink()).start()?;
    /// latte::latte_pulse!("work");
    /// guard.stop()?; // the final report is written
    /// // std::process::exit(0);
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn stop(mut self) -> Result<(), Error> {
        self.shutdown()
    }

    /// Stops the running agent without its guard at hand, as [`stop`](Guard::stop)
    /// does: the last interval, the final report, the drain thread's end. For code far
    /// from `main` that is about to call [`std::process::exit`] (which runs no
    /// destructor, so the guard would never drop). Returns what `stop` would;
    /// [`Error::AgentStopped`] if no agent runs in this process or it has stopped
    /// already. The guard, if it still drops later, only joins the thread, and its
    /// `stop` returns the same result.
    ///
    /// ```
    /// fn fatal(code: i32) {
    ///     // Whoever holds the guard, the run's report is written before the exit.
    ///     latte::Guard::stop_running().unwrap();
    ///     // std::process::exit(code);
    /// #   let _ = code;
    /// }
    /// let _latte = latte::builder().sink(std::io::sink()).start()?;
    /// latte::latte_pulse!("work");
    /// fatal(2);
    /// assert_eq!(latte::Guard::stop_running(), Err(latte::Error::AgentStopped));
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn stop_running() -> Result<(), Error> {
        running::stop()
    }

    fn shutdown(&mut self) -> Result<(), Error> {
        let Some(handle) = self.handle.take() else {
            return Ok(());
        };
        if std::process::id() != self.pid {
            // A forked child: the thread is the parent's; leave it (and the flag) alone.
            std::mem::forget(handle);
            return Ok(());
        }
        let result = self.ask(Command::Shutdown).and_then(|r| r);
        // The drain thread stops the exporters as it ends.
        let _ = handle.join();
        signals::disarm();
        running::release();
        match result {
            // Stopped by another caller (`stop_running`, a signal): its result.
            Err(Error::AgentStopped) => self.shared.finished.get().cloned().unwrap_or(result),
            result => result,
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.handle.is_some() && std::process::id() == self.pid && !anything_recorded() {
            // Most likely `let _ = latte::init();`, which drops the guard at once.
            eprintln!("{DROPPED_AT_ONCE}");
        }
        if let Err(e) = self.shutdown() {
            // Drop cannot return the error; the final report is the one thing the user
            // asked for, so say that it failed.
            eprintln!("latte: {e}");
        }
    }
}
