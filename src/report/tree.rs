//! The call tree as a report carries it: each thread's nodes, and the all-threads tree
//! merged by path, depth first.

use super::row::Row;
use serde::{Deserialize, Serialize};

/// One node of a call tree: the scopes (and records) of one id opened under one
/// path of enclosing scopes on a thread, or, in [`Report::tree`](crate::Report::tree),
/// on every thread that ran that path.
///
/// A tree lists its nodes depth first, each node's children by their `TOTAL`, largest
/// first, so a node's subtree follows it. Only threads where a scope ran inside
/// another have a tree; the flat rows ([`ThreadReport::rows`](crate::report::ThreadReport::rows))
/// are the exact merge of an id's nodes.
///
/// ```
/// use latte::{Data, Report, ReportOptions, Unit};
/// latte::latte_start!("doc_tree_frame");
/// latte::latte_start!("doc_tree_physics");
/// latte::latte_stop!("doc_tree_physics");
/// latte::latte_stop!("doc_tree_frame");
/// let options = ReportOptions { unit: Unit::Cycles, data: Data::Raw, ..Default::default() };
/// let report = Report::collect(&options);
/// let me = std::thread::current().name().unwrap().to_owned();
/// let tree = &report.threads.iter().find(|t| t.name == me).unwrap().tree;
/// let frame = tree.iter().position(|n| n.row.component == "doc_tree_frame").unwrap();
/// let physics = tree.iter().find(|n| n.row.component == "doc_tree_physics").unwrap();
/// assert_eq!((physics.parent, physics.depth), (Some(frame), 1));
/// // The frame's own time leaves out the physics scope inside it.
/// let frame = &tree[frame];
/// assert!(frame.self_time.total < frame.row.stats.total);
/// assert_eq!(physics.self_time.total, physics.row.stats.total);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeNode {
    /// The index of the node it ran under, in the same list; `None` at the root.
    pub parent: Option<usize>,
    /// Its depth: 0 at the root.
    pub depth: u32,
    /// Its inclusive statistics, as a flat row has them, histogram included (a reader
    /// compares nodes as it compares rows).
    pub row: Row,
    /// Its self time: the time not spent in the scopes inside it.
    pub self_time: SelfTime,
    /// Its `TOTAL` as a share of its parent's (0 to 1; `None` at the root or under
    /// a parent of no time).
    pub of_parent: Option<f64>,
    /// Its `TOTAL` as a share of its root's (0 to 1; 1 for a root of any time).
    pub of_root: f64,
}

/// A node's self time, in the report's unit and data: each call's time minus that of
/// the scopes closed inside it on its thread, counted when the call closes. Exact
/// over every call, those whose samples were lost included (see
/// `docs/report-format.md`); quantiles are not kept (a call with no scope inside is
/// its own self time, so a leaf's are its row's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfTime {
    /// Calls it covers: every one recorded (the row's `seen`).
    pub calls: u64,
    /// Summed over the calls (calibrated data: each call's own overhead taken off).
    pub total: f64,
    /// Per call.
    pub mean: f64,
}
