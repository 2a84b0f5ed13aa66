//! From collected data to a [`Report`]: calibration, cleaning, statistics.
//!
//! Pure functions of collected data and options, plus the one function that assembles
//! every report (`assemble`): the agent's periodic, on-request and final reports,
//! [`Report::collect`] and [`Report::from_capture`] all go through it.
//!
//! Per (thread, id): each sample kind's whole-run histogram becomes ascending
//! `(value, count)` runs (minus the kind's overhead when calibrated, saturating at 0),
//! the kinds' runs are merged, cleaning trims the ends, and statistics are read from
//! the runs; counts, the uncleaned mean and standard deviation and the extremes come
//! from exact sums kept beside each histogram. The all-threads view of an id merges the
//! threads' runs (cleaning stays per thread, where preemption happens).

mod calibrate;
mod clean;
mod dist;
mod environment;
mod export;
mod focused;
mod stats;

pub use crate::config::{Bypass, Fences};
pub use calibrate::{Calibration, calibration};
pub use clean::{Cleaned, clean};
pub use dist::rank;
pub(crate) use export::per_id as per_id_histograms;
pub(crate) use focused::of_threads;
pub use stats::{Moments, moments, quantile};

use crate::collect::{self, Capture, ComponentTotals, Exact, SampleKind, Totals};
use crate::config::{Data, ReportOptions, Unit};
use crate::diagnostics::FrameCounts;
use crate::report::{
    Corrected, EndedFrames, Overhead, Report, Row, Slowest, Summary, ThreadReport,
};
use dist::Runs;
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
    /// Whole run so far: folds everything recorded until now and analyses it.
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
        // Calibration before the ledger's lock: a first calibration takes ~50 ms,
        // and the drain's folds must not wait for it.
        let calibration = calibration();
        collect::whole_run(|totals| assemble(totals, calibration, options, live))
    }

    /// Analyses a stored capture with a given calibration (for reproducible reports):
    /// its retained samples are the folded ones, its overwritten samples are lost. No
    /// label, footprint or environment.
    pub fn from_capture(
        capture: &Capture,
        calibration: &Calibration,
        options: &ReportOptions,
    ) -> Report {
        let totals = Totals::from_capture(capture);
        assemble(&totals, calibration, options, Context::default())
    }
}

