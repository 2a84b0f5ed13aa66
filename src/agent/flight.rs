//! The [`Builder`] settings of the flight recorder: each thread's timeline of its
//! recent scopes (`record/flight.rs` holds the buffer).

use super::builder::Builder;
use crate::config;
use crate::error::Error;
use std::time::Duration;

/// The flight recorder as the builder holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flight {
    /// How far back a timeline reaches from its capture.
    pub(crate) window: Duration,
    /// Closed scopes each thread's buffer holds.
    pub(crate) entries: usize,
}

impl Flight {
    /// Shortest accepted window.
    const MIN_WINDOW: Duration = Duration::from_micros(1);
    /// Longest accepted window.
    const MAX_WINDOW: Duration = Duration::from_secs(60);

    pub(super) fn validate(&self) -> Result<(), Error> {
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

impl Builder {
    /// Turns the flight recorder on: each thread keeps a timeline of its recent
    /// scopes (start and end ticks, id, depth on the thread's stack), reaching `window`
    /// back (1 µs to 60 s; 50 ms is a good start), or
    /// [`flight_entries`](Builder::flight_entries) scopes, whichever is shorter. Its
    /// memory is fixed when a thread registers and stated in the report's header:
    /// 24 bytes a scope, [`Limit::FLIGHT_ENTRIES`](crate::Limit::FLIGHT_ENTRIES)
    /// unless set. Applies to threads that first record after
    /// [`start`](Builder::start) (an agent started later without it turns it off for
    /// the threads after it).
    ///
    /// Every closed Start/Stop scope and scope guard goes to the timeline; a
    /// [`Timer`](crate::Timer), a pulse and a [`record`](crate::record) do not.
    /// With the flight recorder off, a Stop does one load and one branch more than
    /// without it (`docs/performance.md` has the figures).
    ///
    /// ```
    /// use std::time::Duration;
    /// let guard = latte::builder()
    ///     .flight_recorder(Duration::from_millis(50))
    ///     .final_report(false)
    ///     .start()?;
    /// guard.stop()?;
    ///
    /// let refused = latte::builder().flight_recorder(Duration::ZERO).start().unwrap_err();
    /// assert!(refused.to_string().contains("flight recorder"), "{refused}");
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn flight_recorder(mut self, window: Duration) -> Builder {
        let entries = self
            .flight
            .map_or(config::Limit::FLIGHT_ENTRIES.default, |f| f.entries);
        self.flight = Some(Flight { window, entries });
        self
    }

    /// Closed scopes each thread's flight-recorder buffer holds: a power of two up to
    /// [`Limit::FLIGHT_ENTRIES`](crate::Limit::FLIGHT_ENTRIES) (default
    /// [`Limit::FLIGHT_ENTRIES`](crate::Limit::FLIGHT_ENTRIES)), 24 bytes each. A
    /// thread that closes more scopes within the window than this keeps the newest.
    /// Turns the flight recorder on with a 50 ms window if
    /// [`flight_recorder`](Builder::flight_recorder) has not.
    ///
    /// ```
    /// use std::time::Duration;
    /// // 4,096 scopes a thread: 96 KiB each.
    /// let guard = latte::builder()
    ///     .flight_recorder(Duration::from_millis(20))
    ///     .flight_entries(4096)
    ///     .final_report(false)
    ///     .start()?;
    /// guard.stop()?;
    /// assert!(latte::builder().flight_entries(1000).start().is_err());
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn flight_entries(mut self, entries: usize) -> Builder {
        let window = self.flight.map_or(Duration::from_millis(50), |f| f.window);
        self.flight = Some(Flight { window, entries });
        self
    }
}
