//! OTLP/HTTP metrics for [latte]: the agent's whole-run latency histograms,
//! quantiles and counts, pushed to an OpenTelemetry collector or a hosted backend.
//!
//! ```no_run
//! use latte_otlp::Otlp;
//! use std::time::Duration;
//!
//! let otlp = Otlp::new("http://127.0.0.1:4318/v1/metrics", Duration::from_secs(10));
//! let pushes = otlp.pushes(); // sent, failed, dropped, retries: kept by the caller
//! let latte = latte::builder().exporter(otlp).start()?;
//! // ... instrumented code ...
//! latte.stop()?; // one more push, of the final state
//! println!("{} pushes sent, {} failed", pushes.sent(), pushes.failed());
//! # Ok::<(), latte::Error>(())
//! ```
//!
//! A hosted backend over `https://`, with an API key and gzip, sending deltas; or the
//! same from the OpenTelemetry variables ([`Otlp::from_env`]), which the code may
//! still override:
//!
//! ```no_run
//! use latte_otlp::{Compression, Otlp, Temporality};
//! use std::time::Duration;
//!
//! let otlp = Otlp::new("https://otlp.example.com/v1/metrics", Duration::from_secs(30))
//!     .header("x-api-key", std::env::var("EXAMPLE_API_KEY").unwrap_or_default())
//!     .compression(Compression::Gzip)
//!     .temporality(Temporality::Delta);
//! let latte = latte::builder().exporter(otlp).start()?;
//! # drop(latte);
//! // OTEL_EXPORTER_OTLP_ENDPOINT=https://otlp.example.com OTEL_EXPORTER_OTLP_HEADERS=x-api-key=...
//! let latte = latte::builder().exporter(Otlp::from_env(Duration::from_secs(30))).start()?;
//! # drop(latte);
//! # Ok::<(), latte::Error>(())
//! ```
//!
//! [`Otlp`] is a [`latte::Exporter`] that is pushed to: every interval (at least
//! [`Otlp::MIN_INTERVAL`]) and once more when the agent stops, the agent's drain
//! thread leaves a fresh whole-run report in a one-report mailbox and goes on; the
//! `latte-otlp` thread writes it as one `ExportMetricsServiceRequest` (protobuf,
//! `opentelemetry-proto`) and `POST`s it to the full URL within the push's timeout
//! ([`Otlp::TIMEOUT`] unless set). Points are cumulative since the agent started, or
//! deltas since the last push the collector accepted ([`Temporality`]); per
//! component:
//!
//! | metric | unit | kind |
//! |---|---|---|
//! | `latte.latency` | s | histogram: exponential ([`Histograms`]), or explicit buckets ([`Otlp::buckets`]) |
//! | `latte.latency.quantile` | s | gauge, p50, p99, p99.9 (attribute `quantile`), whole-run |
//! | `latte.samples.seen`, `latte.samples.lost` | `{sample}` | monotonic sum |
//! | `latte.samples.bypass`, `latte.samples.outliers` | `{sample}` | gauge, whole-run |
//! | `latte.allocations`, `latte.allocated.bytes` | `{allocation}`, `By` | monotonic sum, inclusive; with `latte::alloc::Counting` installed only |
//! | `latte.anomalies` | `{anomaly}` | monotonic sum, attribute `kind` |
//!
//! Resource attributes: `service.name` (the executable's name), `process.pid`,
//! `latte.clock`, `latte.clock.frequency_hz`, `latte.hypervisor`.
//!
//! # Transport
//!
//! `https://` runs rustls (with ring; the `tls` feature, on by default: without it
//! the crate compiles no C and takes `http://` only) and checks the server with the
//! platform's verifier (the system's roots), or only against the CA given to
//! [`Otlp::ca_certificate`] (a private collector's). Headers ([`Otlp::header`]) go with
//! every push; their values show in no `Debug` and no error. gzip on request
//! ([`Compression`]). Redirects are not followed (an auth header stays with the host
//! it was meant for).
//!
//! # Failures
//!
//! A collector that answers 429, 502, 503 or 504 gets the push again, after its
//! `Retry-After` (seconds or an HTTP date) or a backoff from 100 ms doubling, with
//! jitter; every attempt and wait of one push fits its timeout. A refused connection,
//! a timeout, another error status, or retries past the deadline fail the push: it is
//! counted ([`Pushes::failed`]) and told to the agent, whose reports show it under
//! their tables and in their JSON (`exporter_failures`). Nothing is lost by a failed
//! push: cumulative points carry everything, and a delta is taken from the last push
//! the collector accepted.
//!
//! A slow or absent collector delays nothing else: a collector that is down fails each
//! push at once; one that never answers holds the push thread for the timeout, and the
//! pushes that fall due meanwhile are skipped and counted as dropped. The push at stop
//! replaces a report still waiting, so a slow collector still gets the final state if
//! it takes it within the stop's wait (the timeout plus 0.5 s). The final push's own
//! outcome comes after the final report, so only [`Pushes`] counts it.
//!
//! docs/fleet.md in the repository shows a collector's configuration, a hosted
//! backend's, and what one push holds.

mod config;
mod delta;
mod encode;
mod env;
mod push;
mod send;
#[cfg(feature = "tls")]
mod tls;

pub use config::{Compression, Temporality};

