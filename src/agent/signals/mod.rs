//! [`Builder::final_report_on_signals`]: on SIGTERM or SIGINT, the final report, then
//! the signal's usual course, unless the program handles the signal itself.
//!
//! latte installs its own handler with `sigaction` (`unix.rs`), remembering the
//! disposition it replaces, because only then can it tell, in the handler, whether the
//! program has its own handling: a handler installed before latte's is the one it
//! replaced (it is called, and the program decides); one installed after it has
//! replaced latte's (signal-hook's registry, and so tokio, then call latte's handler
//! as their predecessor; the `ctrlc` crate does not call it at all). Only when nobody
//! else handles the signal does latte end the process: its handler writes a byte to a
//! pipe, and a thread of latte's, `latte-signals`, stops the agent as the guard's drop
//! would (the drain writes the final report) and then lets the signal take its default
//! course. Nothing but async-signal-safe calls runs in the handler.

use super::builder::Builder;
#[cfg(not(any(unix, windows)))]
use crate::error::Error;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

/// Whether [`Builder::final_report_on_signals`] is on unless set.
pub(super) const DEFAULT: bool = cfg!(any(unix, windows));

#[cfg(unix)]
pub(super) use unix::listen;
#[cfg(windows)]
pub(super) use windows::listen;

/// Whether a signal (or console event), when nobody else handles it, is for latte: a
/// running agent asked for the report, and no signal has claimed it yet. Shared by the
/// Unix and Windows handlers.
static ARMED: AtomicBool = AtomicBool::new(false);

/// `SIGNAL_REPORT_TIMEOUT`, unless a test shortened it (nanoseconds).
static TIMEOUT_NANOS: AtomicU64 = AtomicU64::new(Builder::SIGNAL_REPORT_TIMEOUT.as_nanos() as u64);

/// The running agent wants its final report on a signal.
pub(super) fn arm() {
    ARMED.store(true, Ordering::Release);
}

/// No agent to report: signals take their default course at once again.
pub(super) fn disarm() {
    ARMED.store(false, Ordering::Release);
}

/// Takes the report for this signal, if an agent asked for it and no earlier signal
/// took it (a lock-free swap: callable from a signal handler).
#[cfg_attr(not(any(unix, windows)), allow(dead_code))]
fn claim() -> bool {
    ARMED.swap(false, Ordering::AcqRel)
}

/// The bound on the final report on a signal.
#[cfg_attr(not(any(unix, windows)), allow(dead_code))]
fn report_timeout() -> Duration {
    Duration::from_nanos(TIMEOUT_NANOS.load(Ordering::Relaxed))
}

/// Test hook: the bound on the final report on a signal.
#[cfg(feature = "test-hooks")]
pub(crate) fn set_report_timeout(timeout: Duration) {
    TIMEOUT_NANOS.store(timeout.as_nanos() as u64, Ordering::Relaxed);
}

#[cfg(not(any(unix, windows)))]
pub(super) fn listen() -> Result<(), Error> {
    Err(Error::Signals(std::sync::Arc::new(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "final_report_on_signals needs POSIX signals or Windows console events",
    ))))
}
