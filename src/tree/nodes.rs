//! The call tree of a report: each thread's nodes with their inclusive rows and self
//! times, and the all-threads tree, nodes merged by path.

use crate::allocs::ScopeAllocs;
use crate::analyze::{Calibration, Prepared, RowOutput, dist, inclusive_allocs};
use crate::analyze::{outside_window, overhead};
use crate::collect::{ComponentTotals, SampleKind, ThreadTotals};
use crate::report::{Account, ReportOptions, Row, SelfTime, TreeNode};
use std::collections::HashMap;

/// Nodes a report's call tree keeps at most, each thread's and the all-threads one:
/// the largest by total, with every ancestor of one. The rest are in the flat rows,
/// and counted (`TreeNode`'s list says how many it left out).
pub(crate) const TREE_NODES: usize = 256;

/// One node before its row is made: its id, its parent (an index in the same list),
/// its prepared values, and how its time divides.
struct Node {
    name: &'static str,
    parent: Option<usize>,
    prepared: Prepared,
    parts: Parts,
    calls: u64,
}

/// How a node's time divides, in ticks of the report's data, before the tree is cut
/// to the nodes it keeps: what a node's account needs besides its children's totals.
#[derive(Clone, Copy, Debug, Default)]
struct Parts {
    /// Its `TOTAL`.
    total: u128,
    /// Its self time: `Some` for a node of scopes on the stack only.
    own: Option<u128>,
    /// latte's own work inside it (`LATTE INSIDE`).
    inside: u128,
    /// The samples its `TOTAL` covers.
    samples: u64,
    /// Its allocations, itself and inclusive, over every call.
    allocs: ScopeAllocs,
}

