//! The call tree, after recording: each thread's nodes with their inclusive rows, self
//! times and allocations, and the all-threads tree, nodes merged by path; added to a
//! report where some scope ran inside another. Its hot-path part, each scope finding
//! its node under the scope open below it, is `record/node.rs`; the fold keeps a node
//! per ring (a component's `parent`).
//!
//! | file | what |
//! |---|---|
//! | `nodes.rs` | the nodes a tree keeps (the 256 largest and their ancestors), their parts, the tree built depth first |
//!
//! The report section it fills is `report/tree.rs` (the table's is
//! `report/table/tree.rs`). The agent wires it: [`add`] after every report's assembly
//! ([`analyze`](crate::analyze) names no feature).

mod nodes;

use crate::analyze::{Calibration, RowOutput};
use crate::collect::Totals;
use crate::report::{Report, ReportOptions, TreeNode};
use nodes::{Inputs, all_threads_tree, nested, thread_tree};

/// Gives `report`, assembled from `totals` with `calibration` and `options`, its call
/// trees: each thread's where a scope ran inside another on it, and the all-threads
/// tree where one did on any thread. A flat program pays nothing.
pub(crate) fn add(
    report: &mut Report,
    totals: &Totals,
    calibration: &Calibration,
    options: &ReportOptions,
) {
    if !totals.threads.values().any(nested) {
        return;
    }
    let periods = crate::record::id::periods();
    let inputs = Inputs {
        calibration,
        options,
        periods: &periods,
    };
    let out = RowOutput {
        scale: report.per_tick(),
    };
    for thread in &mut report.threads {
        if let Some(t) = totals.threads.get(&thread.serial).filter(|t| nested(t)) {
            (thread.tree, thread.tree_left_out) = thread_tree(t, &inputs, out);
        }
    }
    (report.tree, report.tree_left_out) = all_threads_tree(totals.threads.values(), &inputs, out);
    // No counting allocator, and nothing counted: the report shows no allocations.
    if report.process_allocs.is_none() {
        let none = |tree: &mut Vec<TreeNode>| tree.iter_mut().for_each(|n| n.allocs = None);
        none(&mut report.tree);
        report.threads.iter_mut().for_each(|t| none(&mut t.tree));
    }
}
