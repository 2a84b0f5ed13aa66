//! The agent's settings: [`Builder`], validated and applied by [`Builder::start`].

use super::exporters::Exporters;
use super::failures::{Failures, Shared};
use super::guard::Guard;
use super::running::{self, Ends, Line};
use super::{drain, hlog, placement, signals};
use crate::clock::{self, ClockChoice};
use crate::config;
use crate::error::Error;
use crate::exporter::Exporter;
use crate::flight::DumpTrigger;
use crate::flight::{self, DumpSettings, Flight};
use crate::report::{Cleaning, Data, Focus, Format, ReportOptions, Unit};
use std::io::Write;
use std::path::PathBuf;
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
    pub(super) flight: Option<Flight>,
    /// What triggers dumps, where they go (see `dump.rs`).
    pub(super) dump: DumpSettings,
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
            dump: DumpSettings::default(),
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
            .field("dump", &self.dump)
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
        self.dump.frame_budget = self.options.frame_budget;
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
        self.dump.validate(self.flight.is_some())?;
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
        // The features' observers of the fold, before the drain's first fold. An
        // earlier agent's triggers end with it; their absolute thresholds follow once
        // the drain has the calibrated frequency.
        crate::series::install();
        crate::frames::install();
        flight::arm(self.dump.arms());
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
            dumper: flight::Dumper::new(self.dump, self.flight.is_some()),
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

/// What reports say and where they go: unit, data, cleaning, format, table layout,
/// focus, sinks.
impl Builder {
    /// Cycles or time in reports (default [`Unit::Time`]: ns, us, ms or s as the
    /// values need; [`Unit::Cycles`] is the C++ original's view, raw counter ticks).
    pub fn unit(mut self, unit: Unit) -> Builder {
        self.options.unit = unit;
        self
    }

