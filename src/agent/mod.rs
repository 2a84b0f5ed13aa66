//! The agent: one named background thread that does the heavy work off the hot path.
//!
//! `let _latte = latte::init();` starts it with the C++ original's defaults (cycles,
//! raw data, report on stdout); [`builder`] sets everything else. The drain thread
//! calibrates at start-up, folds what the threads record into the whole-run histograms
//! (often enough that rings rarely lap, see [`Builder::drain_interval`]), writes
//! periodic reports if asked, answers commands from the [`Guard`], and writes the final
//! report when the guard drops — also while `main` unwinds from a panic.
//!
//! Recording never talks to the agent: the hot path takes no lock, sends on no channel
//! and allocates nothing, with or without an agent. Without one, the macros still
//! record and [`Report::collect`](crate::Report::collect) still works, so a library can be instrumented
//! without forcing an agent on the application.

mod builder;
mod drain;
mod failures;
mod guard;
mod hlog;
mod placement;
mod running;

pub use builder::Builder;
pub(crate) use guard::Command;
pub use guard::Guard;

use crate::error::Error;

/// Starts the agent with the defaults: cycles, raw data, default cleaning, final report
/// on stdout, no periodic reports.
///
/// One agent runs per process; a forked child starts with none and may start its own.
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
/// guard.report()?;
/// guard.stop()?;
/// # Ok::<(), latte::Error>(())
/// ```
pub fn builder() -> Builder {
    Builder::default()
}
