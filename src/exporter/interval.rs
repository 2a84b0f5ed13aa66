//! An interval of a running program, as the live endpoint (`latte_prometheus::Live`)
//! serves it and `latte-telemetry top` reads it: [`Report::since`] of two whole-run
//! reports of its agent, with which program, interval and switch it is.
//!
//! Calls and totals subtract exactly, quantiles are read from the difference of the
//! two distributions (bucket by bucket, at the histogram's 3 significant digits), so
//! the endpoint needs no cut of its own in the agent and any number of viewers share
//! it.

use crate::report::Report;
use serde::{Deserialize, Serialize};

/// One interval of a running program: what it recorded in the interval, as a report
/// ([`Report::since`]; the first interval covers the run so far), and which program,
/// interval and switch it is.
///
/// ```
/// use latte::exporter::Interval;
/// use latte::{Id, Report, ReportOptions};
/// static STEP: Id = Id::new("doc_interval_step");
/// (0..100).for_each(|_| latte::record(&STEP, 1_000));
/// let earlier = Report::collect(&ReportOptions::default());
/// (0..30).for_each(|_| latte::record(&STEP, 2_000));
/// let later = Report::collect(&ReportOptions::default());
/// let interval = Interval::between(Some(&earlier), &later, 1.0);
/// let step = interval.report.all_threads.iter().find(|r| r.component == STEP.name()).unwrap();
/// assert_eq!(step.stats.seen, 30); // the interval's calls only
/// assert!(interval.recording());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// [`Interval::VERSION`] of the layout.
    pub version: u32,
    /// The program, as the endpoint names it (its executable's file name).
    pub program: String,
    /// Its process id.
    pub pid: u32,
    /// The interval's number: 1 for the first the endpoint cut, and so on.
    pub sequence: u64,
    /// The interval's length in seconds (the first covers the run so far).
    pub seconds: f64,
    /// Whether the endpoint takes the recording switch (`POST /recording/on`, `/off`).
    pub control: bool,
    /// What the program recorded in the interval, and the recording switch
    /// (`recording_off`) as it was when the endpoint answered.
    pub report: Report,
}

impl Interval {
    /// The layout's version: 3 (versions 1 and 2 were the live view's own model).
    pub const VERSION: u32 = 3;

    /// What `later` adds over `earlier`, two whole-run reports of the same run made
    /// `seconds` apart (`earlier` `None`: everything in `later`, the first interval):
    /// [`Report::since`]. The program, its id, the sequence and the control are the
    /// endpoint's to fill.
    pub fn between(earlier: Option<&Report>, later: &Report, seconds: f64) -> Interval {
        Interval {
            version: Interval::VERSION,
            seconds,
            report: earlier.map_or_else(|| later.clone(), |e| later.since(e)),
            ..Interval::default()
        }
    }

    /// Whether recording was on (the report's `recording_off` says it was not).
    ///
    /// ```
    /// let mut interval = latte::exporter::Interval::default();
    /// assert!(interval.recording());
    /// interval.report.recording_off = Some(latte::report::RecordingOff { now: true, ..Default::default() });
    /// assert!(!interval.recording());
    /// ```
    pub fn recording(&self) -> bool {
        !self.report.recording_off.is_some_and(|o| o.now)
    }
}