    /// Raw or overhead-corrected data in reports (default [`Data::Calibrated`]: each
    /// sample minus the instrumentation's own overhead; [`Data::Raw`] as recorded).
    ///
    /// ```
    /// use latte::{Data, Unit};
    /// // The C++ original's sample report: counter ticks as recorded.
    /// let guard = latte::builder().unit(Unit::Cycles).data(Data::Raw).sink(std::io::sink()).start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn data(mut self, data: Data) -> Builder {
        self.options.data = data;
        self
    }

    /// The rule that flags samples far above the median (BYPASS) or outside the IQR
    /// fences; flagged samples
    /// stay in every figure, and the cleaned figures leave them out. A number that is NaN,
    /// infinite or negative makes [`start`](Builder::start) return
    /// [`Error::Cleaning`](crate::Error::Cleaning) (see [`Cleaning`]).
    ///
    /// ```
    /// use latte::{Cleaning, Error, report::Fences};
    /// let fences = Fences { k: f64::NAN, ..Fences::default() };
    /// let cleaning = Cleaning { fences: Some(fences), ..Cleaning::default() };
    /// let err = latte::builder().cleaning(cleaning).start().unwrap_err();
    /// assert_eq!(err, Error::Cleaning { setting: "Fences::k", value: f64::NAN });
    /// assert!(err.to_string().contains("Fences::k = NaN"));
    /// ```
    pub fn cleaning(mut self, cleaning: Cleaning) -> Builder {
        self.options.cleaning = cleaning;
        self
    }

    /// The length a frame should stay within (a frame runs from one
    /// [`latte_frame!`](crate::latte_frame) mark to the next): each report counts the
    /// frames over it (`frames_over_budget_total` in the exporters) and names, for the
    /// longest of them, the components that exceeded their own median time per frame
    /// by the most ([`PerFrame`](crate::report::PerFrame)). Sets
    /// [`ReportOptions::frame_budget`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let guard = latte::builder()
    ///     .frame_budget(Duration::from_micros(16_667))
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn frame_budget(mut self, budget: std::time::Duration) -> Builder {
        self.options.frame_budget = Some(budget);
        self
    }

    /// Every report option at once: unit, data, cleaning rule and which figures the
    /// table's main columns show (default [`ReportOptions::default`]: time, calibrated,
    /// every sample). [`ReportOptions::seed`] is the C++ original's view: counter
    /// ticks as recorded, statistics after cleaning.
    ///
    /// ```
    /// use latte::ReportOptions;
    /// let guard = latte::builder()
    ///     .report_options(ReportOptions::seed())
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn report_options(mut self, options: ReportOptions) -> Builder {
        self.options = options;
        self
    }

    /// Table or JSON; a table's layout is its [`TableOptions`](crate::report::TableOptions): width (the terminal's,
    /// `COLUMNS` or 100 unless set), columns, wide and compact modes. Periodic tables are
    /// always compact (one table over all threads, the top 20 rows), and a sink's
    /// tables after its first are brief: without the ENVIRONMENT and OVERHEAD blocks its
    /// first one carried.
    ///
    /// ```
    /// use latte::Format;
    /// use latte::report::{Column, TableOptions};
    /// let table = TableOptions {
    ///     columns: Some(vec![Column::Component, Column::Samples, Column::P99]),
    ///     ..TableOptions::default()
    /// };
    /// let guard = latte::builder().format(Format::Table(table)).sink(std::io::sink()).start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn format(mut self, format: Format) -> Builder {
        self.format = format;
        self
    }

    /// Which threads and components the agent's reports keep and in what order: a
    /// thread pattern (applied before the analysis, so ALL THREADS covers only those
    /// threads), an id pattern, a sort column, the top N (see [`Focus`]); applied to
    /// every report it writes, tables and JSON alike. An invalid pattern makes [`start`](Builder::start) return
    /// [`Error::Pattern`](crate::Error::Pattern).
    ///
    /// ```
    /// use latte::report::{Column, Focus, Sort};
    /// let focus = Focus {
    ///     ids: Some("order_*".into()),
    ///     sort: Some(Sort { column: Column::P99, descending: true }),
    ///     top: Some(10),
    ///     threads: Some("engine-*".into()),
    /// };
    /// let guard = latte::builder().focus(focus).sink(std::io::sink()).start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn focus(mut self, focus: Focus) -> Builder {
        self.focus = focus;
        self
    }

    /// Where reports are written (stdout unless set).
    pub fn sink(mut self, sink: impl Write + Send + 'static) -> Builder {
        self.sink = Some(Box::new(sink));
        self
    }

    /// Where periodic reports (and [`Guard::report_interval`](crate::Guard::report_interval)) are written, when not to
    /// [`sink`](Builder::sink): a log file for the intervals, say, and the final report
    /// on stdout. Failures are kept and shown as for the main sink.
    ///
    /// ```
    /// use std::time::Duration;
    /// let intervals = std::env::temp_dir().join("latte-doc-intervals.log");
    /// let guard = latte::builder()
    ///     .periodic(Duration::from_secs(1))
    ///     .periodic_sink(std::fs::File::create(&intervals)?)
    ///     .sink(std::io::sink()) // the final report
    ///     .start()?;
    /// latte::latte_pulse!("doc_periodic_sink");
    /// guard.report_interval()?;
    /// guard.stop()?;
    /// assert!(std::fs::read_to_string(&intervals)?.contains("periodic #1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn periodic_sink(mut self, sink: impl Write + Send + 'static) -> Builder {
        self.periodic_sink = Some(Box::new(sink));
        self
    }
}

