//! What a report says besides its figures, in a line under its tables: periodic
//! reports that failed, exporters' failures, the flight recorder's dumps, recording
//! switched off.

use serde::{Deserialize, Serialize};

/// Recording switched off at run time ([`set_recording`](crate::set_recording)), as a
/// report says it: a line under its tables, and this field of its JSON.
///
/// ```
/// let mut report = latte::Report::collect(&latte::ReportOptions::default());
/// report.recording_off = Some(latte::report::RecordingOff { seconds: 2.5, pauses: 2, now: true });
/// let mut table = Vec::new();
/// report.write(&mut table, latte::Format::default())?;
/// let table = String::from_utf8(table).unwrap();
/// assert!(table.contains("recording was off for 2.500 s (2 pauses"), "{table}");
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordingOff {
    /// Seconds it was off in all, the current pause included.
    pub seconds: f64,
    /// How many times it was switched off.
    pub pauses: u64,
    /// It is off as the report is made.
    pub now: bool,
}

/// The flight recorder's dumps of the run so far: timelines written around slow
/// samples or on request ([`Builder::dump_when`](crate::Builder::dump_when),
/// [`Guard::dump_timeline`](crate::Guard::dump_timeline)).
///
/// ```
/// let mut report = latte::Report::collect(&latte::ReportOptions::default());
/// report.dumps = Some(latte::report::Dumps {
///     dir: "latte-dumps".into(),
///     written: 3,
///     skipped: 40,
///     failed: 1,
///     last_file: Some("latte-dumps/dump-4242-3-on_order.json".into()),
///     last_error: Some("No space left on device (os error 28)".into()),
/// });
/// let mut table = Vec::new();
/// report.write(&mut table, latte::Format::default())?;
/// let table = String::from_utf8(table).unwrap();
/// assert!(table.contains("3 timeline dumps written"), "{table}");
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dumps {
    /// The directory dumps are written to.
    pub dir: String,
    /// Dumps written (some may since have been removed to keep the directory within
    /// its bounds).
    pub written: u64,
    /// Triggering samples not dumped: within the gap after a dump, or beside a
    /// slower one in the same fold.
    pub skipped: u64,
    /// Dumps that could not be written.
    pub failed: u64,
    /// The newest dump's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_file: Option<String>,
    /// Why the last failed dump failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// Periodic reports that could not be written (a sink that failed or panicked, or the
/// interval log), shown in the next report the agent writes; see
/// [`Guard::sink_errors`](crate::Guard::sink_errors) and
/// [`Error::PeriodicReports`](crate::Error::PeriodicReports).
///
/// ```
/// let failures = latte::report::PeriodicFailures {
///     count: 2,
///     last_error: "writing the latte report failed: disk full".into(),
/// };
/// let mut report = latte::Report::collect(&latte::ReportOptions::default());
/// report.periodic_failures = Some(failures);
/// let mut table = Vec::new();
/// report.write(&mut table, latte::Format::default())?;
/// let table = String::from_utf8(table).unwrap();
/// assert!(table.contains("2 periodic reports could not be written: writing the latte report failed: disk full"));
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodicFailures {
    /// How many periodic reports failed since the previous report that was written.
    pub count: u64,
    /// The last failure's error, as text.
    pub last_error: String,
}

/// One exporter's failures over the run so far: pushes that never arrived, as the
/// exporter told the agent (`latte::exporter::Handle::failed`),
/// shown in a line under every report's tables while there are any.
///
/// ```
/// let failures = latte::report::ExporterFailures {
///     exporter: "otlp".into(),
///     count: 3,
///     last_error: "http://collector:4318/v1/metrics: status 503".into(),
/// };
/// let mut report = latte::Report::collect(&latte::ReportOptions::default());
/// report.exporter_failures = vec![failures];
/// let mut table = Vec::new();
/// report.write(&mut table, latte::Format::default())?;
/// let table = String::from_utf8(table).unwrap();
/// assert!(table.contains("exporter otlp failed 3 times in this run, last: http://collector:4318/v1/metrics: status 503"), "{table}");
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExporterFailures {
    /// The exporter's [`name`](crate::Exporter::name).
    pub exporter: String,
    /// Its failures since the agent started.
    pub count: u64,
    /// The last failure's error, as text.
    pub last_error: String,
}
