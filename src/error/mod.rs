//! The crate's one error type. A leaf: it imports only the configured limits it names.

use core::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Everything latte can refuse: every public fallible function returns this type.
/// Configuration errors are returned, never panicked, and each message names what to
/// change. The cases that wrap an I/O error give it as [`source`](std::error::Error::source).
///
/// ```
/// let err = latte::builder().ring_capacity(1000).start().unwrap_err();
/// assert_eq!(err, latte::Error::RingCapacity { requested: 1000 });
/// assert!(err.to_string().contains("power of two"));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Error {
    /// A ring capacity that is not a power of two within the bounds of
    /// `latte::collect::Limit::RING_CAPACITY`.
    RingCapacity {
        /// The value that was asked for.
        requested: usize,
    },
    /// A stack depth outside the bounds of `latte::collect::Limit::STACK_DEPTH`.
    StackDepth {
        /// The value that was asked for.
        requested: usize,
    },
    /// A call-tree node limit above `latte::collect::Limit::NODE_LIMIT`'s bound.
    NodeLimit {
        /// The value that was asked for.
        requested: usize,
    },
    /// A flight-recorder setting out of range: a window outside 1 µs..=60 s
    /// ([`Builder::flight_recorder`](crate::Builder::flight_recorder)), or a buffer size
    /// that is not a power of two up to
    /// `latte::collect::Limit::FLIGHT_ENTRIES`'s bound
    /// ([`Builder::flight_entries`](crate::Builder::flight_entries)).
    FlightRecorder {
        /// The window asked for.
        window: std::time::Duration,
        /// The entries per thread asked for.
        entries: usize,
    },
    /// A flight-recorder dump setting refused at start, or a dump that could not be
    /// made or written ([`Guard::dump_timeline`](crate::Guard::dump_timeline)).
    Dump {
        /// Why, in words.
        reason: String,
    },
    /// A memory cap ([`Builder::memory_cap`](crate::Builder::memory_cap)) smaller than
    /// one ring of the configured capacity: no id could ever record.
    MemoryCap {
        /// The cap asked for, in bytes.
        cap: u64,
        /// The bytes one ring reserves (8 per sample of the ring capacity).
        ring_bytes: u64,
    },
    /// A pattern of `report::Focus` (over ids or thread names) that is not a valid
    /// glob pattern.
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A periodic report interval shorter than
    /// [`MIN_PERIODIC`](crate::Builder::MIN_PERIODIC).
    Interval {
        /// The value that was asked for.
        requested: Duration,
    },
    /// A number of slowest samples to keep above `latte::collect::Limit::SLOWEST`'s
    /// bound.
    Slowest {
        /// The value that was asked for.
        requested: usize,
    },
    /// A number of frames to list above `latte::collect::Limit::FRAMES_LISTED`'s
    /// bound.
    FramesListed {
        /// The value that was asked for.
        requested: usize,
    },
    /// [`check_no_alloc`](crate::alloc::check_no_alloc): a scope declared
    /// allocation-free ([`forbid`](crate::alloc::forbid)) allocated.
    Allocated {
        /// The first thread found with such allocations.
        thread: String,
        /// How many it counted.
        count: u64,
        /// The scope of the thread's first one, from the root of its call tree (empty
        /// if no longer known).
        path: Vec<String>,
        /// That allocation's size in bytes.
        size: u64,
    },
    /// Drain pacing bounds ([`Builder::drain_pace`](crate::Builder::drain_pace))
    /// that are zero, reversed or longer than a minute.
    DrainPace {
        /// The shortest wait asked for.
        min: Duration,
        /// The longest wait asked for.
        max: Duration,
    },
    /// A cleaning rule ([`Builder::cleaning`](crate::Builder::cleaning)) with a number
    /// that is NaN, infinite or negative.
    Cleaning {
        /// The rule's field, as `Bypass::factor`.
        setting: &'static str,
        /// The value that was asked for.
        value: f64,
    },
    /// [`init`](crate::init) or [`Builder::start`](crate::Builder::start) while an agent
    /// is already running: there is one agent per process.
    AlreadyRunning,
    /// The agent has stopped (its thread is gone), so it cannot take the command.
    AgentStopped,
    /// Writing a report failed: to the agent's sink ([`Builder::sink`](crate::Builder::sink),
    /// stdout by default) or to the writer given to [`Report::write`](crate::Report::write).
    /// The source is the writer's own error (or the sink's panic, as an
    /// [`io::Error`](std::io::Error) saying so). An agent keeps running.
    Sink(Arc<std::io::Error>),
    /// Writing the CSV export ([`Capture::write_csv`](crate::Capture::write_csv)) to its
    /// writer failed. The source is the writer's error.
    Csv(Arc<std::io::Error>),
    /// The drain thread could not be started.
    Spawn(Arc<std::io::Error>),
    /// The drain thread could not be placed as asked
    /// ([`Builder::drain_cpus`](crate::Builder::drain_cpus),
    /// [`Builder::drain_nice`](crate::Builder::drain_nice)).
    DrainPlacement(Arc<std::io::Error>),
    /// The interval log ([`Builder::hlog`](crate::Builder::hlog)) could not be created
    /// or written, or was asked for without periodic reports.
    Hlog(Arc<std::io::Error>),
    /// Periodic reports (or interval-log entries) that could not be written during the
    /// run, and exporters that panicked while taking a report, returned by [`Guard::stop`](crate::Guard::stop) when the final report
    /// itself was written: that report shows them too. Each was counted by
    /// [`Guard::sink_errors`](crate::Guard::sink_errors) as it happened.
    PeriodicReports {
        /// How many periodic reports failed over the whole run.
        failed: u64,
        /// The last one's error.
        last: Box<Error>,
    },
    /// The handlers of [`Builder::final_report_on_signals`](crate::Builder::final_report_on_signals)
    /// could not be installed (or the platform has neither POSIX signals nor Windows
    /// console events).
    Signals(Arc<std::io::Error>),
    /// A different clock was asked for after latte had started reading one.
    ClockAlreadySelected {
        /// Whether the clock in use is the hardware counter.
        hardware: bool,
    },
    /// [`Id::intern`](crate::Id::intern) of a new text once
    /// [`Id::MAX_INTERNED`](crate::Id::MAX_INTERNED) texts have been interned: run-time
    /// ids are bounded, and each costs memory for the rest of the process.
    InternLimit {
        /// The limit that was reached.
        limit: usize,
    },
    /// An exporter ([`Builder::exporter`](crate::Builder::exporter)) failed: it could
    /// not start (its own error, a panic, or a push interval shorter than
    /// [`MIN_PERIODIC`](crate::Builder::MIN_PERIODIC)), or it panicked while taking a
    /// report (then it gets no more, and the run's periodic failures count it). The
    /// error is the [`source`](std::error::Error::source).
    Exporter {
        /// The exporter's name (`Exporter::name`).
        exporter: String,
        /// What went wrong.
        error: Arc<dyn std::error::Error + Send + Sync>,
    },
}

