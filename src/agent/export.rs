//! The agent's side of fleet export (`crate::fleet`): the builder's settings, the
//! guard's counts, and the wiring of the exporters to the drain thread.
//!
//! The `/metrics` thread and the OTLP push thread start before the drain thread, so a
//! setting that cannot work (an address in use) fails `start` with nothing to undo;
//! the metrics thread then waits for the way to ask the drain for reports, and ends
//! at once if the drain never starts.

#[cfg(feature = "prometheus")]
use super::Command;
#[cfg(any(feature = "prometheus", feature = "otlp"))]
use super::builder::Builder;
#[cfg(any(feature = "prometheus", feature = "otlp"))]
use super::guard::Guard;
use super::running::Line;
use crate::error::Error;
use crate::fleet::{Running, Settings};
#[cfg(any(feature = "prometheus", feature = "otlp"))]
use std::time::Duration;

/// The longest the `/metrics` thread waits for the drain's report.
#[cfg(feature = "prometheus")]
const SNAPSHOT_WAIT: Duration = Duration::from_secs(2);

/// What connects the exporters to the drain once it runs.
pub(super) struct Wiring {
    #[cfg(feature = "prometheus")]
    snapshot: Option<crossbeam_channel::Sender<crate::fleet::Snapshot>>,
    #[cfg(feature = "otlp")]
    queue: Option<crate::fleet::otlp::Queue>,
}

/// Binds the metrics endpoint and starts the exporters' threads (`settings` are
/// validated).
pub(super) fn prepare(settings: &Settings) -> Result<(Running, Wiring), Error> {
    #[allow(unused_mut)] // without the features there is nothing to start
    let mut running = Running::default();
    let _ = settings;
    #[cfg(feature = "prometheus")]
    let snapshot = match &settings.metrics_addr {
        Some(addr) => {
            let listener = crate::fleet::serve::bind(addr)?;
            let (tx, rx) = crossbeam_channel::bounded(1);
            running.metrics = Some(crate::fleet::serve::Server::start(listener, settings, rx)?);
            Some(tx)
        }
        None => None,
    };
    #[cfg(feature = "otlp")]
    let queue = match &settings.otlp {
        Some((url, interval)) => {
            let (pusher, queue) =
                crate::fleet::otlp::Pusher::start(settings, url.clone(), *interval)
                    .map_err(|e| Error::Spawn(std::sync::Arc::new(e)))?;
            running.otlp = Some(pusher);
            Some(queue)
        }
        None => None,
    };
    let wiring = Wiring {
        #[cfg(feature = "prometheus")]
        snapshot,
        #[cfg(feature = "otlp")]
        queue,
    };
    Ok((running, wiring))
}

impl Wiring {
    /// The drain's end of the OTLP queue.
    #[cfg(feature = "otlp")]
    pub(super) fn queue(&self) -> Option<crate::fleet::otlp::Queue> {
        self.queue.clone()
    }

    /// Gives the metrics thread its way to the drain thread, which now runs.
    pub(super) fn connect(self, line: &Line) {
        let _ = line;
        #[cfg(feature = "prometheus")]
        if let Some(tx) = self.snapshot {
            let line = line.clone();
            let ask = move || line.ask_within(Command::Snapshot, SNAPSHOT_WAIT);
            let _ = tx.send(std::sync::Arc::new(ask));
        }
    }
}

#[cfg(feature = "prometheus")]
impl Builder {
    /// Serves Prometheus metrics at `http://ADDR/metrics` (feature `prometheus`), from
    /// the whole-run histograms the drain thread keeps: per component a latency
    /// histogram ([`metrics_buckets`](Builder::metrics_buckets)), p50/p99/p99.9
    /// gauges, counts of samples seen, lost, bypassed and outlying; anomalies by kind;
    /// the clock. Port 0 lets the OS choose ([`Guard::metrics_addr`] tells which).
    /// An address that does not parse or is in use makes [`start`](Builder::start)
    /// return [`Error::MetricsEndpoint`]. docs/fleet.md shows the output and the
    /// dashboards.
    ///
    /// ```
    /// let guard = latte::builder().serve_metrics("127.0.0.1:0").sink(std::io::sink()).start()?;
    /// let addr = guard.metrics_addr().unwrap();
    /// assert!(addr.port() != 0);
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn serve_metrics(mut self, addr: impl Into<String>) -> Builder {
        self.fleet.metrics_addr = Some(addr.into());
        self
    }
}

