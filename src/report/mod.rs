//! The report: a plain data value ([`Report`]) and the renderers that consume it.
//!
//! The analysis produces a `Report`; [`Report::write`] prints it as the seed's table or
//! as JSON, [`Report::to_json`] is the one JSON serialisation. Every value in a
//! `Report` is already in its [`Unit`]: cycles (counter ticks) or nanoseconds.
//!
//! This module imports nothing upstream of it (no recorder, no analysis): a `Report` is
//! self-contained, so one read back from JSON renders like one just made.

mod convert;
mod focus;
mod frames;
pub(crate) mod histogram;
mod notices;
pub mod numbers;
mod options;
mod row;
mod series;
mod since;
mod table;
mod tree;
mod wire;

pub(crate) use convert::scale_summary;
pub(crate) use focus::by_total;
pub use row::{CleanedSummary, Corrected, Row, RowKind, Slowest, Summary};

use crate::allocs::Allocs;
pub use crate::diagnostics::OpenScopes;
use crate::diagnostics::{Anomalies, Footprint, Unpaired};
pub use focus::{Focus, Sort};
pub use frames::{Culprit, FrameComponent, PerFrame, Spread, WorstFrame};
pub use histogram::{Bucket, Distribution, rank};
pub use notices::{Dumps, ExporterFailures, PeriodicFailures, RecordingOff};
pub use series::{Series, SeriesComponent};
pub use table::{Column, SEED_WIDTH, TableOptions};
pub use tree::{Account, SelfTime, TreeNode};

use crate::error::Error;
pub use options::{Bypass, Cleaning, Data, Fences, Figures, ReportOptions, Unit};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::Arc;

/// How a report is written: [`Report::write`], and the agent's
/// [`Builder::format`](crate::Builder::format). The default is the table with the
/// default layout, `Format::Table(TableOptions::default())`.
///
/// ```
/// use latte::Format;
/// use latte::report::TableOptions;
/// assert_eq!(Format::default(), Format::Table(TableOptions::default()));
/// let narrow = Format::Table(TableOptions { width: Some(80), ..TableOptions::default() });
/// assert_ne!(narrow, Format::default());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// The table (the C++ original's layout plus tail columns), laid out by its
    /// options: width, columns, wide and compact modes (see [`TableOptions`]).
    Table(TableOptions),
    /// One JSON document per report, on one line ([`JsonStyle::Compact`], feature
    /// `json`), so a stream of reports is a stream of lines.
    #[cfg(feature = "json")]
    Json,
}

impl Default for Format {
    fn default() -> Format {
        Format::Table(TableOptions::default())
    }
}

/// The layout of [`Report::to_json`]: the same JSON value either way.
#[cfg(feature = "json")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JsonStyle {
    /// One line, no spaces: what the agent writes.
    #[default]
    Compact,
    /// Indented, one field per line.
    Pretty,
}

