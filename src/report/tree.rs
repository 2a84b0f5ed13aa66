//! The call tree as a report carries it: each thread's nodes, and the all-threads tree
//! merged by path, depth first.

use super::row::Row;
use crate::allocs::ScopeAllocs;
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
/// let (frame_self, physics_self) = (frame.self_time.unwrap(), physics.self_time.unwrap());
/// assert!(frame_self.total < frame.row.stats.total);
/// assert_eq!(physics_self.total, physics.row.stats.total);
/// // Its TOTAL divides into its self time, the scopes inside it, latte's own work
/// // inside it and what the tree cannot place: exactly, in ticks.
/// let a = frame.account.unwrap();
/// assert_eq!(a.total as i128, (a.own + a.children + a.inside) as i128 + a.not_attributed as i128);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "TreeNodeWire")]
pub struct TreeNode {
    /// The index of the node it ran under, in the same list; `None` at the root.
    pub parent: Option<usize>,
    /// Its depth: 0 at the root.
    pub depth: u32,
    /// Its inclusive statistics, as a flat row has them, histogram included (a reader
    /// compares nodes as it compares rows).
    pub row: Row,
    /// Its self time: the time not spent in the scopes inside it nor in latte's own
    /// work there. `None` for a node that is not a scope on the thread's stack
    /// (pulses, recorded values, [`Timer`](crate::Timer)s, a span's busy time, or a
    /// mix): nothing is known of what ran inside those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_time: Option<SelfTime>,
    /// How its `TOTAL` divides, exactly, in ticks: `None` where `self_time` is.
    /// Format 5 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Account>,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: what the node
    /// allocated, itself and with the scopes inside it (format 8 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocs: Option<ScopeAllocs>,
    /// Its `TOTAL` as a share of its parent's (0 to 1; `None` at the root or under
    /// a parent of no time).
    pub of_parent: Option<f64>,
    /// Its `TOTAL` as a share of its root's (0 to 1; 1 for a root of any time).
    pub of_root: f64,
}

impl TreeNode {
    /// The components from the root down to node `i` of `tree` (a list as a report
    /// holds one, depth first); a `parent` that is not a node before its child is not
    /// followed. How a node is matched across reports and named on screen.
    ///
    /// ```
    /// use latte::report::{Row, TreeNode};
    /// let node = |parent, depth, name| TreeNode {
    ///     parent, depth, row: Row::with_ticks(name, &[(10, 1)]),
    ///     self_time: None, account: None, allocs: None, of_parent: None, of_root: 1.0,
    /// };
    /// let tree = [node(None, 0, "frame"), node(Some(0), 1, "physics")];
    /// assert_eq!(TreeNode::path(&tree, 1), ["frame", "physics"]);
    /// ```
    pub fn path(tree: &[TreeNode], i: usize) -> Vec<&str> {
        let mut path = vec![tree[i].row.component.as_str()];
        let mut at = i;
        while let Some(p) = tree[at].parent.filter(|&p| p < at) {
            path.push(tree[p].row.component.as_str());
            at = p;
        }
        path.reverse();
        path
    }
}

/// A tree node as JSON holds it, in any format that has a tree (3 on).
#[derive(Deserialize)]
struct TreeNodeWire {
    parent: Option<usize>,
    depth: u32,
    row: Row,
    #[serde(default)]
    self_time: Option<SelfTime>,
    #[serde(default)]
    account: Option<Account>,
    #[serde(default)]
    allocs: Option<ScopeAllocs>,
    of_parent: Option<f64>,
    of_root: f64,
}

impl From<TreeNodeWire> for TreeNode {
    /// Formats 3 and 4 gave pulses and values a self time too: a pulse's is the time
    /// between pulses, a value's a sum of values, neither time spent in the node, so
    /// it is dropped.
    fn from(w: TreeNodeWire) -> TreeNode {
        let timed = w.row.kind.is_time_in();
        TreeNode {
            parent: w.parent,
            depth: w.depth,
            self_time: w.self_time.filter(|_| timed),
            account: w.account.filter(|_| timed),
            allocs: w.allocs,
            row: w.row,
            of_parent: w.of_parent,
            of_root: w.of_root,
        }
    }
}

/// A node's self time, in the report's unit and data: each call's time minus that of
/// the scopes closed inside it on its thread and (calibrated data) minus latte's own
/// work inside it ([`Account::inside`]), counted when the call closes; over the calls
/// the row's `TOTAL` covers (see `docs/report-format.md`). Quantiles are not kept (a
/// call with no scope inside is its own self time, so a leaf's are its row's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfTime {
    /// Calls it covers: the row's samples.
    pub calls: u64,
    /// Summed over the calls (calibrated data: each call's own overhead taken off).
    pub total: f64,
    /// Per call.
    pub mean: f64,
}

/// How a node's `TOTAL` divides, in counter ticks of the report's data (raw, or
/// calibrated), exactly:
/// `total = own + children + inside + not_attributed`.
///
/// Each part's share of the node is `part / total`; with the children's
/// [`of_parent`](TreeNode::of_parent) they add to 1. See `docs/report-format.md`, "The
/// call tree adds up".
///
/// ```
/// use latte::report::Account;
/// let a = Account { total: 1_000, own: 700, children: 200, inside: 90, not_attributed: 10 };
/// let parts = a.share(a.own) + a.share(a.children) + a.share(a.inside);
/// assert!((parts + a.share_of_not_attributed() - 1.0).abs() < 1e-12);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The node's `TOTAL`.
    pub total: u64,
    /// Its self time (`SELF`): its own code.
    pub own: u64,
    /// The `TOTAL`s of the children the tree shows under it.
    pub children: u64,
    /// `LATTE INSIDE`: latte's own work inside it, the Starts and Stops of its
    /// children as it saw them: per child sample, the overhead calibration takes off
    /// the child, plus the work of the child's Start and Stop outside the child's own
    /// window (`latte::analyze::Calibration::inside`). 0 in raw
    /// data, where nothing is taken off.
    pub inside: u64,
    /// `NOT ATTRIBUTED`: time inside it that the tree cannot place: children past the
    /// node limit or left out of the report's tree, samples of children that were
    /// lost, scopes paused by the recording switch, a span's busy time recorded
    /// elsewhere. Negative only when the node itself lost samples its children kept.
    pub not_attributed: i64,
}

impl Account {
    /// `part` (in ticks) as a share of the node's total (0 for a node of no time).
    pub fn share(&self, part: u64) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            part as f64 / self.total as f64
        }
    }

    /// `not_attributed` as a share of the node's total (negative when it is).
    pub fn share_of_not_attributed(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.not_attributed as f64 / self.total as f64
        }
    }
}
