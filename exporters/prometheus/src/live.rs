//! The live endpoint: a running program's last interval and whole run as JSON, for
//! `latte-telemetry top` (and `curl`), with the recording switch when asked for.
//!
//! A thread of its own (`latte-live`) cuts the intervals: every
//! [`interval`](Live::interval) it asks the agent for a whole-run report (a bounded
//! wait) and keeps what it added over the previous one
//! ([`latte::exporter::Interval::between`], which is [`latte::Report::since`]). Requests are answered from what it keeps
//! (with the recording switch as it is at the answer), never by waiting on the agent,
//! and every viewer sees the same intervals. Nobody
//! asking for 10 s, it stops asking the agent (the next interval then covers the
//! pause, and says how long it is). Connections are served as `/metrics`'s are:
//! bounded head, no body read, 16 connection threads.

use crate::http::{Request, Response};
use crate::scrape::REPORT_WAIT;
use crate::serve::{self, Route};
use crossbeam_channel::{RecvTimeoutError, Sender, bounded};
use latte::Report;
use latte::exporter::{Exporter, Handle, Interval, StartError};
use latte::report::{JsonStyle, RecordingOff};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Nobody asking for this long, the intervals pause.
const IDLE: Duration = Duration::from_secs(10);

/// The live endpoint, an exporter for [`latte::Builder::exporter`]: bound by
/// [`local`](Live::local) (127.0.0.1) or [`bind`](Live::bind), serving once the
/// agent starts, stopped with it. Read-only unless [`control`](Live::control) lets
/// clients switch recording.
///
/// | request | answer |
/// |---|---|
/// | `GET /live` | the last interval, [`latte::exporter::Interval`] as JSON (version 3: a report of the interval with the program, its id, the sequence, the length and the control; 503 before the first) |
/// | `GET /report` | the whole-run report the last interval was cut from, as JSON |
/// | `GET /recording` | `{"on":true,"control":false}` |
/// | `POST /recording/on`, `POST /recording/off` | switches recording ([`latte::set_recording`]) and answers as `GET /recording`; 403 unless [`control`](Live::control) |
///
/// ```
/// use latte_prometheus::Live;
/// use std::time::Duration;
/// let live = Live::local(0)?.interval(Duration::from_millis(200)).control(true);
/// let addr = live.local_addr(); // 127.0.0.1 and the port the OS chose
/// assert!(addr.ip().is_loopback());
/// let guard = latte::builder().exporter(live).sink(std::io::sink()).start()?;
/// // latte-telemetry top {addr}
/// guard.stop()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Live {
    /// Until the exporter starts.
    listener: Option<TcpListener>,
    addr: SocketAddr,
    control: bool,
    every: Duration,
    running: Option<Running>,
}

#[derive(Debug)]
struct Running {
    server: serve::Server,
    stop: Sender<()>,
    cutter: JoinHandle<()>,
}

/// What the cutting thread keeps for the requests.
struct Kept {
    /// The last interval.
    view: Option<Arc<Interval>>,
    /// The whole-run report it was cut from.
    report: Option<Arc<Report>>,
    /// The last request.
    asked: Instant,
}

impl Live {
    /// The shortest [`interval`](Live::interval).
    pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

    /// Binds `127.0.0.1:port` now (port 0: one the OS chooses): only this machine
    /// reaches it.
    ///
    /// ```
    /// let live = latte_prometheus::Live::local(0)?;
    /// assert_eq!(live.local_addr().ip().to_string(), "127.0.0.1");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn local(port: u16) -> std::io::Result<Live> {
        Live::bind(("127.0.0.1", port))
    }

    /// Binds `addr` now, as [`Prometheus::bind`](crate::Prometheus::bind) does. Bind
    /// it where only the people who may look (and, with [`control`](Live::control),
    /// switch) reach it.
    ///
    /// ```
    /// let taken = latte_prometheus::Live::bind("127.0.0.1:0")?;
    /// assert!(latte_prometheus::Live::bind(taken.local_addr()).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind(addr: impl ToSocketAddrs) -> std::io::Result<Live> {
        let listener = TcpListener::bind(addr)?;
        Ok(Live {
            addr: listener.local_addr()?,
            listener: Some(listener),
            control: false,
            every: Duration::from_secs(1),
            running: None,
        })
    }

    /// The address the endpoint listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Lets clients switch recording on and off (`POST /recording/on`, `/off`;
    /// default: no, 403).
    ///
    /// ```
    /// let live = latte_prometheus::Live::local(0)?.control(true);
    /// # drop(live);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn control(mut self, enabled: bool) -> Live {
        self.control = enabled;
        self
    }

    /// How often an interval is cut (default 1 s, at least
    /// [`MIN_INTERVAL`](Live::MIN_INTERVAL)): each costs the agent one whole-run
    /// report.
    ///
    /// ```
    /// use std::time::Duration;
    /// let live = latte_prometheus::Live::local(0)?.interval(Duration::from_millis(500));
    /// # drop(live);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn interval(mut self, every: Duration) -> Live {
        self.every = every.max(Live::MIN_INTERVAL);
        self
    }
}