/// A full latency report: the header facts, the overhead matrix when calibrated, one
/// section per thread and an all-threads section.
///
/// As JSON ([`Report::to_json`]) it carries [`format_version`](Report::format_version);
/// serde reads the current format and the one before it (format 4, read with what it
/// lacks empty), and refuses any other with an error naming its version: formats 1 to
/// 3, which no release wrote, and a newer one.
///
/// ```
/// let old = r#"{"format_version": 3, "unit": "Cycles"}"#;
/// let err = serde_json::from_str::<latte::Report>(old).unwrap_err();
/// assert!(err.to_string().contains("report format version 3: no release of latte wrote it"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// The derives as inherent functions, which the trait impls below call: reading checks
// the version also when the field is missing (format 1), which a field default cannot.
#[serde(remote = "Self")]
pub struct Report {
    /// The JSON format this report follows: [`Report::FORMAT_VERSION`] for a report
    /// made by this latte, 4 for one read from format 4.
    #[serde(
        default = "wire::unversioned",
        deserialize_with = "wire::known_version"
    )]
    pub format_version: u32,
    /// What the report covers when it is not everything, e.g. `periodic #3, last 1.00 s`.
    pub label: Option<String>,
    /// Unit of every value below.
    pub unit: Unit,
    /// Raw or overhead-corrected.
    pub data: Data,
    /// Which figures a table's main columns show (the JSON carries both sets).
    #[serde(default)]
    pub figures: Figures,
    /// The counter read (`TSC`, `CNTVCT_EL0`, `OS monotonic clock`).
    pub clock: String,
    /// Calibrated counter frequency, ticks per nanosecond.
    pub ticks_per_ns: f64,
    /// Relative uncertainty of `ticks_per_ns` (e.g. `2e-6` = 2 ppm).
    pub frequency_accuracy: f64,
    /// The counter's granularity, in the report's unit: no value finer than this is
    /// measurable (calibration measures it: `latte::analyze::Calibration::resolution`).
    pub resolution: f64,
    /// The rule that flags samples (BYPASS, OUTLIERS).
    pub cleaning: Cleaning,
    /// Instrumentation overhead per mode pair and for pulse; `Some` when calibrated.
    pub overhead: Option<Overhead>,
    /// One section per thread that recorded, in order of first record.
    pub threads: Vec<ThreadReport>,
    /// Every component over all threads: each thread's values together.
    pub all_threads: Vec<Row>,
    /// The call tree over all threads, nodes merged by path (the same ids from the
    /// root down), depth first; empty when no scope ran inside another. Format 3 on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree: Vec<TreeNode>,
    /// Nodes with calls the all-threads tree left out: it keeps the 256 largest by
    /// TOTAL and their ancestors (the flat rows have everything).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tree_left_out: u64,
    /// Records dropped during thread teardown (see [`Capture::teardown_drops`](crate::Capture::teardown_drops)).
    pub teardown_drops: u64,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: what threads
    /// without a recorder allocated, before their first record or after theirs was torn
    /// down at exit (format 8 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_allocs: Option<Allocs>,
    /// latte's own memory when the report was made (`None` for reports built from a
    /// stored capture).
    pub footprint: Option<Footprint>,
    /// The machine and clock the numbers rest on, with warnings (`None` for reports
    /// built from a stored capture).
    pub environment: Option<Environment>,
    /// Periodic reports the agent could not write since the last report it did write
    /// (`None` when there were none, and for reports not written by the agent).
    #[serde(default)]
    pub periodic_failures: Option<PeriodicFailures>,
    /// The exporters that failed over the run so far (pushes that never arrived), as
    /// they told the agent: empty when none did, and for reports not written by the
    /// agent (left out of the JSON then).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exporter_failures: Vec<ExporterFailures>,
    /// The run's time structure (whole-run reports made while the ledger folded over
    /// time); `None` in interval (periodic) reports, in reports of JSON format 3 or
    /// older, and when nothing was recorded. Also `None` where it would not match
    /// ALL THREADS or would not be read: reports made from a capture, reports whose
    /// threads a [`Focus::threads`] pattern chose before the analysis, the reports the
    /// agent hands its exporters, and the agent's whole-run reports written as tables.
    /// Format 4 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// The flight recorder's dumps so far (`None` when none was asked for, and for
    /// reports not written by the agent). Format 5 called it `captures`.
    #[serde(default, alias = "captures", skip_serializing_if = "Option::is_none")]
    pub dumps: Option<Dumps>,
    /// How long recording was switched off ([`set_recording`](crate::set_recording))
    /// since the process started: `None` when it never was, for reports made from a
    /// capture, and for reports of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_off: Option<RecordingOff>,
}

/// The measured cost of the instrumentation itself, in the report's unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// `scope[start][stop]`: what an empty scope records, indexed by `Mode as usize`.
    pub scope: [[f64; 3]; 3],
    /// What a pulse records when nothing happens between two pulses.
    pub pulse: f64,
    /// `inside[start][stop]`: what an empty scope costs the scope around it (its
    /// window and its Start's and Stop's work outside it). Format 5 on; 0 when read
    /// from an older report (and then left out of its JSON).
    #[serde(default, skip_serializing_if = "unknown_inside")]
    pub inside: [[f64; 3]; 3],
}

/// Whether an overhead's `inside` matrix is unknown (all 0: an older report's).
fn unknown_inside(inside: &[[f64; 3]; 3]) -> bool {
    inside.iter().flatten().all(|&v| v == 0.0)
}

/// One thread's section of a report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadReport {
    /// Thread name (`thread-<serial>` if it had none).
    pub name: String,
    /// 1-based order of first record.
    pub serial: u64,
    /// Whether the thread had exited.
    pub exited: bool,
    /// Misuse and clock anomalies counted on the thread.
    pub anomalies: Anomalies,
    /// Per id, the scopes that ended without their own Stop (abandoned on a full
    /// stack, orphaned by a missed Stop, open at exit), the records dropped past the
    /// memory cap and the timers cancelled; ids with none are left out.
    #[serde(default, alias = "frames")]
    pub unpaired: Vec<UnpairedScopes>,
    /// Per id, the scopes open on the thread when the report was taken, outermost
    /// first: a snapshot read while the thread runs, which may be a scope off (see
    /// `docs/report-format.md`). Empty for an exited thread (see `unpaired`) and for a
    /// report made from a capture.
    #[serde(default)]
    pub open: Vec<OpenScopes>,
    /// One row per component, in order of first record.
    pub rows: Vec<Row>,
    /// The thread's call tree, depth first; empty when no scope ran inside another
    /// on it. Format 3 on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree: Vec<TreeNode>,
    /// Nodes with calls the thread's tree left out: it keeps the 256 largest by
    /// TOTAL and their ancestors (the flat rows have everything).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tree_left_out: u64,
    /// Its frames, when it marked some ([`latte_frame!`](crate::latte_frame)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_frame: Option<PerFrame>,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: what it
    /// allocated while no scope was open on it (format 8 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_allocs: Option<Allocs>,
    /// The thread's first allocation in a scope declared allocation-free
    /// ([`latte::alloc::forbid`](crate::alloc::forbid)), when its `anomalies` count
    /// some (`alloc_breaches`): format 8 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_breach: Option<AllocBreach>,
}