/// Builds a report: the one place a [`Report`] is made.
pub(crate) fn assemble(
    totals: &Totals,
    calibration: &Calibration,
    options: &ReportOptions,
    context: Context,
) -> Report {
    let scale = match options.unit {
        Unit::Cycles => 1.0,
        Unit::Time => 1.0 / calibration.ticks_per_ns,
    };
    let mut merged = Merged::default();
    let periods = crate::record::id::periods();
    let threads = totals
        .threads
        .iter()
        .map(|(serial, t)| ThreadReport {
            name: t.name.clone(),
            serial: *serial,
            exited: t.exited,
            anomalies: t.anomalies,
            frames: ended_frames(&t.frames),
            open: t.open.clone(),
            rows: t
                .components
                .iter()
                // A ring made ahead by `prepare` and never written has no row.
                .filter(|c| c.seen > 0)
                .map(|c| {
                    let p = Prepared::new(c, &t.name, calibration, options, &periods);
                    merged.add(c, p, scale)
                })
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
        teardown_drops: totals.teardown_drops,
        footprint: context.live.then(collect::footprint),
        environment: context
            .live
            .then(|| environment::environment(totals, calibration)),
        // The agent fills this in: only it knows what it could not write.
        periodic_failures: None,
    }
}

/// The ids with frames that ended without their Stop.
fn ended_frames(frames: &[(&'static str, FrameCounts)]) -> Vec<EndedFrames> {
    frames
        .iter()
        .filter(|(_, counts)| counts.total() > 0)
        .map(|(name, counts)| EndedFrames {
            component: (*name).to_owned(),
            counts: *counts,
        })
        .collect()
}

/// One component's distribution in the report's data, with what cleaning kept.
#[derive(Default)]
struct Prepared {
    all: Runs,
    exact: Exact,
    cleaned: Runs,
    /// Whether cleaning removed nothing (then the exact moments describe `cleaned`).
    untouched: bool,
    seen: u64,
    lost: u64,
    bypass: u64,
    outliers: u64,
    migrated: u64,
    /// Slowest first, values in ticks of the report's data.
    slowest: Vec<Slowest>,
    /// The declared period in ticks, and the values corrected for coordinated
    /// omission.
    corrected: Option<(u64, Runs)>,
}

impl Prepared {
    fn new(
        c: &ComponentTotals,
        thread: &str,
        calibration: &Calibration,
        options: &ReportOptions,
        periods: &[u64],
    ) -> Prepared {
        let overhead = |kind| overhead(kind, calibration, options.data);
        let (all, exact) = dist::kinds_together(&c.kinds, overhead);
        let slowest = c
            .slowest
            .iter()
            .map(|s| Slowest {
                value: s.ticks.saturating_sub(overhead(s.kind)) as f64,
                thread: thread.to_owned(),
                not_before_ms: s.not_before_ms,
                not_after_ms: s.not_after_ms,
            })
            .collect();
        let period_ns = periods.get(c.index as usize).copied().unwrap_or(0);
        let corrected = (period_ns > 0 && c.index != 0).then(|| {
            let period = ((period_ns as f64 * calibration.ticks_per_ns).round() as u64).max(1);
            (period, corrected_runs(c, period, overhead))
        });
        let kept = clean::clean_runs(
            &all,
            &options.cleaning,
            calibration.ticks_per_ns,
            calibration.resolution,
        );
        Prepared {
            cleaned: all[kept.runs].to_vec(),
            untouched: kept.bypass + kept.outliers == 0,
            all,
            exact,
            seen: c.seen,
            lost: c.lost,
            bypass: kept.bypass,
            outliers: kept.outliers,
            migrated: c.migrated,
            slowest,
            corrected,
        }
    }

    /// The row of these values, in the report's unit.
    fn row(&self, component: &str, scale: f64) -> Row {
        let corrected = self.corrected.as_ref().map(|(period, runs)| {
            let q = |q: f64| dist::quantile(runs, q) as f64 * scale;
            Corrected {
                period: *period as f64 * scale,
                count: dist::count(runs),
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                p9999: q(0.9999),
                // The correction adds values below the largest only: the exact
                // maximum stands.
                max: extremes(&self.exact).1 * scale,
            }
        });
        let slowest = self
            .slowest
            .iter()
            .map(|s| Slowest {
                value: s.value * scale,
                ..s.clone()
            })
            .collect();
        Row {
            component: component.to_owned(),
            stats: scaled(self.summary(), scale),
            slowest,
            corrected,
            histogram: export::encode(&self.all),
        }
    }

    /// Statistics in ticks.
    fn summary(&self) -> Summary {
        let mut m = stats::run_moments(&self.cleaned);
        let exact_sd = self.exact.std_dev();
        if self.untouched {
            // Nothing was removed: the exact figures hold for the cleaned set too.
            m.mean = self.exact.mean();
            m.std_dev = exact_sd.unwrap_or(m.std_dev);
            (m.min, m.max) = extremes(&self.exact);
        }
        let all = stats::run_moments(&self.all);
        let q = |q: f64| dist::quantile(&self.all, q) as f64;
        let (min_all, max_all) = extremes(&self.exact);
        Summary {
            samples: m.count,
            seen: self.seen,
            folded: self.exact.count,
            lost: self.lost,
            avg: m.mean,
            median: dist::quantile(&self.cleaned, 0.5) as f64,
            std_dev: m.std_dev,
            skew: m.skew,
            min: m.min,
            max: m.max,
            range: m.max - m.min,
            bypass: self.bypass,
            outliers: self.outliers,
            p50: q(0.5),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            avg_all: self.exact.mean(),
            std_dev_all: exact_sd.unwrap_or(all.std_dev),
            min_all,
            max_all,
            migrated: self.migrated,
        }
    }

    /// Adds another thread's prepared values of the same id.
    fn add(&mut self, other: &Prepared) {
        self.all = dist::merge(&self.all, &other.all);
        self.cleaned = dist::merge(&self.cleaned, &other.cleaned);
        self.untouched &= other.untouched;
        self.exact = self.exact.plus(&other.exact);
        self.seen += other.seen;
        self.lost += other.lost;
        self.bypass += other.bypass;
        self.outliers += other.outliers;
        self.migrated += other.migrated;
        let keep = self.slowest.len().max(other.slowest.len());
        self.slowest.extend(other.slowest.iter().cloned());
        self.slowest.sort_by(|a, b| b.value.total_cmp(&a.value));
        self.slowest.truncate(keep);
        self.corrected = match (self.corrected.take(), &other.corrected) {
            (Some((p, a)), Some((_, b))) => Some((p, dist::merge(&a, b))),
            (mine, theirs) => mine.or_else(|| theirs.clone()),
        };
    }
}

/// Every kind's values corrected for coordinated omission with `period` ticks (raw
/// ticks, as HdrHistogram's correction is defined), then minus the kind's overhead.
fn corrected_runs(c: &ComponentTotals, period: u64, overhead: impl Fn(SampleKind) -> u64) -> Runs {
    let mut runs = Runs::new();
    for (kind, tally) in &c.kinds {
        let hist = tally.hist.clone_correct(period);
        let raw = dist::hist_runs(&hist, hist.min().min(tally.exact.min), tally.exact.max);
        runs = dist::merge(&runs, &dist::shifted(raw, overhead(*kind)));
    }
    runs
}

/// Exact minimum and maximum (0 for no values).
fn extremes(exact: &Exact) -> (f64, f64) {
    match exact.count {
        0 => (0.0, 0.0),
        _ => (exact.min as f64, exact.max as f64),
    }
}

/// Ticks to take off each value of `kind`: its calibrated overhead, or 0 for raw
/// data and user-recorded values.
pub(crate) fn overhead(kind: SampleKind, calibration: &Calibration, data: Data) -> u64 {
    match (data, kind) {
        (Data::Raw, _) | (_, SampleKind::Recorded) => 0,
        (Data::Calibrated, SampleKind::Scope { start, stop }) => {
            calibration.scope_overhead(start, stop)
        }
        (Data::Calibrated, SampleKind::Pulse) => calibration.pulse,
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
        p50: s.p50 * f,
        p90: s.p90 * f,
        p99: s.p99 * f,
        p999: s.p999 * f,
        p9999: s.p9999 * f,
        avg_all: s.avg_all * f,
        std_dev_all: s.std_dev_all * f,
        min_all: s.min_all * f,
        max_all: s.max_all * f,
        ..s
    }
}

/// Per-id union of every thread's prepared values, in order of first appearance.
#[derive(Default)]
struct Merged {
    order: Vec<&'static str>,
    by_id: HashMap<&'static str, Prepared>,
}

impl Merged {
    /// Adds one (thread, component)'s prepared values; returns the thread's row.
    fn add(&mut self, c: &ComponentTotals, p: Prepared, scale: f64) -> Row {
        let row = p.row(c.name, scale);
        match self.by_id.get_mut(c.name) {
            Some(m) => m.add(&p),
            None => {
                self.order.push(c.name);
                self.by_id.insert(c.name, p);
            }
        }
        row
    }

    fn rows(self, scale: f64) -> Vec<Row> {
        self.order
            .iter()
            .map(|id| self.by_id[id].row(id, scale))
            .collect()
    }
}
