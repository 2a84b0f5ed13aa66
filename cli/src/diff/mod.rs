//! `diff`: per component, the change in median, p99 and p99.9 between base and new
//! runs, with an interval and a verdict ([`stats`]), printed as a table or JSON
//! ([`render`]), or as markdown for a pull-request comment ([`markdown`]). When every
//! run carries a call tree, the all-threads tree's nodes are compared too, matched by
//! path (the ids from the root down), by the same code as the flat rows
//! ([`matched`](mod@matched)): every node with a parent (depth 1 or more), since a
//! root's row is its id's flat row unless the id also ran nested.

pub mod markdown;
mod matched;
pub mod render;
pub mod stats;

use crate::load::{self, Loaded};
use crate::outcome::{self, Failure, Outcome};
use matched::{By, matched};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use stats::{Change, Method, Settings};
use std::path::PathBuf;

/// The quantiles compared.
pub const QUANTILES: [f64; 3] = [0.5, 0.99, 0.999];

/// The family-wise false-alarm rate the verdicts hold: the chance of any `regressed`
/// or `improved` among all the intervals of a comparison when nothing changed.

/// Arguments of `diff`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 nothing regressed (inconclusive intervals alone only warn \
on stderr), 1 something regressed beyond the threshold (a flat row or a call-tree node), \
or with --strict any interval is inconclusive, 2 bad input.\n\
When every report carries a call tree, its nodes with a parent (depth 1 or more) are \
compared too, matched by path (Frame > Physics > Collide), in the CALL TREE section; \
roots are left out, as their rows are the flat rows unless the id also ran nested. \
--flat skips it.\nExamples:\n  latte-telemetry diff base.json new.json\n  \
latte-telemetry diff --base a1.json a2.json a3.json --new b1.json b2.json b3.json\n  \
latte-telemetry diff --markdown base.json new.json > comment.md"
)]
pub struct DiffArgs {
    /// BASE.json NEW.json: one run per side.
    #[arg(num_args = 0..=2, value_name = "BASE NEW")]
    pub files: Vec<PathBuf>,
    /// The base runs (with --new): several runs per side give intervals from
    /// run-to-run variation.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub base: Vec<PathBuf>,
    /// The new runs (with --base).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub new: Vec<PathBuf>,
    /// Noise threshold in percent: smaller changes are "no change".
    #[arg(long, default_value_t = 5.0, value_name = "PERCENT")]
    pub threshold: f64,
    /// Print JSON instead of a table (every row).
    #[arg(long)]
    pub json: bool,
    /// Print a GitHub-flavoured markdown table for a pull-request comment: the rows
    /// regressed, improved or inconclusive at some quantile (every row with --all).
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
    /// With --markdown, show the rows with no change at any quantile too. The table
    /// and JSON always show every row.
    #[arg(long)]
    pub all: bool,
    /// Fail (exit status 1) when any interval is inconclusive, not only when something
    /// regressed.
    #[arg(long)]
    pub strict: bool,
    /// Compare only the components whose id matches this glob (e.g. 'Sim_*'); a call-tree
    /// node by its own id, the last of its path.
    #[arg(long, value_name = "GLOB")]
    pub filter: Option<String>,
    /// Compare the flat rows only, not the call tree's nodes by path.
    #[arg(long)]
    pub flat: bool,
    /// Seed of the resampling (one run per side), for reproducible intervals.
    #[arg(long, default_value_t = 0x1a77e)]
    pub seed: u64,
}

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
    /// Each interval's confidence: `1 - family_wise / comparisons` (Bonferroni).
    pub confidence: f64,
    /// The family-wise false-alarm rate the verdicts hold: the chance that anything is
    /// called regressed or improved when nothing changed is at most this.
    pub family_wise: f64,
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
}

/// Runs `diff`.
pub fn run(args: &DiffArgs) -> Result<Outcome, Failure> {
    let (base, new) = sides(args)?;
    if !(args.threshold.is_finite() && args.threshold >= 0.0 && args.threshold < 100.0) {
        return Err(Failure(format!(
            "--threshold {}: give a percentage from 0 to below 100, e.g. --threshold 5",
            args.threshold
        )));
    }
    let base = load::load_all(&base)?;
    let new = load::load_all(&new)?;
    let all: Vec<&Loaded> = base.iter().chain(&new).collect();
    load::comparable(&all)?;
    let filter = load::filter(args.filter.as_deref())?;
    let keep = |name: &str| filter.as_ref().is_none_or(|p| p.matches(name));
    let options = Options {
        threshold: args.threshold / 100.0,
        seed: args.seed,
        flat: args.flat,
    };
    let comparison = compare(&base, &new, &options, &keep)?;
    comparison.something_compared(args.filter.as_deref())?;
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        render::json(&comparison, &mut out)
    } else if args.markdown {
        markdown::markdown(&comparison, args.all, &mut out)
    } else {
        render::table(&comparison, &mut out)
    };
    outcome::to_stdout(written)?;
    let inconclusive = render::inconclusive(&comparison, args.strict);
    if let Some(line) = &inconclusive {
        eprintln!("{line}");
    }
    Ok(if comparison.regressed {
        Outcome::Regressed
    } else if args.strict && inconclusive.is_some() {
        Outcome::Inconclusive
    } else {
        Outcome::Done
    })
}