/// Where a thread first allocated inside an allocation-free scope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocBreach {
    /// The innermost scope open then, from the root of the thread's call tree: the
    /// allocation-free scope itself or one inside it.
    pub path: Vec<String>,
    /// The allocation's size in bytes.
    pub size: u64,
}

/// Whether a count is 0 (left out of the JSON then).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One id's scopes that ended without their own Stop, its records dropped past the
/// memory cap, and its timers cancelled, on one thread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnpairedScopes {
    /// The id's name.
    pub component: String,
    /// How many ended which way.
    #[serde(flatten)]
    pub counts: Unpaired,
}

/// The ENVIRONMENT block of a report: what the numbers rest on, and what to beware of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// CPU model, if known.
    pub cpu_model: Option<String>,
    /// The clock latte reads (`TSC`, `OS monotonic clock`, ...).
    pub clock: String,
    /// Why that clock.
    pub clock_reason: String,
    /// CPUID's invariant-TSC bit (x86_64), if known.
    pub invariant_tsc: Option<bool>,
    /// Running under a hypervisor, if known.
    pub hypervisor: Option<bool>,
    /// The kernel clocksource when latte chose its clock.
    pub clocksource_at_start: Option<String>,
    /// The kernel clocksource when the report was made.
    pub clocksource_now: Option<String>,
    /// CPU 0's frequency governor, if known.
    pub governor: Option<String>,
    /// The kernel's isolated CPUs, if known.
    pub isolated_cpus: Option<String>,
    /// The counter frequency the platform states, in Hz (aarch64 `CNTFRQ_EL0`, x86_64
    /// macOS `sysctl machdep.tsc.frequency`); `None` where it states none.
    #[serde(default)]
    pub counter_hz: Option<u64>,
    /// The OS the report was made on (`linux`, `windows`, `macos`, ...), if known
    /// (reports before 2026-11-27 do not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// Where the hardware counter's frequency comes from, in words (`CNTFRQ_EL0
    /// states 24000000 Hz`, `measured against QueryPerformanceCounter`); `None` on
    /// the OS clock and in reports before 2026-11-27.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency: Option<String>,
    /// The measured step of the clock in use, in ticks (calibration's `resolution`),
    /// if known.
    #[serde(default)]
    pub step_ticks: Option<u64>,
    /// That step in nanoseconds, if known.
    #[serde(default)]
    pub step_ns: Option<f64>,
    /// Things a performance engineer would want to know before trusting the numbers.
    pub warnings: Vec<String>,
}

impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Report::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for Report {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Report, D::Error> {
        let mut report = Report::deserialize(deserializer)?;
        wire::check(report.format_version).map_err(serde::de::Error::custom)?;
        report.place_distributions();
        Ok(report)
    }
}

impl Report {
    /// Puts every distribution the report holds (rows, tree nodes, blocks of time) in
    /// its unit, within its row's exact extremes: what JSON does not carry.
    pub(crate) fn place_distributions(&mut self) {
        let per_tick = self.per_tick();
        let place = |row: &mut Row| {
            let (min, max) = (row.stats.min, row.stats.max);
            row.distribution.place(per_tick, min, max);
        };
        self.all_threads.iter_mut().for_each(place);
        self.tree.iter_mut().for_each(|n| place(&mut n.row));
        for thread in &mut self.threads {
            thread.rows.iter_mut().for_each(place);
            thread.tree.iter_mut().for_each(|n| place(&mut n.row));
        }
        if let Some(series) = &mut self.series {
            for component in &mut series.components {
                let row = self
                    .all_threads
                    .iter()
                    .find(|r| r.component == component.component);
                component.place(per_tick, row);
            }
        }
    }
}