impl PartialEq for Error {
    /// Errors are equal when they are the same case with the same values; I/O errors
    /// compare by [`kind`](std::io::Error::kind), an exporter's error by its message. The match is on `self` with no
    /// catch-all, so a new case cannot compile without saying how it compares.
    fn eq(&self, other: &Error) -> bool {
        use Error::*;
        let same_io = |a: &Arc<std::io::Error>, b: &Arc<std::io::Error>| a.kind() == b.kind();
        match self {
            RingCapacity { requested: a } => {
                matches!(other, RingCapacity { requested: b } if a == b)
            }
            StackDepth { requested: a } => matches!(other, StackDepth { requested: b } if a == b),
            Dump { reason } => matches!(other, Dump { reason: r } if reason == r),
            FlightRecorder { window, entries } => {
                matches!(other, FlightRecorder { window: w, entries: e } if (window, entries) == (w, e))
            }
            NodeLimit { requested: a } => matches!(other, NodeLimit { requested: b } if a == b),
            Pattern { pattern, reason } => {
                matches!(other, Pattern { pattern: p, reason: r } if (pattern, reason) == (p, r))
            }
            MemoryCap { cap, ring_bytes } => {
                matches!(other, MemoryCap { cap: c, ring_bytes: r } if (cap, ring_bytes) == (c, r))
            }
            Interval { requested: a } => matches!(other, Interval { requested: b } if a == b),
            Slowest { requested: a } => matches!(other, Slowest { requested: b } if a == b),
            FramesListed { requested: a } => {
                matches!(other, FramesListed { requested: b } if a == b)
            }
            InternLimit { limit: a } => matches!(other, InternLimit { limit: b } if a == b),
            // Every field is plain data that `Debug` writes whole.
            Allocated { .. } => format!("{self:?}") == format!("{other:?}"),
            DrainPace { min, max } => {
                matches!(other, DrainPace { min: c, max: d } if (min, max) == (c, d))
            }
            // By bits, so a NaN value equals itself.
            Cleaning { setting, value } => matches!(
                other,
                Cleaning { setting: s, value: v } if (setting, value.to_bits()) == (s, v.to_bits())
            ),
            AlreadyRunning => matches!(other, AlreadyRunning),
            AgentStopped => matches!(other, AgentStopped),
            Sink(a) => matches!(other, Sink(b) if same_io(a, b)),
            Csv(a) => matches!(other, Csv(b) if same_io(a, b)),
            Spawn(a) => matches!(other, Spawn(b) if same_io(a, b)),
            DrainPlacement(a) => matches!(other, DrainPlacement(b) if same_io(a, b)),
            Hlog(a) => matches!(other, Hlog(b) if same_io(a, b)),
            ClockAlreadySelected { hardware: a } => {
                matches!(other, ClockAlreadySelected { hardware: b } if a == b)
            }
            Signals(a) => matches!(other, Signals(b) if same_io(a, b)),
            Exporter { exporter, error } => matches!(
                other,
                Exporter { exporter: x, error: e } if exporter == x && error.to_string() == e.to_string()
            ),
            PeriodicReports { failed, last } => matches!(
                other,
                PeriodicReports { failed: c, last: d } if failed == c && last == d
            ),
        }
    }
}

