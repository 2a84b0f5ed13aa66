//! Fleet export: the whole-run report as Prometheus metrics (`/metrics`, feature
//! `prometheus`) and as OTLP/HTTP pushes (feature `otlp`), for dashboards that watch
//! many processes.
//!
//! Both read what the drain thread already computed: a whole-run [`Report`], turned
//! into one neutral [`metrics::MetricSet`] that each encoder writes in its own format.
//! Nothing here runs on the hot path, and nothing here can hold up the drain thread:
//! the HTTP thread asks the drain for a report with a bounded wait (the drain only
//! answers a command), and the drain leaves OTLP pushes for their thread in a
//! one-report mailbox, counting what it drops.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the settings ([`Settings`]), their validation, the running exporters ([`Running`]) |
//! | `metrics.rs` | a `Report` as one neutral per-component metric set (buckets, quantiles, counters) |
//! | `prometheus.rs` | the metric set in the OpenMetrics text format, written by `prometheus-client` |
//! | `serve.rs` | the `latte-metrics` thread: accepting `/metrics` connections for its connection threads |
//! | `http.rs` | one connection: its request head read within limits and parsed by `httparse`, one answer |
//! | `otlp.rs` | the metric set as OTLP protobuf messages, and the `latte-otlp` push thread |
//!
//! The module imports only the report, config and error leaves: the agent passes in
//! the way to ask its drain for a report as a plain closure.

#[cfg(feature = "prometheus")]
mod http;
#[cfg(any(feature = "prometheus", feature = "otlp"))]
pub(crate) mod metrics;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
#[cfg(feature = "prometheus")]
mod prometheus;
#[cfg(feature = "prometheus")]
pub(crate) mod serve;

use crate::error::Error;
#[cfg(feature = "prometheus")]
use crate::report::Report;
#[cfg(feature = "prometheus")]
use std::sync::Arc;
#[cfg(any(feature = "prometheus", feature = "otlp"))]
use std::time::Duration;

/// Asks the drain thread for a fresh whole-run report; `None` if it did not answer in
/// time or has stopped.
#[cfg(feature = "prometheus")]
pub(crate) type Snapshot = Arc<dyn Fn() -> Option<Arc<Report>> + Send + Sync>;

/// Shortest accepted OTLP push interval.
#[cfg(feature = "otlp")]
pub(crate) const MIN_OTLP_INTERVAL: Duration = Duration::from_millis(100);

/// The exporters' settings, as the builder collected them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Settings {
    /// Where to serve `/metrics`.
    #[cfg(feature = "prometheus")]
    pub(crate) metrics_addr: Option<String>,
    /// Upper bounds of the latency histogram's buckets (`None`: [`default_buckets`]).
    #[cfg(any(feature = "prometheus", feature = "otlp"))]
    pub(crate) buckets: Option<Vec<Duration>>,
    /// One series per (component, thread) instead of per component.
    #[cfg(any(feature = "prometheus", feature = "otlp"))]
    pub(crate) thread_label: bool,
    /// The OTLP/HTTP metrics URL and the push interval.
    #[cfg(feature = "otlp")]
    pub(crate) otlp: Option<(String, Duration)>,
}

/// The default bucket bounds: 1-2-5 steps from 10 ns to 10 s, 28 buckets (plus
/// `+Inf`), evenly spaced on a log scale to within the 1-2-5 rounding.
#[cfg(any(feature = "prometheus", feature = "otlp"))]
pub(crate) fn default_buckets() -> Vec<Duration> {
    let mut bounds = Vec::with_capacity(28);
    let mut decade = 10u64;
    while decade < 10_000_000_000 {
        for step in [1, 2, 5] {
            bounds.push(Duration::from_nanos(decade * step));
        }
        decade *= 10;
    }
    bounds.push(Duration::from_secs(10));
    bounds
}

impl Settings {
    /// The bucket bounds in seconds, as both encoders use them.
    #[cfg(any(feature = "prometheus", feature = "otlp"))]
    pub(crate) fn bounds_secs(&self) -> Vec<f64> {
        let bounds = self.buckets.clone().unwrap_or_else(default_buckets);
        bounds.iter().map(Duration::as_secs_f64).collect()
    }

    /// Refuses buckets that are empty, zero or out of order, and an OTLP endpoint or
    /// interval that cannot work. (An address is checked when it is bound.)
    pub(crate) fn validate(&self) -> Result<(), Error> {
        #[cfg(any(feature = "prometheus", feature = "otlp"))]
        if let Some(bounds) = &self.buckets {
            let ordered = bounds.windows(2).all(|w| w[0] < w[1]);
            if bounds.is_empty() || bounds[0].is_zero() || !ordered {
                return Err(Error::FleetSetting {
                    setting: "Builder::metrics_buckets",
                    reason: format!(
                        "{bounds:?}: bucket bounds must be at least one, above zero and in \
                         increasing order"
                    ),
                });
            }
        }
        #[cfg(feature = "otlp")]
        if let Some((url, interval)) = &self.otlp {
            if !url.starts_with("http://") {
                return Err(Error::FleetSetting {
                    setting: "Builder::otlp",
                    reason: format!("{url:?}: the endpoint must be an http:// URL"),
                });
            }
            if *interval < MIN_OTLP_INTERVAL {
                return Err(Error::FleetSetting {
                    setting: "Builder::otlp",
                    reason: format!("interval {interval:?} is shorter than {MIN_OTLP_INTERVAL:?}"),
                });
            }
        }
        Ok(())
    }
}

/// The running exporters: stopped (and their threads joined, within bounds) by
/// [`stop`](Running::stop) when the agent stops.
#[derive(Default)]
pub(crate) struct Running {
    /// The `/metrics` server.
    #[cfg(feature = "prometheus")]
    pub(crate) metrics: Option<serve::Server>,
    /// The OTLP push thread.
    #[cfg(feature = "otlp")]
    pub(crate) otlp: Option<otlp::Pusher>,
}

impl Running {
    /// Stops the exporters. Call after the drain thread has ended, so the last OTLP
    /// push (of the final state) is already queued.
    pub(crate) fn stop(&mut self) {
        #[cfg(feature = "prometheus")]
        if let Some(server) = self.metrics.take() {
            server.stop();
        }
        #[cfg(feature = "otlp")]
        if let Some(pusher) = self.otlp.take() {
            pusher.stop();
        }
    }
}
