//! The live view: what a running program recorded in the last interval, cut from two
//! whole-run reports of its agent ([`Live::between`]). The live endpoint
//! (`latte_prometheus::Live`) serves it as JSON and `latte-telemetry top` shows it.
//!
//! An interval is [`Report::since`] of the two: calls and totals subtract exactly,
//! quantiles are read from the difference of the two distributions (bucket by bucket,
//! at the histogram's 3 significant digits), so the live view needs no cut of its own
//! in the agent and any number of viewers share it.

use crate::report::{RecordingOff, Report, Row, RowKind, Unit};
use serde::{Deserialize, Serialize};

/// One interval of a running program, as the live endpoint serves it: every figure
/// covers the interval only, in the report's unit.
///
/// ```
/// use latte::exporter::Live;
/// use latte::{Id, Report, ReportOptions};
/// static STEP: Id = Id::new("doc_live_step");
/// (0..100).for_each(|_| latte::record(&STEP, 1_000));
/// let earlier = Report::collect(&ReportOptions::default());
/// (0..30).for_each(|_| latte::record(&STEP, 2_000));
/// let later = Report::collect(&ReportOptions::default());
/// let live = Live::between(Some(&earlier), &later, 1.0);
/// let step = live.rows.iter().find(|r| r.component == "doc_live_step").unwrap();
/// assert_eq!(step.calls, 30); // the interval's calls only
/// let whole = later.all_threads.iter().find(|r| r.component == "doc_live_step").unwrap();
/// assert!(step.p50 > whole.stats.median); // the run's median is the first 1,000s'
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Live {
    /// [`Live::VERSION`] of the view's layout.
    pub version: u32,
    /// The program, as the endpoint names it (its executable's file name).
    #[serde(default)]
    pub program: String,
    /// Its process id.
    #[serde(default)]
    pub pid: u32,
    /// The interval's number: 1 for the first the endpoint cut, and so on.
    #[serde(default)]
    pub sequence: u64,
    /// The interval's length in seconds (the first covers the run so far).
    pub seconds: f64,
    /// The unit of every time figure.
    pub unit: Unit,
    /// Whether recording is on ([`set_recording`](crate::set_recording)).
    pub recording: bool,
    /// How long recording was off since the process started, if ever.
    #[serde(default)]
    pub recording_off: Option<RecordingOff>,
    /// Whether the endpoint takes the recording switch (`POST /recording/on`, `/off`).
    #[serde(default)]
    pub control: bool,
    /// Every component over all threads with calls in the interval, by `total`, largest
    /// first.
    pub rows: Vec<LiveRow>,
    /// Each thread with calls in the interval: its rows and frames.
    pub threads: Vec<LiveThread>,
    /// The all-threads call tree, depth first (a node's subtree follows it), with the
    /// interval's calls and times; nodes without calls in it left out.
    pub tree: Vec<LiveNode>,
}

/// A component's figures over an interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveRow {
    /// The component (the id's name).
    pub component: String,
    /// What recorded it: scopes, pulses (their `total` is the time between pulses,
    /// not work) or values.
    #[serde(default)]
    pub kind: RowKind,
    /// Calls (samples seen) in the interval, lost ones included.
    pub calls: u64,
    /// The time of the interval's samples added up.
    pub total: f64,
    /// Median of the interval's samples.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// The largest (its histogram bucket's middle).
    pub max: f64,
}

/// One thread's share of an interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveThread {
    /// Its name.
    pub name: String,
    /// Its number in the report (`#N`), telling apart threads of one name.
    pub serial: u64,
    /// Its components with calls in the interval, by `total`, largest first.
    pub rows: Vec<LiveRow>,
    /// Its frames (`latte_frame!` marks) in the interval, if it marks frames.
    pub frames: Option<LiveFrames>,
}

/// A thread's frames in an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveFrames {
    /// Frames ended in the interval.
    pub frames: u64,
    /// The frame budget, if one is set.
    pub budget: Option<f64>,
    /// Frames of the interval over the budget.
    pub over_budget: Option<u64>,
}