use config::Settings;
use latte::Report;
use latte::exporter::{Buckets, Exporter, Handle, InvalidBuckets, Push, StartError};
use push::{Pusher, Queue, Shape, Stats, lock};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// The OTLP/HTTP push, an exporter for [`latte::Builder::exporter`]: made by
/// [`new`](Otlp::new) (everything in code) or [`from_env`](Otlp::from_env) (the
/// OpenTelemetry variables), adjusted by its methods, checked when the agent starts.
///
/// ```
/// use std::time::Duration;
/// let otlp = latte_otlp::Otlp::new("ftp://collector/v1/metrics", Duration::from_secs(10));
/// let err = latte::builder().exporter(otlp).start().unwrap_err();
/// assert!(err.to_string().contains("http:// or https://"), "{err}");
/// ```
#[derive(Debug)]
pub struct Otlp {
    settings: Settings,
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

    /// Pushes that failed: no connection, no answer within the push's timeout, or an
    /// error status (after the retries a 429, 502, 503 or 504 gets). Each is also told
    /// to the agent, whose reports show them ([`latte::Report::exporter_failures`]).
    pub fn failed(&self) -> u64 {
        self.0.failed.load(Relaxed)
    }

    /// Attempts beyond each push's first: the collector answered 429, 502, 503 or 504
    /// and the push was sent again within its deadline.
    pub fn retries(&self) -> u64 {
        self.0.retries.load(Relaxed)
    }

    /// Why the last failed push failed, if one did (never a header's value).
    pub fn last_error(&self) -> Option<String> {
        lock(&self.0.last_error).clone()
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
    /// The longest a push may take unless set ([`timeout`](Otlp::timeout)): connect,
    /// send, answer and retries, and so about the longest the agent's stop waits for
    /// the last one (plus 0.5 s).
    pub const TIMEOUT: Duration = push::TIMEOUT;

    /// Pushes to `endpoint`, the full URL (`http://127.0.0.1:4318/v1/metrics`: the
    /// collector's OTLP/HTTP receiver listens on 4318, path `/v1/metrics`; `https://`
    /// checks the server against the system's roots, or [`ca_certificate`](Otlp::ca_certificate)),
    /// every `interval` and once more when the agent stops. Reads no environment
    /// variable. An endpoint that is not an `http://` or `https://` URL, or an interval
    /// shorter than [`MIN_INTERVAL`](Otlp::MIN_INTERVAL), makes the agent's start fail
    /// ([`latte::Error::Exporter`]).
    pub fn new(endpoint: impl Into<String>, interval: Duration) -> Otlp {
        Otlp::with(Settings::new(endpoint.into()), interval)
    }

    /// Pushes every `interval` as the OpenTelemetry exporter variables say, as an
    /// OpenTelemetry SDK would: `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, which gets
    /// `/v1/metrics`) or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as it is; default
    /// `http://localhost:4318/v1/metrics`), `..._HEADERS` (`key=value,...`,
    /// percent-decoded), `..._CERTIFICATE` (a CA's PEM file), `..._COMPRESSION`
    /// (`gzip`, `none`), `..._TIMEOUT` (milliseconds; default [`Otlp::TIMEOUT`]),
    /// `..._PROTOCOL` (`http/protobuf` only) and
    /// `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (`cumulative`, `delta`,
    /// `lowmemory`, in any case). Each `OTEL_EXPORTER_OTLP_METRICS_*` replaces its
    /// generic `OTEL_EXPORTER_OTLP_*`; an empty variable is an unset one. The
    /// variables are read now; what the code sets afterwards (`.header(..)`,
    /// `.temporality(..)`, ...) wins over them. A value that is not valid makes the
    /// agent's start fail ([`latte::Error::Exporter`]) with an error naming the
    /// variable (and never a header's value).
    ///
    /// ```
    /// use std::time::Duration;
    /// // With OTEL_EXPORTER_OTLP_ENDPOINT=https://otlp.example.com and
    /// // OTEL_EXPORTER_OTLP_HEADERS=x-api-key=..., this pushes to
    /// // https://otlp.example.com/v1/metrics with that header.
    /// let otlp = latte_otlp::Otlp::from_env(Duration::from_secs(10))
    ///     .temporality(latte_otlp::Temporality::Delta); // the code wins
    /// # drop(otlp);
    /// ```
    pub fn from_env(interval: Duration) -> Otlp {
        Otlp::with(env::settings(|name| std::env::var(name).ok()), interval)
    }

    fn with(settings: Settings, interval: Duration) -> Otlp {
        Otlp {
            settings,
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

    fn start(&mut self, agent: Handle) -> Result<(), StartError> {
        if self.interval < Otlp::MIN_INTERVAL {
            let why = format!(
                "push interval {:?} is shorter than {:?}",
                self.interval,
                Otlp::MIN_INTERVAL
            );
            return Err(why.into());
        }
        let shape = Shape {
            buckets: self.buckets.clone()?,
            by_thread: self.thread_label,
            histograms: self.histograms,
            temporality: self.settings.temporality,
        };
        let sender = self.settings.sender()?;
        let stats = self.stats.clone();
        self.running = Some(Pusher::start(sender, shape, stats, agent)?);
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
    /// the last push at most the push timeout ([`Otlp::timeout`]) plus 0.5 s.
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