#[cfg(any(feature = "prometheus", feature = "otlp"))]
impl Builder {
    /// The latency histogram's bucket upper bounds, for `/metrics` and OTLP alike
    /// (default: 1-2-5 steps from 10 ns to 10 s, 28 buckets, plus `+Inf`). Empty,
    /// zero or out-of-order bounds make [`start`](Builder::start) return
    /// [`Error::FleetSetting`]. Each bound adds one series per component.
    ///
    /// ```
    /// use std::time::Duration;
    /// let err = latte::builder()
    ///     .metrics_buckets([Duration::from_micros(2), Duration::from_micros(1)])
    ///     .start()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("increasing order"));
    /// ```
    pub fn metrics_buckets(mut self, bounds: impl IntoIterator<Item = Duration>) -> Builder {
        self.fleet.buckets = Some(bounds.into_iter().collect());
        self
    }

    /// Exports one series per (component, thread) rather than per component (default
    /// off), labelled `thread` (the name) and `thread_serial` (the report's `#N`, so
    /// threads that share a name stay apart). The number of series is then multiplied
    /// by the number of threads that recorded each component: keep it for a small,
    /// fixed set of named threads (docs/fleet.md, "Labels and cardinality").
    ///
    /// ```
    /// let guard = latte::builder().metrics_thread_label(true).sink(std::io::sink()).start()?;
    /// # drop(guard);
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn metrics_thread_label(mut self, enabled: bool) -> Builder {
        self.fleet.thread_label = enabled;
        self
    }
}

#[cfg(feature = "otlp")]
impl Builder {
    /// Pushes the same metrics as OTLP/HTTP protobuf to `endpoint` (the full URL, as
    /// `http://127.0.0.1:4318/v1/metrics`) every `interval`, at least 100 ms (feature
    /// `otlp`), and once more when the agent stops. The push runs on its own thread,
    /// `latte-otlp`, within a 2 s timeout; a slow or absent endpoint delays nothing
    /// else: reports it cannot take in time are dropped and counted
    /// ([`Guard::otlp_dropped`]). Not `http://`, or a shorter interval, is
    /// [`Error::FleetSetting`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let err = latte::builder()
    ///     .otlp("https://collector:4318/v1/metrics", Duration::from_secs(10))
    ///     .start()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("http://"));
    /// ```
    pub fn otlp(mut self, endpoint: impl Into<String>, interval: Duration) -> Builder {
        self.fleet.otlp = Some((endpoint.into(), interval));
        self
    }
}

#[cfg(feature = "prometheus")]
impl Guard {
    /// The address `/metrics` is served on (`None` without
    /// [`Builder::serve_metrics`]).
    ///
    /// ```no_run
    /// let guard = latte::builder().serve_metrics("0.0.0.0:9464").start()?;
    /// println!("scrape http://{}/metrics", guard.metrics_addr().unwrap());
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        self.fleet.metrics.as_ref().map(|server| server.addr())
    }
}

#[cfg(feature = "otlp")]
impl Guard {
    /// OTLP pushes: `(sent, failed, dropped)` so far. Sent pushes got a 2xx answer;
    /// failed ones got none in time or an error; dropped reports were never pushed,
    /// because the queue was full (the endpoint slower than the interval).
    ///
    /// ```
    /// use std::time::Duration;
    /// let guard = latte::builder()
    ///     .otlp("http://127.0.0.1:9/v1/metrics", Duration::from_secs(60))
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// assert_eq!(guard.otlp_pushes(), (0, 0, 0));
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn otlp_pushes(&self) -> (u64, u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(pusher) = &self.fleet.otlp else {
            return (0, 0, 0);
        };
        let stats = &pusher.stats;
        (
            stats.sent.load(Relaxed),
            stats.failed.load(Relaxed),
            stats.dropped.load(Relaxed),
        )
    }

    /// Reports dropped because the OTLP queue was full: `otlp_pushes().2`.
    ///
    /// ```
    /// let guard = latte::builder().sink(std::io::sink()).start()?;
    /// assert_eq!(guard.otlp_dropped(), 0);
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn otlp_dropped(&self) -> u64 {
        self.otlp_pushes().2
    }
}
