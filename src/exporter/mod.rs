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
mod live;
mod metrics;

pub use exponential::Exponential;
pub use frames::{FrameCounter, Frames};
pub use live::{Live, LiveFrames, LiveNode, LiveRow, LiveThread};
pub use metrics::{Anomaly, Buckets, InvalidBuckets, MetricSet, QUANTILES, Series, Thread};

use crate::report::Report;
use std::sync::Arc;
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

/// The way an exporter's own threads ask the agent for a fresh whole-run report: the
/// drain thread makes it from the histograms it keeps, focused as the agent's reports
/// are. Cheap to clone; given to [`Exporter::start`].
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
}

impl Handle {
    /// A handle whose requests `ask` answers (the agent makes the ones it gives to
    /// exporters; this is for testing an exporter without one).
    pub fn new(ask: impl Fn(Duration) -> Option<Arc<Report>> + Send + Sync + 'static) -> Handle {
        Handle { ask: Arc::new(ask) }
    }

    /// A fresh whole-run report, waiting at most `wait` for it: `None` if the agent
    /// did not answer in time (its command queue full, or a report slower than
    /// `wait`) or has stopped.
    pub fn whole_run(&self, wait: Duration) -> Option<Arc<Report>> {
        (self.ask)(wait)
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}
