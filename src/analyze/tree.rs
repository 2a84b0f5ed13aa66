//! The call tree of a report: each thread's nodes with their inclusive rows and self
//! times, and the all-threads tree, nodes merged by path.

use super::prepare::{Prepared, RowOutput};
use super::{Calibration, overhead};
use crate::collect::{ComponentTotals, SampleKind, ThreadTotals};
use crate::report::{ReportOptions, Row, RowKind, SelfTime, TreeNode};
use std::collections::HashMap;

/// Nodes a report's call tree keeps at most, each thread's and the all-threads one:
/// the largest by total, with every ancestor of one. The rest are in the flat rows,
/// and counted (`TreeNode`'s list says how many it left out).
pub(crate) const TREE_NODES: usize = 256;

/// One node before its row is made: its id, its parent (an index in the same list),
/// its prepared values, and its self time in ticks of the report's data.
pub(super) struct Node {
    name: &'static str,
    parent: Option<usize>,
    prepared: Prepared,
    /// Self time of every call, in ticks of the report's data.
    own: f64,
    calls: u64,
}

/// What choosing the nodes to keep needs, cheap to have for every node: its id, its
/// parent, its raw total and its calls.
struct Shape {
    name: &'static str,
    parent: Option<usize>,
    total: u128,
    calls: u64,
}

/// A component's raw total, every kind together.
fn raw_total(c: &ComponentTotals) -> u128 {
    c.kinds.iter().map(|(_, t)| t.exact.sum).sum()
}

/// Which of `shapes` a tree keeps: the [`TREE_NODES`] largest by total that have
/// calls, and their ancestors (a parent always comes before its children).
fn keep(shapes: &[Shape]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..shapes.len()).filter(|&k| shapes[k].calls > 0).collect();
    order.sort_by(|&a, &b| shapes[b].total.cmp(&shapes[a].total));
    let mut kept = vec![false; shapes.len()];
    for &k in order.iter().take(TREE_NODES) {
        let mut at = Some(k);
        while let Some(n) = at.filter(|&n| !kept[n]) {
            kept[n] = true;
            at = shapes[n].parent;
        }
    }
    kept
}

/// The kept nodes, their parents renumbered within them, made by `make` (from the
/// index of a kept node), and how many nodes with calls were left out.
fn kept_nodes(
    shapes: &[Shape],
    mut make: impl FnMut(usize) -> (Prepared, f64),
) -> (Vec<Node>, u64) {
    let kept = keep(shapes);
    let mut at: Vec<Option<usize>> = vec![None; shapes.len()];
    let mut nodes = Vec::new();
    for (k, shape) in shapes.iter().enumerate().filter(|(k, _)| kept[*k]) {
        let (prepared, own) = make(k);
        at[k] = Some(nodes.len());
        nodes.push(Node {
            name: shape.name,
            parent: shape.parent.and_then(|p| at.get(p).copied().flatten()),
            prepared,
            own,
            calls: shape.calls,
        });
    }
    let left_out = (0..shapes.len())
        .filter(|&k| !kept[k] && shapes[k].calls > 0)
        .count();
    (nodes, left_out as u64)
}

/// The analysis a node's row needs, shared by every node of a report.
pub(super) struct Inputs<'a> {
    pub(super) calibration: &'a Calibration,
    pub(super) options: &'a ReportOptions,
    pub(super) periods: &'a [u64],
}

impl Inputs<'_> {
    /// A component's prepared values and self time.
    fn node(&self, c: &ComponentTotals, thread: &str) -> (Prepared, f64) {
        let prepared = Prepared::new(c, thread, self.calibration, self.options, self.periods);
        let own = own_ticks(c, &prepared, self.calibration, self.options);
        (prepared, own)
    }
}

/// A thread's tree (nodes kept, depth first) and how many nodes it left out.
pub(super) fn thread_tree(
    t: &ThreadTotals,
    inputs: &Inputs<'_>,
    out: RowOutput,
) -> (Vec<TreeNode>, u64) {
    let shapes: Vec<Shape> = t
        .components
        .iter()
        .map(|c| Shape {
            name: c.name,
            parent: c.parent.map(|p| p as usize),
            total: raw_total(c),
            calls: c.seen,
        })
        .collect();
    let (nodes, left_out) = kept_nodes(&shapes, |k| inputs.node(&t.components[k], &t.name));
    (build(&nodes, out), left_out)
}