impl Eq for Error {}

impl Error {
    /// For the cases that wrap an I/O error: the error, what failed and what to check.
    /// Every case is listed, so a new one must say whether it wraps one.
    fn io(&self) -> Option<(&Arc<std::io::Error>, &'static str, &'static str)> {
        match self {
            Error::Sink(e) => Some((
                e,
                "writing the latte report failed",
                "check the writer it goes to: Builder::sink, stdout by default, \
                 or the one given to Report::write",
            )),
            Error::Csv(e) => Some((
                e,
                "writing the latte CSV export failed",
                "check the writer given to Capture::write_csv",
            )),
            Error::Spawn(e) => Some((
                e,
                "starting the latte drain thread failed",
                "the OS refused a thread: check the process's thread and memory limits",
            )),
            Error::DrainPlacement(e) => Some((
                e,
                "the latte drain thread could not be placed as asked",
                "check Builder::drain_cpus and Builder::drain_nice",
            )),
            Error::Hlog(e) => Some((
                e,
                "the latte interval log failed",
                "check the path given to Builder::hlog",
            )),
            Error::Signals(e) => Some((
                e,
                "latte could not handle SIGTERM and SIGINT",
                "check Builder::final_report_on_signals: the platform needs POSIX signals or Windows console events",
            )),
            Error::RingCapacity { .. }
            | Error::Exporter { .. }
            | Error::StackDepth { .. }
            | Error::NodeLimit { .. }
            | Error::FlightRecorder { .. }
            | Error::Dump { .. }
            | Error::MemoryCap { .. }
            | Error::Pattern { .. }
            | Error::Interval { .. }
            | Error::Slowest { .. }
            | Error::FramesListed { .. }
            | Error::DrainPace { .. }
            | Error::Cleaning { .. }
            | Error::AlreadyRunning
            | Error::AgentStopped
            | Error::PeriodicReports { .. }
            | Error::ClockAlreadySelected { .. }
            | Error::InternLimit { .. }
            | Error::Allocated { .. } => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Error::PeriodicReports { failed, last } = self {
            let s = if *failed == 1 { "" } else { "s" };
            return write!(
                f,
                "{failed} periodic latte report{s} could not be written; the last error: {last}"
            );
        }
        match self.io() {
            Some((e, what, check)) => write!(f, "{what}: {e} ({check})"),
            None => self.fmt_plain(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        if let Error::PeriodicReports { last, .. } = self {
            return Some(&**last);
        }
        if let Error::Exporter { error, .. } = self {
            return Some(&**error);
        }
        self.io()
            .map(|(e, _, _)| &**e as &(dyn std::error::Error + 'static))
    }
}

mod message;
#[cfg(test)]
mod tests;
