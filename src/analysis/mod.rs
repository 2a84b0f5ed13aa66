//! From captured ticks to a [`Report`]: calibration, cleaning, statistics.
//!
//! Per (thread, id): convert each sample (raw, or minus its kind's overhead, saturating
//! at 0), sort once, clean by trimming the sorted slice, then compute moments and
//! quantiles exactly. The all-threads view of an id concatenates the threads' cleaned
//! samples (cleaning stays per thread, where preemption happens) and computes the same
//! statistics on the concatenation.

pub(crate) mod calibrate;
pub(crate) mod clean;
pub(crate) mod stats;

pub use calibrate::{Calibration, calibrate, calibration};
pub use clean::{Bypass, Cleaning, Fences};

use crate::report::{Data, Overhead, Report, Row, Summary, ThreadReport, Unit};
use crate::{Capture, ComponentCapture, Sample, SampleKind};
use std::collections::HashMap;

/// What a report shows and how its data is prepared. `Default` matches the C++
/// original: cycles, raw data; plus latte's default cleaning.
///
/// ```
/// use latte::{Data, ReportOptions, Unit};
/// let options = ReportOptions { unit: Unit::Time, data: Data::Calibrated, ..Default::default() };
/// let report = latte::Report::collect(&options);
/// assert!(report.overhead.is_some());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReportOptions {
    /// Cycles or time.
    pub unit: Unit,
    /// Raw or overhead-corrected samples.
    pub data: Data,
    /// Cleaning before the main statistics ([`Cleaning::OFF`] to keep everything).
    pub cleaning: Cleaning,
}

/// Writes the table of everything recorded so far to `out`, like the C++
/// `DumpToStream(os, unit, data)`. Safe while other threads record.
///
/// ```
/// latte::latte_pulse!("doc_dump");
/// latte::latte_pulse!("doc_dump");
/// let mut out = Vec::new();
/// latte::dump(&mut out, latte::Unit::Time, latte::Data::Calibrated)?;
/// let table = String::from_utf8(out).unwrap();
/// assert!(table.contains("LATTE TELEMETRY [TIME][CAL]") && table.contains("doc_dump"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn dump(out: &mut dyn std::io::Write, unit: Unit, data: Data) -> std::io::Result<()> {
    let options = ReportOptions {
        unit,
        data,
        ..ReportOptions::default()
    };
    Report::collect(&options).write_table(out)
}

impl Report {
    /// Captures everything recorded so far and analyses it.
    pub fn collect(options: &ReportOptions) -> Report {
        let capture = crate::capture();
        let mut report = Report::from_capture(&capture, calibration(), options);
        report.footprint = Some(crate::registry::global().footprint());
        report.environment = Some(environment(&capture, calibration()));
        report
    }

    /// Analyses a capture with a given calibration (for reproducible reports).
    pub fn from_capture(
        capture: &Capture,
        calibration: &Calibration,
        options: &ReportOptions,
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
                    .map(|c| {
                        let prepared = Prepared::new(c, calibration, options);
                        let summary = prepared.summary();
                        merged.add(c.id, prepared);
                        Row {
                            component: c.id.to_owned(),
                            stats: scaled(summary, scale),
                        }
                    })
                    .collect(),
            })
            .collect();
        let overhead = (options.data == Data::Calibrated).then(|| Overhead {
            scope: calibration.scope.map(|row| row.map(|t| t as f64 * scale)),
            pulse: calibration.pulse as f64 * scale,
        });
        Report {
            label: None,
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
            footprint: None,
            environment: None,
        }
    }
}

/// The environment block, with the warnings only the data can give.
pub(crate) fn environment(
    capture: &Capture,
    calibration: &Calibration,
) -> crate::platform::Environment {
    let mut warnings = Vec::new();
    if calibration.resolution > 1 {
        warnings.push(format!(
            "the counter advances in steps of {} ticks ({:.2} ns): shorter scopes read 0 or one step",
            calibration.resolution,
            calibration.resolution as f64 / calibration.ticks_per_ns
        ));
    }
    // Ids whose Fast-mode samples come from several threads: pooled in ALL THREADS.
    let mut fast_threads: HashMap<&str, usize> = HashMap::new();
    for t in &capture.threads {
        for c in &t.components {
            let fast = c.samples.iter().any(|s| {
                matches!(s.kind(), SampleKind::Scope { start, stop } if start == crate::Mode::Fast || stop == crate::Mode::Fast)
            });
            if fast {
                *fast_threads.entry(c.id).or_default() += 1;
            }
        }
    }
    let mut pooled: Vec<&str> = fast_threads
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    pooled.sort_unstable();
    if !pooled.is_empty() {
        let shown = pooled
            .iter()
            .take(5)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        let more = if pooled.len() > 5 {
            format!(" and {} more", pooled.len() - 5)
        } else {
            String::new()
        };
        warnings.push(format!(
            "Fast-mode samples are compared across threads in ALL THREADS ({shown}{more}): RDTSC neither waits \
             for earlier work nor reports the CPU, so a scope that moved between cores goes unnoticed; use Mid \
             or Hard where cross-thread comparison matters"
        ));
    }
    crate::platform::Environment::current(warnings)
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
    fn add(&mut self, id: &'static str, p: Prepared) {
        let m = self.by_id.entry(id).or_insert_with(|| {
            self.order.push(id);
            Prepared::default()
        });
        m.all.extend_from_slice(&p.all);
        m.cleaned.extend_from_slice(&p.cleaned);
        m.kept += p.kept;
        m.seen += p.seen;
        m.bypass += p.bypass;
        m.outliers += p.outliers;
        m.migrated += p.migrated;
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