/// The all-threads tree: every thread's nodes merged by path (the same ids from the
/// root down), nodes kept as in a thread's, and how many it left out.
pub(super) fn all_threads_tree<'a>(
    threads: impl Iterator<Item = &'a ThreadTotals>,
    inputs: &Inputs<'_>,
    out: RowOutput,
) -> (Vec<TreeNode>, u64) {
    // A path is named by its parent path's number and its id.
    let mut paths: HashMap<(Option<usize>, &'static str), usize> = HashMap::new();
    let mut shapes: Vec<Shape> = Vec::new();
    let mut sources: Vec<Vec<(&ThreadTotals, usize)>> = Vec::new();
    for t in threads {
        let mut mine: Vec<usize> = Vec::with_capacity(t.components.len());
        for (k, c) in t.components.iter().enumerate() {
            let parent = c.parent.and_then(|p| mine.get(p as usize).copied());
            let at = *paths.entry((parent, c.name)).or_insert_with(|| {
                shapes.push(Shape {
                    name: c.name,
                    parent,
                    total: 0,
                    calls: 0,
                });
                sources.push(Vec::new());
                shapes.len() - 1
            });
            shapes[at].total += raw_total(c);
            shapes[at].calls += c.seen;
            sources[at].push((t, k));
            mine.push(at);
        }
    }
    let (nodes, left_out) = kept_nodes(&shapes, |k| {
        let mut made: Option<(Prepared, f64)> = None;
        for &(t, c) in &sources[k] {
            let (p, own) = inputs.node(&t.components[c], &t.name);
            match made.as_mut() {
                Some((all, sum)) => {
                    all.add(&p);
                    *sum += own;
                }
                None => made = Some((p, own)),
            }
        }
        made.unwrap_or_default()
    });
    (build(&nodes, out), left_out)
}

/// Whether a scope ran inside another on the thread: then it has a tree.
pub(super) fn nested(t: &ThreadTotals) -> bool {
    t.components.iter().any(|c| c.parent.is_some())
}

/// A node's self time over every call, in ticks of the report's data.
///
/// With nothing lost, its `TOTAL` less the ticks of the scopes closed inside it
/// (its scopes' ticks less their self-time sum): exact, the same overhead taken off
/// as for `TOTAL` (so a node with nothing inside has its `TOTAL` as its self time).
/// With samples lost, the self-time sum over every call, recorded or lost, less each
/// call's own overhead (the mean of the folded ones'), never below 0.
fn own_ticks(
    c: &ComponentTotals,
    prepared: &Prepared,
    calibration: &Calibration,
    options: &ReportOptions,
) -> f64 {
    let off = |kind| overhead(kind, calibration, options.data) as f64;
    let is_scope = |kind: &SampleKind| matches!(kind, SampleKind::Scope { .. });
    let (mut scopes, mut raw, mut overheads, mut others) = (0u64, 0u128, 0.0, 0.0);
    for (kind, tally) in &c.kinds {
        let n = tally.exact.count;
        if is_scope(kind) {
            scopes += n;
            raw += tally.exact.sum;
            overheads += n as f64 * off(*kind);
        } else {
            others += (tally.exact.sum as f64 - n as f64 * off(*kind)).max(0.0);
        }
    }
    if c.lost == 0 {
        let inside = raw.saturating_sub(u128::from(c.self_ticks));
        return prepared.total_ticks().saturating_sub(inside) as f64;
    }
    // The self-time sum covers every scope recorded, lost ones too: their overheads
    // are taken as the mean of the folded ones'.
    let folded: u64 = c.kinds.iter().map(|(_, t)| t.exact.count).sum();
    let recorded = c.seen.saturating_sub(folded - scopes);
    let overhead = match scopes {
        0 => 0.0,
        n => overheads / n as f64 * recorded as f64,
    };
    (c.self_ticks as f64 - overhead).max(0.0) + others
}

/// The tree of `nodes`, depth first, children by their total, largest first (scopes
/// before pulses and values); nodes
/// with no call in their whole subtree are left out.
fn build(nodes: &[Node], out: RowOutput) -> Vec<TreeNode> {
    let rows: Vec<Row> = nodes.iter().map(|n| n.prepared.row(n.name, out)).collect();
    let (roots, children) = order(nodes, &rows);
    let mut tree: Vec<TreeNode> = Vec::new();
    // (node, parent in `tree`, depth, root's total), the next to visit last.
    let mut todo: Vec<(usize, Option<usize>, u32, f64)> = Vec::new();
    todo.extend(
        roots
            .iter()
            .rev()
            .map(|&k| (k, None, 0, rows[k].stats.total)),
    );
    while let Some((k, parent, depth, root_total)) = todo.pop() {
        let row = rows[k].clone();
        let total = row.stats.total;
        let share = |of: f64| if of > 0.0 { total / of } else { 0.0 };
        let of_parent = parent
            .map(|p| tree[p].row.stats.total)
            .filter(|&t| t > 0.0)
            .map(share);
        let (own, calls) = (nodes[k].own * out.scale, nodes[k].calls);
        let at = tree.len();
        tree.push(TreeNode {
            parent,
            depth,
            row,
            self_time: SelfTime {
                calls,
                total: own,
                mean: if calls > 0 { own / calls as f64 } else { 0.0 },
            },
            of_parent,
            of_root: share(root_total),
        });
        todo.extend(
            children[k]
                .iter()
                .rev()
                .map(|&c| (c, Some(at), depth + 1, root_total)),
        );
    }
    tree
}

/// The roots and each node's children, largest total first, without the nodes that
/// have no call in their whole subtree.
fn order(nodes: &[Node], rows: &[Row]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (k, n) in nodes.iter().enumerate() {
        match n.parent {
            Some(p) => children[p].push(k),
            None => roots.push(k),
        }
    }
    // Calls in each subtree (a parent comes before its children: sum backwards).
    let mut calls: Vec<u64> = nodes.iter().map(|n| n.calls).collect();
    for k in (0..nodes.len()).rev() {
        if let Some(p) = nodes[k].parent {
            calls[p] += calls[k];
        }
    }
    // Scopes by TOTAL, largest first, then pulses and values, as flat rows come.
    let by_total = |list: &mut Vec<usize>| {
        list.retain(|&k| calls[k] > 0);
        let scope = |k: usize| rows[k].kind == RowKind::Scope;
        list.sort_by(|&a, &b| {
            (scope(b), rows[b].stats.total)
                .partial_cmp(&(scope(a), rows[a].stats.total))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    };
    by_total(&mut roots);
    children.iter_mut().for_each(by_total);
    (roots, children)
}
