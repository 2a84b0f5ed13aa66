//! What a report adds over an earlier one of the same run ([`Report::since`]): the one
//! subtraction behind the live endpoint, `top` and OTLP's delta temporality.
//!
//! Counts and totals subtract exactly; quantiles are read from the difference of the
//! two distributions (bucket by bucket, [`Distribution::since`](super::Distribution::since)); what two whole-run
//! reports cannot give for an interval (its exact extremes, spread and skew, the
//! cleaned figures, the slowest samples, per-frame spreads) is NaN or left out. A
//! report made over an interval by the agent's fold (periodic reports) keeps all of
//! them: this is for readers that hold two whole-run reports.

use super::frames::{PerFrame, Spread};
use super::{
    Account, CleanedSummary, Report, Row, SelfTime, Summary, ThreadReport, TreeNode, UnpairedScopes,
};
use crate::allocs::Allocs;
use std::collections::HashMap;

impl Report {
    /// What `self` adds over `earlier`, a whole-run report of the same run made before
    /// it: each row, tree node and thread with calls since, its counts and totals the
    /// differences, its quantiles read from the difference of the distributions; the
    /// threads' anomaly and frame counts the differences. A row whose calls went down
    /// (the run was reset, `collect::reset`, in between) counts from zero.
    /// What an interval of two whole-run reports does not know is NaN (`min`,
    /// `std_dev`, `skew`, the cleaned figures; `max` is its bucket's middle) or left
    /// out (the slowest samples, the series, per-frame spreads). The rest (unit,
    /// clock, environment, footprint, the switch) is `self`'s.
    ///
    /// ```
    /// use latte::{Id, Report, ReportOptions};
    /// static STEP: Id = Id::new("doc_since_step");
    /// (0..100).for_each(|_| latte::record(&STEP, 1_000));
    /// let earlier = Report::collect(&ReportOptions::default());
    /// (0..30).for_each(|_| latte::record(&STEP, 2_000));
    /// let later = Report::collect(&ReportOptions::default());
    /// let interval = later.since(&earlier);
    /// let step = interval.all_threads.iter().find(|r| r.component == STEP.name()).unwrap();
    /// assert_eq!(step.stats.seen, 30); // the interval's calls only
    /// let whole = later.all_threads.iter().find(|r| r.component == STEP.name()).unwrap();
    /// assert!(step.stats.median > whole.stats.median); // the run's median is the first 1,000s'
    /// ```
    pub fn since(&self, earlier: &Report) -> Report {
        let threads = self
            .threads
            .iter()
            .filter_map(|t| {
                let old = earlier.threads.iter().find(|o| o.serial == t.serial);
                t.since(old)
            })
            .collect();
        Report {
            format_version: self.format_version,
            label: self.label.clone(),
            unit: self.unit,
            data: self.data,
            figures: self.figures,
            clock: self.clock.clone(),
            ticks_per_ns: self.ticks_per_ns,
            frequency_accuracy: self.frequency_accuracy,
            resolution: self.resolution,
            cleaning: self.cleaning,
            overhead: self.overhead,
            threads,
            all_threads: rows_since(&self.all_threads, &earlier.all_threads),
            tree: tree_since(&self.tree, &earlier.tree),
            tree_left_out: self.tree_left_out,
            teardown_drops: self.teardown_drops.saturating_sub(earlier.teardown_drops),
            process_allocs: allocs_since(self.process_allocs, earlier.process_allocs),
            footprint: self.footprint,
            environment: self.environment.clone(),
            periodic_failures: self.periodic_failures.clone(),
            exporter_failures: self.exporter_failures.clone(),
            series: None,
            dumps: self.dumps.clone(),
            recording_off: self.recording_off,
        }
    }
}

