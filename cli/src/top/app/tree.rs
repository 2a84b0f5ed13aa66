//! The call tree's lines: nodes under a folded one left out, the parents of what a
//! filter matches kept, and folding by path (a path stays folded from one interval to
//! the next).

use super::App;
use latte::exporter::Interval;

/// One tree line as drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeLine {
    pub index: usize,
    pub depth: u32,
    pub folded: Option<bool>,
}

impl App {
    /// The path of tree node `i` (components from the root).
    fn path(view: &Interval, i: usize) -> Vec<String> {
        let path = latte::report::TreeNode::path(&view.report.tree, i);
        path.into_iter().map(str::to_owned).collect()
    }

    /// The tree lines to draw: nodes under a folded one left out; a node that a
    /// filter does not match is kept when something below it matches.
    pub fn tree(&self) -> Vec<TreeLine> {
        let Some(view) = &self.view else {
            return Vec::new();
        };
        let n = view.report.tree.len();
        let mut has_kids = vec![false; n];
        let mut wanted = vec![false; n];
        for (i, node) in view.report.tree.iter().enumerate().rev() {
            wanted[i] |= self.matches(&node.row.component);
            if let Some(p) = node.parent.filter(|&p| p < i) {
                has_kids[p] = true;
                wanted[p] |= wanted[i];
            }
        }
        let mut lines = Vec::new();
        let mut hidden_below: Option<u32> = None;
        for (i, node) in view.report.tree.iter().enumerate() {
            if let Some(depth) = hidden_below {
                if node.depth > depth {
                    continue;
                }
                hidden_below = None;
            }
            if !wanted[i] {
                continue;
            }
            let folded = self.folded.contains(&App::path(view, i));
            if folded {
                hidden_below = Some(node.depth);
            }
            lines.push(TreeLine {
                index: i,
                depth: node.depth,
                folded: has_kids[i].then_some(folded),
            });
        }
        lines
    }

    /// Folds or unfolds the selected tree node (`fold`: `Some(true)` fold, `Some(false)`
    /// unfold, `None` toggle).
    pub(super) fn fold(&mut self, fold: Option<bool>) {
        let Some(line) = self.tree().get(self.selected).cloned() else {
            return;
        };
        let Some(view) = &self.view else {
            return;
        };
        if line.folded.is_none() {
            return;
        }
        let path = App::path(view, line.index);
        let now = self.folded.contains(&path);
        if fold.unwrap_or(!now) {
            self.folded.insert(path);
        } else {
            self.folded.remove(&path);
        }
    }
}
