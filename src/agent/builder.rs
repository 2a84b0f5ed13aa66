//! The agent's settings: [`Builder`], validated and applied by [`Builder::start`].

use super::exporters::Exporters;
use super::failures::{Failures, Shared};
use super::guard::Guard;
use super::running::{self, Ends, Line};
use super::{drain, hlog, placement, signals};
use crate::clock::{self, ClockChoice};
use crate::config;
use crate::error::Error;
use crate::report::ReportOptions;
use crate::report::{Focus, Format};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// Settings for the agent. Invalid values are reported by [`start`](Builder::start).
///
/// How the run's final report survives exits: the guard's drop writes it (also while a
/// panic unwinds); [`Guard::stop`] or [`Guard::stop_running`] writes it before
/// [`std::process::exit`]; on SIGTERM and SIGINT (Windows: Ctrl-C, Ctrl-Break, console close), by default,
/// latte writes it and then lets the signal end the process, unless the program
/// handles the signal itself and its shutdown drops the guard
/// ([`final_report_on_signals`](Builder::final_report_on_signals) has the rules, and
/// turns it off); on an abort or `kill -9`, the [`hlog`](Builder::hlog) interval log
/// keeps every interval but the last.
pub struct Builder {
    pub(super) clock: Option<ClockChoice>,
    pub(super) ring_capacity: Option<usize>,
    pub(super) stack_depth: Option<usize>,
    pub(super) memory_cap: Option<u64>,
    pub(super) node_limit: Option<usize>,
    /// The flight recorder (see `flight.rs`), off unless set.
    pub(super) flight: Option<super::flight::Flight>,
    /// What triggers captures, where they go (see `capture.rs`).
    pub(super) capture: super::capture::Settings,
    pub(super) options: ReportOptions,
    pub(super) format: Format,
    pub(super) focus: Focus,
    pub(super) sink: Option<Box<dyn Write + Send>>,
    pub(super) periodic_sink: Option<Box<dyn Write + Send>>,
    pub(super) periodic: Option<Duration>,
    pub(super) drain_pace: (Duration, Duration),
    pub(super) slowest: usize,
    pub(super) frames_listed: usize,
    pub(super) hlog: Option<std::path::PathBuf>,
    pub(super) placement: placement::Placement,
    pub(super) max_exited_threads: usize,
    pub(super) final_report: bool,
    /// See `Builder::final_report_on_signals` (in `signals.rs`).
    pub(super) on_signals: bool,
    /// The exporters (see `exporters.rs`).
    pub(super) exporters: Exporters,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder {
            clock: None,
            ring_capacity: None,
            stack_depth: None,
            memory_cap: None,
            node_limit: None,
            flight: None,
            capture: super::capture::Settings::default(),
            // Time on calibrated data: what a reader wants first. The seed's view
            // (cycles, raw) is `.unit(Unit::Cycles).data(Data::Raw)`.
            options: ReportOptions::default(),
            format: Format::default(),
            focus: Focus::default(),
            sink: None,
            periodic_sink: None,
            periodic: None,
            drain_pace: Builder::DEFAULT_DRAIN_PACE,
            slowest: config::Limit::SLOWEST.default,
            frames_listed: config::Limit::FRAMES_LISTED.default,
            hlog: None,
            placement: placement::Placement::default(),
            max_exited_threads: config::Limit::EXITED_THREADS.default,
            final_report: true,
            on_signals: signals::DEFAULT,
            exporters: Exporters::default(),
        }
    }
}

impl core::fmt::Debug for Builder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Builder")
            .field("clock", &self.clock)
            .field("ring_capacity", &self.ring_capacity)
            .field("stack_depth", &self.stack_depth)
            .field("memory_cap", &self.memory_cap)
            .field("node_limit", &self.node_limit)
            .field("flight", &self.flight)
            .field("capture", &self.capture)
            .field("options", &self.options)
            .field("format", &self.format)
            .field("focus", &self.focus)
            .field("sink", &self.sink.as_ref().map_or("stdout", |_| "custom"))
            .field(
                "periodic_sink",
                &self.periodic_sink.as_ref().map_or("sink", |_| "custom"),
            )
            .field("periodic", &self.periodic)
            .field("drain_pace", &self.drain_pace)
            .field("slowest", &self.slowest)
            .field("frames_listed", &self.frames_listed)
            .field("hlog", &self.hlog)
            .field("placement", &self.placement)
            .field("max_exited_threads", &self.max_exited_threads)
            .field("final_report", &self.final_report)
            .field("on_signals", &self.on_signals)
            .field("exporters", &self.exporters)
            .finish()
    }
}

