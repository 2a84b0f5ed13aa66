//! Periodic reports that could not be written: nobody waits on them, so they are
//! counted, kept, shown in the next report that is written, and returned by `stop`.

use crate::error::Error;
use crate::report::{PeriodicFailures, Report};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// What the drain thread shares with the guard.
#[derive(Default)]
pub(super) struct Shared {
    /// Periodic reports that failed over the whole run.
    pub(super) sink_errors: AtomicU64,
    /// The result of the shutdown, whoever asked for it (the guard, `stop_running`,
    /// the signal listener), so the guard can still return it afterwards.
    pub(super) finished: OnceLock<Result<(), Error>>,
}

/// The drain's record of periodic failures.
pub(super) struct Failures {
    shared: Arc<Shared>,
    /// Failures since the last report that was written (and so showed them).
    unshown: u64,
    /// The last failure of the run.
    last: Option<Error>,
}

impl Failures {
    pub(super) fn new(shared: Arc<Shared>) -> Failures {
        Failures {
            shared,
            unshown: 0,
            last: None,
        }
    }

    /// What the drain thread shares with the guard.
    pub(super) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// A periodic report (or its interval-log entry) could not be written.
    pub(super) fn failed(&mut self, error: Error) {
        self.unshown += 1;
        self.last = Some(error);
        self.shared.sink_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Puts the failures not shown yet into `report`, which is about to be written.
    pub(super) fn show_in(&self, report: &mut Report) {
        report.periodic_failures = match (&self.last, self.unshown) {
            (Some(last), count @ 1..) => Some(PeriodicFailures {
                count,
                last_error: last.to_string(),
            }),
            _ => None,
        };
    }

    /// A report holding the failures so far was written: they have been shown.
    pub(super) fn shown(&mut self) {
        self.unshown = 0;
    }

    /// What `stop` returns once the final report is written: the run's periodic
    /// failures, if any.
    pub(super) fn at_stop(&self) -> Result<(), Error> {
        match &self.last {
            Some(last) => Err(Error::PeriodicReports {
                failed: self.shared.sink_errors.load(Ordering::Relaxed),
                last: Box::new(last.clone()),
            }),
            None => Ok(()),
        }
    }
}
