//! Exporters: what takes the agent's whole-run reports out of the process, for
//! dashboards that watch many processes. An exporter implements [`Exporter`] and is
//! registered with [`Builder::exporter`](crate::Builder::exporter); the Prometheus
//! `/metrics` endpoint and the OTLP push are exporters of this kind, each in a crate of
//! its own (`latte-telemetry-prometheus`, `latte-telemetry-otlp`).
//!
//! An exporter gets reports two ways, and may use either or both:
//!
//! - **Pushed**: every [`interval`](Exporter::interval) it asks for, the drain thread
//!   hands it a fresh whole-run [`Report`] ([`Exporter::push`]), and once more when the
//!   agent stops ([`Push::Final`]). The drain calls it and goes on: an exporter that
//!   does I/O hands the report to a thread of its own.
//! - **Pulled**: at [`start`](Exporter::start) it gets a [`Handle`], which its own
//!   threads keep and use to ask the agent for a fresh whole-run report whenever they
//!   need one (a scrape), waiting at most as long as they say.
//!
//! Through the same [`Handle`] an exporter tells the agent when an export failed
//! ([`Handle::failed`]): the agent's reports show each exporter's failures under
//! their tables ([`Report::exporter_failures`]).
//!
//! The reports are the agent's (its unit, data, cleaning and focus), made by the drain
//! thread from the histograms it already keeps: an exporter adds nothing to the hot
//! path. [`MetricSet`] turns a report into one neutral set of metrics (histogram
//! buckets, quantiles, counts, anomalies) that an encoder writes in its own format.
//!
//! ```
//! use latte::exporter::{Exporter, Push};
//! use latte::Report;
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//!
//! /// Keeps the p99 of every component of the latest report (a real exporter would
//! /// hand the report to its own thread and send it somewhere).
//! #[derive(Clone, Default)]
//! struct LatestP99(Arc<Mutex<Vec<(String, f64)>>>);
//!
//! impl Exporter for LatestP99 {
//!     fn name(&self) -> &str {
//!         "latest-p99"
//!     }
//!     fn interval(&self) -> Option<Duration> {
//!         Some(Duration::from_secs(10))
//!     }
//!     fn push(&mut self, report: Arc<Report>, _: Push) {
//!         let rows = report.all_threads.iter();
//!         *self.0.lock().unwrap() = rows.map(|r| (r.component.clone(), r.stats.p99)).collect();
//!     }
//! }
//!
//! let latest = LatestP99::default();
//! let guard = latte::builder().exporter(latest.clone()).sink(std::io::sink()).start()?;
//! latte::latte_pulse!("doc_exporter_loop");
//! latte::latte_pulse!("doc_exporter_loop");
//! guard.stop()?; // the final push
//! assert!(latest.0.lock().unwrap().iter().any(|(c, _)| c == "doc_exporter_loop"));
//! # Ok::<(), latte::Error>(())
//! ```

mod exponential;
mod frames;
mod interval;
mod metrics;

pub use exponential::Exponential;
pub use frames::{FrameCounter, Frames};
pub use interval::Interval;
pub use metrics::{Anomaly, Buckets, Component, InvalidBuckets, MetricSet, QUANTILES, Thread};

use crate::report::Report;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The error an exporter's [`start`](Exporter::start) returns; the agent's
/// [`Builder::start`](crate::Builder::start) returns it as
/// [`Error::Exporter`](crate::Error::Exporter), naming the exporter.
pub type StartError = Box<dyn std::error::Error + Send + Sync>;

/// Something that takes the agent's whole-run reports out of the process: pushed by
/// the drain thread every [`interval`](Exporter::interval) and at stop, pulled by the
/// exporter's own threads through the [`Handle`] it gets at
/// [`start`](Exporter::start). The module's documentation has an example.
///
/// The agent calls, in order: [`name`](Exporter::name) and
/// [`interval`](Exporter::interval) when the exporter is registered
/// ([`Builder::exporter`](crate::Builder::exporter)); [`start`](Exporter::start) in
/// [`Builder::start`](crate::Builder::start), on its caller's thread, before the drain
/// thread runs; [`ready`](Exporter::ready) and [`push`](Exporter::push) on the drain
/// thread, as pushes fall due, then the final push; [`stop`](Exporter::stop) on the
/// drain thread as it ends (or, if it never ran, where the agent's start failed).
///
/// **Never hold the drain thread.** `ready` and `push` run on the drain thread, which
/// also folds the rings and writes the reports: they must return at once (a push that
/// sends over a network hands the report to a thread of its own, through a one-slot
/// mailbox, say, and drops what a slow peer cannot take).
///
/// **Panics.** A panic in `start` is [`Error::Exporter`](crate::Error::Exporter), as its
/// error would be. A panic in `ready` or `push` is caught: that exporter gets no more
/// pushes, and the panic is counted as a periodic failure (shown in the next report,
/// returned by [`Guard::stop`](crate::Guard::stop)); the agent goes on.
pub trait Exporter: Send + 'static {
    /// A short name for errors and messages, such as `"prometheus"`.
    fn name(&self) -> &str;

    /// How often the drain thread pushes a whole-run report (at least
    /// [`Builder::MIN_PERIODIC`](crate::Builder::MIN_PERIODIC)). `None`, the default,
    /// pushes nothing, not even at stop: the exporter only pulls. A period too long
    /// to fall due (`Duration::MAX`) pushes only the final report.
    fn interval(&self) -> Option<Duration> {
        None
    }

    /// Starts the exporter (binds, spawns its threads), before the drain thread runs.
    /// `agent` asks the agent for fresh whole-run reports; keep it for the exporter's
    /// threads (a request made before the drain thread runs waits for it). An error
    /// makes [`Builder::start`](crate::Builder::start) fail with
    /// [`Error::Exporter`](crate::Error::Exporter); the exporters started before this
    /// one are stopped again.
    fn start(&mut self, agent: Handle) -> Result<(), StartError> {
        let _ = agent;
        Ok(())
    }

    /// Asked on the drain thread when a periodic push falls due, before the report is
    /// made: `false` skips this push (the exporter is still busy with the last one) and
    /// spares the drain the report. Not asked before the final push. `true` unless
    /// overridden.
    fn ready(&mut self) -> bool {
        true
    }

    /// A fresh whole-run report, on the drain thread: every
    /// [`interval`](Exporter::interval) ([`Push::Periodic`]) and once when the agent
    /// stops ([`Push::Final`]). Return at once; see the trait's documentation.
    fn push(&mut self, report: Arc<Report>, push: Push) {
        let _ = (report, push);
    }

    /// Stops the exporter when the agent stops, after the final push, on the drain
    /// thread as it ends (the agent's stop waits for it): ends the exporter's threads,
    /// each within a bound, or leaves them to end on their own.
    fn stop(&mut self) {}
}