/// One node of the call tree over an interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveNode {
    /// The index of the node it ran under, in the same list; `None` at the root.
    pub parent: Option<usize>,
    /// Its depth: 0 at the root.
    pub depth: u32,
    /// The component.
    pub component: String,
    /// Calls in the interval.
    pub calls: u64,
    /// Their time added up, the scopes inside them included.
    pub total: f64,
    /// Their self time: not in the scopes inside them nor in latte's work there;
    /// `None` for a node that is not a scope on the stack (a pulse, a value, a
    /// [`Timer`](crate::Timer), a span's busy time).
    pub self_total: Option<f64>,
    /// latte's own work inside them (`LATTE INSIDE`, see
    /// [`Account`](crate::report::Account)).
    #[serde(default)]
    pub inside: f64,
    /// Time inside them the tree cannot place (`NOT ATTRIBUTED`).
    #[serde(default)]
    pub not_attributed: f64,
    /// The 99th percentile of the interval's calls.
    pub p99: f64,
}

impl Live {
    /// The layout's version, in [`Live::version`].
    pub const VERSION: u32 = 2;

    /// What `later` adds over `earlier`, two whole-run reports of the same run made
    /// `seconds` apart (`earlier` `None`: everything in `later`, the first interval).
    /// Rows are matched by component (and thread), tree nodes by their path. A row
    /// whose calls went down (the run was [`reset`](crate::collect::reset)) counts
    /// from zero. Quantiles come from the rows' distributions
    /// ([`Distribution::since`](crate::report::Distribution::since)).
    pub fn between(earlier: Option<&Report>, later: &Report, seconds: f64) -> Live {
        let cut;
        let interval = match earlier {
            Some(e) => {
                cut = later.since(e);
                &cut
            }
            None => later,
        };
        let off = later.recording_off;
        let threads = (interval.threads.iter())
            .filter(|t| t.rows.iter().any(|r| r.stats.seen > 0))
            .map(|t| LiveThread {
                name: t.name.clone(),
                serial: t.serial,
                rows: live_rows(&t.rows),
                frames: t.per_frame.as_ref().map(|f| LiveFrames {
                    frames: f.frames,
                    budget: f.budget,
                    over_budget: f.over_budget,
                }),
            })
            .collect();
        let per_tick = later.per_tick();
        let tree = (interval.tree.iter())
            .map(|node| LiveNode {
                parent: node.parent,
                depth: node.depth,
                component: node.row.component.clone(),
                calls: node.row.stats.seen,
                total: node.row.stats.total,
                self_total: node.self_time.map(|s| s.total),
                inside: node.account.map_or(0.0, |a| a.inside as f64 * per_tick),
                not_attributed: (node.account).map_or(0.0, |a| a.not_attributed as f64 * per_tick),
                p99: node.row.stats.p99,
            })
            .collect();
        Live {
            version: Live::VERSION,
            seconds,
            unit: later.unit,
            recording: !off.is_some_and(|o| o.now),
            recording_off: off,
            rows: live_rows(&interval.all_threads),
            threads,
            tree,
            ..Live::default()
        }
    }
}

/// The rows with calls, by total, largest first; a figure the interval does not know
/// (the largest value of calls whose samples were all lost) as 0.
fn live_rows(rows: &[Row]) -> Vec<LiveRow> {
    let known = |v: f64| if v.is_nan() { 0.0 } else { v };
    let mut live: Vec<LiveRow> = (rows.iter())
        .filter(|r| r.stats.seen > 0)
        .map(|r| LiveRow {
            component: r.component.clone(),
            kind: r.kind,
            calls: r.stats.seen,
            total: r.stats.total,
            p50: known(r.stats.median),
            p99: known(r.stats.p99),
            p999: known(r.stats.p999),
            max: known(r.stats.max),
        })
        .collect();
    live.sort_by(|a, b| b.total.total_cmp(&a.total));
    live
}