/// What the recorder holds: ring capacity, stack depth, call-tree nodes, the memory cap,
/// the slowest samples, the frames kept whole, exited threads (each declared once, with
/// its default and bounds, as a [`Limit`](crate::collect::Limit)).
impl Builder {
    /// Samples kept per (thread, id), overwrite-oldest: a power of two within the
    /// bounds of [`Limit::RING_CAPACITY`](crate::collect::Limit::RING_CAPACITY) (2 to 2^28; default 2^16). Applies to
    /// rings created after [`start`](Builder::start), and stays after the agent stops.
    /// A ring starts at 1,024 slots (8 KiB; the capacity if smaller) and doubles on its
    /// thread's push that would first overwrite a sample, up to the capacity, so an id
    /// that records little holds little; [`prepare`](crate::collect::prepare) makes it
    /// whole at once. The OS backs a ring's pages only as samples reach them.
    pub fn ring_capacity(mut self, samples: usize) -> Builder {
        self.ring_capacity = Some(samples);
        self
    }

    /// Open scopes per thread, within [`Limit::STACK_DEPTH`](crate::collect::Limit::STACK_DEPTH) (1 to 4,096; default
    /// 64). A Start on a
    /// full stack gives up the oldest open scope, counted as abandoned under its id, so
    /// the newest scopes keep recording; the abandoned scope's Stop is absorbed. Applies
    /// to threads that start recording after [`start`](Builder::start), and stays after
    /// the agent stops.
    pub fn stack_depth(mut self, depth: usize) -> Builder {
        self.stack_depth = Some(depth);
        self
    }

