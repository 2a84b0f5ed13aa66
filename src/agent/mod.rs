//! The agent: one named background thread that does the heavy work off the hot path.
//!
//! `let _latte = latte::init();` starts it with the C++ original's defaults (cycles,
//! raw data, report on stdout); [`builder`] sets everything else. The drain thread
//! calibrates at start-up, compacts the memory of exited threads every 100 ms, writes
//! periodic reports if asked, answers commands from the [`Guard`], and writes the final
//! report when the guard drops — also while `main` unwinds from a panic.
//!
//! Recording never talks to the agent: the hot path takes no lock, sends on no channel
//! and allocates nothing, with or without an agent. Without one, the macros still
//! record and [`dump`](crate::dump) still works, so a library can be instrumented
//! without forcing an agent on the application.

mod drain;

use crate::{Cleaning, Data, Error, ReportOptions, Unit};
use crossbeam_channel::{Sender, bounded};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub use crate::registry::DEFAULT_MAX_EXITED_THREADS;

/// One agent per process.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// Starts the agent with the defaults: cycles, raw data, default cleaning, final report
/// on stdout, no periodic reports.
///
/// ```no_run
/// let _latte = latte::init(); // final report on stdout when this drops
/// // ... instrumented code ...
/// ```
pub fn init() -> Result<Guard, Error> {
    builder().start()
}

/// Configures the agent; finish with [`Builder::start`].
///
/// ```
/// use latte::{Data, Unit};
/// use std::time::Duration;
/// let guard = latte::builder()
///     .unit(Unit::Time)
///     .data(Data::Calibrated)
///     .ring_capacity(1 << 14)
///     .periodic(Duration::from_secs(1))
///     .sink(std::io::sink())
///     .start()?;
/// guard.report_now()?;
/// guard.stop()?;
/// # Ok::<(), latte::Error>(())
/// ```
pub fn builder() -> Builder {
    Builder::default()
}

/// Where reports go and in which form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// The table (the C++ original's layout plus tail columns).
    #[default]
    Table,
    /// One JSON document per report, on one line (feature `json`).
    #[cfg(feature = "json")]
    Json,
}

/// Settings for the agent. Invalid values are reported by [`start`](Builder::start).
pub struct Builder {
    clock: Option<crate::platform::ClockChoice>,
    ring_capacity: Option<usize>,
    stack_depth: Option<usize>,
    options: ReportOptions,
    format: Format,
    sink: Option<Box<dyn Write + Send>>,
    periodic: Option<Duration>,
    max_exited_threads: usize,
    final_report: bool,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder {
            clock: None,
            ring_capacity: None,
            stack_depth: None,
            options: ReportOptions::default(),
            format: Format::Table,
            sink: None,
            periodic: None,
            max_exited_threads: DEFAULT_MAX_EXITED_THREADS,
            final_report: true,
        }
    }
}

impl core::fmt::Debug for Builder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Builder")
            .field("clock", &self.clock)
            .field("ring_capacity", &self.ring_capacity)
            .field("stack_depth", &self.stack_depth)
            .field("options", &self.options)
            .field("format", &self.format)
            .field("sink", &self.sink.as_ref().map_or("stdout", |_| "custom"))
            .field("periodic", &self.periodic)
            .field("max_exited_threads", &self.max_exited_threads)
            .field("final_report", &self.final_report)
            .finish()
    }
}

impl Builder {
    /// Which clock to read: decided from the platform (`Auto`, the default) or forced.
    /// See [`select_clock`](crate::clock::select_clock): it must be chosen before
    /// anything records, and cannot change afterwards.
    pub fn clock(mut self, choice: crate::platform::ClockChoice) -> Builder {
        self.clock = Some(choice);
        self
    }

    /// Samples kept per (thread, id): a power of two (see
    /// [`set_ring_capacity`](crate::set_ring_capacity)).
    pub fn ring_capacity(mut self, samples: usize) -> Builder {
        self.ring_capacity = Some(samples);
        self
    }

    /// Open scopes per thread (see [`set_stack_depth`](crate::set_stack_depth)).
    pub fn stack_depth(mut self, depth: usize) -> Builder {
        self.stack_depth = Some(depth);
        self
    }

    /// Cycles or time in reports.
    pub fn unit(mut self, unit: Unit) -> Builder {
        self.options.unit = unit;
        self
    }

    /// Raw or overhead-corrected data in reports.
    pub fn data(mut self, data: Data) -> Builder {
        self.options.data = data;
        self
    }

    /// The cleaning applied before the main statistics.
    pub fn cleaning(mut self, cleaning: Cleaning) -> Builder {
        self.options.cleaning = cleaning;
        self
    }

    /// Table or JSON.
    pub fn format(mut self, format: Format) -> Builder {
        self.format = format;
        self
    }

    /// Where reports are written (stdout unless set).
    pub fn sink(mut self, sink: impl Write + Send + 'static) -> Builder {
        self.sink = Some(Box::new(sink));
        self
    }

