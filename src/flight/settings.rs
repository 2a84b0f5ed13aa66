//! The flight recorder's settings as the builder holds and checks them
//! ([`Builder::flight_recorder`](crate::Builder::flight_recorder)): each thread's
//! timeline of its recent scopes (`record/flight.rs` holds the buffer).

use crate::config;
use crate::error::Error;
use std::time::Duration;

/// The flight recorder as the builder holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flight {
    /// How far back a timeline reaches from its dump.
    pub(crate) window: Duration,
    /// Closed scopes each thread's buffer holds.
    pub(crate) entries: usize,
}

impl Flight {
    /// Shortest accepted window.
    const MIN_WINDOW: Duration = Duration::from_micros(1);
    /// Longest accepted window.
    const MAX_WINDOW: Duration = Duration::from_secs(60);

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let window_ok = (Flight::MIN_WINDOW..=Flight::MAX_WINDOW).contains(&self.window);
        if window_ok && config::flight_entries_ok(self.entries) {
            return Ok(());
        }
        Err(Error::FlightRecorder {
            window: self.window,
            entries: self.entries,
        })
    }
}
