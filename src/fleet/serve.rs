//! The `latte-metrics` thread: accepts connections to the `/metrics` endpoint and
//! serves each on a short-lived thread of its own ([`http`](super::http): bounded
//! reads and writes, `httparse` for the request), from a fresh whole-run report
//! (asked of the drain with a bounded wait, and cached briefly so a burst of scrapes
//! costs the drain one report).
//!
//! A hostile client cannot stall anything that matters. The accepting thread only
//! accepts; a connection holds its own thread for at most the head's deadline plus a
//! report and the write's deadline; at most [`MAX_CONNECTIONS`] are served at once
//! (past that a connection is closed at once, to be retried by its scraper); an
//! accept that fails (no file descriptor left) is retried, never fatal; and the drain
//! never waits on this side (it answers into a one-slot channel). Stopping joins the
//! accepting thread only; connection threads finish within their deadlines.

use super::http::{self, Request, Response};
use super::metrics::MetricSet;
use super::{Settings, Snapshot, prometheus};
use crate::error::Error;
use crate::report::Report;
use crossbeam_channel::Receiver;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a report serves scrapes before the drain is asked again.
const CACHE: Duration = Duration::from_millis(50);
/// How long the accepting thread naps when no connection is waiting (and so how soon
/// it sees its stop flag).
const POLL: Duration = Duration::from_millis(10);
/// Connections served at once.
pub(crate) const MAX_CONNECTIONS: usize = 16;
/// Stack of a connection's thread: a request head, a report's encoding.
const CONNECTION_STACK: usize = 256 * 1024;

/// The running `/metrics` endpoint.
pub(crate) struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

/// What the connections share: the way to the drain and the cached report.
struct Endpoint {
    snapshot: Snapshot,
    bounds: Vec<f64>,
    by_thread: bool,
    cached: Option<(Instant, Arc<Report>)>,
}

/// Binds `addr` (an address in use, or one that does not parse, is
/// [`Error::MetricsEndpoint`]).
pub(crate) fn bind(addr: &str) -> Result<TcpListener, Error> {
    TcpListener::bind(addr).map_err(|e| Error::MetricsEndpoint(Arc::new(e)))
}

impl Server {
    /// Serves `/metrics` on `listener` from the reports of the [`Snapshot`] that
    /// `wiring` brings once the drain runs (the thread ends if it never comes).
    pub(crate) fn start(
        listener: TcpListener,
        settings: &Settings,
        wiring: Receiver<Snapshot>,
    ) -> Result<Server, Error> {
        let io = |e: std::io::Error| Error::MetricsEndpoint(Arc::new(e));
        let addr = listener.local_addr().map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (bounds, by_thread) = (settings.bounds_secs(), settings.thread_label);
        let stopped = stop.clone();
        let handle = std::thread::Builder::new()
            .name("latte-metrics".into())
            .spawn(move || {
                let Ok(snapshot) = wiring.recv() else {
                    return; // the drain did not start
                };
                let endpoint = Arc::new(Mutex::new(Endpoint {
                    snapshot,
                    bounds,
                    by_thread,
                    cached: None,
                }));
                let open = Arc::new(AtomicUsize::new(0));
                while !stopped.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => admit(stream, &endpoint, &open),
                        // Nothing waiting, or nothing to accept with (no descriptor
                        // left): look again soon.
                        Err(_) => std::thread::sleep(POLL),
                    }
                }
            })
            .map_err(io)?;
        Ok(Server { addr, stop, handle })
    }

    /// The address it listens on (the port the OS chose, for port 0).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting (within [`POLL`]) and closes the listening socket. Connections
    /// being served end on their own, within their deadlines.
    pub(crate) fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

/// Serves `stream` on a thread of its own, or closes it when [`MAX_CONNECTIONS`] are
/// being served or no thread can be had.
fn admit(stream: TcpStream, endpoint: &Arc<Mutex<Endpoint>>, open: &Arc<AtomicUsize>) {
    let Some(slot) = Slot::take(open) else {
        return;
    };
    let endpoint = endpoint.clone();
    // A thread that cannot be had drops the closure, and with it the slot and stream.
    let _ = std::thread::Builder::new()
        .name("latte-metrics-conn".into())
        .stack_size(CONNECTION_STACK)
        .spawn(move || {
            let _slot = slot;
            http::serve(stream, |request| answer(&endpoint, request));
        });
}

/// One of the [`MAX_CONNECTIONS`] connections being served, given back when dropped
/// (also when its thread unwinds).
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(open: &Arc<AtomicUsize>) -> Option<Slot> {
        let slot = Slot(open.clone());
        (open.fetch_add(1, Ordering::Relaxed) < MAX_CONNECTIONS).then_some(slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn answer(endpoint: &Mutex<Endpoint>, request: &Request) -> Response {
    match (request.get, request.path.as_str()) {
        (true, "/metrics") => {
            // A panic elsewhere cannot leave the cache half-written: use it anyway.
            let mut endpoint = endpoint.lock().unwrap_or_else(|e| e.into_inner());
            match endpoint.text() {
                Some(text) => Response::ok(prometheus::CONTENT_TYPE, text),
                None => Response::error(503, "latte: the agent did not answer"),
            }
        }
        (false, "/metrics") => Response::error(405, "GET only"),
        _ => Response::error(404, "latte serves /metrics only"),
    }
}

impl Endpoint {
    /// The current metrics as text, `None` if the drain did not answer in time.
    fn text(&mut self) -> Option<String> {
        let report = match &self.cached {
            Some((at, report)) if at.elapsed() < CACHE => report.clone(),
            _ => {
                let report = (self.snapshot)()?;
                self.cached = Some((Instant::now(), report.clone()));
                report
            }
        };
        let set = MetricSet::of(&report, &self.bounds, self.by_thread);
        prometheus::encode(set).ok()
    }
}
