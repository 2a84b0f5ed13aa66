//! The running agent as the process knows it: at most one at a time, none in a freshly
//! forked child, and reachable without its guard (to flush before `exit`, and from the
//! signal listener).

use super::Command;
use crate::error::Error;
use crate::record::fork::PerProcess;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, bounded, select};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::Thread;
#[cfg(any(unix, windows))]
use std::time::Duration;
use std::time::Instant;

/// The way to a drain thread: its commands, and a channel that disconnects when it ends.
#[derive(Clone)]
pub(super) struct Line {
    pub(super) tx: Sender<Command>,
    /// Never receives a message: disconnects when the drain thread ends, for any
    /// reason (its sender lives on that thread's stack), which releases every caller
    /// still waiting for an answer.
    pub(super) alive: Receiver<()>,
    /// Wakes the drain after a command is queued, and after `tx` is dropped (a field
    /// after it, so it drops after it): the drain sees a disconnected queue at once.
    pub(super) bell: Bell,
}

/// The drain thread's doorbell. The drain waits for its next command parked, not
/// inside the channel's receive: that spins and then calls `sched_yield`, and on
/// Linux's EEVDF scheduler a yield hands the CPU to any runnable thread, the idle-class
/// start-up calibration included, for the rest of its slice (1-4 ms), while rings fill.
/// Every sender rings after queueing, so a command is seen at once.
#[derive(Clone, Default)]
pub(super) struct Bell(Arc<OnceLock<Thread>>);

impl Bell {
    /// Makes the calling thread (the drain) the one this bell wakes: before it first
    /// looks for a command, so a command queued earlier is found by that look.
    pub(super) fn hang(&self) {
        let _ = self.0.set(std::thread::current());
    }

    /// Wakes the drain (or makes its next park return at once).
    pub(super) fn ring(&self) {
        if let Some(drain) = self.0.get() {
            drain.unpark();
        }
    }
}

impl Drop for Bell {
    fn drop(&mut self) {
        self.ring();
    }
}

/// The drain's next command, or the deadline, or the end of every line to it: parked
/// between looks, never yielding (see [`Bell`]).
pub(super) fn next_command(
    rx: &Receiver<Command>,
    deadline: Instant,
) -> Result<Command, RecvTimeoutError> {
    loop {
        match rx.try_recv() {
            Ok(command) => return Ok(command),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(RecvTimeoutError::Timeout);
        }
        std::thread::park_timeout(deadline - now);
    }
}

/// The drain thread's ends of a new [`Line`].
pub(super) struct Ends {
    /// Where the line's commands arrive.
    pub(super) rx: Receiver<Command>,
    /// The doorbell the line rings.
    pub(super) bell: Bell,
    /// Held by the drain thread until it ends: its drop disconnects `Line::alive`.
    pub(super) alive_tx: Sender<()>,
}

impl Line {
    /// A line to a drain thread not yet started, and that thread's ends of it.
    pub(super) fn new() -> (Line, Ends) {
        let (tx, rx) = bounded(16);
        let (alive_tx, alive) = bounded::<()>(0);
        let bell = Bell::default();
        let line = Line {
            tx,
            alive,
            bell: bell.clone(),
        };
        (line, Ends { rx, bell, alive_tx })
    }

    /// Sends a command and waits for its answer or the drain thread's end, whichever
    /// comes first: a command queued when the thread died is answered `AgentStopped`,
    /// and a slow report is waited for as long as it takes.
    pub(super) fn ask<T>(&self, command: impl FnOnce(Sender<T>) -> Command) -> Result<T, Error> {
        let (reply, answer) = bounded(1);
        self.tx
            .send(command(reply))
            .map_err(|_| Error::AgentStopped)?;
        self.bell.ring();
        select! {
            recv(answer) -> r => r.map_err(|_| Error::AgentStopped),
            recv(self.alive) -> _ => answer.try_recv().map_err(|_| Error::AgentStopped),
        }
    }

    /// As [`ask`](Line::ask), but gives up at `deadline`, also while queueing the
    /// command: `None` if the drain stopped without an answer or none came in time.
    #[cfg(any(unix, windows))]
    pub(super) fn ask_until<T>(
        &self,
        command: impl FnOnce(Sender<T>) -> Command,
        deadline: Instant,
    ) -> Option<T> {
        let (reply, answer) = bounded(1);
        self.tx.send_deadline(command(reply), deadline).ok()?;
        self.bell.ring();
        select! {
            recv(answer) -> r => r.ok(),
            recv(self.alive) -> _ => answer.try_recv().ok(),
            default(deadline.saturating_duration_since(Instant::now())) => None,
        }
    }

