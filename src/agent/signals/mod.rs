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

impl Builder {
    /// How long the final report on a signal may take (the drain folding the rings,
    /// writing the report, flushing the sink) before latte ends the process anyway: 5
    /// seconds. A sink that blocks cannot keep a terminated process alive.
    pub const SIGNAL_REPORT_TIMEOUT: Duration = Duration::from_secs(5);

    /// Whether SIGTERM and SIGINT (on Windows: the console's Ctrl-C, Ctrl-Break and
    /// close) write the final report when the program leaves them to latte (default:
    /// `true` on Unix and Windows, `false` elsewhere).
    ///
    /// On such a signal, latte writes what dropping the guard would write (the last
    /// interval with [`periodic`](Builder::periodic) reports, the final report, the
    /// interval log's last entry) with everything recorded until then, and then lets
    /// the signal take its usual course: the process ends, killed by that signal (exit
    /// status 143 or 130 in a shell). The rules:
    ///
    /// - **The program's own handling comes first.** If the program handles the signal
    ///   itself — tokio's [`ctrl_c`](https://docs.rs/tokio/latest/tokio/signal/fn.ctrl_c.html)
    ///   or `signal::unix::signal`, the `ctrlc` crate, a `signal-hook` action, its own
    ///   `sigaction`, installed before or after the agent starts — latte does not end
    ///   the process: the program shuts down its own way, and the guard's drop writes
    ///   the final report, once. A handler installed before latte's is called by latte's;
    ///   one installed after it replaces latte's (signal-hook, and so tokio, call
    ///   latte's handler in turn, which then steps aside).
    /// - **Otherwise latte ends the process as the signal would.** The report is
    ///   written on a thread of latte's (`latte-signals`), never in the signal handler,
    ///   and then the signal is raised again with its default disposition, so the exit
    ///   status says which signal ended the process.
    /// - **Bounded in time.** If the report is not written within
    ///   [`SIGNAL_REPORT_TIMEOUT`](Builder::SIGNAL_REPORT_TIMEOUT) (a sink that blocks,
    ///   say), the process ends anyway, by the signal. A second signal while the
    ///   report is being written ends it at once.
    /// - **Nothing changes otherwise.** Without a running agent that asked for it, the
    ///   signals take their default course at once, as they do in a forked child. A
    ///   signal the process ignores (`SIG_IGN`, as a shell leaves SIGINT for a
    ///   background job, or `nohup`) stays ignored: latte installs no handler for it.
    ///   Before tokio's `ctrl_c` is first polled, latte's handling applies.
    ///
    /// With `false`, latte leaves the signals alone (a handler installed by an earlier
    /// agent of the process stands aside): the process ends at once, with no report.
    ///
    /// **On Windows** the same holds for the console's events: Ctrl-C, Ctrl-Break,
    /// closing the console window, logoff and shutdown write the final report, on the
    /// thread Windows starts for the event, and then the event goes on to the next
    /// handler (in the end the default one, which ends the process with exit code
    /// `0xC000013A`). A handler the program registers after starting the agent (the
    /// `ctrlc` crate, tokio's `ctrl_c`) comes first, as on Unix; one registered
    /// before it runs after latte's report, because Windows does not tell latte it is
    /// there. Closing the console ends the process about 5 s after the event whatever
    /// the handlers do: the report is then bounded to 4 s.
    ///
    /// Where the platform has neither (not Unix, not Windows), asking for `true` makes
    /// [`start`](Builder::start) return [`Error::Signals`](crate::error::Error::Signals);
    /// the default never does.
    ///
    /// The first agent that asks for it installs the handler and starts the listening
    /// thread, which then stay for the life of the process.
    ///
    /// ```no_run
    /// // The default: a SIGTERM or a Ctrl-C writes the final report, then ends the
    /// // process by that signal.
    /// let _latte = latte::init()?;
    /// latte::latte_pulse!("work");
    /// # Ok::<(), latte::Error>(())
    /// ```
    ///
    /// ```
    /// // Signals keep their default effect; the guard's drop still writes the report.
    /// let guard = latte::builder()
    ///     .final_report_on_signals(false)
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// latte::latte_pulse!("work");
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn final_report_on_signals(mut self, enabled: bool) -> Builder {
        self.on_signals = enabled;
        self
    }
}

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