    /// Call-tree nodes a thread may make below the root, within
    /// [`Limit::NODE_LIMIT`](crate::collect::Limit::NODE_LIMIT) (0 to 2^20; default 4,096). Each scope records
    /// under the scope open below it on its thread: a node per distinct path, each
    /// with a ring of its own (starting at 1,024 slots, 8 KiB, charged against the
    /// [`memory_cap`](Builder::memory_cap); a node of a [`prepare`](crate::collect::prepare)d
    /// id is made whole when its path first runs). Past the limit, a new path is
    /// counted once as `folded_paths` (the report names it) and records under its
    /// parent's node when the parent is the same id (deep recursion), else under the
    /// id at the root: deep recursion and paths made from data stay bounded. The flat
    /// per-id rows are the same whatever the limit; 0 makes a flat profile (every
    /// scope a root). Applies to paths made after [`start`](Builder::start), and stays after
    /// the agent stops.
    ///
    /// ```
    /// use latte::{Id, Mode};
    /// static DIVE: Id = Id::new("doc_node_limit");
    /// fn dive(depth: u32) {
    ///     latte::start(&DIVE, Mode::Fast);
    ///     if depth > 0 {
    ///         dive(depth - 1);
    ///     }
    ///     latte::stop(&DIVE, Mode::Fast);
    /// }
    /// let guard = latte::builder().node_limit(8).final_report(false).start()?;
    /// let thread = std::thread::Builder::new().name("diver".into());
    /// thread.spawn(|| dive(20))?.join().unwrap();
    /// guard.stop()?;
    ///
    /// let capture = latte::capture();
    /// let diver = capture.thread("diver").unwrap();
    /// // The root's node and 8 below it; the 12 deepest calls share the 8th, and the
    /// // path that could not have a node is counted once. Every call recorded.
    /// assert_eq!(diver.components.len(), 9);
    /// assert_eq!(diver.samples("doc_node_limit").len(), 21);
    /// assert_eq!(diver.anomalies.folded_paths, 1);
    ///
    /// let refused = latte::builder().node_limit(usize::MAX).start().unwrap_err();
    /// assert!(refused.to_string().contains("node limit"), "{refused}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn node_limit(mut self, nodes: usize) -> Builder {
        self.node_limit = Some(nodes);
        self
    }

    /// Bytes the rings of all the user's threads and the whole run's histograms may
    /// take together (default 1 GiB, [`Limit::MEMORY_CAP`](crate::collect::Limit::MEMORY_CAP); a
    /// ring reserves 8 bytes per sample of [`ring_capacity`](Builder::ring_capacity)).
    /// Ids are not known in advance, so the cap is enforced at an id's first use on a
    /// thread: past it, no ring is made, the id records nothing on that thread, and
    /// every record it drops is counted under its name (the report's `over_cap`
    /// anomaly and a line naming the ids;
    /// [`Unpaired::over_cap`](crate::collect::Unpaired::over_cap) per id). It is
    /// charged again each time a ring doubles; a doubling it refuses leaves the ring at
    /// its size, wrapping there (counted in `Footprint::rings_kept_small`, named in
    /// the report). Rings
    /// of exited threads are pooled for reuse or freed, giving their bytes back.
    /// Histograms hold samples already recorded, so they are never refused: past the
    /// cap, pooled rings are freed for them, and beyond that the total passes the cap
    /// by what they grow (see [`Footprint`](crate::collect::Footprint)'s
    /// `memory_cap_used`). latte's own calibration threads are not charged. Applies from
    /// [`start`](Builder::start) on, and stays after the agent stops; a cap smaller
    /// than one ring makes `start` return [`Error::MemoryCap`](crate::Error::MemoryCap).
    ///
    /// ```
    /// // A ring of 1,024 samples takes 8 KiB: a 4 KiB cap could never hold one.
    /// let err = latte::builder().ring_capacity(1024).memory_cap(4096).start().unwrap_err();
    /// assert_eq!(err, latte::Error::MemoryCap { cap: 4096, ring_bytes: 8192 });
    /// ```
    pub fn memory_cap(mut self, bytes: u64) -> Builder {
        self.memory_cap = Some(bytes);
        self
    }

    /// How many of the slowest samples of each (thread, id) the whole run keeps, with
    /// their thread and when they were recorded, within [`Limit::SLOWEST`](crate::collect::Limit::SLOWEST)
    /// (0, none, to 1,000; default 10). Reports list them per
    /// component, slowest first ([`Row::slowest`](crate::report::Row::slowest)).
    /// Applies from [`start`](Builder::start) on, and stays after the agent stops.
    ///
    /// ```
    /// let err = latte::builder().slowest(1_000_000).start().unwrap_err();
    /// assert!(err.to_string().contains("slowest"));
    /// ```
    pub fn slowest(mut self, samples: usize) -> Builder {
        self.slowest = samples;
        self
    }

    /// Exited threads kept individually in reports (default 256,
    /// [`Limit::EXITED_THREADS`](crate::collect::Limit::EXITED_THREADS)); older ones are merged
    /// into one `<exited threads>` entry per id, which keeps memory bounded under
    /// thread churn.
    pub fn max_exited_threads(mut self, threads: usize) -> Builder {
        self.max_exited_threads = threads;
        self
    }

    /// How many of the longest frames each thread keeps whole, within
    /// [`Limit::FRAMES_LISTED`](crate::collect::Limit::FRAMES_LISTED) (0 to 100,000; default 1,000): a report lists every frame
    /// over budget among them, with what ate it
    /// ([`PerFrame::worst`](crate::report::PerFrame::worst)), and counts those beyond
    /// ([`PerFrame::unlisted`](crate::report::PerFrame::unlisted)); the table names the
    /// worst few. Applies from [`start`](Builder::start) on, and stays after the agent
    /// stops.
    ///
    /// ```
    /// let err = latte::builder().frames_listed(1 << 30).start().unwrap_err();
    /// assert!(err.to_string().contains("frames listed"));
    /// ```
    pub fn frames_listed(mut self, frames: usize) -> Builder {
        self.frames_listed = frames;
        self
    }

    /// The recorder's limits, each within its bounds, or the error naming it.
    pub(super) fn validate_limits(&self) -> Result<(), Error> {
        if let Some(n) = self.ring_capacity.filter(|&n| !config::ring_capacity_ok(n)) {
            return Err(Error::RingCapacity { requested: n });
        }
        if let Some(n) = self.stack_depth.filter(|&n| !config::stack_depth_ok(n)) {
            return Err(Error::StackDepth { requested: n });
        }
        if let Some(n) = self.node_limit.filter(|&n| !config::node_limit_ok(n)) {
            return Err(Error::NodeLimit { requested: n });
        }
        if !config::Limit::SLOWEST.accepts(self.slowest) {
            return Err(Error::Slowest {
                requested: self.slowest,
            });
        }
        if !config::Limit::FRAMES_LISTED.accepts(self.frames_listed) {
            return Err(Error::FramesListed {
                requested: self.frames_listed,
            });
        }
        Ok(())
    }
}

