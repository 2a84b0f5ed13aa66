//! From collected data to a [`Report`]: calibration, cleaning, statistics.
//!
//! Pure functions of collected data and options, plus the one function that assembles
//! every report (`assemble`): the agent's periodic, on-request and final reports,
//! [`Report::collect`], [`Report::collect_focused`] and [`Report::from_capture`] (made
//! in `agent/reports.rs`, which adds the features' sections) all go through it.
//!
//! Per (thread, id): each sample kind's whole-run histogram becomes ascending
//! `(value, count)` runs (minus the kind's overhead when calibrated, saturating at 0),
//! the kinds' runs are merged, cleaning trims the ends, and statistics are read from
//! the runs; counts, the uncleaned mean and standard deviation and the extremes come
//! from exact sums kept beside each histogram. The all-threads view of an id merges the
//! threads' runs (cleaning stays per thread, where preemption happens). A whole-run
//! report's series is the series feature's (`src/series/`), which treats each block of
//! its log as a row's values are treated here (`dist.rs`).

mod calibrate;
mod clean;
pub(crate) mod dist;
mod encode;
mod environment;
mod prepare;
mod stats;

pub(crate) use calibrate::block_signals;
pub use calibrate::{Calibration, calibration};
pub use clean::{Cleaned, clean};
pub(crate) use encode::per_id as per_id_histograms;
pub(crate) use prepare::{Prepared, RowOutput, inclusive_allocs};
pub use stats::{Moments, moments, quantile};

use crate::collect::{self, ComponentTotals, SampleKind, ThreadTotals, Totals};
use crate::diagnostics::Unpaired;
use crate::report::{AllocBreach, Data, ReportOptions};
use crate::report::{Overhead, Report, Row, ThreadReport, UnpairedScopes, by_total};
use prepare::flat_inclusive_allocs;
use std::borrow::Cow;
use std::collections::HashMap;

/// What a report is, beyond its data: a label, and whether it describes this process
/// now (then it carries latte's footprint and the environment block).
#[derive(Clone, Debug)]
pub(crate) struct Context {
    /// What the report covers when it is not everything (`final`, `periodic #3, ...`).
    pub(crate) label: Option<String>,
    /// Whether to add the process's footprint and environment (`false` for a report
    /// built from stored data).
    pub(crate) live: bool,
}

impl Default for Context {
    /// No label, not live.
    fn default() -> Context {
        Context {
            label: None,
            live: false,
        }
    }
}

/// `totals` with only the threads `pattern` matches (all of them, not copied, without
/// one).
pub(crate) fn of_threads<'a>(
    totals: &'a Totals,
    pattern: Option<&glob::Pattern>,
) -> Cow<'a, Totals> {
    match pattern {
        Some(p) => Cow::Owned(totals.only_threads(|name| p.matches(name))),
        None => Cow::Borrowed(totals),
    }
}

/// Builds a report: the one place a [`Report`] is made (a whole-run report's series is
/// added to it once the ledger is free, `series/`).
pub(crate) fn assemble(
    totals: &Totals,
    calibration: &Calibration,
    options: &ReportOptions,
    context: Context,
) -> Report {
    // The one factor from ticks to the unit, which `Row::distribution` uses too.
    let scale = crate::report::histogram::per_tick(options.unit, calibration.ticks_per_ns);
    let out = RowOutput { scale };
    let (threads, all_threads) = sections(totals, calibration, options, out);
    let overhead = (options.data == Data::Calibrated).then(|| Overhead {
        scope: calibration.scope.map(|row| row.map(|t| t as f64 * scale)),
        pulse: calibration.pulse as f64 * scale,
        inside: calibration.inside.map(|row| row.map(|t| t * scale)),
    });
    let mut report = Report {
        format_version: Report::FORMAT_VERSION,
        label: context.label,
        unit: options.unit,
        data: options.data,
        figures: options.figures,
        clock: crate::clock::source().to_string(),
        ticks_per_ns: calibration.ticks_per_ns,
        frequency_accuracy: calibration.accuracy,
        resolution: calibration.resolution as f64 * scale,
        cleaning: options.cleaning,
        overhead,
        threads,
        all_threads,
        // Added by the call tree's `tree::add`, where some scope ran inside another.
        tree: Vec::new(),
        tree_left_out: 0,
        teardown_drops: totals.teardown_drops,
        process_allocs: Some(totals.process_allocs),
        footprint: context.live.then(collect::footprint),
        environment: context
            .live
            .then(|| environment::environment(totals, calibration)),
        // The agent fills this in: only it knows what it could not write.
        periodic_failures: None,
        exporter_failures: Vec::new(),
        // Added to a whole-run report by `series::add`.
        series: None,
        dumps: None,
        recording_off: context.live.then(recording_off).flatten(),
    };
    if !crate::record::alloc::installed() && !counted_allocs(totals) {
        without_allocs(&mut report);
    }
    report
}

