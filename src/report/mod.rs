//! The report: a plain data value ([`Report`]) and the renderers that consume it.
//!
//! Statistics produce a `Report`; [`Report::write_table`] prints the seed's table,
//! [`Report::to_json`] serialises it, [`write_csv`] exports raw samples. Every value in a
//! `Report` is already in its [`Unit`]: cycles (counter ticks) or nanoseconds.

#[cfg(feature = "csv")]
mod csv;
mod table;

use crate::Anomalies;
use crate::analysis::Cleaning;
use serde::Serialize;

#[cfg(feature = "csv")]
pub use self::csv::write_csv;
pub use table::format_value;

/// What the values of a report are measured in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum Unit {
    /// Counter ticks (CPU cycles on x86_64). The C++ original's default.
    #[default]
    Cycles,
    /// Nanoseconds, via the calibrated counter frequency; tables pick ns/us/ms/s.
    Time,
}

/// Whether the instrumentation's own overhead is subtracted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum Data {
    /// Samples as recorded. The C++ original's default.
    #[default]
    Raw,
    /// Each sample minus the overhead of its (start mode, stop mode) pair, or of a
    /// pulse, saturating at zero.
    Calibrated,
}

/// A full latency report: the header facts, the overhead matrix when calibrated, one
/// section per thread and an all-threads section.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    /// measurable (see [`Calibration::resolution`](crate::Calibration::resolution)).
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
    pub footprint: Option<crate::Footprint>,
    /// The machine and clock the numbers rest on, with warnings (`None` for reports
    /// built from a stored capture).
    pub environment: Option<crate::platform::Environment>,
}

/// The measured cost of the instrumentation itself, in the report's unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Overhead {
    /// `scope[start][stop]`: what an empty scope records, indexed by `Mode as usize`.
    pub scope: [[f64; 3]; 3],
    /// What a pulse records when nothing happens between two pulses.
    pub pulse: f64,
}

/// One thread's section of a report.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
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

impl Report {
    /// The report as pretty-printed JSON.
    ///
    /// ```
    /// # let report = latte::Report::collect(&latte::ReportOptions::default());
    /// let json = report.to_json();
    /// assert!(json.contains("\"unit\": \"Cycles\""));
    /// ```
    #[cfg(feature = "json")]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a Report always serialises")
    }

    /// Writes the table (the C++ original's layout, plus tail columns) to `out`.
    pub fn write_table(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        table::write(self, out)
    }
}
