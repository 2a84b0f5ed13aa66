//! The call tree of a report: each thread's nodes with their inclusive rows and self
//! times, and the all-threads tree, nodes merged by path.

use super::prepare::{Prepared, RowOutput};
use super::{Calibration, overhead};
use crate::collect::{ComponentTotals, SampleKind, ThreadTotals};
use crate::report::{ReportOptions, Row, RowKind, SelfTime, TreeNode};
use std::collections::HashMap;

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

/// The nodes of a thread, in its ring order (a parent before its children).
pub(super) fn thread_nodes(
    t: &ThreadTotals,
    calibration: &Calibration,
    options: &ReportOptions,
    periods: &[u64],
) -> Vec<Node> {
    let nodes = t.components.iter().map(|c| {
        let prepared = Prepared::new(c, &t.name, calibration, options, periods);
        let own = own_ticks(c, &prepared, calibration, options);
        Node {
            name: c.name,
            parent: c.parent.map(|p| p as usize),
            prepared,
            own,
            calls: c.seen,
        }
    });
    nodes.collect()
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

/// Adds a thread's nodes into the all-threads nodes, matching them by path (the ids
/// from the root down).
pub(super) fn merge(
    all: &mut Vec<Node>,
    paths: &mut HashMap<Vec<&'static str>, usize>,
    nodes: Vec<Node>,
) {
    let mut mine: Vec<Vec<&'static str>> = Vec::with_capacity(nodes.len());
    for node in nodes {
        let mut path = node.parent.map_or_else(Vec::new, |p| mine[p].clone());
        path.push(node.name);
        match paths.get(&path) {
            Some(&at) => {
                let into = &mut all[at];
                into.prepared.add(&node.prepared);
                into.own += node.own;
                into.calls += node.calls;
            }
            None => {
                let parent = path[..path.len() - 1].to_vec();
                let parent = (!parent.is_empty()).then(|| paths[&parent]);
                paths.insert(path.clone(), all.len());
                all.push(Node { parent, ..node });
            }
        }
        mine.push(path);
    }
}

/// The tree of `nodes`, depth first, children by their total, largest first (scopes
/// before pulses and values); nodes
/// with no call in their whole subtree are left out.
pub(super) fn build(nodes: &[Node], out: RowOutput) -> Vec<TreeNode> {
    let out = RowOutput {
        histograms: false,
        ..out
    };
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