impl ThreadReport {
    /// This thread's interval over `earlier` (the same thread in the earlier report),
    /// if it recorded, counted an anomaly or ended a frame in it.
    fn since(&self, earlier: Option<&ThreadReport>) -> Option<ThreadReport> {
        let old = |f: fn(&ThreadReport) -> &[Row]| earlier.map_or(&[][..], f);
        let rows = rows_since(&self.rows, old(|t| &t.rows));
        let anomalies = match earlier {
            Some(e) => self.anomalies.since(&e.anomalies),
            None => self.anomalies,
        };
        let unpaired: Vec<UnpairedScopes> = (self.unpaired.iter())
            .filter_map(|f| {
                let before =
                    earlier.and_then(|e| e.unpaired.iter().find(|o| o.component == f.component));
                let counts = before.map_or(f.counts, |b| f.counts.since(&b.counts));
                (counts != Default::default()).then(|| UnpairedScopes {
                    component: f.component.clone(),
                    counts,
                })
            })
            .collect();
        let per_frame = self.per_frame.as_ref().map(|now| {
            let before = earlier.and_then(|e| e.per_frame.as_ref());
            per_frame_since(now, before)
        });
        let framed = per_frame.as_ref().is_some_and(|f| f.frames > 0);
        if rows.is_empty() && anomalies == Default::default() && unpaired.is_empty() && !framed {
            return None;
        }
        Some(ThreadReport {
            alloc_breach: self
                .alloc_breach
                .clone()
                .filter(|_| anomalies.alloc_breaches > 0),
            name: self.name.clone(),
            serial: self.serial,
            exited: self.exited,
            anomalies,
            unpaired,
            open: self.open.clone(),
            rows,
            tree: tree_since(&self.tree, earlier.map_or(&[][..], |e| &e.tree)),
            tree_left_out: self.tree_left_out,
            per_frame,
            outside_allocs: allocs_since(
                self.outside_allocs,
                earlier.and_then(|e| e.outside_allocs),
            ),
        })
    }
}

/// What was counted after `before` (all of `now` without it).
fn allocs_since(now: Option<Allocs>, before: Option<Allocs>) -> Option<Allocs> {
    now.map(|a| before.map_or(a, |b| a.since(&b)))
}

/// A thread's frames in the interval: the counts subtracted, the spreads and the
/// listed frames (whole-run figures) left out.
fn per_frame_since(now: &PerFrame, before: Option<&PerFrame>) -> PerFrame {
    let less = |a: u64, b: Option<u64>| a.saturating_sub(b.unwrap_or(0));
    let unknown = Spread {
        p50: f64::NAN,
        p99: f64::NAN,
        max: f64::NAN,
        mean: f64::NAN,
    };
    PerFrame {
        frames: less(now.frames, before.map(|b| b.frames)),
        length: unknown,
        budget: now.budget,
        over_budget: now
            .over_budget
            .map(|n| less(n, before.and_then(|b| b.over_budget))),
        components: Vec::new(),
        worst: Vec::new(),
        unlisted: 0,
    }
}

/// The rows of `now` with calls since `then`'s (matched by component), in `now`'s
/// order.
fn rows_since(now: &[Row], then: &[Row]) -> Vec<Row> {
    now.iter()
        .filter_map(|row| row.since(then.iter().find(|r| r.component == row.component)))
        .collect()
}

/// The cleaned figures of an interval: not known from two whole-run reports.
const UNKNOWN_CLEANED: CleanedSummary = CleanedSummary {
    samples: 0,
    avg: f64::NAN,
    median: f64::NAN,
    std_dev: f64::NAN,
    skew: f64::NAN,
    min: f64::NAN,
    max: f64::NAN,
    range: f64::NAN,
};