impl Exporter for Live {
    fn name(&self) -> &str {
        "live"
    }

    fn start(&mut self, agent: Handle) -> Result<(), StartError> {
        let listener = self
            .listener
            .take()
            .ok_or("the endpoint was started already")?;
        let kept = Arc::new(Mutex::new(Kept {
            view: None,
            report: None,
            asked: Instant::now(),
        }));
        let (stop, stopped) = bounded::<()>(0);
        let (every, control) = (self.every, self.control);
        let cutting = kept.clone();
        let cutter = std::thread::Builder::new()
            .name("latte-live".into())
            .spawn(move || {
                let mut cut = Cut::new(agent, control);
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    cut.next(&cutting);
                }
            })?;
        let server = serve::Server::start(listener, "latte-live-http", route(kept, control));
        match server {
            Ok(server) => {
                self.running = Some(Running {
                    server,
                    stop,
                    cutter,
                });
                Ok(())
            }
            Err(e) => {
                drop(stop);
                let _ = cutter.join();
                Err(e.into())
            }
        }
    }

    fn stop(&mut self) {
        if let Some(running) = self.running.take() {
            running.server.stop();
            drop(running.stop);
            let _ = running.cutter.join();
        }
    }
}

impl Drop for Live {
    /// Stops the endpoint if it still runs.
    fn drop(&mut self) {
        self.stop();
    }
}

/// The cutting thread's state: the previous whole-run report and when it came.
struct Cut {
    agent: Handle,
    control: bool,
    previous: Option<(Instant, Arc<Report>)>,
    began: Instant,
    sequence: u64,
    program: String,
}

impl Cut {
    fn new(agent: Handle, control: bool) -> Cut {
        let program = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_default();
        Cut {
            agent,
            control,
            previous: None,
            began: Instant::now(),
            sequence: 0,
            program,
        }
    }

    /// Cuts the next interval into `kept`, unless nobody asked for a while.
    fn next(&mut self, kept: &Mutex<Kept>) {
        {
            let kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
            if kept.view.is_some() && kept.asked.elapsed() > IDLE {
                return;
            }
        }
        let Some(report) = self.agent.whole_run(REPORT_WAIT) else {
            return;
        };
        let now = Instant::now();
        let since = self.previous.as_ref().map_or(self.began, |(at, _)| *at);
        let earlier = self.previous.as_ref().map(|(_, r)| &**r);
        let mut view = Interval::between(earlier, &report, (now - since).as_secs_f64());
        self.sequence += 1;
        view.sequence = self.sequence;
        view.program = self.program.clone();
        view.pid = std::process::id();
        view.control = self.control;
        let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.view = Some(Arc::new(view));
        kept.report = Some(report.clone());
        drop(kept);
        self.previous = Some((now, report));
    }
}

/// The last interval as JSON, with the recording switch as it is now (it may have
/// been switched since the interval was cut).
fn now(view: &Interval) -> String {
    let switch = latte::collect::recording();
    let off = (switch.pauses > 0).then_some(RecordingOff {
        seconds: switch.off_for.as_secs_f64(),
        pauses: switch.pauses,
        now: !switch.on,
    });
    if view.report.recording_off == off {
        return serde_json::to_string(view).unwrap_or_default();
    }
    let mut view = view.clone();
    view.report.recording_off = off;
    serde_json::to_string(&view).unwrap_or_default()
}

/// The routes of the live endpoint, answered from `kept`.
fn route(kept: Arc<Mutex<Kept>>, control: bool) -> Route {
    Arc::new(move |request: &Request| {
        let (view, report) = {
            let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
            kept.asked = Instant::now();
            (kept.view.clone(), kept.report.clone())
        };
        const JSON: &str = "application/json";
        let state = || {
            let on = latte::collect::recording().on;
            Response::ok(JSON, format!("{{\"on\":{on},\"control\":{control}}}"))
        };
        match (request.get, request.post, request.path.as_str()) {
            (true, _, "/live") => match view {
                Some(view) => Response::ok(JSON, now(&view)),
                None => Response::error(
                    503,
                    "latte: no interval yet (the first comes one interval after the start)",
                ),
            },
            (true, _, "/report") => match report {
                Some(report) => Response::ok(JSON, report.to_json(JsonStyle::Compact)),
                None => Response::error(503, "latte: no report yet"),
            },
            (true, _, "/recording") => state(),
            (_, true, "/recording/on" | "/recording/off") if control => {
                latte::set_recording(request.path.ends_with("/on"));
                state()
            }
            (_, true, "/recording/on" | "/recording/off") => Response::error(
                403,
                "latte: this endpoint does not switch recording (latte_prometheus::Live::control)",
            ),
            (true, _, "/") => Response::ok(
                "text/plain; charset=utf-8",
                "latte live endpoint: GET /live, GET /report, GET /recording, POST /recording/on|off\n",
            ),
            (false, false, _) | (false, true, "/live" | "/report" | "/recording" | "/") => {
                Response::error(405, "GET only (POST for /recording/on and /off)")
            }
            _ => Response::error(404, "latte serves /live, /report and /recording"),
        }
    })
}
