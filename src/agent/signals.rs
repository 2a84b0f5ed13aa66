//! [`Builder::final_report_on_signals`]: on SIGTERM or SIGINT, the final report, then
//! the signal's usual course.
//!
//! Nothing of latte runs in the signal handler but what is async-signal-safe. The
//! handler is `signal-hook`'s: it records the signal and writes a byte to a pipe. A
//! thread of latte's, `latte-signals`, reads that pipe and does the work: it stops the
//! running agent as its guard's drop would (the drain folds every ring, writes the last
//! interval and the final report, and flushes the sink), then lets the signal take its
//! default course (`signal_hook::low_level::emulate_default_handler`: the default
//! disposition is restored and the signal raised again), so the process ends with the
//! signal's status.
//!
//! One more action, registered before the pipe's, lets the signal take its default
//! course at once, from the handler, when nothing is to be written: no agent asked for
//! it, a report is already being written (a second Ctrl-C does not wait for a slow
//! sink), or the process is a forked child, where the listening thread does not exist.
//! It only reads two atomics, calls `getpid` and `emulate_default_handler`, all
//! async-signal-safe.

use super::builder::Builder;
#[cfg(not(unix))]
use crate::error::Error;

impl Builder {
    /// On SIGTERM and SIGINT, writes what dropping the guard would write (the last
    /// interval with [`periodic`](Builder::periodic) reports, the final report, the
    /// interval log's last entry) with everything recorded until then, and then lets
    /// the signal take its usual course: the process ends, killed by that signal (exit
    /// status 143 or 130 in a shell). Off by default. Unix only; elsewhere
    /// [`start`](Builder::start) returns
    /// [`Error::Signals`](crate::error::Error::Signals).
    ///
    /// The work is done on a thread of latte's, never in the signal handler. A second
    /// signal while the report is being written ends the process at once. After the
    /// agent stops, the signals keep their default effect. Meant for programs that leave
    /// SIGTERM and SIGINT to their default (ending the process); a program that handles
    /// them itself should rather call [`Guard::stop`](crate::Guard::stop) on its own
    /// way out. The first agent that asks for it starts the listening thread, which then
    /// stays for the life of the process.
    ///
    /// ```
    /// let guard = latte::builder()
    ///     .final_report_on_signals(true)
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// latte::latte_pulse!("work");
    /// // A SIGTERM here would write the final report, then end the process.
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn final_report_on_signals(mut self, enabled: bool) -> Builder {
        self.on_signals = enabled;
        self
    }
}

#[cfg(unix)]
pub(super) use unix::{arm, disarm, listen};

#[cfg(not(unix))]
pub(super) fn listen() -> Result<(), Error> {
    Err(Error::Signals(std::sync::Arc::new(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "final_report_on_signals needs POSIX signals (Unix)",
    ))))
}

#[cfg(not(unix))]
pub(super) fn arm() {}

#[cfg(not(unix))]
pub(super) fn disarm() {}

#[cfg(unix)]
#[allow(unsafe_code)] // one registration of an async-signal-safe action
mod unix {
    use crate::error::Error;
    use crate::record::fork::PerProcess;
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;
    use signal_hook::low_level::emulate_default_handler;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

    const SIGNALS: [i32; 2] = [SIGTERM, SIGINT];

    /// The process whose `latte-signals` thread listens (0: none). A forked child
    /// inherits the handler but not the thread: its signals take their course at once.
    static LISTENER: AtomicU32 = AtomicU32::new(0);

    /// Whether a signal takes its default course at once, from the handler: true
    /// unless a running agent asked for a report on signals and none is being written.
    static AT_ONCE: AtomicBool = AtomicBool::new(true);

    /// The listener, started at most once per process (a forked child may start its
    /// own), and the error it could not start with.
    static STARTED: PerProcess<Result<(), Error>> = PerProcess::new(start);

    /// Makes sure this process listens for SIGTERM and SIGINT.
    pub(in crate::agent) fn listen() -> Result<(), Error> {
        STARTED.get().clone()
    }

    /// The running agent wants its final report on a signal.
    pub(in crate::agent) fn arm() {
        AT_ONCE.store(false, Ordering::Release);
    }

    /// No agent to report: signals take their default course at once again.
    pub(in crate::agent) fn disarm() {
        AT_ONCE.store(true, Ordering::Release);
    }

    fn start() -> Result<(), Error> {
        let failed = |e| Error::Signals(Arc::new(e));
        // Actions run in the order they were registered: `at_once` decides before the
        // pipe's action can wake the thread, which would otherwise be free to mark a
        // report under way (`AT_ONCE`) before `at_once` reads it.
        for signal in SIGNALS {
            // SAFETY: `register` needs an async-signal-safe action. `at_once` reads a
            // pid (`getpid`, async-signal-safe per POSIX) and two atomics, and calls
            // `emulate_default_handler`, which signal-hook documents as
            // async-signal-safe. It allocates nothing and takes no lock.
            unsafe { signal_hook::low_level::register(signal, move || at_once(signal)) }
                .map_err(failed)?;
        }
        let mut signals = Signals::new(SIGNALS).map_err(failed)?;
        std::thread::Builder::new()
            .name("latte-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    on_signal(signal);
                }
            })
            .map_err(|e| Error::Spawn(Arc::new(e)))?;
        LISTENER.store(std::process::id(), Ordering::Release);
        Ok(())
    }

    /// In the handler: the default course at once when there is nothing to write, or
    /// nobody here to write it.
    fn at_once(signal: i32) {
        if AT_ONCE.load(Ordering::Acquire) || LISTENER.load(Ordering::Acquire) != std::process::id()
        {
            let _ = emulate_default_handler(signal);
        }
    }

    /// On the `latte-signals` thread: the final report, then the signal's course.
    fn on_signal(signal: i32) {
        // From now on a second signal does not wait for the report.
        if !AT_ONCE.swap(true, Ordering::AcqRel) {
            // What the guard's drop would write; an error has nowhere to go.
            let _ = crate::agent::running::stop();
        }
        let _ = emulate_default_handler(signal);
    }
}