impl Builder {
    /// Shortest accepted periodic report interval: 1 ms (a report is a full analysis;
    /// a shorter period would keep the drain thread busy writing).
    pub const MIN_PERIODIC: Duration = config::MIN_PERIODIC;
    /// The drain thread's shortest and longest wait between folds unless configured:
    /// 1 ms and 10 ms. The longest wait is what rings get after a long quiet spell
    /// (about 17 s): a default ring (2^16 samples) then laps only if a thread starts
    /// recording more than 6.5 million samples of one id per second.
    pub const DEFAULT_DRAIN_PACE: (Duration, Duration) =
        (Duration::from_millis(1), Duration::from_millis(10));

    /// Which clock to read: decided from the platform (`Auto`, the default) or forced.
    /// `LATTE_CLOCK=os|tsc|auto` in the environment does the same when this is not
    /// set. Every sample must come from one clock, so the choice is made before
    /// anything records and cannot change afterwards: asking for a different clock
    /// once one is in use makes [`start`](Builder::start) return
    /// [`Error::ClockAlreadySelected`].
    pub fn clock(mut self, choice: ClockChoice) -> Builder {
        self.clock = Some(choice);
        self
    }

    /// Writes a report every `interval`, covering exactly the samples recorded since
    /// the previous one (the intervals' histograms add up to the whole run), so a live
    /// service can watch its latencies move. At least
    /// [`MIN_PERIODIC`](Builder::MIN_PERIODIC); an interval too long to fall due within
    /// the life of the process (`Duration::MAX`, say) means "never": only the last
    /// interval, at shutdown, is written.
    ///
    /// ```
    /// use std::time::Duration;
    /// let err = latte::builder().periodic(Duration::from_nanos(1)).start().unwrap_err();
    /// assert!(err.to_string().contains("at least 1ms"));
    /// ```
    pub fn periodic(mut self, interval: Duration) -> Builder {
        self.periodic = Some(interval);
        self
    }

    /// Bounds of the drain thread's wait between two folds of the rings into the
    /// whole-run histograms (default
    /// [`DEFAULT_DRAIN_PACE`](Builder::DEFAULT_DRAIN_PACE): 1 ms to 10 ms).
    /// After each fold the drain picks its next wait from the peak fill rate it has
    /// seen (remembered, and halved every 5 s): the time the fastest-filling ring takes
    /// at that rate to fill a quarter of its capacity, within these bounds, so a ring
    /// laps only when the drain cannot keep up (or the bound is too long for it). A sample overwritten before a fold read it is
    /// counted as lost, never silently dropped.
    ///
    /// ```
    /// use std::time::Duration;
    /// let err = latte::builder()
    ///     .drain_pace(Duration::from_millis(5), Duration::from_millis(1))
    ///     .start()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("drain pace"));
    /// ```
    pub fn drain_pace(mut self, min: Duration, max: Duration) -> Builder {
        self.drain_pace = (min, max);
        self
    }

    /// Also writes an HdrHistogram interval log (`.hlog`) to `path`: at every
    /// periodic report, one histogram per id of that interval (all threads, before
    /// cleaning, in counter ticks of the report's data), tagged with the id's name and
    /// flushed at once. Needs [`periodic`](Builder::periodic). Any HdrHistogram tool
    /// reads it (`HistogramLogAnalyzer`, the `hdrhistogram` crate's log reader).
    ///
    /// ```
    /// let err = latte::builder().hlog("/tmp/no-periodic.hlog").start().unwrap_err();
    /// assert!(err.to_string().contains("periodic"));
    /// ```
    pub fn hlog(mut self, path: impl Into<std::path::PathBuf>) -> Builder {
        self.hlog = Some(path.into());
        self
    }

