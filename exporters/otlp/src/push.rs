//! The push thread: the agent's drain thread leaves a whole-run report at every
//! interval in a one-report mailbox ([`Queue::offer`], never blocking), and the
//! `latte-otlp` thread turns each into an `ExportMetricsServiceRequest` (`encode.rs`;
//! deltas from `delta.rs` if asked) and sends it (`send.rs`: TLS, headers, gzip,
//! retries within one deadline). The newest report is the one worth sending (it is
//! whole-run, and deltas are taken from the last accepted push, not the last made):
//! while one waits, a periodic push is skipped (counted as dropped; the endpoint is
//! slow), and the final one replaces it. Why not the `opentelemetry` SDK:
//! docs/design.md ("Exporters").

use crate::Histograms;
use crate::config::Temporality;
use crate::delta::Baseline;
use crate::encode::{Window, request};
use crate::send::{Outcome, Sender};
use crossbeam_channel::{Receiver, bounded};
use latte::Report;
use latte::exporter::{Buckets, Handle, MetricSet};
use prost::Message as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// The default longest a push may take (connect, send, answer, retries), and so the
/// longest the agent's stop waits for the last one (plus 0.5 s).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(2);

/// Counts the push thread and the drain thread share with the user's [`Pushes`](crate::Pushes).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    /// Reports dropped because the queue was full (the endpoint slow or stalled).
    pub(crate) dropped: AtomicU64,
    /// Pushes the endpoint accepted (a 2xx answer).
    pub(crate) sent: AtomicU64,
    /// Pushes that failed (no connection, a timeout, an error status after retries).
    pub(crate) failed: AtomicU64,
    /// Attempts beyond each push's first (a 429, 502, 503 or 504 answer).
    pub(crate) retries: AtomicU64,
    /// Why the last failed push failed.
    pub(crate) last_error: Mutex<Option<String>>,
}

/// The report waiting for the push thread, if one is.
type Mailbox = Arc<Mutex<Option<Arc<Report>>>>;

/// The drain's end: a one-report mailbox and the bell that wakes the push thread.
/// Dropping it lets the push thread end once the mailbox is empty.
#[derive(Debug)]
pub(crate) struct Queue {
    mailbox: Mailbox,
    bell: crossbeam_channel::Sender<()>,
    stats: Arc<Stats>,
}

impl Queue {
    /// Whether a report still waits for the push thread (the endpoint is slow): then a
    /// periodic push is skipped, counted as a drop, and the drain need not make the
    /// report.
    pub(crate) fn is_full(&self) -> bool {
        if lock(&self.mailbox).is_some() {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Leaves `report` for the push thread; never blocks. A report still waiting is
    /// replaced (and counted as dropped): the newest state wins.
    pub(crate) fn offer(&self, report: Arc<Report>) {
        if lock(&self.mailbox).replace(report).is_some() {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
        // A bell already rung wakes the thread all the same.
        let _ = self.bell.try_send(());
    }
}

/// A lock held only to put or take one value, so a poisoned one (which cannot
/// happen there) still holds a valid value.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the push thread makes of each report.
pub(crate) struct Shape {
    pub(crate) buckets: Buckets,
    pub(crate) by_thread: bool,
    pub(crate) histograms: Histograms,
    pub(crate) temporality: Temporality,
}

/// The running push thread.
#[derive(Debug)]
pub(crate) struct Pusher {
    handle: JoinHandle<()>,
    /// Disconnects when the thread ends.
    done: Receiver<()>,
    /// How long `stop` waits for the last push.
    wait: Duration,
}

impl Pusher {
    /// Starts the push thread, sending with `sender`, counting into `stats` and
    /// telling the agent of failures through `agent`; returns it and the queue for
    /// the drain.
    pub(crate) fn start(
        sender: Sender,
        shape: Shape,
        stats: Arc<Stats>,
        agent: Handle,
    ) -> std::io::Result<(Pusher, Queue)> {
        let mailbox = Mailbox::default();
        let (bell, rung) = bounded::<()>(1);
        let (done_tx, done) = bounded::<()>(0);
        let counts = stats.clone();
        let inbox = mailbox.clone();
        let wait = sender.timeout + Duration::from_millis(500);
        let handle = std::thread::Builder::new()
            .name("latte-otlp".into())
            .spawn(move || {
                let _done = done_tx;
                let mut baseline = Baseline::new(SystemTime::now());
                let began = baseline.since;
                // After the bell's last ring (the drain gone), what is left is pushed.
                let waiting = rung.iter().chain([()]).map(|()| lock(&inbox).take());
                for report in waiting.flatten() {
                    let now = SystemTime::now();
                    let set = MetricSet::of(&report, &shape.buckets, shape.by_thread);
                    let t = shape.temporality;
                    let delta = baseline.delta(
                        &report,
                        set,
                        &shape.buckets,
                        shape.by_thread,
                        (t.histograms_delta(), t.sums_delta()),
                    );
                    let window = Window {
                        began,
                        since: baseline.since,
                        now,
                        temporality: t,
                    };
                    let body = request(&delta, window, shape.histograms).encode_to_vec();
                    let outcome = sender.send(&body);
                    let retries = match &outcome {
                        Outcome::Sent { retries } | Outcome::Failed { retries, .. } => *retries,
                    };
                    counts
                        .retries
                        .fetch_add(u64::from(retries), Ordering::Relaxed);
                    match outcome {
                        Outcome::Sent { .. } => {
                            baseline.accepted(report, now);
                            counts.sent.fetch_add(1, Ordering::Relaxed);
                        }
                        Outcome::Failed { error, .. } => {
                            agent.failed(&error);
                            *lock(&counts.last_error) = Some(error);
                            counts.failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })?;
        let queue = Queue {
            mailbox,
            bell,
            stats,
        };
        Ok((Pusher { handle, done, wait }, queue))
    }

    /// Waits for the last pushes (the queue has been dropped) at most the push
    /// timeout plus 0.5 s; a push still stuck then is left to end on its own.
    pub(crate) fn stop(self) {
        let _ = self.done.recv_timeout(self.wait);
        if self.handle.is_finished() {
            let _ = self.handle.join();
        }
    }
}
