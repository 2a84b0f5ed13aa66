//! The report: a plain data value ([`Report`]) and the renderers that consume it.
//!
//! The analysis produces a `Report`; [`Report::write`] prints it as the seed's table or
//! as JSON, [`Report::to_json`] is the one JSON serialisation. Every value in a
//! `Report` is already in its [`Unit`]: cycles (counter ticks) or nanoseconds.
//!
//! This module imports nothing upstream of it (no recorder, no analysis): a `Report` is
//! self-contained, so one read back from JSON renders like one just made.

mod table;

pub use crate::diagnostics::{Anomalies, Footprint};

use crate::config::{Cleaning, Data, Unit};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

/// How a report is written: [`Report::write`], and the agent's
/// [`Builder::format`](crate::Builder::format).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// The table (the C++ original's layout plus tail columns).
    #[default]
    Table,
    /// One JSON document per report, on one line ([`JsonStyle::Compact`], feature
    /// `json`), so a stream of reports is a stream of lines.
    #[cfg(feature = "json")]
    Json,
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// What the report covers when it is not everything, e.g. `periodic #3, last 1.00 s`.
    pub label: Option<String>,
    /// Unit of every value below.
    pub unit: Unit,
    /// Raw or overhead-corrected.
    pub data: Data,
    /// The counter read (`TSC`, `CNTVCT_EL0`, `OS monotonic clock`).
    pub clock: String,
    /// Calibrated counter frequency, ticks per nanosecond.
    pub ticks_per_ns: f64,
    /// Relative uncertainty of `ticks_per_ns` (e.g. `2e-6` = 2 ppm).
    pub frequency_accuracy: f64,
    /// The counter's granularity, in the report's unit: no value finer than this is
    /// measurable (calibration measures it: `latte::analyze::Calibration::resolution`).
    pub resolution: f64,
    /// The cleaning rule applied before the main statistics.
    pub cleaning: Cleaning,
    /// Instrumentation overhead per mode pair and for pulse; `Some` when calibrated.
    pub overhead: Option<Overhead>,
    /// One section per thread that recorded, in order of first record.
    pub threads: Vec<ThreadReport>,
    /// Every component over all threads: each thread's cleaned samples, concatenated.
    pub all_threads: Vec<Row>,
    /// Records dropped during thread teardown (see [`Capture::teardown_drops`](crate::Capture::teardown_drops)).
    pub teardown_drops: u64,
    /// latte's own memory when the report was made (`None` for reports built from a
    /// stored capture).
    pub footprint: Option<Footprint>,
    /// The machine and clock the numbers rest on, with warnings (`None` for reports
    /// built from a stored capture).
    pub environment: Option<Environment>,
}

/// The measured cost of the instrumentation itself, in the report's unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// `scope[start][stop]`: what an empty scope records, indexed by `Mode as usize`.
    pub scope: [[f64; 3]; 3],
    /// What a pulse records when nothing happens between two pulses.
    pub pulse: f64,
}

/// One thread's section of a report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadReport {
    /// Thread name (`thread-<serial>` if it had none).
    pub name: String,
    /// 1-based order of first record.
    pub serial: u64,
    /// Whether the thread had exited.
    pub exited: bool,
    /// Misuse and clock anomalies counted on the thread.
    pub anomalies: Anomalies,
    /// One row per component, in order of first record.
    pub rows: Vec<Row>,
}

/// One component's statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The id's name.
    pub component: String,
    /// Its statistics.
    pub stats: Summary,
}

/// Statistics of one component, in the report's unit.
///
/// The main columns (`avg` .. `range`) describe the samples left after cleaning. The
/// tail columns (`p90`, `p99`, `p999`) and `max_all` describe every retained sample,
/// before cleaning, so the report never hides what cleaning removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Samples the statistics are computed on (after cleaning).
    pub samples: u64,
    /// Samples retained by the rings (before cleaning).
    pub kept: u64,
    /// Samples ever recorded (kept + overwritten).
    pub seen: u64,
    /// Mean.
    pub avg: f64,
    /// Median (linear interpolation between closest ranks).
    pub median: f64,
    /// Population standard deviation.
    pub std_dev: f64,
    /// Population skewness `m3 / m2^1.5` (0 when the spread is 0).
    pub skew: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// `max - min`.
    pub range: f64,
    /// Samples removed as OS preemption / interrupts (BYPASS).
    pub bypass: u64,
    /// Samples removed by the IQR fences.
    pub outliers: u64,
    /// 90th percentile of all retained samples.
    pub p90: f64,
    /// 99th percentile of all retained samples.
    pub p99: f64,
    /// 99.9th percentile of all retained samples.
    pub p999: f64,
    /// Largest retained sample, before cleaning.
    pub max_all: f64,
    /// Retained samples whose Start and Stop ran on different CPUs.
    pub migrated: u64,
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
    /// Things a performance engineer would want to know before trusting the numbers.
    pub warnings: Vec<String>,
}

impl Report {
    /// Writes the report to `out` as a table or as one line of JSON.
    ///
    /// ```
    /// use latte::{Format, Report, ReportOptions};
    /// let report = Report::collect(&ReportOptions::default());
    /// let mut table = Vec::new();
    /// report.write(&mut table, Format::Table)?;
    /// assert!(String::from_utf8(table).unwrap().contains("LATTE TELEMETRY"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write(&self, out: &mut dyn Write, format: Format) -> io::Result<()> {
        match format {
            Format::Table => table::write(self, out),
            #[cfg(feature = "json")]
            Format::Json => writeln!(out, "{}", self.to_json(JsonStyle::Compact)),
        }
    }

    /// The report as JSON: every field, in the report's unit. The one serialisation:
    /// the agent's JSON reports are `to_json(JsonStyle::Compact)`, one per line.
    ///
    /// ```
    /// use latte::report::JsonStyle;
    /// # let report = latte::Report::collect(&latte::ReportOptions::default());
    /// let json = report.to_json(JsonStyle::Pretty);
    /// assert!(json.contains("\"unit\": \"Cycles\""));
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