    /// As [`ask`](Line::ask), but never waits more than `wait`, nor to queue the
    /// command: `None` if the queue is full, the drain stopped, or no answer came.
    pub(super) fn ask_within<T>(
        &self,
        command: impl FnOnce(Sender<T>) -> Command,
        wait: std::time::Duration,
    ) -> Option<T> {
        let (reply, answer) = bounded(1);
        self.tx.try_send(command(reply)).ok()?;
        self.bell.ring();
        select! {
            recv(answer) -> r => r.ok(),
            recv(self.alive) -> _ => answer.try_recv().ok(),
            default(wait) => None,
        }
    }
}

/// The process's agent. Per process: a child forked while its parent runs an agent
/// starts with none (the parent's drain thread does not exist there) and may start its
/// own; a lock the parent held at the fork is not the child's.
static RUNNING: PerProcess<Mutex<Option<Line>>> = PerProcess::new(|| Mutex::new(None));

fn slot() -> MutexGuard<'static, Option<Line>> {
    RUNNING.get().lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `launch` if no agent is running in this process, and records the agent it
/// started; [`Error::AlreadyRunning`] otherwise. Nothing is recorded if `launch` fails.
pub(super) fn claim<G>(launch: impl FnOnce() -> Result<(G, Line), Error>) -> Result<G, Error> {
    let mut slot = slot();
    if slot.is_some() {
        return Err(Error::AlreadyRunning);
    }
    let (guard, line) = launch()?;
    *slot = Some(line);
    Ok(guard)
}

/// Forgets the agent: its guard has stopped it and joined its thread.
pub(super) fn release() {
    *slot() = None;
}

/// Stops the running agent as dropping its guard would (the last interval, the final
/// report, the drain thread's end) and returns the final report's result;
/// [`Error::AgentStopped`] if no agent runs or it has already stopped.
pub(super) fn stop() -> Result<(), Error> {
    let line = slot().clone().ok_or(Error::AgentStopped)?;
    line.ask(Command::Shutdown)?
}

/// As [`stop`], but waits at most `timeout` for the final report (the signal listener:
/// a sink that blocks must not keep the process alive); [`Error::AgentStopped`] if no
/// answer came by then.
#[cfg(any(unix, windows))]
pub(super) fn stop_within(timeout: Duration) -> Result<(), Error> {
    let line = slot().clone().ok_or(Error::AgentStopped)?;
    // A timeout too long to represent waits "forever": for a century.
    let deadline = Instant::now()
        .checked_add(timeout)
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 86_400));
    line.ask_until(Command::Shutdown, deadline)
        .unwrap_or(Err(Error::AgentStopped))
}

#[cfg(test)]
mod tests {
    use super::{Command, Ends, Line, next_command};
    use crossbeam_channel::{RecvTimeoutError, bounded};
    use std::time::{Duration, Instant};

    /// Far enough that reaching it means the wake-up was lost.
    const FAR: Duration = Duration::from_secs(60);

    #[test]
    fn a_parked_drain_takes_a_command_at_once_and_wakes_when_every_line_is_gone() {
        let (line, Ends { rx, bell, .. }) = Line::new();
        bell.hang();
        let sender = std::thread::spawn(move || {
            let (reply, answer) = bounded(1);
            line.tx.send(Command::Report(reply)).unwrap();
            line.bell.ring();
            // The drain answers, then this thread drops the last line.
            answer.recv().unwrap()
        });
        let began = Instant::now();
        let Ok(Command::Report(reply)) = next_command(&rx, began + FAR) else {
            panic!("no command");
        };
        reply.send(Ok(())).unwrap();
        assert!(sender.join().unwrap().is_ok());
        assert!(matches!(
            next_command(&rx, Instant::now() + FAR),
            Err(RecvTimeoutError::Disconnected)
        ));
        assert!(began.elapsed() < FAR);
    }

    #[test]
    fn with_nothing_queued_the_drain_waits_until_its_deadline() {
        let (_line, Ends { rx, bell, .. }) = Line::new();
        bell.hang();
        let deadline = Instant::now() + Duration::from_millis(20);
        assert!(matches!(
            next_command(&rx, deadline),
            Err(RecvTimeoutError::Timeout)
        ));
        assert!(Instant::now() >= deadline);
    }
}