impl Parts {
    /// Adds the same path's parts of another thread.
    fn add(&mut self, other: &Parts) {
        self.total += other.total;
        self.own = self.own.zip(other.own).map(|(a, b)| a + b);
        self.inside += other.inside;
        self.samples += other.samples;
        self.allocs = self.allocs.plus(&other.allocs);
    }
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
    mut make: impl FnMut(usize) -> (Prepared, Parts),
) -> (Vec<Node>, u64) {
    let kept = keep(shapes);
    let mut at: Vec<Option<usize>> = vec![None; shapes.len()];
    let mut nodes = Vec::new();
    for (k, shape) in shapes.iter().enumerate().filter(|(k, _)| kept[*k]) {
        let (prepared, parts) = make(k);
        at[k] = Some(nodes.len());
        nodes.push(Node {
            name: shape.name,
            parent: shape.parent.and_then(|p| at.get(p).copied().flatten()),
            prepared,
            parts,
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
    /// A component's prepared values.
    fn prepared(&self, c: &ComponentTotals, thread: &str) -> Prepared {
        Prepared::new(c, thread, self.calibration, self.options, self.periods)
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
    let parts = thread_parts(t, inputs);
    let (nodes, left_out) = kept_nodes(&shapes, |k| {
        (inputs.prepared(&t.components[k], &t.name), parts[k])
    });
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
    let mut parts: Vec<Vec<Parts>> = Vec::new();
    // Per path, where its parts are: (thread's number in `parts`, node).
    let mut parts_at: Vec<Vec<(usize, usize)>> = Vec::new();
    for t in threads {
        parts.push(thread_parts(t, inputs));
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
                parts_at.push(Vec::new());
                shapes.len() - 1
            });
            shapes[at].total += raw_total(c);
            shapes[at].calls += c.seen;
            sources[at].push((t, k));
            parts_at[at].push((parts.len() - 1, k));
            mine.push(at);
        }
    }
    let (nodes, left_out) = kept_nodes(&shapes, |k| {
        let mut made: Option<(Prepared, Parts)> = None;
        for (&(t, c), &(thread, node)) in sources[k].iter().zip(&parts_at[k]) {
            let (p, mine) = (
                inputs.prepared(&t.components[c], &t.name),
                parts[thread][node],
            );
            match made.as_mut() {
                Some((all, sum)) => {
                    all.add(&p);
                    sum.add(&mine);
                }
                None => made = Some((p, mine)),
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

/// Every node's parts on a thread (kept or not: a child left out of the tree still
/// had latte's work inside its parent).
///
/// A node's self time is its `TOTAL` less the raw ticks of the scopes closed inside
/// it (the hot path's self-time sum says how many) and less the work of their Starts
/// and Stops outside their own windows. Its `LATTE INSIDE` is, per child sample, what
/// calibration took off the child plus that outside work: so `TOTAL` = self + the
/// children's `TOTAL` + `LATTE INSIDE` whenever every child's sample is in a child
/// node. The outside work, an estimate, is at most what the node's time leaves.
fn thread_parts(t: &ThreadTotals, inputs: &Inputs<'_>) -> Vec<Parts> {
    let (calibration, data) = (inputs.calibration, inputs.options.data);
    // Per node: raw ticks, TOTAL, and its Starts' and Stops' work outside its windows.
    let sums: Vec<(u128, u128, f64)> = t
        .components
        .iter()
        .map(|c| {
            let (_, exact) = dist::kinds_together(&c.kinds, |k| overhead(k, calibration, data));
            let outside = c
                .kinds
                .iter()
                .map(|(k, tally)| tally.exact.count as f64 * outside_window(*k, calibration, data))
                .sum();
            (raw_total(c), exact.sum, outside)
        })
        .collect();
    let inclusive = inclusive_allocs(&t.components);
    // Per node: its children's overheads taken off, and their work outside them.
    let mut taken = vec![0u128; sums.len()];
    let mut outside = vec![0f64; sums.len()];
    for (c, &(raw, total, out)) in t.components.iter().zip(&sums) {
        if let Some(p) = c.parent.map(|p| p as usize).filter(|&p| p < sums.len()) {
            taken[p] += raw.saturating_sub(total);
            outside[p] += out;
        }
    }
    t.components
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let (raw, total, _) = sums[k];
            let samples: u64 = c.kinds.iter().map(|(_, t)| t.exact.count).sum();
            let stack = !c.kinds.is_empty()
                && c.kinds
                    .iter()
                    .all(|(k, _)| matches!(k, SampleKind::Scope { .. }));
            // The hot path's self-time sum covers every call; TOTAL the folded ones.
            let self_raw = match c.lost {
                0 => u128::from(c.self_ticks),
                _ => u128::from(c.self_ticks) * u128::from(samples) / u128::from(c.seen.max(1)),
            };
            let left = total.saturating_sub(raw.saturating_sub(self_raw));
            let work = (outside[k].round() as u128).min(left);
            Parts {
                total,
                own: stack.then_some(left - work),
                inside: taken[k] + work,
                samples,
                allocs: ScopeAllocs::new(c.seen, c.allocs, inclusive[k]),
            }
        })
        .collect()
}

/// The tree of `nodes`, depth first, children by their total, largest first (scopes
/// before pulses and values); nodes
/// with no call in their whole subtree are left out.
fn build(nodes: &[Node], out: RowOutput) -> Vec<TreeNode> {
    let rows: Vec<Row> = nodes.iter().map(|n| n.prepared.row(n.name, out)).collect();
    let (roots, below) = order(nodes, &rows);
    let mut tree: Vec<TreeNode> = Vec::new();
    // Per node of `tree`: its parts, and its children's totals.
    let mut kept: Vec<Parts> = Vec::new();
    let mut children: Vec<u128> = Vec::new();
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
        let parts = nodes[k].parts;
        let self_time = parts.own.map(|own| {
            let (total, calls) = (own as f64 * out.scale, parts.samples);
            SelfTime {
                calls,
                total,
                mean: if calls > 0 { total / calls as f64 } else { 0.0 },
            }
        });
        let at = tree.len();
        kept.push(parts);
        if let Some(p) = parent {
            children[p] += parts.total;
        }
        tree.push(TreeNode {
            parent,
            depth,
            row,
            self_time,
            account: None,
            allocs: Some(parts.allocs),
            of_parent,
            of_root: share(root_total),
        });
        children.push(0);
        todo.extend(
            below[k]
                .iter()
                .rev()
                .map(|&c| (c, Some(at), depth + 1, root_total)),
        );
    }
    for ((node, parts), children) in tree.iter_mut().zip(&kept).zip(&children) {
        node.account = account(parts, *children);
    }
    tree
}

/// A node's account from its parts and its children's totals in the tree: what the
/// other parts leave is not attributed. `None` for a node with no self time.
fn account(parts: &Parts, children: u128) -> Option<Account> {
    let own = parts.own?;
    let rest = parts.total as i128 - (own + children + parts.inside) as i128;
    let ticks = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    Some(Account {
        total: ticks(parts.total),
        own: ticks(own),
        children: ticks(children),
        inside: ticks(parts.inside),
        not_attributed: i64::try_from(rest).unwrap_or(if rest < 0 { i64::MIN } else { i64::MAX }),
    })
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
        let scope = |k: usize| rows[k].kind.is_time_in();
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
