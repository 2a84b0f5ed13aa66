//! The exporters a builder registered ([`Builder::exporter`]): started before the
//! drain thread (so one that cannot start fails `start` with nothing to undo), pushed
//! to by the drain thread on their own schedules, stopped by it as it ends. Every call
//! into an exporter is guarded: a panic is an error, never the agent's end.

use super::drain::next_tick;
use super::guard::Command;
use super::running::Line;
use crate::config::MIN_PERIODIC;
use crate::error::Error;
use crate::exporter::{Exporter, FailureLog, Handle, Push};
use crate::report::{ExporterFailures, Report};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One registered exporter, as the agent drives it.
struct Registered {
    name: String,
    interval: Option<Duration>,
    exporter: Box<dyn Exporter>,
    /// Started, and not stopped yet.
    running: bool,
    /// It panicked in `ready` or `push`: no more pushes.
    broken: bool,
    /// When its next periodic push is due (`None`: never).
    next: Option<Instant>,
    /// The failures it told through its [`Handle`].
    failures: Arc<FailureLog>,
}

/// The registered exporters. Dropping them stops the ones still running (the drain
/// thread did not run, or ended by a panic).
#[derive(Default)]
pub(crate) struct Exporters {
    list: Vec<Registered>,
}

impl core::fmt::Debug for Exporters {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|r| (&r.name, r.interval)))
            .finish()
    }
}

/// A panic's message, as far as it has one.
pub(super) fn panic_text(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

fn failed(name: &str, error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
    Error::Exporter {
        exporter: name.to_owned(),
        error: Arc::from(error.into()),
    }
}

impl Exporters {
    /// Registers `exporter` ([`Builder::exporter`](crate::Builder::exporter)).
    pub(super) fn register(&mut self, exporter: Box<dyn Exporter>) {
        self.list.push(Registered {
            name: exporter.name().to_owned(),
            interval: exporter.interval(),
            exporter,
            running: false,
            broken: false,
            next: None,
            failures: Arc::default(),
        });
    }

    /// Refuses a push interval shorter than [`MIN_PERIODIC`].
    pub(super) fn validate(&self) -> Result<(), Error> {
        for r in &self.list {
            if let Some(interval) = r.interval.filter(|i| *i < MIN_PERIODIC) {
                let why = format!("push interval {interval:?} is shorter than {MIN_PERIODIC:?}");
                return Err(failed(&r.name, why));
            }
        }
        Ok(())
    }

    /// Starts every exporter in turn with a way to ask `line`'s drain for fresh
    /// whole-run reports. On an error (or a panic) the ones already started are
    /// stopped again.
    pub(super) fn start(&mut self, line: &Line) -> Result<(), Error> {
        for r in &mut self.list {
            let line = line.clone();
            let ask = move |wait| line.ask_within(Command::WholeRun, wait);
            let handle = Handle::with_log(ask, r.failures.clone());
            let started = catch_unwind(AssertUnwindSafe(|| r.exporter.start(handle)));
            let error = match started {
                Ok(Ok(())) => {
                    r.running = true;
                    continue;
                }
                Ok(Err(e)) => failed(&r.name, e),
                Err(panic) => {
                    let why = format!("it panicked while starting: {}", panic_text(&*panic));
                    failed(&r.name, why)
                }
            };
            self.stop();
            return Err(error);
        }
        Ok(())
    }

    /// Sets the first periodic push of each exporter one interval after `now`.
    pub(super) fn schedule(&mut self, now: Instant) {
        for r in &mut self.list {
            r.next = r.interval.and_then(|i| now.checked_add(i));
        }
    }

    /// When the next push falls due, if one ever does.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.list.iter().filter_map(|r| r.next).min()
    }

    /// The periodic pushes due at `now`: each exporter that is [`ready`](Exporter::ready)
    /// gets a report (made once, by `make`, for all of them); each push is then due
    /// again on its own schedule, missed ticks skipped. Returns the panics caught.
    pub(super) fn push_due(
        &mut self,
        now: Instant,
        mut make: impl FnMut() -> Option<Arc<Report>>,
    ) -> Vec<Error> {
        let mut report = None;
        let mut panics = Vec::new();
        for r in &mut self.list {
            let (Some(due), Some(interval)) = (r.next, r.interval) else {
                continue;
            };
            if now < due {
                continue;
            }
            r.next = next_tick(due, interval, now);
            if r.broken || !r.call(|e| e.ready(), &mut panics).unwrap_or(false) {
                continue;
            }
            if report.is_none() {
                report = make();
            }
            if let Some(report) = &report {
                r.call(|e| e.push(report.clone(), Push::Periodic), &mut panics);
            }
        }
        panics
    }

    /// The final push, to every exporter that asked for pushes; the report is made
    /// only if one does. Returns the panics caught.
    pub(super) fn push_final(&mut self, make: impl FnOnce() -> Option<Arc<Report>>) -> Vec<Error> {
        let mut panics = Vec::new();
        let wanted = |r: &Registered| r.interval.is_some() && !r.broken;
        if !self.list.iter().any(wanted) {
            return panics;
        }
        let Some(report) = make() else {
            return panics;
        };
        for r in self.list.iter_mut().filter(|r| wanted(r)) {
            r.call(|e| e.push(report.clone(), Push::Final), &mut panics);
        }
        panics
    }

    /// Puts the exporters' failures so far into `report`, which is about to be
    /// written.
    pub(super) fn show_in(&self, report: &mut Report) {
        report.exporter_failures = self
            .list
            .iter()
            .filter_map(|r| {
                let (count, last_error) = r.failures.read()?;
                Some(ExporterFailures {
                    exporter: r.name.clone(),
                    count,
                    last_error,
                })
            })
            .collect();
    }

    /// Stops every exporter still running, each once; a panic there is left to the
    /// panic hook's message.
    pub(super) fn stop(&mut self) {
        for r in self.list.iter_mut().filter(|r| r.running) {
            r.running = false;
            let _ = catch_unwind(AssertUnwindSafe(|| r.exporter.stop()));
        }
    }
}

impl Registered {
    /// Calls the exporter; a panic marks it broken and joins `panics` as an error.
    fn call<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Exporter) -> T,
        panics: &mut Vec<Error>,
    ) -> Option<T> {
        match catch_unwind(AssertUnwindSafe(|| f(&mut *self.exporter))) {
            Ok(value) => Some(value),
            Err(panic) => {
                self.broken = true;
                let why = format!(
                    "it panicked while taking a report, and gets no more: {}",
                    panic_text(&*panic)
                );
                panics.push(failed(&self.name, why));
                None
            }
        }
    }
}

impl Drop for Exporters {
    fn drop(&mut self) {
        self.stop();
    }
}
