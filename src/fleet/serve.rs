//! The `latte-metrics` thread: `tiny_http` serves `GET /metrics` from a fresh
//! whole-run report (asked of the drain with a bounded wait, and cached briefly so a
//! burst of scrapes costs the drain one report).
//!
//! A hostile client cannot stall anything that matters: `tiny_http` reads each
//! connection on its own pool thread (an idle or endless connection holds only that
//! thread), this thread only takes complete requests, and the drain never waits on
//! this thread (it answers into a one-slot channel). What a hostile client can still
//! cost is memory (`tiny_http` sets no limit on a header's size) and a pool thread per
//! open connection: bind the endpoint where only the scrapers reach it.

use super::metrics::MetricSet;
use super::{Settings, Snapshot, prometheus};
use crate::error::Error;
use crate::report::Report;
use crossbeam_channel::Receiver;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a report serves scrapes before the drain is asked again.
const CACHE: Duration = Duration::from_millis(50);
/// How often the thread looks at its stop flag while no request comes.
const POLL: Duration = Duration::from_millis(50);

/// The running `/metrics` endpoint.
pub(crate) struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

/// What the thread needs besides the socket.
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
        let http = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| io(std::io::Error::other(e.to_string())))?;
        let stop = Arc::new(AtomicBool::new(false));
        let (bounds, by_thread) = (settings.bounds_secs(), settings.thread_label);
        let stopped = stop.clone();
        let handle = std::thread::Builder::new()
            .name("latte-metrics".into())
            .spawn(move || {
                let Ok(snapshot) = wiring.recv() else {
                    return; // the drain did not start
                };
                let mut endpoint = Endpoint {
                    snapshot,
                    bounds,
                    by_thread,
                    cached: None,
                };
                while !stopped.load(Ordering::Relaxed) {
                    if let Ok(Some(request)) = http.recv_timeout(POLL) {
                        endpoint.answer(request);
                    }
                }
            })
            .map_err(|e| Error::MetricsEndpoint(Arc::new(e)))?;
        Ok(Server { addr, stop, handle })
    }

    /// The address it listens on (the port the OS chose, for port 0).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the thread (within [`POLL`] plus a request being answered) and closes
    /// the socket. Connections still open are closed by their pool threads.
    pub(crate) fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

impl Endpoint {
    fn answer(&mut self, request: tiny_http::Request) {
        use tiny_http::{Header, Method, Response};
        let path = request.url().split('?').next().unwrap_or("");
        let response = match (request.method(), path) {
            (Method::Get, "/metrics") => match self.text() {
                Some(text) => {
                    let mut response = Response::from_string(text);
                    // A constant, valid header: it always parses.
                    if let Ok(kind) = Header::from_bytes("Content-Type", prometheus::CONTENT_TYPE) {
                        response.add_header(kind);
                    }
                    response
                }
                None => {
                    Response::from_string("latte: the agent did not answer\n").with_status_code(503)
                }
            },
            (_, "/metrics") => Response::from_string("GET only\n").with_status_code(405),
            _ => Response::from_string("latte serves /metrics only\n").with_status_code(404),
        };
        // A client that went away is its own loss.
        let _ = request.respond(response);
    }

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
