//! The crate's one error type. A leaf: it imports only the configured limits it names.

use crate::config::{MAX_RING_CAPACITY, MAX_STACK_DEPTH, MIN_RING_CAPACITY};
use core::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Everything latte can refuse. Configuration errors are returned, never panicked.
///
/// ```
/// let err = latte::builder().ring_capacity(1000).start().unwrap_err();
/// assert_eq!(err, latte::Error::RingCapacity { requested: 1000 });
/// assert!(err.to_string().contains("power of two"));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Error {
    /// A ring capacity that is not a power of two within
    /// [`MIN_RING_CAPACITY`](crate::Builder::MIN_RING_CAPACITY)..=[`MAX_RING_CAPACITY`](crate::Builder::MAX_RING_CAPACITY).
    RingCapacity {
        /// The value that was asked for.
        requested: usize,
    },
    /// A stack depth outside 1..=[`MAX_STACK_DEPTH`](crate::Builder::MAX_STACK_DEPTH).
    StackDepth {
        /// The value that was asked for.
        requested: usize,
    },
    /// A periodic report interval shorter than
    /// [`MIN_PERIODIC`](crate::Builder::MIN_PERIODIC).
    Interval {
        /// The value that was asked for.
        requested: Duration,
    },
    /// A number of slowest samples to keep above
    /// [`MAX_SLOWEST`](crate::Builder::MAX_SLOWEST).
    Slowest {
        /// The value that was asked for.
        requested: usize,
    },
    /// Drain pacing bounds ([`Builder::drain_interval`](crate::Builder::drain_interval))
    /// that are zero, reversed or longer than a minute.
    DrainInterval {
        /// The shortest wait asked for.
        min: Duration,
        /// The longest wait asked for.
        max: Duration,
    },
    /// [`init`](crate::init) or [`Builder::start`](crate::Builder::start) while an agent
    /// is already running: there is one agent per process.
    AlreadyRunning,
    /// The agent has stopped (its thread is gone), so it cannot take the command.
    AgentStopped,
    /// Writing a report to the sink failed. The agent keeps running.
    Sink(Arc<std::io::Error>),
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
    /// run, returned by [`Guard::stop`](crate::Guard::stop) when the final report
    /// itself was written: that report shows them too. Each was counted by
    /// [`Guard::sink_errors`](crate::Guard::sink_errors) as it happened.
    PeriodicReports {
        /// How many periodic reports failed over the whole run.
        failed: u64,
        /// The last one's error.
        last: Box<Error>,
    },
    /// The handlers of [`Builder::final_report_on_signals`](crate::Builder::final_report_on_signals)
    /// could not be installed (or the platform has no POSIX signals).
    Signals(Arc<std::io::Error>),
    /// A different clock was asked for after latte had started reading one.
    ClockAlreadySelected {
        /// Whether the clock in use is the hardware counter.
        hardware: bool,
    },
}

impl PartialEq for Error {
    /// Errors are equal when they are the same case with the same values; I/O errors
    /// compare by [`kind`](std::io::Error::kind).
    fn eq(&self, other: &Error) -> bool {
        use Error::*;
        match (self, other) {
            (RingCapacity { requested: a }, RingCapacity { requested: b }) => a == b,
            (StackDepth { requested: a }, StackDepth { requested: b }) => a == b,
            (Interval { requested: a }, Interval { requested: b }) => a == b,
            (Slowest { requested: a }, Slowest { requested: b }) => a == b,
            (DrainInterval { min: a, max: b }, DrainInterval { min: c, max: d }) => {
                (a, b) == (c, d)
            }
            (AlreadyRunning, AlreadyRunning) | (AgentStopped, AgentStopped) => true,
            (Sink(a), Sink(b))
            | (Spawn(a), Spawn(b))
            | (Hlog(a), Hlog(b))
            | (Signals(a), Signals(b)) => a.kind() == b.kind(),
            (PeriodicReports { failed: a, last: b }, PeriodicReports { failed: c, last: d }) => {
                a == c && b == d
            }
            (ClockAlreadySelected { hardware: a }, ClockAlreadySelected { hardware: b }) => a == b,
            _ => false,
        }
    }
}

impl Eq for Error {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RingCapacity { requested } => write!(
                f,
                "ring capacity {requested} is invalid: it must be a power of two between {} and {} samples \
                 (the ring wraps with a bit mask)",
                MIN_RING_CAPACITY,
                MAX_RING_CAPACITY
            ),
            Error::StackDepth { requested } => write!(
                f,
                "stack depth {requested} is invalid: it must be between 1 and {}",
                MAX_STACK_DEPTH
            ),
            Error::Interval { requested } => {
                write!(
                    f,
                    "periodic report interval {requested:?} is too short: it must be at least {:?}",
                    crate::config::MIN_PERIODIC
                )
            }
            Error::Slowest { requested } => write!(
                f,
                "{requested} slowest samples per thread and id is invalid: at most {} are kept",
                crate::config::MAX_SLOWEST
            ),
            Error::DrainInterval { min, max } => write!(
                f,
                "drain interval {min:?}..={max:?} is invalid: the bounds must be above zero, \
                 in order, and at most 60 s"
            ),
            Error::AlreadyRunning => f.write_str(
                "a latte agent is already running in this process; keep its guard, or drop it before starting another",
            ),
            Error::AgentStopped => f.write_str("the latte agent has stopped"),
            Error::Sink(e) => write!(f, "writing the latte report failed: {e}"),
            Error::Hlog(e) => write!(f, "the latte interval log failed: {e}"),
            Error::DrainPlacement(e) => write!(
                f,
                "the latte drain thread could not be placed as asked (drain_cpus, drain_nice): {e}"
            ),
            Error::Spawn(e) => write!(f, "starting the latte drain thread failed: {e}"),
            Error::PeriodicReports { failed, last } => write!(
                f,
                "{failed} periodic latte report{} could not be written; the last error: {last}",
                if *failed == 1 { "" } else { "s" }
            ),
            Error::Signals(e) => write!(
                f,
                "latte could not handle SIGTERM and SIGINT (final_report_on_signals): {e}"
            ),
            Error::ClockAlreadySelected { hardware } => write!(
                f,
                "latte already reads the {}; every sample must come from one clock, so it cannot change now \
                 (choose the clock before anything records, or set LATTE_CLOCK)",
                if *hardware { "hardware counter" } else { "OS monotonic clock" }
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Sink(e)
            | Error::Spawn(e)
            | Error::Hlog(e)
            | Error::DrainPlacement(e)
            | Error::Signals(e) => Some(&**e),
            Error::PeriodicReports { last, .. } => Some(&**last),
            _ => None,
        }
    }
}
