//! OTLP/HTTP metrics for [latte]: the agent's whole-run latency histograms,
//! quantiles and counts, pushed to an OpenTelemetry collector.
//!
//! ```no_run
//! use latte_otlp::Otlp;
//! use std::time::Duration;
//!
//! let otlp = Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(10));
//! let pushes = otlp.pushes(); // sent, failed, dropped: kept by the caller
//! let latte = latte::builder().exporter(otlp).start()?;
//! // ... instrumented code ...
//! latte.stop()?; // one more push, of the final state
//! println!("{} pushes sent, {} failed", pushes.sent(), pushes.failed());
//! # Ok::<(), latte::Error>(())
//! ```
//!
//! [`Otlp`] is a [`latte::Exporter`] that is pushed to: every interval (at least
//! [`Otlp::MIN_INTERVAL`]) and once more when the agent stops, the agent's drain
//! thread leaves a fresh whole-run report in a one-report mailbox and goes on; the
//! `latte-otlp` thread writes it as one `ExportMetricsServiceRequest` (protobuf,
//! `opentelemetry-proto`) and `POST`s it to the full URL within [`Otlp::TIMEOUT`].
//! Points are cumulative since the agent started; per component:
//!
//! | metric | unit | kind |
//! |---|---|---|
//! | `latte.latency` | s | histogram: exponential ([`Histograms`]), or explicit buckets ([`Otlp::buckets`]) |
//! | `latte.latency.quantile` | s | gauge, p50, p99, p99.9 (attribute `quantile`) |
//! | `latte.samples.seen`, `latte.samples.lost` | `{sample}` | monotonic sum |
//! | `latte.samples.bypass`, `latte.samples.outliers` | `{sample}` | gauge |
//! | `latte.anomalies` | `{anomaly}` | monotonic sum, attribute `kind` |
//!
//! Resource attributes: `service.name` (the executable's name), `process.pid`,
//! `latte.clock`, `latte.clock.frequency_hz`, `latte.hypervisor`.
//!
//! A slow or absent collector delays nothing else: a collector that is down fails each
//! push at once; one that never answers holds the push thread for the timeout, and the
//! pushes that fall due meanwhile are skipped and counted as dropped. The push at stop
//! replaces a report still waiting, so a slow collector still gets the final state if
//! it takes it within the stop's wait (the timeout plus 0.5 s).
//!
//! docs/fleet.md in the repository shows a collector's configuration and what one
//! push holds.

mod push;

use latte::Report;
use latte::exporter::{Buckets, Exporter, Handle, InvalidBuckets, Push, StartError};
use push::{Pusher, Queue, Stats};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// The OTLP/HTTP push, an exporter for [`latte::Builder::exporter`].
///
/// ```
/// use std::time::Duration;
/// let otlp = latte_otlp::Otlp::new("https://collector:4318/v1/metrics", Duration::from_secs(10));
/// let err = latte::builder().exporter(otlp).start().unwrap_err();
/// assert!(err.to_string().contains("http://"));
/// ```
#[derive(Debug)]
pub struct Otlp {
    endpoint: String,
    interval: Duration,
    buckets: Result<Buckets, InvalidBuckets>,
    histograms: Histograms,
    thread_label: bool,
    stats: Arc<Stats>,
    running: Option<(Pusher, Queue)>,
}

/// How [`Otlp`] sends the latency histogram (`latte.latency`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Histograms {
    /// An exponential histogram (the default): base-2 buckets at the finest scale (at
    /// most 10: a bucket's middle within 1/2,954 of any value in it, as fine as
    /// latte's own histograms) whose buckets from the smallest value to the largest
    /// number at most 2,048; a series spread wider gets a coarser scale, each step
    /// doubling the error (scale 7, 0.27% at worst, covers 16 doublings). Backends
    /// merge these across processes bucket by bucket
    /// ([`latte::exporter::Exponential`]).
    #[default]
    Exponential,
    /// Explicit buckets over [`Otlp::buckets`]: quantiles read from them are
    /// interpolated within buckets whose width is set by the bounds, not the data.
    Explicit,
}

/// The counts of an [`Otlp`] exporter's pushes, kept by the caller while the agent
/// owns the exporter ([`Otlp::pushes`]). Cheap to clone.
///
/// ```
/// use std::time::Duration;
/// let otlp = latte_otlp::Otlp::new("http://127.0.0.1:9/v1/metrics", Duration::from_secs(60));
/// let pushes = otlp.pushes();
/// let guard = latte::builder().exporter(otlp).sink(std::io::sink()).start()?;
/// assert_eq!((pushes.sent(), pushes.failed(), pushes.dropped()), (0, 0, 0));
/// # drop(guard);
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Pushes(Arc<Stats>);

impl Pushes {
    /// Pushes the collector accepted (a 2xx answer).
    pub fn sent(&self) -> u64 {
        self.0.sent.load(Relaxed)
    }

    /// Pushes that failed: no connection, no answer within [`Otlp::TIMEOUT`], or an
    /// error status.
    pub fn failed(&self) -> u64 {
        self.0.failed.load(Relaxed)
    }

    /// Reports never pushed, because the one before still waited for the push thread
    /// (the collector slower than the interval).
    pub fn dropped(&self) -> u64 {
        self.0.dropped.load(Relaxed)
    }
}

