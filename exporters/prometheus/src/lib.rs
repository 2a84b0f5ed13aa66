//! Prometheus `/metrics` for [latte]: the agent's whole-run latency
//! histograms, quantiles and counts, served on scrape; and the live endpoint for
//! `latte-telemetry top`.
//!
//! ```no_run
//! use latte_prometheus::Prometheus;
//!
//! let prometheus = Prometheus::bind("0.0.0.0:9464")?;
//! println!("scrape http://{}/metrics", prometheus.local_addr());
//! let _latte = latte::builder().exporter(prometheus).start()?;
//! // ... instrumented code ...
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Prometheus`] is a [`latte::Exporter`] that only pulls: each scrape asks the agent
//! for a fresh whole-run report (waiting at most 2 s; a report serves the scrapes of
//! the next 50 ms) and writes it as
//! [`MetricSet`](latte::exporter::MetricSet) says, per component:
//!
//! | metric | type | what |
//! |---|---|---|
//! | `latte_latency_seconds` | histogram | every folded sample of the run over the buckets ([`Prometheus::buckets`]), and as a native histogram in the protobuf format |
//! | `latte_latency_quantile_seconds` | summary | the report's p50, p99, p99.9 of the whole run (exact ranks), with `_sum` and `_count` |
//! | `latte_samples_seen_total`, `latte_samples_lost_total` | counter | only grow (until `latte::collect::reset()`) |
//! | `latte_samples_bypass`, `latte_samples_outliers` | gauge | what the cleaning rule flags (kept in every figure) |
//! | `latte_allocations_total`, `latte_allocated_bytes_total` | counter | with `latte::alloc::Counting` installed only: allocations in the component's scopes, inclusive |
//! | `latte_anomalies_total{kind}` | counter | misuse and clock anomalies, by kind |
//! | `latte_clock_info{clock,frequency_hz,hypervisor}` | info | the clock behind the numbers |
//!
//! The answer is in the classic text format (`text/plain; version=0.0.4`, what
//! `promtool check metrics` reads) unless the scraper's `Accept` weighs another one
//! higher: OpenMetrics (Prometheus asks for it first), or Prometheus's protobuf format
//! (a Prometheus started with `--enable-feature=native-histograms` asks for it first),
//! in which `latte_latency_seconds` is also a **native histogram**: base-2 exponential
//! buckets ([`Exponential`](latte::exporter::Exponential), schema 8 at the finest)
//! that Prometheus merges across processes without loss. Any path other than
//! `/metrics` is a 404.
//!
//! Nothing here runs on the hot path, and nothing here can hold up the agent's drain
//! thread: the drain answers a scrape's request into a one-slot channel and goes on.
//! A hostile client cannot stall a scrape, a recorder or the agent's stop: the
//! `latte-metrics` thread only accepts connections; each is served by a connection
//! thread (16 at most, kept for later scrapes) that reads the request head within 2 s
//! and 8 KiB (else 431 or 400), never reads a body, and writes one answer within 2 s
//! with `Connection: close`. Bind it where only scrapers reach it: 16 connections that
//! send nothing keep scrapes out for 2 s.
//!
//! docs/fleet.md in the repository shows a scrape, the Prometheus configuration, the
//! Grafana queries and what the labels cost.
//!
//! The crate also serves the **live endpoint**, [`Live`]: the last interval and the
//! whole run as JSON for `latte-telemetry top`, on 127.0.0.1 unless bound elsewhere,
//! with the recording switch when [`Live::control`] allows it, over the same bounded
//! connections (docs/cli.md, "top").

mod families;
mod format;
mod http;
mod live;
mod protobuf;
mod scrape;
mod serve;
mod text;

pub use live::Live;

use latte::exporter::{Buckets, Exporter, Handle, InvalidBuckets, StartError};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

/// The `/metrics` endpoint, an exporter for [`latte::Builder::exporter`]: bound by
/// [`bind`](Prometheus::bind), serving once the agent starts, stopped with it.
///
/// ```
/// use latte_prometheus::Prometheus;
/// let prometheus = Prometheus::bind("127.0.0.1:0")?.thread_label(false);
/// let addr = prometheus.local_addr(); // the port the OS chose
/// assert!(addr.port() != 0);
/// let guard = latte::builder().exporter(prometheus).sink(std::io::sink()).start()?;
/// // scrape http://{addr}/metrics
/// guard.stop()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Prometheus {
    /// Until the exporter starts.
    listener: Option<TcpListener>,
    addr: SocketAddr,
    buckets: Result<Buckets, InvalidBuckets>,
    thread_label: bool,
    server: Option<serve::Server>,
}

impl Prometheus {
    /// Binds the endpoint's address now, so the port (port 0: one the OS chooses) is
    /// known before the agent starts ([`local_addr`](Prometheus::local_addr)). An
    /// address that does not resolve or is in use is the OS's error.
    ///
    /// ```
    /// let taken = latte_prometheus::Prometheus::bind("127.0.0.1:0")?;
    /// assert!(latte_prometheus::Prometheus::bind(taken.local_addr()).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind(addr: impl ToSocketAddrs) -> std::io::Result<Prometheus> {
        let listener = TcpListener::bind(addr)?;
        Ok(Prometheus {
            addr: listener.local_addr()?,
            listener: Some(listener),
            buckets: Ok(Buckets::default()),
            thread_label: false,
            server: None,
        })
    }

    /// The address the endpoint listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The latency histogram's bucket upper bounds (default: 1-2-5 steps from 10 ns
    /// to 10 s, 28 buckets, plus `+Inf`). Each bound adds one series per component.
    /// Bounds that are empty, zero or out of order make the agent's start fail
    /// ([`latte::Error::Exporter`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let prometheus = latte_prometheus::Prometheus::bind("127.0.0.1:0")?
    ///     .buckets([Duration::from_micros(2), Duration::from_micros(1)]);
    /// let err = latte::builder().exporter(prometheus).start().unwrap_err();
    /// assert!(err.to_string().contains("increasing order"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn buckets(mut self, bounds: impl IntoIterator<Item = Duration>) -> Prometheus {
        self.buckets = Buckets::new(bounds);
        self
    }

    /// One series per (component, thread) rather than per component (default off),
    /// labelled `thread` (the name) and `thread_serial` (the report's `#N`, so threads
    /// that share a name stay apart). The number of series is then multiplied by the
    /// number of threads that recorded each component: keep it for a small, fixed set
    /// of named threads (docs/fleet.md, "Labels and cardinality").
    ///
    /// ```
    /// let prometheus = latte_prometheus::Prometheus::bind("127.0.0.1:0")?.thread_label(true);
    /// # drop(prometheus);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn thread_label(mut self, enabled: bool) -> Prometheus {
        self.thread_label = enabled;
        self
    }
}

impl Exporter for Prometheus {
    fn name(&self) -> &str {
        "prometheus"
    }

    fn start(&mut self, agent: Handle) -> Result<(), StartError> {
        let buckets = self.buckets.clone()?;
        let listener = self
            .listener
            .take()
            .ok_or("the endpoint was started already")?;
        let route = scrape::route(agent, buckets, self.thread_label);
        self.server = Some(serve::Server::start(listener, "latte-metrics", route)?);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop();
        }
    }
}

impl Drop for Prometheus {
    /// Stops the endpoint if it still runs.
    fn drop(&mut self) {
        self.stop();
    }
}