/// A report of nothing: no thread, in [`Unit::Cycles`] and [`Data::Raw`] (its values
/// are counter ticks, nothing subtracted), on the `TSC` at one tick per nanosecond,
/// made by this latte. What tests and tools start from to build a report by hand,
/// with [`Row::with_ticks`] for its rows.
///
/// ```
/// use latte::report::Row;
/// use latte::{Format, Report};
/// let report = Report {
///     all_threads: vec![Row::with_ticks("parse", &[(120, 3), (900, 1)])],
///     ..Report::default()
/// };
/// assert_eq!(report.format_version, Report::FORMAT_VERSION);
/// let dist = &report.all_threads[0].distribution;
/// assert_eq!((dist.len(), dist.quantile(0.5)), (4, 120.0));
/// let mut json = Vec::new();
/// report.write(&mut json, Format::Json).unwrap();
/// ```
impl Default for Report {
    fn default() -> Report {
        Report {
            format_version: Report::FORMAT_VERSION,
            label: None,
            unit: Unit::Cycles,
            data: Data::Raw,
            figures: Figures::default(),
            clock: "TSC".into(),
            ticks_per_ns: 1.0,
            frequency_accuracy: 0.0,
            resolution: 1.0,
            cleaning: Cleaning::default(),
            overhead: None,
            threads: Vec::new(),
            all_threads: Vec::new(),
            tree: Vec::new(),
            tree_left_out: 0,
            teardown_drops: 0,
            process_allocs: None,
            footprint: None,
            environment: None,
            periodic_failures: None,
            exporter_failures: Vec::new(),
            series: None,
            dumps: None,
            recording_off: None,
        }
    }
}

impl Report {
    /// The JSON format a report made by this latte follows (see
    /// [`format_version`](Report::format_version)); `CHANGELOG.md` says what each
    /// version changed.
    pub const FORMAT_VERSION: u32 = 8;

    /// The factor from counter ticks to the report's unit (1 for cycles): what turns
    /// an [`Account`]'s ticks into the figures beside it.
    ///
    /// ```
    /// use latte::{Report, ReportOptions, Unit};
    /// let options = ReportOptions { unit: Unit::Cycles, ..Default::default() };
    /// assert_eq!(Report::collect(&options).per_tick(), 1.0);
    /// ```
    pub fn per_tick(&self) -> f64 {
        histogram::per_tick(self.unit, self.ticks_per_ns)
    }

    /// Writes the report to `out` as a table laid out by its [`TableOptions`] or as one
    /// line of JSON. A writer that fails is [`Error::Sink`], with the writer's error as
    /// its source.
    ///
    /// ```
    /// use latte::report::TableOptions;
    /// use latte::{Format, Report, ReportOptions};
    /// let report = Report::collect(&ReportOptions::default());
    /// let mut table = Vec::new();
    /// report.write(&mut table, Format::default())?;
    /// assert!(String::from_utf8(table).unwrap().contains("LATTE TELEMETRY"));
    ///
    /// let narrow = TableOptions { width: Some(60), ..TableOptions::default() };
    /// let mut out = Vec::new();
    /// report.write(&mut out, Format::Table(narrow))?;
    /// assert!(String::from_utf8(out).unwrap().lines().all(|line| line.chars().count() <= 60));
    ///
    /// let mut room = [0u8; 16];
    /// let err = report.write(&mut &mut room[..], Format::default()).unwrap_err(); // too small
    /// assert!(err.to_string().contains("writing the latte report failed"));
    /// assert!(matches!(&err, latte::Error::Sink(e) if e.kind() == std::io::ErrorKind::WriteZero));
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn write(&self, out: &mut dyn Write, format: Format) -> Result<(), Error> {
        match format {
            Format::Table(options) => {
                table::write(self, out, &options).map_err(|e| Error::Sink(Arc::new(e)))
            }
            #[cfg(feature = "json")]
            Format::Json => writeln!(out, "{}", self.to_json(JsonStyle::Compact))
                .map_err(|e| Error::Sink(Arc::new(e))),
        }
    }

    /// The report as JSON: every field, in the report's unit. The one serialisation:
    /// the agent's JSON reports are `to_json(JsonStyle::Compact)`, one per line.
    ///
    /// ```
    /// use latte::report::JsonStyle;
    /// # let report = latte::Report::collect(&latte::ReportOptions::default());
    /// let json = report.to_json(JsonStyle::Pretty);
    /// assert!(json.contains("\"unit\": \"Time\"") && json.contains("\"format_version\": 8"));
    /// let back: latte::Report = serde_json::from_str(&json).unwrap();
    /// assert_eq!(back.to_json(JsonStyle::Compact), report.to_json(JsonStyle::Compact));
    /// ```
    #[cfg(feature = "json")]
    pub fn to_json(&self, style: JsonStyle) -> String {
        let json = match style {
            JsonStyle::Compact => serde_json::to_string(self),
            JsonStyle::Pretty => serde_json::to_string_pretty(self),
        };
        // Every field is a string, a number, a bool, an option or a list of those.
        json.expect("a Report always serialises")
    }
}
