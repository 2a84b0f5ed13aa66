//! What `diff` found: the components and call-tree nodes compared, what is on one
//! side only, and the verdicts, as the outputs print them.

use super::matched;
use super::stats::{self, Change, Method, Settings};
use crate::outcome::Failure;
use serde::Serialize;

/// One component compared.
#[derive(Debug, Serialize)]
pub struct Compared {
    /// The id.
    pub component: String,
    /// Median, p99 and p99.9.
    pub changes: Vec<Change>,
}

/// One call-tree node compared.
#[derive(Debug, Serialize)]
pub struct ComparedNode {
    /// The ids from the root down to the node.
    pub path: Vec<String>,
    /// Median, p99 and p99.9.
    pub changes: Vec<Change>,
}

/// The whole comparison: what `--json` prints.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// The base files.
    pub base: Vec<String>,
    /// The new files.
    pub new: Vec<String>,
    /// `cycles` or `ns`.
    pub unit: &'static str,
    /// The noise threshold, as a fraction.
    pub threshold: f64,
    /// Each interval's confidence: `1 - family_wise / comparisons` (Bonferroni) with
    /// one run per side, 0.95 with several.
    pub confidence: f64,
    /// The family-wise false-alarm rate the verdicts hold (one run per side): the
    /// chance that anything is called regressed or improved when nothing changed is at
    /// most this. `None` with several runs per side, whose intervals are 95% each.
    pub family_wise: Option<f64>,
    /// How many intervals the comparison holds (components and nodes times quantiles,
    /// those with an interval).
    pub comparisons: usize,
    /// The error control, in words.
    pub error_control: String,
    /// How the intervals were computed.
    pub method: Method,
    /// Caveats about the method.
    pub note: Option<String>,
    /// Components in every run of both sides.
    pub components: Vec<Compared>,
    /// Components only in the base runs.
    pub only_in_base: Vec<String>,
    /// Components only in the new runs.
    pub only_in_new: Vec<String>,
    /// Components missing from some runs of a side they appear on.
    pub not_in_every_run: Vec<String>,
    /// Whether the call trees' nodes were compared (every run has a tree, no `--flat`).
    pub tree_compared: bool,
    /// Why the trees were not compared, when some runs have one.
    pub tree_note: Option<String>,
    /// Call-tree nodes (depth 1 or more) in every run of both sides, by path.
    pub nodes: Vec<ComparedNode>,
    /// Paths only in the base runs.
    pub paths_only_in_base: Vec<Vec<String>>,
    /// Paths only in the new runs.
    pub paths_only_in_new: Vec<Vec<String>>,
    /// Paths missing from some runs of a side they appear on.
    pub paths_not_in_every_run: Vec<Vec<String>>,
    /// Whether anything (a component or a node) regressed beyond the threshold.
    pub regressed: bool,
    /// How many verdicts of each kind, components and nodes together.
    pub verdicts: Counts,
}

/// How many verdicts of each kind a comparison gave.
#[derive(Debug, Default, Serialize)]
pub struct Counts {
    /// `regressed`.
    pub regressed: usize,
    /// `improved`.
    pub improved: usize,
    /// `no change`.
    pub no_change: usize,
    /// `inconclusive`.
    pub inconclusive: usize,
    /// `below resolution`: below one clock step on both sides, no verdict.
    pub below_resolution: usize,
}

impl Counts {
    /// The counts of `changes`' verdicts.
    pub fn of<'a>(changes: impl Iterator<Item = &'a Change>) -> Counts {
        let mut counts = Counts::default();
        for change in changes {
            *match change.verdict {
                stats::Verdict::Regressed => &mut counts.regressed,
                stats::Verdict::Improved => &mut counts.improved,
                stats::Verdict::NoChange => &mut counts.no_change,
                stats::Verdict::Inconclusive => &mut counts.inconclusive,
                stats::Verdict::BelowResolution => &mut counts.below_resolution,
            } += 1;
        }
        counts
    }
}

impl Comparison {
    /// Fails when no component is in both sides (after `--filter`): a gate that
    /// compared nothing must not pass.
    pub(super) fn something_compared(&self, filter: Option<&str>) -> Result<(), Failure> {
        if !self.components.is_empty() {
            return Ok(());
        }
        let listed = |names: &[String]| match names {
            [] => "none".to_string(),
            names => names.join(", "),
        };
        Err(Failure(match filter {
            Some(pattern)
                if self.only_in_base.is_empty()
                    && self.only_in_new.is_empty()
                    && self.not_in_every_run.is_empty() =>
            {
                format!(
                    "--filter '{pattern}' matches no component of the reports: nothing compared"
                )
            }
            _ => format!(
                "no component is in every run of both sides: nothing compared (only in base: {}; \
                 only in new: {}; not in every run: {})",
                listed(&self.only_in_base),
                listed(&self.only_in_new),
                listed(&self.not_in_every_run)
            ),
        }))
    }

    /// Keeps only the components whose name passes `keep`, and the nodes whose own
    /// id (the last of the path) does.
    fn keep(&mut self, keep: impl Fn(&str) -> bool) {
        self.components.retain(|c| keep(&c.component));
        for names in [
            &mut self.only_in_base,
            &mut self.only_in_new,
            &mut self.not_in_every_run,
        ] {
            names.retain(|n| keep(n));
        }
        let own = |path: &[String]| path.last().is_some_and(|id| keep(id));
        self.nodes.retain(|n| own(&n.path));
        for paths in [
            &mut self.paths_only_in_base,
            &mut self.paths_only_in_new,
            &mut self.paths_not_in_every_run,
        ] {
            paths.retain(|p| own(p));
        }
        self.verdicts = Counts::of(self.changes());
        self.regressed = self.verdicts.regressed > 0;
    }

    /// Every change compared: the components' quantiles, then the nodes'.
    pub fn changes(&self) -> impl Iterator<Item = &Change> {
        self.components
            .iter()
            .flat_map(|c| &c.changes)
            .chain(self.nodes.iter().flat_map(|n| &n.changes))
    }
}

impl Comparison {
    /// Takes in what was matched: the flat rows by id, the tree's nodes by path.
    pub(super) fn fill(
        &mut self,
        rows: matched::Matched,
        tree: Option<matched::Matched>,
        s: &Settings,
    ) {
        let changes = |estimates: Vec<stats::Estimate>| -> Vec<Change> {
            estimates.iter().map(|e| stats::change(e, s)).collect()
        };
        let id = |keys: Vec<Vec<String>>| keys.into_iter().flatten().collect::<Vec<_>>();
        self.components = rows
            .compared
            .into_iter()
            .map(|(key, estimates)| Compared {
                component: key.into_iter().next().unwrap_or_default(),
                changes: changes(estimates),
            })
            .collect();
        self.only_in_base = id(rows.only_in_base);
        self.only_in_new = id(rows.only_in_new);
        self.not_in_every_run = id(rows.not_in_every_run);
        if let Some(tree) = tree {
            self.nodes = tree
                .compared
                .into_iter()
                .map(|(path, estimates)| ComparedNode {
                    path,
                    changes: changes(estimates),
                })
                .collect();
            self.paths_only_in_base = tree.only_in_base;
            self.paths_only_in_new = tree.only_in_new;
            self.paths_not_in_every_run = tree.not_in_every_run;
        }
        self.keep(|_| true);
    }
}
