//! From a capture to a [`Report`]: calibration, cleaning, statistics.
//!
//! Pure functions of collected data and options, plus the one function that assembles
//! every report (`assemble`): the agent's periodic, on-request and final reports,
//! [`Report::collect`] and [`Report::from_capture`] all go through it.
//!
//! Per (thread, id): convert each sample (raw, or minus its kind's overhead, saturating
//! at 0), sort once, clean by trimming the sorted slice, then compute moments and
//! quantiles exactly. The all-threads view of an id concatenates the threads' cleaned
//! samples (cleaning stays per thread, where preemption happens) and computes the same
//! statistics on the concatenation.

mod calibrate;
mod clean;
mod environment;
mod stats;

pub use crate::config::{Bypass, Fences};
pub use calibrate::{Calibration, calibration};
pub use clean::{Cleaned, clean};
pub use stats::{Moments, moments, quantile};

use crate::collect::{self, Capture, ComponentCapture, Sample, SampleKind};
use crate::config::{Data, ReportOptions, Unit};
use crate::report::{Overhead, Report, Row, Summary, ThreadReport};
use std::collections::HashMap;

/// What a report is, beyond its data: a label, and whether it describes this process
/// now (then it carries latte's footprint and the environment block).
#[derive(Clone, Debug, Default)]
pub(crate) struct Context {
    /// What the report covers when it is not everything (`final`, `periodic #3, ...`).
    pub(crate) label: Option<String>,
    /// Whether to add the process's footprint and environment (`false` for a report
    /// built from stored data).
    pub(crate) live: bool,
}

impl Report {
    /// Whole run so far: captures everything recorded and analyses it.
    ///
    /// ```
    /// latte::latte_pulse!("doc_collect");
    /// latte::latte_pulse!("doc_collect");
    /// let report = latte::Report::collect(&latte::ReportOptions::default());
    /// assert!(report.all_threads.iter().any(|row| row.component == "doc_collect"));
    /// assert!(report.environment.is_some() && report.footprint.is_some());
    /// ```
    pub fn collect(options: &ReportOptions) -> Report {
        let live = Context {
            label: None,
            live: true,
        };
        assemble(&collect::capture(), calibration(), options, live)
    }

    /// Analyses a stored capture with a given calibration (for reproducible reports):
    /// no label, footprint or environment.
    pub fn from_capture(
        capture: &Capture,
        calibration: &Calibration,
        options: &ReportOptions,
    ) -> Report {
        assemble(capture, calibration, options, Context::default())
    }
}

/// Builds a report: the one place a [`Report`] is made.
pub(crate) fn assemble(
    capture: &Capture,
    calibration: &Calibration,
    options: &ReportOptions,
    context: Context,
) -> Report {
    let scale = match options.unit {
        Unit::Cycles => 1.0,
        Unit::Time => 1.0 / calibration.ticks_per_ns,
    };
    let mut merged = Merged::default();
    let threads = capture
        .threads
        .iter()
        .map(|t| ThreadReport {
            name: t.name.clone(),
            serial: t.serial,
            exited: t.exited,
            anomalies: t.anomalies,
            rows: t
                .components
                .iter()
                .map(|c| merged.add(c, Prepared::new(c, calibration, options), scale))
                .collect(),
        })
        .collect();
    let overhead = (options.data == Data::Calibrated).then(|| Overhead {
        scope: calibration.scope.map(|row| row.map(|t| t as f64 * scale)),
        pulse: calibration.pulse as f64 * scale,
    });
    Report {
        label: context.label,
        unit: options.unit,
        data: options.data,
        clock: crate::clock::source().to_string(),
        ticks_per_ns: calibration.ticks_per_ns,
        frequency_accuracy: calibration.accuracy,
        resolution: calibration.resolution as f64 * scale,
        cleaning: options.cleaning,
        overhead,
        threads,
        all_threads: merged.rows(scale),
        teardown_drops: capture.teardown_drops,
        footprint: context.live.then(collect::footprint),
        environment: context
            .live
            .then(|| environment::environment(capture, calibration)),
    }
}