/// The flight recorder: each thread's timeline of its recent scopes
/// (`record/flight.rs` holds the buffer), and its dumps (`dump.rs` checks them,
/// `dumper.rs` writes them).
impl Builder {
    /// Turns the flight recorder on: each thread keeps a timeline of its recent
    /// scopes (start and end ticks, id, depth on the thread's stack), reaching `window`
    /// back (1 µs to 60 s; 50 ms is a good start), or
    /// [`flight_entries`](Builder::flight_entries) scopes, whichever is shorter. Its
    /// memory is fixed when a thread registers and stated in the report's header:
    /// 24 bytes a scope, 2^14 scopes ([`Limit::FLIGHT_ENTRIES`](crate::collect::Limit::FLIGHT_ENTRIES))
    /// unless set. Applies to threads that first record after
    /// [`start`](Builder::start) (an agent started later without it turns it off for
    /// the threads after it).
    ///
    /// Every closed Start/Stop scope and scope guard goes to the timeline; a
    /// [`Timer`](crate::Timer), a pulse and a [`record`](crate::record) do not.
    /// With the flight recorder off, a Stop does one load and one branch more than
    /// without it (`docs/performance.md` has the figures).
    ///
    /// ```
    /// use std::time::Duration;
    /// let guard = latte::builder()
    ///     .flight_recorder(Duration::from_millis(50))
    ///     .final_report(false)
    ///     .start()?;
    /// guard.stop()?;
    ///
    /// let refused = latte::builder().flight_recorder(Duration::ZERO).start().unwrap_err();
    /// assert!(refused.to_string().contains("flight recorder"), "{refused}");
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn flight_recorder(mut self, window: Duration) -> Builder {
        let entries = self
            .flight
            .map_or(config::Limit::FLIGHT_ENTRIES.default, |f| f.entries);
        self.flight = Some(Flight { window, entries });
        self
    }

    /// Closed scopes each thread's flight-recorder buffer holds: a power of two within
    /// [`Limit::FLIGHT_ENTRIES`](crate::collect::Limit::FLIGHT_ENTRIES) (up to 2^24; default 2^14), 24 bytes each. A
    /// thread that closes more scopes within the window than this keeps the newest.
    /// Turns the flight recorder on with a 50 ms window if
    /// [`flight_recorder`](Builder::flight_recorder) has not.
    ///
    /// ```
    /// use std::time::Duration;
    /// // 4,096 scopes a thread: 96 KiB each.
    /// let guard = latte::builder()
    ///     .flight_recorder(Duration::from_millis(20))
    ///     .flight_entries(4096)
    ///     .final_report(false)
    ///     .start()?;
    /// guard.stop()?;
    /// assert!(latte::builder().flight_entries(1000).start().is_err());
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn flight_entries(mut self, entries: usize) -> Builder {
        let window = self.flight.map_or(Duration::from_millis(50), |f| f.window);
        self.flight = Some(Flight { window, entries });
        self
    }

