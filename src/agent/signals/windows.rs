//! Windows: latte's console control handler (`SetConsoleCtrlHandler`) for Ctrl-C,
//! Ctrl-Break, closing the console window, logoff and shutdown.
//!
//! Windows runs a console handler on a thread it starts for the event, not inside a
//! signal: it may take locks and wait, so the handler stops the agent itself (the
//! drain writes the final report) and then returns `FALSE`, passing the event on to
//! the handler registered before latte's, and in the end to the default one, which
//! ends the process (exit code `STATUS_CONTROL_C_EXIT`, 0xC000013A).
//!
//! Handlers run newest first, and the first to return `TRUE` ends the chain: a handler
//! the program registers after latte's (the `ctrlc` crate, tokio's `ctrl_c`) runs
//! first, and when it handles the event latte's is not called: the program shuts down
//! its own way, and the guard's drop writes the report. Windows cannot tell latte of a
//! handler registered before its own: that one runs after latte has written the final
//! report.
//!
//! Closing the console, logoff and shutdown end the process whatever the handlers
//! return, about 5 s after the event (the system's `HungAppTimeout`); the report is
//! then bounded to [`CLOSE_TIMEOUT`].
#![allow(unsafe_code)] // SetConsoleCtrlHandler, and the handler it calls

use crate::agent::running;
use crate::error::Error;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use windows_sys::Win32::Foundation::{FALSE, TRUE};
use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, CTRL_C_EVENT, SetConsoleCtrlHandler};
use windows_sys::core::BOOL;

/// The bound on the final report when the console closes, the user logs off or the
/// system shuts down: the system ends the process about 5 s after the event, so the
/// report has 4 of them and the sink's flush the rest.
pub(in crate::agent) const CLOSE_TIMEOUT: Duration = Duration::from_secs(4);

/// The handler registered at most once per process, with the error it could not be
/// registered with.
static STARTED: OnceLock<Result<(), Error>> = OnceLock::new();

/// Makes sure latte's console handler is registered in this process.
pub(in crate::agent) fn listen() -> Result<(), Error> {
    STARTED
        .get_or_init(|| {
            // SAFETY: `handler` is a valid `PHANDLER_ROUTINE` for the life of the
            // process (a plain function); registering only adds it to the list.
            let ok = unsafe { SetConsoleCtrlHandler(Some(handler), TRUE) };
            if ok == 0 {
                Err(Error::Signals(Arc::new(std::io::Error::last_os_error())))
            } else {
                Ok(())
            }
        })
        .clone()
}

/// On the thread Windows starts for the event: the final report, bounded in time, if
/// a running agent asked for it and no earlier event took it; then the next handler.
unsafe extern "system" fn handler(event: u32) -> BOOL {
    if super::claim() {
        let asked = super::report_timeout();
        let timeout = match event {
            CTRL_C_EVENT | CTRL_BREAK_EVENT => asked,
            _ => asked.min(CLOSE_TIMEOUT),
        };
        // What the guard's drop would write; an error has nowhere to go.
        let _ = running::stop_within(timeout);
    }
    FALSE
}