/// One component's values, sorted, with what cleaning kept.
#[derive(Default)]
struct Prepared {
    all: Vec<u64>,
    cleaned: Vec<u64>,
    kept: u64,
    seen: u64,
    bypass: u64,
    outliers: u64,
    migrated: u64,
}

impl Prepared {
    fn new(c: &ComponentCapture, calibration: &Calibration, options: &ReportOptions) -> Prepared {
        let mut all: Vec<u64> = c
            .samples
            .iter()
            .map(|&s| value(s, calibration, options.data))
            .collect();
        all.sort_unstable();
        let cleaned = clean::clean(&all, &options.cleaning, calibration.ticks_per_ns);
        Prepared {
            cleaned: all[cleaned.kept].to_vec(),
            kept: all.len() as u64,
            all,
            seen: c.seen,
            bypass: cleaned.bypass,
            outliers: cleaned.outliers,
            migrated: c.samples.iter().filter(|s| s.migrated()).count() as u64,
        }
    }

    /// Statistics in ticks.
    fn summary(&self) -> Summary {
        let m = stats::moments(&self.cleaned);
        Summary {
            samples: m.count,
            kept: self.kept,
            seen: self.seen,
            avg: m.mean,
            median: stats::quantile(&self.cleaned, 0.5),
            std_dev: m.std_dev,
            skew: m.skew,
            min: m.min,
            max: m.max,
            range: m.max - m.min,
            bypass: self.bypass,
            outliers: self.outliers,
            p90: stats::quantile(&self.all, 0.90),
            p99: stats::quantile(&self.all, 0.99),
            p999: stats::quantile(&self.all, 0.999),
            max_all: self.all.last().copied().unwrap_or(0) as f64,
            migrated: self.migrated,
        }
    }
}

/// A sample's value in ticks, minus its kind's overhead when calibrated.
fn value(sample: Sample, calibration: &Calibration, data: Data) -> u64 {
    let ticks = sample.ticks();
    match (data, sample.kind()) {
        (Data::Raw, _) | (_, SampleKind::Recorded) => ticks,
        (Data::Calibrated, SampleKind::Scope { start, stop }) => {
            ticks.saturating_sub(calibration.scope_overhead(start, stop))
        }
        (Data::Calibrated, SampleKind::Pulse) => ticks.saturating_sub(calibration.pulse),
    }
}

/// Converts the value fields of a tick summary to the report's unit.
fn scaled(s: Summary, f: f64) -> Summary {
    Summary {
        avg: s.avg * f,
        median: s.median * f,
        std_dev: s.std_dev * f,
        min: s.min * f,
        max: s.max * f,
        range: s.range * f,
        p90: s.p90 * f,
        p99: s.p99 * f,
        p999: s.p999 * f,
        max_all: s.max_all * f,
        ..s
    }
}

/// Per-id concatenation of every thread's prepared samples, in order of first appearance.
#[derive(Default)]
struct Merged {
    order: Vec<&'static str>,
    by_id: HashMap<&'static str, Prepared>,
}

impl Merged {
    /// Adds one (thread, component)'s prepared samples; returns the thread's row.
    fn add(&mut self, c: &ComponentCapture, p: Prepared, scale: f64) -> Row {
        let row = Row {
            component: c.name.to_owned(),
            stats: scaled(p.summary(), scale),
        };
        let m = self.by_id.entry(c.name).or_insert_with(|| {
            self.order.push(c.name);
            Prepared::default()
        });
        m.all.extend_from_slice(&p.all);
        m.cleaned.extend_from_slice(&p.cleaned);
        m.kept += p.kept;
        m.seen += p.seen;
        m.bypass += p.bypass;
        m.outliers += p.outliers;
        m.migrated += p.migrated;
        row
    }

    fn rows(mut self, scale: f64) -> Vec<Row> {
        self.order
            .iter()
            .map(|id| {
                let m = self.by_id.get_mut(id).expect("every ordered id was added");
                m.all.sort_unstable();
                m.cleaned.sort_unstable();
                Row {
                    component: (*id).to_owned(),
                    stats: scaled(m.summary(), scale),
                }
            })
            .collect()
    }
}