impl Row {
    /// What this row gained over `earlier` (the same component in an earlier report),
    /// if it has calls since: all of it without `earlier`, or when its calls went down.
    fn since(&self, earlier: Option<&Row>) -> Option<Row> {
        let Some(e) = earlier.filter(|e| e.stats.seen <= self.stats.seen) else {
            return (self.stats.seen > 0).then(|| self.clone());
        };
        let (s, o) = (&self.stats, &e.stats);
        let seen = s.seen - o.seen;
        if seen == 0 {
            return None;
        }
        let distribution = self.distribution.since(&e.distribution);
        let samples = s.samples.saturating_sub(o.samples);
        let total = (s.total - o.total).max(0.0);
        let q = |q: f64| distribution.quantile(q);
        let max = if distribution.is_empty() {
            f64::NAN
        } else {
            q(1.0)
        };
        let stats = Summary {
            samples,
            seen,
            lost: s.lost.saturating_sub(o.lost),
            avg: if samples > 0 {
                total / samples as f64
            } else {
                f64::NAN
            },
            median: q(0.5),
            std_dev: f64::NAN,
            skew: f64::NAN,
            min: f64::NAN,
            max,
            range: f64::NAN,
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            bypass: s.bypass.saturating_sub(o.bypass),
            outliers: s.outliers.saturating_sub(o.outliers),
            migrated: s.migrated.saturating_sub(o.migrated),
            total,
            bypass_total: (s.bypass_total - o.bypass_total).max(0.0),
            outliers_total: (s.outliers_total - o.outliers_total).max(0.0),
            cleaned: CleanedSummary {
                samples: s.cleaned.samples.saturating_sub(o.cleaned.samples),
                ..UNKNOWN_CLEANED
            },
        };
        Some(Row {
            component: self.component.clone(),
            kind: self.kind,
            stats,
            slowest: Vec::new(),
            corrected: None,
            distribution,
            allocs: self.allocs.map(|a| e.allocs.map_or(a, |b| a.since(&b))),
        })
    }
}

/// The nodes of `now` with calls since `then` (matched by their path from the root),
/// depth first: a node's row, self time and account are the differences; a node
/// without calls is left out with its subtree (a scope closes inside its parent).
fn tree_since(now: &[TreeNode], then: &[TreeNode]) -> Vec<TreeNode> {
    let before: HashMap<Vec<&str>, &TreeNode> = (then.iter().enumerate())
        .map(|(i, n)| (TreeNode::path(then, i), n))
        .collect();
    let mut kept: Vec<Option<usize>> = Vec::with_capacity(now.len());
    let mut nodes: Vec<TreeNode> = Vec::new();
    for (i, node) in now.iter().enumerate() {
        let parent = node.parent.and_then(|p| kept.get(p).copied().flatten());
        let was = before.get(&TreeNode::path(now, i)).copied();
        let row = node.row.since(was.map(|w| &w.row));
        let Some(row) = row.filter(|_| node.parent.is_none() || parent.is_some()) else {
            kept.push(None);
            continue;
        };
        let (self_time, account) = parts_since(node, was, &row);
        let share = |of: &TreeNode| {
            let total = of.row.stats.total;
            if total > 0.0 {
                row.stats.total / total
            } else {
                0.0
            }
        };
        let (of_parent, of_root) = match parent {
            None => (None, 1.0),
            Some(p) => {
                let mut root = p;
                while let Some(up) = nodes[root].parent {
                    root = up;
                }
                (Some(share(&nodes[p])), share(&nodes[root]))
            }
        };
        kept.push(Some(nodes.len()));
        nodes.push(TreeNode {
            parent,
            depth: node.depth,
            row,
            self_time,
            account,
            allocs: node
                .allocs
                .map(|a| was.and_then(|w| w.allocs).map_or(a, |b| a.since(&b))),
            of_parent,
            of_root,
        });
    }
    nodes
}

/// A node's self time and account in the interval: `node`'s less `was`'s (the same
/// node in the earlier report), whole after a reset; its calls are `row`'s.
fn parts_since(
    node: &TreeNode,
    was: Option<&TreeNode>,
    row: &Row,
) -> (Option<SelfTime>, Option<Account>) {
    // A node whose calls went down counts from zero, as its row does.
    let was = was.filter(|w| w.row.stats.seen <= node.row.stats.seen);
    let self_time = node.self_time.map(|own| {
        let total = (own.total - was.and_then(|w| w.self_time).map_or(0.0, |s| s.total)).max(0.0);
        let calls = row.stats.samples;
        SelfTime {
            calls,
            total,
            mean: if calls > 0 { total / calls as f64 } else { 0.0 },
        }
    });
    let account = node.account.map(|a| match was.and_then(|w| w.account) {
        Some(b) => Account {
            total: a.total.saturating_sub(b.total),
            own: a.own.saturating_sub(b.own),
            children: a.children.saturating_sub(b.children),
            inside: a.inside.saturating_sub(b.inside),
            not_attributed: a.not_attributed - b.not_attributed,
        },
        None => a,
    });
    (self_time, account)
}

#[cfg(test)]
mod tests;