impl Otlp {
    /// Shortest accepted push interval.
    pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
    /// The longest a push may take (connect, send, answer), and so about the longest
    /// the agent's stop waits for the last one.
    pub const TIMEOUT: Duration = push::TIMEOUT;

    /// Pushes to `endpoint`, the full URL (`http://127.0.0.1:4318/v1/metrics`: the
    /// collector's OTLP/HTTP receiver listens on 4318, path `/v1/metrics`), every
    /// `interval` and once more when the agent stops. An endpoint that is not
    /// `http://` (no TLS: put a local collector in between), or an interval shorter
    /// than [`MIN_INTERVAL`](Otlp::MIN_INTERVAL), makes the agent's start fail
    /// ([`latte::Error::Exporter`]).
    pub fn new(endpoint: impl Into<String>, interval: Duration) -> Otlp {
        Otlp {
            endpoint: endpoint.into(),
            interval,
            buckets: Ok(Buckets::default()),
            histograms: Histograms::Exponential,
            thread_label: false,
            stats: Arc::default(),
            running: None,
        }
    }

    /// Explicit bucket upper bounds for the latency histogram, which then goes out as
    /// an explicit-bucket histogram ([`Histograms::Explicit`]; the default bounds are
    /// 1-2-5 steps from 10 ns to 10 s, 28 buckets, plus `+Inf`). Bounds that are
    /// empty, zero or out of order make the agent's start fail
    /// ([`latte::Error::Exporter`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let otlp = latte_otlp::Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(1))
    ///     .buckets([Duration::ZERO]);
    /// let err = latte::builder().exporter(otlp).start().unwrap_err();
    /// assert!(err.to_string().contains("above zero"));
    /// ```
    pub fn buckets(mut self, bounds: impl IntoIterator<Item = Duration>) -> Otlp {
        self.buckets = Buckets::new(bounds);
        self.histograms = Histograms::Explicit;
        self
    }

    /// How the latency histogram goes out: [`Histograms::Exponential`] (the default),
    /// which backends merge across processes without loss, or
    /// [`Histograms::Explicit`] over [`buckets`](Otlp::buckets).
    ///
    /// ```
    /// use latte_otlp::{Histograms, Otlp};
    /// use std::time::Duration;
    /// let otlp = Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(10))
    ///     .histograms(Histograms::Explicit); // the default bounds
    /// # drop(otlp);
    /// ```
    pub fn histograms(mut self, kind: Histograms) -> Otlp {
        self.histograms = kind;
        self
    }

    /// One data point per (component, thread) rather than per component (default
    /// off), with attributes `thread` (the name) and `thread.serial` (the report's
    /// `#N`). See docs/fleet.md, "Labels and cardinality", before turning it on.
    ///
    /// ```
    /// use std::time::Duration;
    /// let otlp = latte_otlp::Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(1))
    ///     .thread_label(true);
    /// # drop(otlp);
    /// ```
    pub fn thread_label(mut self, enabled: bool) -> Otlp {
        self.thread_label = enabled;
        self
    }

    /// The counts of this exporter's pushes: keep it before handing the exporter to
    /// the builder.
    pub fn pushes(&self) -> Pushes {
        Pushes(self.stats.clone())
    }
}

impl Exporter for Otlp {
    fn name(&self) -> &str {
        "otlp"
    }

    fn interval(&self) -> Option<Duration> {
        Some(self.interval)
    }

    fn start(&mut self, _: Handle) -> Result<(), StartError> {
        if !self.endpoint.starts_with("http://") {
            let why = format!("{:?}: the endpoint must be an http:// URL", self.endpoint);
            return Err(why.into());
        }
        if self.interval < Otlp::MIN_INTERVAL {
            let why = format!(
                "push interval {:?} is shorter than {:?}",
                self.interval,
                Otlp::MIN_INTERVAL
            );
            return Err(why.into());
        }
        let buckets = self.buckets.clone()?;
        let url = self.endpoint.clone();
        let stats = self.stats.clone();
        let kind = self.histograms;
        self.running = Some(Pusher::start(url, buckets, self.thread_label, kind, stats)?);
        Ok(())
    }

    /// While a report still waits for the push thread (the collector is slow), a
    /// periodic push is skipped, counted as dropped, and the drain makes no report.
    fn ready(&mut self) -> bool {
        self.running
            .as_ref()
            .is_some_and(|(_, queue)| !queue.is_full())
    }

    /// Leaves the report for the push thread, never waiting; the final one replaces a
    /// report still waiting.
    fn push(&mut self, report: Arc<Report>, _: Push) {
        if let Some((_, queue)) = &self.running {
            queue.offer(report);
        }
    }

    /// Drops the queue (the push thread takes what is left, then ends) and waits for
    /// the last push at most [`TIMEOUT`](Otlp::TIMEOUT) plus 0.5 s.
    fn stop(&mut self) {
        if let Some((pusher, queue)) = self.running.take() {
            drop(queue);
            pusher.stop();
        }
    }
}

impl Drop for Otlp {
    /// Stops the push thread if it still runs.
    fn drop(&mut self) {
        self.stop();
    }
}
