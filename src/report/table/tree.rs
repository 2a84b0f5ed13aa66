//! A call tree's rows: each node indented under the one it ran in, with its self time
//! and its share of its parent, and under a parent the lines that divide its time
//! (`(self)`, `(latte inside)`, `(not attributed)`), which add up with its children.

use super::model::{Cells, Section, cells, shown};
use super::options::{Column, TableOptions};
use super::text;
use crate::report::numbers::{count, share};
use crate::report::{Report, RowKind, TreeNode};

/// A call tree's nodes, depth first, each indented under its parent; the first
/// [`COMPACT_ROWS`] in a compact report. Under each node whose time divides (it has
/// children, latte's work or time not attributed in it), after its subtree: its
/// `(self)`, `(latte inside)` and `(not attributed)` lines, so that its children's and
/// these lines' `TOTAL` add up to its own and their `% PARENT` to 100%.
pub(super) fn fill_tree(
    section: &mut Section,
    report: &Report,
    tree: &[TreeNode],
    options: &TableOptions,
) {
    let shown = shown(section, tree.len(), options);
    let has_kids: Vec<bool> = (0..shown)
        .map(|i| tree[..shown].iter().any(|n| n.parent == Some(i)))
        .collect();
    let mut open: Vec<usize> = Vec::new();
    let mut rows = Vec::with_capacity(shown);
    for (i, node) in tree[..shown].iter().enumerate() {
        while let Some(&top) = open.last().filter(|&&top| tree[top].depth >= node.depth) {
            open.pop();
            rows.extend(parts(report, &tree[top], has_kids[top]));
        }
        open.push(i);
        rows.push(node_cells(report, node));
    }
    while let Some(top) = open.pop() {
        rows.extend(parts(report, &tree[top], has_kids[top]));
    }
    section.rows = rows;
}

/// A tree node's cells: its row's, with its self time and its share of its parent.
fn node_cells(report: &Report, node: &TreeNode) -> Cells {
    let mut cells = cells(report, &node.row);
    cells.depth = Some(node.depth);
    // Only a scope on the stack knows what ran inside it.
    cells.cells[Column::SelfTime.index()] = match node.self_time {
        Some(own) if own.calls > 0 && node.row.kind == RowKind::Scope => {
            text::value(report, own.total)
        }
        _ => "-".to_owned(),
    };
    cells.cells[Column::OfParent.index()] = node
        .of_parent
        .map_or_else(|| "-".to_owned(), |f| share(f, 1.0));
    for column in [Column::AllocsPerCall, Column::BytesPerCall] {
        cells.cells[column.index()] = super::model::per_call(node.allocs, column);
    }
    cells
}

/// The lines under a node's subtree that divide its time: its self time, latte's work
/// inside it and what is not attributed (that one only when not 0), each with its
/// `TOTAL` and its share; none for a node with no account, or with nothing to divide
/// (no children shown, nothing of latte's, nothing unplaced).
fn parts(report: &Report, node: &TreeNode, has_kids: bool) -> Vec<Cells> {
    let Some(a) = node.account.filter(|a| a.total > 0) else {
        return Vec::new();
    };
    if !has_kids && a.inside == 0 && a.not_attributed == 0 {
        return Vec::new();
    }
    let per_tick = report.per_tick();
    let line = |id: &str, ticks: f64| {
        let mut cells = vec![String::new(); Column::ALL.len()];
        cells[Column::Total.index()] = text::value(report, ticks * per_tick);
        cells[Column::OfParent.index()] = signed_share(ticks, a.total as f64);
        Cells {
            id: id.to_owned(),
            depth: Some(node.depth + 1),
            cells,
        }
    };
    let mut lines = vec![line(PART_SELF, a.own as f64)];
    if a.inside > 0 {
        lines.push(line(PART_INSIDE, a.inside as f64));
    }
    if a.not_attributed != 0 {
        lines.push(line(PART_NOT_ATTRIBUTED, a.not_attributed as f64));
    }
    lines
}

/// The lines that divide a node's time, as the tree names them.
pub(super) const PART_SELF: &str = "(self)";
pub(super) const PART_INSIDE: &str = "(latte inside)";
pub(super) const PART_NOT_ATTRIBUTED: &str = "(not attributed)";

/// `part` as a share of `whole`, negative ones with their sign.
fn signed_share(part: f64, whole: f64) -> String {
    if part < 0.0 {
        format!("-{}", share(-part, whole))
    } else {
        share(part, whole)
    }
}

/// The note under a tree that left nodes out.
pub(super) fn left_out(section: &mut Section, n: u64) {
    if n > 0 {
        section.notices.push(format!(
            "the tree shows its largest nodes and their parents; {} more are in the flat rows",
            count(n)
        ));
    }
}
