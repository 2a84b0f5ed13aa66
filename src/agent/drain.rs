//! The drain thread's loop.

use super::Command;
use super::exporters::{Exporters, panic_text};
use super::failures::Failures;
use super::placement::Placement;
use super::reports;
use crate::analyze::{self, Calibration, Context, calibration};
use crate::collect::{self, Totals};
use crate::error::Error;
use crate::report::ReportOptions;
use crate::report::{Focus, Format, Report, TableOptions};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use std::io::Write;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Set by a test hook: the drain thread panics after its current command.
#[cfg(feature = "test-hooks")]
pub(super) static KILL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(super) struct Drain {
    pub(super) rx: Receiver<Command>,
    /// Rung by every sender: the drain waits parked (see `running::Bell`).
    pub(super) bell: super::running::Bell,
    pub(super) sink: Box<dyn Write + Send>,
    /// Where periodic (interval) reports go, when not to `sink`.
    pub(super) periodic_sink: Option<Box<dyn Write + Send>>,
    pub(super) options: ReportOptions,
    pub(super) format: Format,
    /// Which components reports keep, in what order (validated by `start`).
    pub(super) focus: Focus,
    pub(super) periodic: Option<Duration>,
    /// The wait between folds.
    pub(super) pace: super::pace::Pace,
    /// The interval log, if asked for.
    pub(super) hlog: Option<super::hlog::Hlog>,
    pub(super) final_report: bool,
    /// Periodic reports that could not be written, until a report shows them.
    pub(super) failures: Failures,
    /// Whether the main sink and the periodic sink have had a report with the header
    /// blocks (ENVIRONMENT, OVERHEAD): later ones leave them out.
    pub(super) headed: (bool, bool),
    /// The exporters, started: pushed to on their schedules, stopped as the thread
    /// ends.
    pub(super) exporters: Exporters,
    /// The start-up calibration, while it runs: periodic reports and exporters wait
    /// for it (the folds do not), so the drain never blocks on it.
    pub(super) calibrating: Option<JoinHandle<()>>,
    /// The flight recorder's dumps.
    pub(super) dumper: crate::flight::Dumper,
}

/// Which sink a report goes to.
enum SinkKind {
    Main,
    Periodic,
}

/// When the next periodic report and the next fold are due.
struct Schedule {
    periodic_count: u64,
    last_periodic: Instant,
    /// Wall-clock start of the current interval (for the interval log).
    interval_began: SystemTime,
    next_periodic: Option<Instant>,
    last_fold: Instant,
    next_fold: Instant,
}

/// The first tick of the series `due + k * interval` after `now` (`None` if it is
/// past what `Instant` can represent).
pub(super) fn next_tick(due: Instant, interval: Duration, now: Instant) -> Option<Instant> {
    let missed = (now - due).as_nanos() / interval.as_nanos();
    let ahead = u32::try_from(missed + 1).ok()?;
    due.checked_add(interval.checked_mul(ahead)?)
}