/// The base and new files from either form of the command line. A file given twice
/// on one side is refused: it would count one run as two and narrow the interval.
fn sides(args: &DiffArgs) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Failure> {
    let (base, new) = match (args.files.len(), args.base.is_empty(), args.new.is_empty()) {
        (2, true, true) => (vec![args.files[0].clone()], vec![args.files[1].clone()]),
        (0, false, false) => (args.base.clone(), args.new.clone()),
        _ => {
            return Err(Failure(
                "diff takes BASE.json NEW.json, or --base FILE... --new FILE... (not both forms)"
                    .into(),
            ));
        }
    };
    for side in [&base, &new] {
        let same = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let mut seen = Vec::new();
        for path in side {
            if seen.contains(&same(path)) {
                return Err(Failure(format!(
                    "{}: given twice on one side: each run counts once (a repeated run would \
                     make the runs look more alike than they are)",
                    path.display()
                )));
            }
            seen.push(same(path));
        }
    }
    Ok((base, new))
}

impl Comparison {
    /// Fails when no component is in both sides (after `--filter`): a gate that
    /// compared nothing must not pass.
    fn something_compared(&self, filter: Option<&str>) -> Result<(), Failure> {
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
        let regressed = self
            .changes()
            .any(|c| c.verdict == stats::Verdict::Regressed);
        self.regressed = regressed;
    }

    /// Every change compared: the components' quantiles, then the nodes'.
    pub fn changes(&self) -> impl Iterator<Item = &Change> {
        self.components
            .iter()
            .flat_map(|c| &c.changes)
            .chain(self.nodes.iter().flat_map(|n| &n.changes))
    }
}

/// How to compare, from the command line.
pub struct Options {
    /// The noise threshold, as a fraction.
    pub threshold: f64,
    /// Seed of the resampling.
    pub seed: u64,
    /// Compare the flat rows only.
    pub flat: bool,
}

/// Compares every component of the runs (each side non-empty, histograms checked)
/// whose id passes `keep`, and, unless `flat`, the call-tree nodes whose own id does
/// when every run has a tree. The intervals are at the confidence that holds the
/// family-wise false-alarm rate over every interval compared (Bonferroni).
pub fn compare(
    base: &[Loaded],
    new: &[Loaded],
    options: &Options,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Comparison, Failure> {
    let step = base
        .iter()
        .chain(new)
        .map(|l| l.report.resolution)
        .fold(0.0, f64::max);
    let mut rng = StdRng::seed_from_u64(options.seed);
    let method = if base.len() == 1 && new.len() == 1 {
        Method::Blocks
    } else {
        Method::Runs
    };
    let kept = |key: &[String]| key.last().is_some_and(|id| keep(id));
    let rows = matched(base, new, By::Id, step, &kept, &mut rng)?;
    let (tree, tree_note) = match tree_runs(base, new, options.flat) {
        Ok(()) => (
            Some(matched(base, new, By::Path, step, &kept, &mut rng)?),
            None,
        ),
        Err(note) => (None, note),
    };
    // Bonferroni over every interval the comparison gives.
    let comparisons = rows
        .compared
        .iter()
        .chain(tree.iter().flat_map(|t| &t.compared))
        .flat_map(|(_, estimates)| estimates)
        .filter(|e| e.has_interval())
        .count();
    let settings = Settings {
        threshold: options.threshold,
        step,
        confidence: 1.0 - stats::FAMILY_WISE / comparisons.max(1) as f64,
    };
    let mut comparison = Comparison {
        base: base.iter().map(Loaded::name).collect(),
        new: new.iter().map(Loaded::name).collect(),
        unit: render::unit_name(base[0].report.unit),
        threshold: options.threshold,
        confidence: settings.confidence,
        family_wise: stats::FAMILY_WISE,
        comparisons,
        error_control: render::error_control(comparisons, stats::FAMILY_WISE),
        method,
        note: render::method_note(method, base.len(), new.len()),
        components: Vec::new(),
        only_in_base: Vec::new(),
        only_in_new: Vec::new(),
        not_in_every_run: Vec::new(),
        tree_compared: tree.is_some(),
        tree_note,
        nodes: Vec::new(),
        paths_only_in_base: Vec::new(),
        paths_only_in_new: Vec::new(),
        paths_not_in_every_run: Vec::new(),
        regressed: false,
    };
    comparison.fill(rows, tree, &settings);
    Ok(comparison)
}

impl Comparison {
    /// Takes in what was matched: the flat rows by id, the tree's nodes by path.
    fn fill(&mut self, rows: matched::Matched, tree: Option<matched::Matched>, s: &Settings) {
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

/// Whether the call trees are compared: `Err` with the reason to print when they
/// are not (`None`: nothing worth saying, as with `--flat` or no tree at all).
fn tree_runs(base: &[Loaded], new: &[Loaded], flat: bool) -> Result<(), Option<String>> {
    let bare: Vec<String> = base
        .iter()
        .chain(new)
        .filter(|l| l.report.tree.is_empty())
        .map(Loaded::name)
        .collect();
    if flat || bare.len() == base.len() + new.len() {
        Err(None)
    } else if bare.is_empty() {
        Ok(())
    } else {
        Err(Some(format!(
            "call tree not compared: no tree in {} (a report has one when a scope ran inside \
             another)",
            bare.join(", ")
        )))
    }
}