    /// Dumps every thread's timeline around a sample that `trigger` picks out (may
    /// be given several times; needs [`flight_recorder`](Builder::flight_recorder)):
    /// a scope above a threshold or above its component's running tail, or a frame
    /// over [`frame_budget`](Builder::frame_budget) ([`DumpTrigger`]).
    /// The drain checks each sample as it folds it; after a fold that found some, the
    /// slowest is dumped, unless the last dump is more recent than
    /// [`dump_gap`](Builder::dump_gap): then it is counted as skipped. A dump
    /// is a Chrome trace-event JSON file (Perfetto UI and `chrome://tracing` open it)
    /// in [`dump_dir`](Builder::dump_dir): every live thread's scopes within the
    /// window before the dump, the scopes still open, and the triggering scope
    /// marked. A dump that cannot be written is counted and named in the next
    /// report, never retried, never fatal.
    ///
    /// ```no_run
    /// use latte::Id;
    /// use latte::flight::DumpTrigger;
    /// use std::time::Duration;
    /// static ORDER: Id = Id::new("on_order");
    /// let _latte = latte::builder()
    ///     .flight_recorder(Duration::from_millis(50))
    ///     .dump_when(DumpTrigger::above(&ORDER, Duration::from_micros(200)))
    ///     .dump_when(DumpTrigger::tail(0.999, 10_000))
    ///     .dump_dir("/var/tmp/latte")
    ///     .start()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn dump_when(mut self, trigger: DumpTrigger) -> Builder {
        self.dump.triggers.push(trigger);
        self
    }

    /// The directory dumps are written to (made if missing), default
    /// [`DEFAULT_DUMP_DIR`](crate::flight::DEFAULT_DUMP_DIR).
    pub fn dump_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.dump.dir = dir.into();
        self
    }

    /// The most dump files and bytes of them this agent keeps in the directory
    /// (defaults [`DEFAULT_DUMP_FILES`](crate::flight::DEFAULT_DUMP_FILES) and
    /// [`DEFAULT_DUMP_BYTES`](crate::flight::DEFAULT_DUMP_BYTES)): before writing one
    /// past either bound, it removes its own oldest dumps. A dump larger than
    /// the byte bound alone is not written (counted as failed). Files it did not write
    /// are never touched.
    pub fn dump_limits(mut self, files: usize, bytes: u64) -> Builder {
        self.dump.max_files = files;
        self.dump.max_bytes = bytes;
        self
    }

    /// The shortest time between two triggered dumps (default
    /// [`DEFAULT_DUMP_GAP`](crate::flight::DEFAULT_DUMP_GAP)); dumps asked for
    /// with [`Guard::dump_timeline`](crate::Guard::dump_timeline) are not held
    /// back.
    pub fn dump_gap(mut self, gap: Duration) -> Builder {
        self.dump.gap = gap;
        self
    }
}

/// Exporters (`exporters.rs`) and the final report on SIGTERM and SIGINT
/// (`signals/`).
impl Builder {
    /// Registers an exporter ([`latte::exporter`](crate::exporter)): it is started
    /// with the agent, gets a whole-run report every [`Exporter::interval`] and at
    /// stop, may ask for one whenever it needs, and is stopped with the agent. Several
    /// may be registered; each is started in turn, and one that cannot start makes
    /// [`start`](Builder::start) return [`Error::Exporter`] (the ones before it are
    /// stopped again). The Prometheus `/metrics` endpoint is the crate
    /// `latte-telemetry-prometheus`, the OTLP push `latte-telemetry-otlp`.
    ///
    /// ```
    /// use latte::exporter::{Exporter, StartError, Handle};
    /// struct Refuses;
    /// impl Exporter for Refuses {
    ///     fn name(&self) -> &str { "refuses" }
    ///     fn start(&mut self, _: Handle) -> Result<(), StartError> { Err("no endpoint".into()) }
    /// }
    /// let err = latte::builder().exporter(Refuses).start().unwrap_err();
    /// assert_eq!(err.to_string(), "the latte exporter refuses failed: no endpoint");
    /// ```
    pub fn exporter(mut self, exporter: impl Exporter) -> Builder {
        self.exporters.register(Box::new(exporter));
        self
    }

    /// How long the final report on a signal may take (the drain folding the rings,
    /// writing the report, flushing the sink) before latte ends the process anyway: 5
    /// seconds. A sink that blocks cannot keep a terminated process alive.
    pub const SIGNAL_REPORT_TIMEOUT: Duration = Duration::from_secs(5);