impl Drain {
    /// Starts the drain thread, which places itself first: a placement the OS refuses is
    /// `start`'s error. `alive` is the sender of the channel that disconnects when the
    /// thread ends (its receiver is in the `Line` the exporters already hold).
    pub(super) fn spawn(
        mut self,
        placement: Placement,
        alive: Sender<()>,
    ) -> Result<JoinHandle<()>, Error> {
        // Calibrate at start-up, off the user's threads and off the drain, so reports
        // need not wait and the first folds are not held up for its ~60 ms (~40 ms of
        // it busy). At the lowest priority; with CPUs of the drain's own, on those and
        // in the idle class, so neither the user's threads nor the drain wait for it:
        // at nice 19 it keeps its CPU until the next scheduler tick, and the 2,048-scope
        // bursts of `benches/scale.rs` lost 2,049 samples when it held the bursting
        // thread back 4 ms (see `docs/design.md`, "Pacing").
        let background = placement.clone();
        self.calibrating = std::thread::Builder::new()
            .name("latte-calibrate".into())
            .spawn(move || {
                crate::analyze::block_signals();
                background.apply_background();
                calibration();
            })
            .ok();
        let alive_tx = alive;
        let (placed_tx, placed) = bounded(1);
        let handle = std::thread::Builder::new()
            .name("latte-drain".into())
            .spawn(move || {
                // Dropped when this thread ends, by return or by panic.
                let _alive = alive_tx;
                let applied = placement.apply();
                let ok = applied.is_ok();
                let _ = placed_tx.send(applied);
                if ok {
                    // latte's own thread: what it allocates is counted nowhere.
                    crate::record::alloc::uncounted(|| self.run());
                }
            })
            .map_err(|e| Error::Spawn(Arc::new(e)))?;
        match placed.recv() {
            Ok(Ok(())) => Ok(handle),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(Error::DrainPlacement(Arc::new(e)))
            }
            Err(_) => Err(Error::AgentStopped),
        }
    }

    pub(super) fn run(mut self) {
        self.bell.hang();
        let now = Instant::now();
        let mut at = Schedule {
            periodic_count: 0,
            last_periodic: now,
            interval_began: SystemTime::now(),
            // A period past what `Instant` can add is "never".
            next_periodic: self.periodic.and_then(|p| now.checked_add(p)),
            last_fold: now,
            next_fold: now + self.pace.first_wait(),
        };
        self.exporters.schedule(now);
        loop {
            match super::running::next_command(&self.rx, self.deadline(&at)) {
                Ok(Command::Report(reply)) => {
                    let _ = reply.send(self.whole_run(None));
                }
                Ok(Command::WholeRun(reply)) => {
                    if let Some(report) = self.fresh_report() {
                        let _ = reply.send(report);
                    }
                }
                Ok(Command::DumpTimeline(reply)) => {
                    let _ = reply.send(self.dumper.dump(None));
                }
                Ok(Command::ReportInterval(reply)) => {
                    let _ = reply.send(self.interval(&mut at, true));
                }
                Ok(Command::Shutdown(reply)) => {
                    let result = self.finish(&mut at);
                    // Kept for the guard, should another caller have asked for the end.
                    let _ = self.failures.shared().finished.set(result.clone());
                    let _ = reply.send(result);
                    self.exporters.stop();
                    return;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The guard was leaked or forgotten: still leave the final report.
                    let _ = self.finish(&mut at);
                    self.exporters.stop();
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            #[cfg(feature = "test-hooks")]
            if KILL.swap(false, std::sync::atomic::Ordering::Relaxed) {
                panic!("latte-drain killed through the test hooks");
            }
            self.due_work(&mut at);
        }
    }

    /// When the drain next has work of its own: the next fold, or a report due
    /// sooner. Reports wait for the start-up calibration: until it ends, their due
    /// times (past, once due) must not be the deadline, or the drain would spin a CPU
    /// away from the calibration it waits for; the folds' pace looks again.
    fn deadline(&self, at: &Schedule) -> Instant {
        let calibrated = self.calibrated();
        [at.next_periodic, self.exporters.next_due()]
            .into_iter()
            .flatten()
            .filter(|_| calibrated)
            .fold(at.next_fold, Instant::min)
    }

    /// Whether the start-up calibration has ended (reports wait for it).
    fn calibrated(&self) -> bool {
        self.calibrating
            .as_ref()
            .is_none_or(JoinHandle::is_finished)
    }

    /// The periodic report and the fold, when they are due.
    fn due_work(&mut self, at: &mut Schedule) {
        let now = Instant::now();
        // Reports wait for the start-up calibration rather than block the folds on it.
        let calibrated = self.calibrated();
        if let (Some(due), Some(interval)) = (at.next_periodic, self.periodic)
            && now >= due
            && calibrated
        {
            if let Err(e) = self.interval(at, true) {
                self.failures.failed(e);
            }
            // Skip missed ticks rather than bursting to catch up.
            at.next_periodic = next_tick(due, interval, now);
        }
        if calibrated && self.exporters.next_due().is_some_and(|due| now >= due) {
            let mut exporters = std::mem::take(&mut self.exporters);
            let panics = exporters.push_due(now, || self.fresh_report());
            self.exporters = exporters;
            panics.into_iter().for_each(|e| self.failures.failed(e));
        }
        if now >= at.next_fold {
            let stats = collect::fold();
            super::placement::publish_cpu_time();
            if calibrated {
                self.dumper.after_fold();
            }
            let wait = self.pace.next_wait(stats.fill_rate, now - at.last_fold);
            at.last_fold = now;
            at.next_fold = now + wait;
        }
    }

    /// A report of what was recorded since the previous one, written if `write` (the
    /// interval log gets it either way).
    fn interval(&mut self, at: &mut Schedule, write: bool) -> Result<(), Error> {
        let calibration = calibration();
        let totals = collect::take_interval();
        at.periodic_count += 1;
        let label = format!(
            "periodic #{}, last {:.2} s",
            at.periodic_count,
            at.last_periodic.elapsed().as_secs_f64()
        );
        let logged = self.log_interval(&totals, calibration, at);
        at.last_periodic = Instant::now();
        if !write {
            return logged;
        }
        let report = self.assemble_as(&totals, calibration, Some(label));
        let written = self.write(report, Some(()));
        super::placement::release_freed_heap();
        written.and(logged)
    }

    /// Appends the interval's per-id histograms to the interval log, if there is one.
    fn log_interval(
        &mut self,
        totals: &Totals,
        calibration: &Calibration,
        at: &mut Schedule,
    ) -> Result<(), Error> {
        let now = SystemTime::now();
        let began = std::mem::replace(&mut at.interval_began, now);
        let Some(log) = &mut self.hlog else {
            return Ok(());
        };
        let histograms = analyze::per_id_histograms(totals, calibration, self.options.data);
        let length = now.duration_since(began).unwrap_or_default();
        log.write(&histograms, began, length)
            .map_err(|e| Error::Hlog(Arc::new(e)))
    }

    /// The last interval (so the periodic reports add up to the whole run; as a table
    /// only when the final report goes elsewhere), then the final report, which shows the periodic reports that failed. Returns the final
    /// report's error, else the run's periodic failures (the last interval's among
    /// them), else `Ok`.
    fn finish(&mut self, at: &mut Schedule) -> Result<(), Error> {
        // The last interval's table is not written just above the final table it
        // is part of (JSON reports and the interval log get it: their intervals add
        // up to the whole run).
        let above_final = self.final_report
            && self.periodic_sink.is_none()
            && matches!(self.format, Format::Table(_));
        if self.periodic.is_some()
            && let Err(e) = self.interval(at, !above_final)
        {
            self.failures.failed(e);
        }
        // The final state for the exporters, before the final report's sink can fail.
        let mut exporters = std::mem::take(&mut self.exporters);
        let panics = exporters.push_final(|| self.fresh_report());
        self.exporters = exporters;
        panics.into_iter().for_each(|e| self.failures.failed(e));
        if self.final_report {
            self.whole_run(Some("final".into()))?;
        }
        self.failures.at_stop()
    }

    /// A fresh whole-run report for the exporters, focused as the reports are (no
    /// series: exporters read the rows).
    fn fresh_report(&self) -> Option<Arc<Report>> {
        let threads = self.focus.thread_pattern().ok().flatten();
        let report = reports::whole_run(&self.options, threads.as_ref(), None, false);
        report.focus(&self.focus).ok().map(Arc::new)
    }

    /// Writes a report of everything recorded so far, with its series when it is
    /// written as JSON (a table does not show it) and covers every thread.
    fn whole_run(&mut self, label: Option<String>) -> Result<(), Error> {
        // Validated by `start`, so the pattern compiles.
        let threads = self.focus.thread_pattern().ok().flatten();
        let report = reports::whole_run(&self.options, threads.as_ref(), label, self.series());
        self.write(report, None)
    }

    /// Whether whole-run reports carry their series: when they are written as JSON
    /// and ALL THREADS covers every thread (no thread pattern: the series is over all
    /// threads).
    fn series(&self) -> bool {
        #[cfg(feature = "json")]
        let json = matches!(self.format, Format::Json);
        #[cfg(not(feature = "json"))]
        let json = false;
        json && self.focus.threads.is_none()
    }

    /// The report of `totals`, describing this process now.
    fn assemble_as(
        &self,
        totals: &Totals,
        calibration: &Calibration,
        label: Option<String>,
    ) -> Report {
        let context = Context { label, live: true };
        // Validated by `start`, so the pattern compiles.
        let threads = self.focus.thread_pattern().ok().flatten();
        let totals = analyze::of_threads(totals, threads.as_ref());
        reports::assemble(&totals, calibration, &self.options, context)
    }

    /// Writes a report to the sink (an interval report, `interval` set, to the
    /// periodic sink if there is one), with the periodic failures not shown yet. A sink
    /// that panics is an error like a sink that fails: returned (or counted, for
    /// periodic reports), and the agent goes on.
    fn write(&mut self, report: Report, interval: Option<()>) -> Result<(), Error> {
        let mut report = report.focus(&self.focus)?;
        self.failures.show_in(&mut report);
        self.exporters.show_in(&mut report);
        self.dumper.show_in(&mut report);
        let (sink, sink_kind) = match &mut self.periodic_sink {
            Some(periodic) if interval.is_some() => (periodic, SinkKind::Periodic),
            _ => (&mut self.sink, SinkKind::Main),
        };
        // A sink's first report carries the header blocks; later ones to the same sink
        // leave them out. Periodic reports are compact.
        let first = match sink_kind {
            SinkKind::Periodic => !std::mem::replace(&mut self.headed.1, true),
            SinkKind::Main => !std::mem::replace(&mut self.headed.0, true),
        };
        let format = match &self.format {
            Format::Table(table) => Format::Table(TableOptions {
                compact: table.compact || interval.is_some(),
                brief: table.brief || !first,
                ..table.clone()
            }),
            #[allow(unreachable_patterns)] // `Json` needs the `json` feature
            other => other.clone(),
        };
        let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            report.write(sink, format)?;
            sink.flush().map_err(|e| Error::Sink(Arc::new(e)))
        }));
        written.unwrap_or_else(|panic| {
            let why = panic_text(&*panic);
            let panicked = std::io::Error::other(format!("the sink panicked: {why}"));
            Err(Error::Sink(Arc::new(panicked)))
        })?;
        self.failures.shown();
        Ok(())
    }
}