    /// Writes a report every `interval`, showing only the samples recorded since the
    /// previous one, so a live service can watch its latencies move.
    pub fn periodic(mut self, interval: Duration) -> Builder {
        self.periodic = Some(interval);
        self
    }

    /// Exited threads kept individually in reports (default 256); older ones are folded
    /// into one `<exited threads>` entry per id, which keeps memory bounded under
    /// thread churn.
    pub fn max_exited_threads(mut self, threads: usize) -> Builder {
        self.max_exited_threads = threads;
        self
    }

    /// Whether dropping the guard writes a final report (default `true`).
    pub fn final_report(mut self, enabled: bool) -> Builder {
        self.final_report = enabled;
        self
    }

    /// Validates the settings, applies them and starts the drain thread.
    ///
    /// Errors: an invalid capacity, depth or interval; [`Error::AlreadyRunning`] if an
    /// agent is running; [`Error::Spawn`] if the thread cannot start. On error nothing
    /// has changed.
    pub fn start(self) -> Result<Guard, Error> {
        if let Some(n) = self.ring_capacity {
            crate::config::check_ring_capacity(n)?;
        }
        if let Some(n) = self.stack_depth {
            crate::config::check_stack_depth(n)?;
        }
        if let Some(interval) = self.periodic.filter(|i| i.is_zero()) {
            return Err(Error::Interval {
                requested: interval,
            });
        }
        if RUNNING
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::AlreadyRunning);
        }
        if let Some(choice) = self.clock
            && let Err(e) = crate::clock::select_clock(choice)
        {
            RUNNING.store(false, Ordering::Release);
            return Err(e);
        }
        if let Some(n) = self.ring_capacity {
            crate::set_ring_capacity(n)?;
        }
        if let Some(n) = self.stack_depth {
            crate::set_stack_depth(n)?;
        }
        crate::registry::set_max_exited(self.max_exited_threads);
        let (tx, rx) = bounded(16);
        let sink_errors = Arc::new(AtomicU64::new(0));
        let drain = drain::Drain {
            rx,
            sink: self.sink.unwrap_or_else(|| Box::new(std::io::stdout())),
            options: self.options,
            format: self.format,
            periodic: self.periodic,
            final_report: self.final_report,
            sink_errors: sink_errors.clone(),
        };
        match std::thread::Builder::new()
            .name("latte-drain".into())
            .spawn(move || drain.run())
        {
            Ok(handle) => Ok(Guard {
                tx,
                handle: Some(handle),
                sink_errors,
                pid: std::process::id(),
            }),
            Err(e) => {
                RUNNING.store(false, Ordering::Release);
                Err(Error::Spawn(Arc::new(e)))
            }
        }
    }
}

/// Commands to the drain thread.
pub(crate) enum Command {
    /// Write a full report now.
    Report(Sender<Result<(), Error>>),
    /// Write a report of what was recorded since the previous periodic report.
    ReportSince(Sender<Result<(), Error>>),
    /// Raw ticks of an id across threads.
    Snapshot(String, Sender<Vec<u64>>),
    /// Final report (if enabled), then exit.
    Shutdown(Sender<Result<(), Error>>),
}

/// The running agent. Dropping it writes the final report and stops the drain thread.
#[must_use = "the agent stops, writing its final report, when the guard drops; bind it: `let _latte = ...`"]
pub struct Guard {
    tx: Sender<Command>,
    handle: Option<JoinHandle<()>>,
    sink_errors: Arc<AtomicU64>,
    /// The process that started the agent: in a forked child the drain thread does
    /// not exist (threads do not survive `fork`), so the guard does nothing there.
    pid: u32,
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
        let (reply, answer) = bounded(1);
        self.tx
            .send(command(reply))
            .map_err(|_| Error::AgentStopped)?;
        answer.recv().map_err(|_| Error::AgentStopped)
    }

    /// Writes a full report to the sink; returns once it is written, with the sink's
    /// error if writing failed (the agent keeps running either way).
    pub fn report_now(&self) -> Result<(), Error> {
        self.ask(Command::Report)?
    }

    /// Writes a report of only what was recorded since the previous periodic report
    /// (or since start), as a periodic report would, and returns once it is written.
    pub fn report_since_last(&self) -> Result<(), Error> {
        self.ask(Command::ReportSince)?
    }

    /// Raw tick samples of `id` across all threads, taken by the drain thread.
    pub fn snapshot(&self, id: &str) -> Result<Vec<u64>, Error> {
        self.ask(|reply| Command::Snapshot(id.to_owned(), reply))
    }

    /// Periodic reports that could not be written so far.
    pub fn sink_errors(&self) -> u64 {
        self.sink_errors.load(Ordering::Relaxed)
    }

    /// Stops the agent: writes the final report (if enabled) and joins the thread,
    /// returning the final report's sink error if any.
    pub fn stop(mut self) -> Result<(), Error> {
        self.shutdown()
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
        let _ = handle.join();
        RUNNING.store(false, Ordering::Release);
        result
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            // Drop cannot return the error; the final report is the one thing the user
            // asked for, so say that it failed.
            eprintln!("latte: {e}");
        }
    }
}
