//! The agent: one named background thread that does the heavy work off the hot path.
//!
//! `let _latte = latte::init()?;` starts it with the defaults (time units on calibrated
//! data, report on stdout); [`builder`] sets everything else, the C++ original's
//! cycles and raw data too. The drain thread calibrates at start-up, folds what the
//! threads record into the whole-run histograms (waking before a ring can lap at the
//! peak rate it has seen, see [`Builder::drain_pace`]), writes periodic reports if
//! asked, answers commands from the [`Guard`], and writes the final report when the
//! guard drops — also while `main` unwinds from a panic.
//!
//! Exits that run no destructor skip the guard's drop. Before [`std::process::exit`],
//! call [`Guard::stop`] (or [`Guard::stop_running`], without the guard at hand). On
//! SIGTERM and SIGINT (on Windows the console's Ctrl-C, Ctrl-Break and close), by
//! default, latte writes the final
//! report and then lets the signal end the process — unless the program handles the
//! signal itself, and then its own shutdown drops the guard
//! ([`Builder::final_report_on_signals`] has the rules). On an abort or `kill -9`
//! nothing can be written, but the interval log ([`Builder::hlog`]) is on disk up to
//! the last periodic report.
//!
//! Recording never talks to the agent: the hot path takes no lock, sends on no channel
//! and allocates nothing, with or without an agent. Without one, the macros still
//! record and [`Report::collect`](crate::Report::collect) still works, so a library can be instrumented
//! without forcing an agent on the application.

mod builder;
mod drain;
mod exporters;
mod failures;
mod guard;
mod hlog;
mod pace;
mod placement;
mod reports;
mod running;
mod signals;

pub use builder::Builder;
pub(crate) use guard::Command;
pub use guard::Guard;
#[cfg(feature = "test-hooks")]
pub(crate) use signals::set_report_timeout as set_signal_report_timeout;

use crate::error::Error;

/// Starts the agent with the defaults: time units (ns, us, ms or s as the values need)
/// on calibrated data (the instrumentation's own overhead subtracted), default
/// cleaning, final report on stdout, no periodic reports. The C++ original's view,
/// cycles and raw data, is `latte::builder().unit(Unit::Cycles).data(Data::Raw)`.
///
/// Keep the guard: `let _latte = latte::init()?;`. With `let _ = latte::init();` it
/// drops at once, before anything is recorded (the compiler cannot warn about
/// `let _`); latte then prints a one-line hint on stderr.
///
/// The final report is written when the guard drops, or by [`Guard::stop`]. An exit
/// that runs no destructor skips it: call `guard.stop()` (or
/// [`Guard::stop_running`], wherever the guard is) before [`std::process::exit`].
/// SIGTERM and SIGINT (Ctrl-C) write it too (on Windows: the console's Ctrl-C,
/// Ctrl-Break and close):
/// if the program leaves these signals to their default, latte writes the final
/// report (on its own thread, within [`Builder::SIGNAL_REPORT_TIMEOUT`]) and then lets
/// the signal end the process, so the exit status still names the signal; a second
/// signal ends it at once. If the program handles them itself (tokio's `ctrl_c`, the
/// `ctrlc` crate, signal-hook, before or after `init`), latte leaves the shutdown to
/// it, and the guard's drop writes the report, once. The rules, and how to turn this
/// off, are at [`Builder::final_report_on_signals`]. Where the platform has neither
/// `init` handles none, and never fails for want of them.
/// One agent runs per process; a forked child starts with none and may start its own.
///
/// ```no_run
/// let latte = latte::init()?; // final report on stdout when this drops
/// // ... instrumented code ...
/// # let failed = false;
/// if failed {
///     latte.stop()?; // std::process::exit skips destructors: report first
///     std::process::exit(1);
/// }
/// # Ok::<(), latte::Error>(())
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
