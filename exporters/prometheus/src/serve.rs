//! The accepting thread of an endpoint (`/metrics`, the live view): accepts
//! connections and hands each to a connection thread ([`http`](super::http): bounded
//! reads and writes, `httparse` for the request), which answers it with the endpoint's
//! route.
//!
//! Connection threads are started as needed, at most [`MAX_CONNECTIONS`], and kept:
//! an idle one takes the next connection, so steady scraping starts no thread (and
//! unmaps no stack, which would interrupt every CPU the process runs on). They end
//! when the endpoint stops.
//!
//! A hostile client cannot stall anything that matters. The accepting thread only
//! accepts; a connection holds its thread for at most the head's deadline plus the
//! route's answer and the write's deadline; past [`MAX_CONNECTIONS`] busy threads a
//! connection is closed at once, to be retried by its client; an accept that fails (no
//! file descriptor left) is retried, never fatal; and the drain thread never waits on
//! this side (the routes ask the agent with a bounded wait, and it answers into a
//! one-slot channel). Stopping joins the accepting thread only; connection threads
//! finish the connection they hold within its deadlines, then end.

use crate::http::{self, Request, Response};
use crossbeam_channel::{Receiver, Sender, bounded};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// What answers an endpoint's requests, on its connection threads.
pub(crate) type Route = Arc<dyn Fn(&Request) -> Response + Send + Sync>;
/// How long the accepting thread naps when no connection is waiting (and so how soon
/// it sees its stop flag).
const POLL: Duration = Duration::from_millis(10);
/// Connection threads at most, and so connections served at once.
pub(crate) const MAX_CONNECTIONS: usize = 16;
/// Stack of a connection's thread: a request head, a report's encoding. Its
/// histograms are deflated there, and the deflater's state (about 300 KiB) passes
/// through the stack on its way to the heap in an unoptimised build.
const CONNECTION_STACK: usize = 1024 * 1024;

/// A running endpoint.
#[derive(Debug)]
pub(crate) struct Server {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl Server {
    /// Serves `listener`'s connections with `route`, on threads named `name` (the
    /// accepting one) and `name-conn`.
    pub(crate) fn start(
        listener: TcpListener,
        name: &str,
        route: Route,
    ) -> std::io::Result<Server> {
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let conn = format!("{name}-conn");
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let threads = Threads {
                    route,
                    name: conn,
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
    route: Route,
    name: String,
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
        let (idle, route) = (self.idle.1.clone(), self.route.clone());
        // A thread that cannot be had drops the closure, and with it the slot and stream.
        let _ = std::thread::Builder::new()
            .name(self.name.clone())
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                let _slot = slot;
                let mut next = Some(stream);
                // Ends when the accepting thread has ended (the sender is gone).
                while let Some(stream) = next.take().or_else(|| idle.recv().ok()) {
                    http::serve(stream, |request| route(request));
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
