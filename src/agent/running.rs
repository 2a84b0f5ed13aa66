//! The running agent as the process knows it: at most one at a time, none in a freshly
//! forked child, and reachable without its guard (to flush before `exit`, and from the
//! signal listener).

use super::Command;
use crate::error::Error;
use crate::record::fork::PerProcess;
use crossbeam_channel::{Receiver, Sender, bounded, select};
use std::sync::{Mutex, MutexGuard, PoisonError};
#[cfg(any(unix, windows))]
use std::time::{Duration, Instant};

/// The way to a drain thread: its commands, and a channel that disconnects when it ends.
#[derive(Clone)]
pub(super) struct Line {
    pub(super) tx: Sender<Command>,
    /// Never receives a message: disconnects when the drain thread ends, for any
    /// reason (its sender lives on that thread's stack), which releases every caller
    /// still waiting for an answer.
    pub(super) alive: Receiver<()>,
}

impl Line {
    /// Sends a command and waits for its answer or the drain thread's end, whichever
    /// comes first: a command queued when the thread died is answered `AgentStopped`,
    /// and a slow report is waited for as long as it takes.
    pub(super) fn ask<T>(&self, command: impl FnOnce(Sender<T>) -> Command) -> Result<T, Error> {
        let (reply, answer) = bounded(1);
        self.tx
            .send(command(reply))
            .map_err(|_| Error::AgentStopped)?;
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