    /// Whether SIGTERM and SIGINT (on Windows: the console's Ctrl-C, Ctrl-Break and
    /// close) write the final report when the program leaves them to latte (default:
    /// `true` on Unix and Windows, `false` elsewhere).
    ///
    /// On such a signal, latte writes what dropping the guard would write (the last
    /// interval with [`periodic`](Builder::periodic) reports, the final report, the
    /// interval log's last entry) with everything recorded until then, and then lets
    /// the signal take its usual course: the process ends, killed by that signal (exit
    /// status 143 or 130 in a shell). The rules:
    ///
    /// - **The program's own handling comes first.** If the program handles the signal
    ///   itself — tokio's [`ctrl_c`](https://docs.rs/tokio/latest/tokio/signal/fn.ctrl_c.html)
    ///   or `signal::unix::signal`, the `ctrlc` crate, a `signal-hook` action, its own
    ///   `sigaction`, installed before or after the agent starts — latte does not end
    ///   the process: the program shuts down its own way, and the guard's drop writes
    ///   the final report, once. A handler installed before latte's is called by latte's;
    ///   one installed after it replaces latte's (signal-hook, and so tokio, call
    ///   latte's handler in turn, which then steps aside).
    /// - **Otherwise latte ends the process as the signal would.** The report is
    ///   written on a thread of latte's (`latte-signals`), never in the signal handler,
    ///   and then the signal is raised again with its default disposition, so the exit
    ///   status says which signal ended the process.
    /// - **Bounded in time.** If the report is not written within
    ///   [`SIGNAL_REPORT_TIMEOUT`](Builder::SIGNAL_REPORT_TIMEOUT) (a sink that blocks,
    ///   say), the process ends anyway, by the signal. A second signal while the
    ///   report is being written ends it at once.
    /// - **Nothing changes otherwise.** Without a running agent that asked for it, the
    ///   signals take their default course at once, as they do in a forked child. A
    ///   signal the process ignores (`SIG_IGN`, as a shell leaves SIGINT for a
    ///   background job, or `nohup`) stays ignored: latte installs no handler for it.
    ///   Before tokio's `ctrl_c` is first polled, latte's handling applies.
    ///
    /// With `false`, latte leaves the signals alone (a handler installed by an earlier
    /// agent of the process stands aside): the process ends at once, with no report.
    ///
    /// **On Windows** the same holds for the console's events: Ctrl-C, Ctrl-Break,
    /// closing the console window, logoff and shutdown write the final report, on the
    /// thread Windows starts for the event, and then the event goes on to the next
    /// handler (in the end the default one, which ends the process with exit code
    /// `0xC000013A`). A handler the program registers after starting the agent (the
    /// `ctrlc` crate, tokio's `ctrl_c`) comes first, as on Unix; one registered
    /// before it runs after latte's report, because Windows does not tell latte it is
    /// there. Closing the console ends the process about 5 s after the event whatever
    /// the handlers do: the report is then bounded to 4 s.
    ///
    /// Where the platform has neither (not Unix, not Windows), asking for `true` makes
    /// [`start`](Builder::start) return [`Error::Signals`](crate::error::Error::Signals);
    /// the default never does.
    ///
    /// The first agent that asks for it installs the handler and starts the listening
    /// thread, which then stay for the life of the process.
    ///
    /// ```no_run
    /// // The default: a SIGTERM or a Ctrl-C writes the final report, then ends the
    /// // process by that signal.
    /// let _latte = latte::init()?;
    /// latte::latte_pulse!("work");
    /// # Ok::<(), latte::Error>(())
    /// ```
    ///
    /// ```
    /// // Signals keep their default effect; the guard's drop still writes the report.
    /// let guard = latte::builder()
    ///     .final_report_on_signals(false)
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// latte::latte_pulse!("work");
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn final_report_on_signals(mut self, enabled: bool) -> Builder {
        self.on_signals = enabled;
        self
    }
}