    /// Runs the drain thread only on these CPUs (numbered as the OS does, from 0), to
    /// keep it off the cores the recording threads own; the start-up calibration keeps
    /// to them too. Linux and Windows (there, CPUs 0 to 63); elsewhere
    /// [`start`](Builder::start) returns [`Error::DrainPlacement`], as it does for a
    /// CPU the process may not use or a number past the OS's limit.
    ///
    /// ```no_run
    /// // The hot loop owns CPUs 2 and 3; the drain stays on 0 and 1.
    /// let _latte = latte::builder().drain_cpus([0, 1]).start()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn drain_cpus(mut self, cpus: impl IntoIterator<Item = usize>) -> Builder {
        self.placement.cpus = cpus.into_iter().collect();
        self
    }

    /// Lowers the drain thread's priority to this nice value, 0 (unchanged, the
    /// default) to 19 (the lowest), so it yields to the recording threads. Linux and
    /// Windows (there 1 to 9 is below normal, 10 to 19 the lowest priority); elsewhere,
    /// and out of range, [`Error::DrainPlacement`].
    ///
    /// ```
    /// let err = latte::builder().drain_nice(20).start().unwrap_err();
    /// assert!(err.to_string().contains("nice"));
    /// ```
    pub fn drain_nice(mut self, nice: i32) -> Builder {
        self.placement.nice = nice;
        self
    }

    /// Whether dropping the guard writes a final report (default `true`).
    pub fn final_report(mut self, enabled: bool) -> Builder {
        self.final_report = enabled;
        self
    }

    /// Validates the settings, applies them and starts the drain thread.
    ///
    /// Errors: an invalid capacity, depth or interval; [`Error::AlreadyRunning`] if an
    /// agent is running; [`Error::Spawn`] if the thread cannot start. On error nothing
    /// has changed.
    pub fn start(mut self) -> Result<Guard, Error> {
        // The frame trigger's budget is the reports' (set by `frame_budget` or
        // `report_options`).
        self.capture.frame_budget = self.options.frame_budget;
        self.validate()?;
        let on_signals = self.on_signals;
        if on_signals {
            signals::listen()?; // once per process: a thread that waits for signals
        }
        let guard = running::claim(|| self.launch())?;
        if on_signals {
            signals::arm();
        }
        Ok(guard)
    }

    /// Every setting's error, before anything changes.
    pub(super) fn validate(&self) -> Result<(), Error> {
        self.validate_limits()?;
        if let Some(flight) = &self.flight {
            flight.validate()?;
        }
        self.capture.validate(self.flight.is_some())?;
        let capacity = self.ring_capacity.unwrap_or_else(config::ring_capacity);
        let (cap, ring_bytes) = (
            self.memory_cap.unwrap_or_else(config::memory_cap),
            config::ring_bytes(capacity),
        );
        if cap < ring_bytes {
            return Err(Error::MemoryCap { cap, ring_bytes });
        }
        if let Some(interval) = self.periodic.filter(|i| *i < Builder::MIN_PERIODIC) {
            return Err(Error::Interval {
                requested: interval,
            });
        }
        self.exporters.validate()?;
        if self.hlog.is_some() && self.periodic.is_none() {
            return Err(Error::Hlog(Arc::new(std::io::Error::other(
                "an interval log needs periodic reports: set Builder::periodic",
            ))));
        }
        if !(0..=19).contains(&self.placement.nice) {
            return Err(Error::DrainPlacement(Arc::new(std::io::Error::other(
                format!(
                    "drain nice value {} is invalid: it must be 0 (unchanged) to 19 (lowest)",
                    self.placement.nice
                ),
            ))));
        }
        self.focus.pattern()?;
        self.focus.thread_pattern()?;
        if let Some((setting, value)) = self.options.cleaning.invalid() {
            return Err(Error::Cleaning { setting, value });
        }
        let (min, max) = self.drain_pace;
        if min.is_zero() || min > max || max > Duration::from_secs(60) {
            return Err(Error::DrainPace { min, max });
        }
        Ok(())
    }

    /// Applies the settings and spawns the drain thread (the caller holds the process's
    /// agent slot).
    fn launch(self) -> Result<(Guard, Line), Error> {
        if let Some(choice) = self.clock {
            clock::select_clock(choice)?;
        }
        config::apply(config::Limits {
            ring_capacity: self.ring_capacity,
            stack_depth: self.stack_depth,
            memory_cap: self.memory_cap,
            node_limit: self.node_limit,
            max_exited: self.max_exited_threads,
            flight_entries: self.flight.map_or(0, |f| f.entries),
            flight_window: self.flight.map_or(Duration::ZERO, |f| f.window),
        });
        config::set_slowest(self.slowest);
        config::set_frames_listed(self.frames_listed);
        crate::record::flight::ORIGIN.store(clock::ticks(), std::sync::atomic::Ordering::Relaxed);
        // An earlier agent's triggers end with it. The absolute thresholds follow once
        // the drain has the calibrated frequency.
        crate::collect::arm_triggers(self.capture.arms());
        let hlog = match &self.hlog {
            Some(path) => Some(
                hlog::Hlog::create(path, std::time::SystemTime::now())
                    .map_err(|e| Error::Hlog(Arc::new(e)))?,
            ),
            None => None,
        };
        // The drain's line exists before the drain thread: the exporters start first
        // and keep it.
        let (line, Ends { rx, bell, alive_tx }) = Line::new();
        let mut exporters = self.exporters;
        exporters.start(&line)?;
        let shared = Arc::new(Shared::default());
        let drain = drain::Drain {
            rx,
            bell,
            sink: self.sink.unwrap_or_else(|| Box::new(std::io::stdout())),
            periodic_sink: self.periodic_sink,
            options: self.options,
            format: self.format,
            focus: self.focus,
            periodic: self.periodic,
            pace: super::pace::Pace::new(self.drain_pace),
            hlog,
            final_report: self.final_report,
            failures: Failures::new(shared.clone()),
            headed: (false, false),
            exporters,
            calibrating: None,
            captures: super::capturer::Capturer::new(self.capture, self.flight.is_some()),
        };
        let handle = drain.spawn(self.placement, alive_tx)?;
        let guard = Guard {
            line: line.clone(),
            handle: Some(handle),
            shared,
            pid: std::process::id(),
        };
        Ok((guard, line))
    }
}
