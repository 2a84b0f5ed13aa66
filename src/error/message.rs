//! The text of each error that wraps no I/O error.

use super::Error;
use crate::config::Limit;
use core::fmt;

impl Error {
    /// The message of a recorder limit out of range.
    fn fmt_recorder_limit(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RingCapacity { requested } => write!(
                f,
                "ring capacity {requested} is invalid: it must be a power of two between {} and {} samples \
                 (the ring wraps with a bit mask)",
                Limit::RING_CAPACITY.min,
                Limit::RING_CAPACITY.max
            ),
            Error::StackDepth { requested } => write!(
                f,
                "stack depth {requested} is invalid: it must be between 1 and {}",
                Limit::STACK_DEPTH.max
            ),
            Error::NodeLimit { requested } => write!(
                f,
                "node limit {requested} is invalid: a thread may have at most {} call-tree nodes \
                 below the root (0 records a flat profile)",
                crate::config::Limit::NODE_LIMIT.max
            ),
            Error::FlightRecorder { window, entries } => write!(
                f,
                "flight recorder window {window:?} with {entries} entries per thread is invalid: \
                 the window must be 1µs to 60s and the entries a power of two up to {}",
                crate::config::Limit::FLIGHT_ENTRIES.max
            ),
            _ => Ok(()),
        }
    }

    /// The message of a case that wraps no I/O error.
    pub(super) fn fmt_plain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RingCapacity { .. }
            | Error::StackDepth { .. }
            | Error::NodeLimit { .. }
            | Error::FlightRecorder { .. } => self.fmt_recorder_limit(f),
            Error::Dump { reason } => write!(f, "flight recorder dump: {reason}"),
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
                crate::config::Limit::SLOWEST.max
            ),
            Error::FramesListed { requested } => write!(
                f,
                "{requested} frames listed per thread is invalid: at most {} are kept",
                crate::config::Limit::FRAMES_LISTED.max
            ),
            Error::DrainPace { min, max } => write!(
                f,
                "drain pace {min:?}..={max:?} is invalid: the bounds must be above zero, \
                 in order, and at most 60 s"
            ),
            Error::Cleaning { setting, value } => write!(
                f,
                "cleaning setting {setting} = {value} is invalid: it must be a finite number of at \
                 least 0 (f64::MAX makes the rule remove nothing; None or Cleaning::OFF turns it off)"
            ),
            Error::InternLimit { limit } => write!(
                f,
                "Id::intern refused a new id: {limit} distinct run-time ids are interned already \
                 (Id::MAX_INTERNED); intern each text once, keep its &'static Id, and bound the set \
                 of texts (venues, symbols, strategies)"
            ),
            Error::Exporter { exporter, error } => {
                write!(f, "the latte exporter {exporter} failed: {error}")
            }
            Error::Allocated { .. } => self.fmt_alloc(f),
            Error::AlreadyRunning
            | Error::AgentStopped
            | Error::ClockAlreadySelected { .. }
            | Error::MemoryCap { .. } => self.fmt_state(f),
            Error::Pattern { .. } => self.fmt_report(f),
            // Written by `fmt`.
            Error::PeriodicReports { .. }
            | Error::Sink(_)
            | Error::Csv(_)
            | Error::Spawn(_)
            | Error::DrainPlacement(_)
            | Error::Hlog(_)
            | Error::Signals(_) => Ok(()),
        }
    }

    /// [`Error::Allocated`]: which thread, how many, and where the first one was.
    fn fmt_alloc(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Error::Allocated {
            thread,
            count,
            path,
            size,
        } = self
        else {
            unreachable!("called for Error::Allocated only")
        };
        let s = if *count == 1 { "" } else { "s" };
        let place = match path.is_empty() {
            true => "a scope no longer known".to_owned(),
            false => path.join(" > "),
        };
        write!(
            f,
            "{count} allocation{s} in allocation-free scopes on thread {thread}; the first, \
             {size} bytes, in {place}"
        )
    }

    /// The message of a case about the agent's or the clock's state or the memory cap.
    fn fmt_state(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::MemoryCap { cap, ring_bytes } => write!(
                f,
                "memory cap {cap} bytes is too small: one ring takes {ring_bytes} bytes \
                 (8 per sample of the ring capacity); raise Builder::memory_cap or lower \
                 Builder::ring_capacity"
            ),
            Error::AlreadyRunning => f.write_str(
                "a latte agent is already running in this process; keep its guard, or drop it before starting another",
            ),
            Error::AgentStopped => f.write_str(
                "the latte agent has stopped; start a new one (latte::init or latte::builder) \
                 to get reports from its drain thread, or use Report::collect, which needs none",
            ),
            Error::ClockAlreadySelected { hardware } => write!(
                f,
                "latte already reads the {}; every sample must come from one clock, so it cannot change now \
                 (choose the clock before anything records, or set LATTE_CLOCK)",
                if *hardware { "hardware counter" } else { "OS monotonic clock" }
            ),
            _ => Ok(()), // the other cases are written by `fmt_plain`, `fmt_report` and `fmt`
        }
    }

    /// The message of a case about what was asked of a report: a focus pattern.
    fn fmt_report(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Pattern { pattern, reason } => write!(
                f,
                "focus pattern {pattern:?} (over ids or thread names) is invalid: {reason} \
                 (a glob pattern: *, ?, [...])"
            ),
            _ => Ok(()), // the other cases are written by `fmt_plain`, `fmt_state` and `fmt`
        }
    }
}