/// Which push [`Exporter::push`] gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Push {
    /// One of the pushes every [`Exporter::interval`].
    Periodic,
    /// The last one, when the agent stops: the run's final state.
    Final,
}

/// The exporter's line to the agent, given to [`Exporter::start`]: its own threads ask
/// for a fresh whole-run report through it (the drain thread makes it from the
/// histograms it keeps, focused as the agent's reports are), and tell the agent when
/// an export failed ([`failed`](Handle::failed)), which every later report shows.
/// Cheap to clone.
///
/// ```
/// use latte::exporter::Handle;
/// use std::time::Duration;
/// // A handle answered by a report collected on the spot, as a test might make one.
/// let options = latte::ReportOptions::default();
/// let handle = Handle::new(move |_wait| Some(latte::Report::collect(&options).into()));
/// assert!(handle.whole_run(Duration::from_secs(2)).is_some());
/// ```
#[derive(Clone)]
pub struct Handle {
    ask: Arc<dyn Fn(Duration) -> Option<Arc<Report>> + Send + Sync>,
    failures: Arc<FailureLog>,
}

/// One exporter's failures, as its [`Handle`]s tell them: shared with the agent,
/// which puts them in its reports.
#[derive(Debug, Default)]
pub(crate) struct FailureLog(Mutex<(u64, String)>);

impl FailureLog {
    /// The count and the last error, locked: held only to copy or set them, so a
    /// poisoned lock (which cannot happen there) still holds a valid value.
    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, String)> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The failures so far with the last one's error, if there were any.
    pub(crate) fn read(&self) -> Option<(u64, String)> {
        let log = self.lock();
        (log.0 > 0).then(|| log.clone())
    }
}

impl Handle {
    /// A handle whose requests `ask` answers (the agent makes the ones it gives to
    /// exporters; this is for testing an exporter without one).
    pub fn new(ask: impl Fn(Duration) -> Option<Arc<Report>> + Send + Sync + 'static) -> Handle {
        Handle::with_log(ask, Arc::default())
    }

    /// A handle whose failures go to `failures` (the agent's).
    pub(crate) fn with_log(
        ask: impl Fn(Duration) -> Option<Arc<Report>> + Send + Sync + 'static,
        failures: Arc<FailureLog>,
    ) -> Handle {
        Handle {
            ask: Arc::new(ask),
            failures,
        }
    }

    /// A fresh whole-run report, waiting at most `wait` for it: `None` if the agent
    /// did not answer in time (its command queue full, or a report slower than
    /// `wait`) or has stopped.
    pub fn whole_run(&self, wait: Duration) -> Option<Arc<Report>> {
        (self.ask)(wait)
    }

    /// Tells the agent that an export failed (a push that never arrived, say), with
    /// why. The agent counts the exporter's failures over the run, and every report
    /// it writes afterwards shows the count and the last error in a line under its
    /// tables ([`Report::exporter_failures`]; JSON `exporter_failures`). Never
    /// blocks for long: callable from any thread, the drain's included.
    ///
    /// ```
    /// use latte::exporter::{Exporter, Handle, StartError};
    /// use std::sync::{Arc, Mutex};
    ///
    /// /// Fails its one export, at start.
    /// struct Unlucky;
    /// impl Exporter for Unlucky {
    ///     fn name(&self) -> &str { "unlucky" }
    ///     fn start(&mut self, agent: Handle) -> Result<(), StartError> {
    ///         agent.failed("collector.example:4318: connection refused");
    ///         Ok(())
    ///     }
    /// }
    ///
    /// #[derive(Clone, Default)]
    /// struct Text(Arc<Mutex<Vec<u8>>>);
    /// impl std::io::Write for Text {
    ///     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.0.lock().unwrap().write(b) }
    ///     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// }
    ///
    /// let text = Text::default();
    /// let guard = latte::builder().exporter(Unlucky).sink(text.clone()).start()?;
    /// guard.report()?;
    /// let table = String::from_utf8(text.0.lock().unwrap().clone()).unwrap();
    /// assert!(table.contains("exporter unlucky failed 1 time in this run, last: collector.example:4318: connection refused"), "{table}");
    /// # drop(guard);
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn failed(&self, error: impl std::fmt::Display) {
        let text = error.to_string();
        let mut log = self.failures.lock();
        log.0 += 1;
        log.1 = text;
    }

    /// The failures told so far through this handle or its clones.
    ///
    /// ```
    /// let handle = latte::exporter::Handle::new(|_| None);
    /// handle.clone().failed("timed out");
    /// assert_eq!(handle.failures(), 1);
    /// ```
    pub fn failures(&self) -> u64 {
        self.failures.lock().0
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}
