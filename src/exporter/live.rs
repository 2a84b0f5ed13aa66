//! The live view: what a running program recorded in the last interval, cut from two
//! whole-run reports of its agent ([`Live::between`]). The live endpoint
//! (`latte_prometheus::Live`) serves it as JSON and `latte-telemetry top` shows it.
//!
//! An interval's figures are the later report minus the earlier one: calls and totals
//! subtract exactly, quantiles are read from the difference of the two histograms
//! (bucket by bucket, at the histogram's 3 significant digits), so the live view needs
//! no cut of its own in the agent and any number of viewers share it.

use crate::report::{Account, RecordingOff, Report, Row, RowKind, TreeNode, Unit};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

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
        let off = later.recording_off;
        let rows = |new: &[Row], old: Option<&[Row]>| diff_rows(new, old);
        let threads = later
            .threads
            .iter()
            .filter_map(|t| {
                let old = earlier.and_then(|e| e.threads.iter().find(|o| o.serial == t.serial));
                let frames = t.per_frame.as_ref().map(|now| {
                    let before = old.and_then(|o| o.per_frame.as_ref());
                    let less = |a: u64, b: Option<u64>| a.saturating_sub(b.unwrap_or(0));
                    LiveFrames {
                        frames: less(now.frames, before.map(|b| b.frames)),
                        budget: now.budget,
                        over_budget: now
                            .over_budget
                            .map(|n| less(n, before.and_then(|b| b.over_budget))),
                    }
                });
                let rows = rows(&t.rows, old.map(|o| o.rows.as_slice()));
                (!rows.is_empty()).then(|| LiveThread {
                    name: t.name.clone(),
                    serial: t.serial,
                    rows,
                    frames,
                })
            })
            .collect();
        Live {
            version: Live::VERSION,
            seconds,
            unit: later.unit,
            recording: !off.is_some_and(|o| o.now),
            recording_off: off,
            rows: rows(
                &later.all_threads,
                earlier.map(|e| e.all_threads.as_slice()),
            ),
            threads,
            tree: diff_tree(&later.tree, earlier.map(|e| e.tree.as_slice()), later),
            ..Live::default()
        }
    }
}

/// The rows of `new` with calls since `old`'s, by total, largest first.
fn diff_rows(new: &[Row], old: Option<&[Row]>) -> Vec<LiveRow> {
    let before: HashMap<&str, &Row> = old
        .unwrap_or_default()
        .iter()
        .map(|r| (r.component.as_str(), r))
        .collect();
    let mut rows: Vec<LiveRow> = new
        .iter()
        .filter_map(|row| {
            let old = before.get(row.component.as_str()).copied();
            diff_row(row, old)
        })
        .collect();
    rows.sort_by(|a, b| b.total.total_cmp(&a.total));
    rows
}

/// What `new` gained over `old` (the same row in the earlier report), if it has calls.
fn diff_row(new: &Row, old: Option<&Row>) -> Option<LiveRow> {
    // A row with fewer calls than before belongs to a run reset since: all of it is new.
    let old = old.filter(|o| o.stats.seen <= new.stats.seen);
    let calls = new.stats.seen - old.map_or(0, |o| o.stats.seen);
    if calls == 0 {
        return None;
    }
    let total = (new.stats.total - old.map_or(0.0, |o| o.stats.total)).max(0.0);
    let whole = LiveRow {
        component: new.component.clone(),
        kind: new.kind,
        calls,
        total,
        p50: new.stats.median,
        p99: new.stats.p99,
        p999: new.stats.p999,
        max: new.stats.max,
    };
    let gained = match old {
        Some(o) => new.distribution.since(&o.distribution),
        None => new.distribution.clone(),
    };
    if gained.is_empty() {
        // Calls whose samples were all lost: counted, no values to read.
        return Some(LiveRow {
            p50: 0.0,
            p99: 0.0,
            p999: 0.0,
            max: 0.0,
            ..whole
        });
    }
    Some(LiveRow {
        p50: gained.quantile(0.5),
        p99: gained.quantile(0.99),
        p999: gained.quantile(0.999),
        max: gained.quantile(1.0),
        ..whole
    })
}

/// The nodes of `new` with calls since `old`, with their parents, depth first.
fn diff_tree(new: &[TreeNode], old: Option<&[TreeNode]>, later: &Report) -> Vec<LiveNode> {
    let old = old.unwrap_or_default();
    let before: HashMap<Vec<&str>, &TreeNode> = old
        .iter()
        .enumerate()
        .map(|(i, n)| (path(old, i), n))
        .collect();
    let mut kept: Vec<Option<usize>> = Vec::with_capacity(new.len());
    let mut nodes = Vec::new();
    for (i, node) in new.iter().enumerate() {
        let was = before.get(&path(new, i)).copied();
        let row = diff_row(&node.row, was.map(|w| &w.row));
        let parent = node.parent.and_then(|p| kept.get(p).copied().flatten());
        // A node whose parent was left out has no calls either (a scope closes inside
        // its parent): left out too.
        let Some(row) = row.filter(|_| node.parent.is_none() || parent.is_some()) else {
            kept.push(None);
            continue;
        };
        // The interval's parts: the later account less the earlier (the whole of the
        // later one after a reset).
        let was = was.filter(|w| w.row.stats.seen <= node.row.stats.seen);
        let scale = |ticks: f64| ticks * later.per_tick();
        let part = |f: fn(&Account) -> f64| {
            let now = node.account.as_ref().map_or(0.0, f);
            let before = was.and_then(|w| w.account.as_ref()).map_or(0.0, f);
            scale(now - before)
        };
        let self_total = node.self_time.map(|own| {
            let before = was.and_then(|w| w.self_time).map_or(0.0, |s| s.total);
            (own.total - before).max(0.0)
        });
        kept.push(Some(nodes.len()));
        nodes.push(LiveNode {
            parent,
            depth: node.depth,
            component: row.component,
            calls: row.calls,
            total: row.total,
            self_total,
            inside: part(|a| a.inside as f64).max(0.0),
            not_attributed: part(|a| a.not_attributed as f64),
            p99: row.p99,
        });
    }
    nodes
}

/// The components from the root down to node `i` of `tree`.
fn path(tree: &[TreeNode], i: usize) -> Vec<&str> {
    let mut path = vec![tree[i].row.component.as_str()];
    let mut at = i;
    // A parent comes before its children; anything else is not followed.
    while let Some(p) = tree[at].parent.filter(|&p| p < at) {
        path.push(tree[p].row.component.as_str());
        at = p;
    }
    path.reverse();
    path
}
