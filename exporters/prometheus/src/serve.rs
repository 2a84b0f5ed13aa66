//! The `latte-metrics` thread: accepts connections to the `/metrics` endpoint and
//! hands each to a connection thread ([`http`](super::http): bounded reads and writes,
//! `httparse` for the request), which answers from a fresh whole-run report (asked of
//! the agent through its [`Handle`] with a bounded wait, and cached briefly so a burst
//! of scrapes costs the drain thread one report), in the text format the scraper asks
//! for ([`text`](super::text)).
//!
//! Connection threads are started as needed, at most [`MAX_CONNECTIONS`], and kept:
//! an idle one takes the next connection, so steady scraping starts no thread (and
//! unmaps no stack, which would interrupt every CPU the process runs on). They end
//! when the endpoint stops.
//!
//! A hostile client cannot stall anything that matters. The accepting thread only
//! accepts; a connection holds its thread for at most the head's deadline plus a
//! report and the write's deadline; past [`MAX_CONNECTIONS`] busy threads a connection
//! is closed at once, to be retried by its scraper; an accept that fails (no file
//! descriptor left) is retried, never fatal; and the drain thread never waits on this
//! side (it answers into a one-slot channel). Stopping joins the accepting thread only;
//! connection threads finish the connection they hold within its deadlines, then end.

use crate::http::{self, Request, Response};
use crate::text::{self, Format};
use crossbeam_channel::{Receiver, Sender, bounded};
use latte::Report;
use latte::exporter::{Buckets, Handle, MetricSet};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a report serves scrapes before the agent is asked again.
const CACHE: Duration = Duration::from_millis(50);
/// The longest a scrape waits for the agent's report (then it is a 503).
const REPORT_WAIT: Duration = Duration::from_secs(2);
/// How long the accepting thread naps when no connection is waiting (and so how soon
/// it sees its stop flag).
const POLL: Duration = Duration::from_millis(10);
/// Connection threads at most, and so connections served at once.
pub(crate) const MAX_CONNECTIONS: usize = 16;
/// Stack of a connection's thread: a request head, a report's encoding.
const CONNECTION_STACK: usize = 256 * 1024;

/// The running `/metrics` endpoint.
#[derive(Debug)]
pub(crate) struct Server {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

/// What the connections share: the way to the agent and the cached report.
struct Endpoint {
    agent: Handle,
    buckets: Buckets,
    by_thread: bool,
    cached: Option<(Instant, Arc<Report>)>,
}

impl Server {
    /// Serves `/metrics` on `listener` from the reports `agent` gives.
    pub(crate) fn start(
        listener: TcpListener,
        buckets: Buckets,
        by_thread: bool,
        agent: Handle,
    ) -> std::io::Result<Server> {
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let handle = std::thread::Builder::new()
            .name("latte-metrics".into())
            .spawn(move || {
                let endpoint = Arc::new(Mutex::new(Endpoint {
                    agent,
                    buckets,
                    by_thread,
                    cached: None,
                }));
                let threads = Threads {
                    endpoint,
                    // Zero capacity: a connection goes only to a thread waiting for one.
                    idle: bounded(0),
                    running: Arc::new(AtomicUsize::new(0)),
                };
                while !stopped.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => threads.admit(stream),
                        // Nothing waiting, or nothing to accept with (no descriptor
                        // left): look again soon.
                        Err(_) => std::thread::sleep(POLL),
                    }
                }
            })?;
        Ok(Server { stop, handle })
    }

    /// Stops accepting (within [`POLL`]) and closes the listening socket. Connection
    /// threads finish the connection they hold, within its deadlines, and end.
    pub(crate) fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

/// The connection threads: the way to an idle one, and how many there are.
struct Threads {
    endpoint: Arc<Mutex<Endpoint>>,
    idle: (Sender<TcpStream>, Receiver<TcpStream>),
    running: Arc<AtomicUsize>,
}

impl Threads {
    /// Hands `stream` to an idle connection thread, or to a new one, or closes it when
    /// [`MAX_CONNECTIONS`] threads are busy or no thread can be had.
    fn admit(&self, stream: TcpStream) {
        let stream = match self.idle.0.try_send(stream) {
            Ok(()) => return,
            Err(busy) => busy.into_inner(),
        };
        let Some(slot) = Slot::take(&self.running) else {
            return;
        };
        let (idle, endpoint) = (self.idle.1.clone(), self.endpoint.clone());
        // A thread that cannot be had drops the closure, and with it the slot and stream.
        let _ = std::thread::Builder::new()
            .name("latte-metrics-conn".into())
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                let _slot = slot;
                let mut next = Some(stream);
                // Ends when the accepting thread has ended (the sender is gone).
                while let Some(stream) = next.take().or_else(|| idle.recv().ok()) {
                    http::serve(stream, |request| answer(&endpoint, request));
                }
            });
    }
}

/// One of the [`MAX_CONNECTIONS`] connection threads, given back when dropped (also
/// when its thread unwinds).
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
            let format = Format::negotiate(request.accept.as_deref());
            match endpoint.text(format) {
                Some(text) => Response::ok(format.content_type(), text),
                None => Response::error(503, "latte: the agent did not answer"),
            }
        }
        (false, "/metrics") => Response::error(405, "GET only"),
        _ => Response::error(404, "latte serves /metrics only"),
    }
}

impl Endpoint {
    /// The current metrics as text, `None` if the agent did not answer in time.
    fn text(&mut self, format: Format) -> Option<String> {
        let report = match &self.cached {
            Some((at, report)) if at.elapsed() < CACHE => report.clone(),
            _ => {
                let report = self.agent.whole_run(REPORT_WAIT)?;
                self.cached = Some((Instant::now(), report.clone()));
                report
            }
        };
        let set = MetricSet::of(&report, &self.buckets, self.by_thread);
        Some(text::encode(&set, format))
    }
}