/// Whether `totals` counted any allocation (a stored capture's, say).
fn counted_allocs(totals: &Totals) -> bool {
    !totals.process_allocs.is_empty()
        || totals
            .threads
            .values()
            .any(|t| !t.outside.is_empty() || t.components.iter().any(|c| !c.allocs.is_empty()))
}

/// Leaves every allocation figure out: no counting allocator was installed.
fn without_allocs(report: &mut Report) {
    report.process_allocs = None;
    let rows = |rows: &mut Vec<Row>| rows.iter_mut().for_each(|r| r.allocs = None);
    rows(&mut report.all_threads);
    for t in &mut report.threads {
        t.outside_allocs = None;
        rows(&mut t.rows);
    }
}

/// The switch's pauses, if recording was ever off.
fn recording_off() -> Option<crate::report::RecordingOff> {
    let switch = collect::recording();
    (switch.pauses > 0).then_some(crate::report::RecordingOff {
        seconds: switch.off_for.as_secs_f64(),
        pauses: switch.pauses,
        now: !switch.on,
    })
}

/// Each thread's section and the all-threads rows, every list in the order of
/// [`by_total`].
fn sections(
    totals: &Totals,
    calibration: &Calibration,
    options: &ReportOptions,
    out: RowOutput,
) -> (Vec<ThreadReport>, Vec<Row>) {
    let mut merged = Merged::default();
    let periods = crate::record::id::periods();
    let threads: Vec<ThreadReport> = totals
        .threads
        .iter()
        .map(|(serial, t)| {
            let flat = t.flat();
            let inclusive = flat_inclusive_allocs(&t.components);
            // A ring made ahead by `prepare` and never written has no row.
            let rows = flat.iter().filter(|c| c.seen > 0).map(|c| {
                let p = Prepared::new(c, &t.name, calibration, options, &periods);
                merged.add(c, p.with_allocs(c.allocs, inclusive[c.name]), out)
            });
            let mut rows: Vec<Row> = rows.collect();
            by_total(&mut rows);
            ThreadReport {
                name: t.name.clone(),
                serial: *serial,
                exited: t.exited,
                anomalies: t.anomalies,
                unpaired: unpaired_scopes(&t.unpaired),
                open: t.open.clone(),
                rows,
                tree: Vec::new(),
                tree_left_out: 0,
                // Added by `frames::add`, for a thread that marked frames.
                per_frame: None,
                outside_allocs: Some(t.outside),
                alloc_breach: first_breach(t),
            }
        })
        .collect();
    let mut all_threads = merged.rows(out);
    by_total(&mut all_threads);
    (threads, all_threads)
}

/// Where the thread first allocated in an allocation-free scope, if it did.
fn first_breach(t: &ThreadTotals) -> Option<AllocBreach> {
    let (at, size) = t.breach?;
    let path = path_of(&t.components, at);
    Some(AllocBreach { path, size })
}

/// The ids from the root down to `components[at]`.
fn path_of(components: &[ComponentTotals], at: u32) -> Vec<String> {
    let parent = |k: usize| components.get(k)?.parent.map(|p| p as usize);
    let path = crate::record::node::path_to(at as usize, parent);
    let name = |k: usize| components.get(k).map_or("?", |c| c.name).to_owned();
    path.into_iter().map(name).collect()
}

/// The ids with frames that ended without their Stop.
fn unpaired_scopes(frames: &[(&'static str, Unpaired)]) -> Vec<UnpairedScopes> {
    frames
        .iter()
        .filter(|(_, counts)| counts.total() > 0)
        .map(|(name, counts)| UnpairedScopes {
            component: (*name).to_owned(),
            counts: *counts,
        })
        .collect()
}

/// Ticks to take off each value of `kind`: its calibrated overhead, or 0 for raw
/// data and user-recorded values.
pub(crate) fn overhead(kind: SampleKind, calibration: &Calibration, data: Data) -> u64 {
    match (data, kind, kind.modes()) {
        (Data::Raw, _, _) | (_, SampleKind::Recorded, _) => 0,
        (Data::Calibrated, _, Some((start, stop))) => calibration.scope_overhead(start, stop),
        (Data::Calibrated, _, None) => calibration.pulse,
    }
}

/// Ticks a sample of `kind` in a scope's tree node costs its parent beyond the window
/// the sample itself records (calibrated data; 0 for raw data, pulses and values).
pub(crate) fn outside_window(kind: SampleKind, calibration: &Calibration, data: Data) -> f64 {
    match (data, kind.modes()) {
        (Data::Calibrated, Some((start, stop))) => calibration.outside_window(start, stop),
        _ => 0.0,
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
    fn add(&mut self, c: &ComponentTotals, p: Prepared, out: RowOutput) -> Row {
        let row = p.row(c.name, out);
        match self.by_id.get_mut(c.name) {
            Some(m) => m.add(&p),
            None => {
                self.order.push(c.name);
                self.by_id.insert(c.name, p);
            }
        }
        row
    }

    fn rows(self, out: RowOutput) -> Vec<Row> {
        self.order
            .iter()
            .map(|id| self.by_id[id].row(id, out))
            .collect()
    }
}
