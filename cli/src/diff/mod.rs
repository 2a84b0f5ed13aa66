//! `diff`: per component, the change in median, p99 and p99.9 between base and new
//! runs, with an interval and a verdict ([`stats`]), printed as a table or JSON
//! ([`render`]), or as markdown for a pull-request comment ([`markdown`]). When every
//! run carries a call tree, the all-threads tree's nodes are compared too, matched by
//! path (the ids from the root down), by the same code as the flat rows
//! ([`matched`](mod@matched)): every node with a parent (depth 1 or more), since a
//! root's row is its id's flat row unless the id also ran nested.

mod comparison;
pub mod markdown;
mod matched;
pub mod render;
pub mod stats;

use crate::load::{self, Loaded};
use crate::outcome::{self, Failure, Outcome};
pub use comparison::Comparison;
use matched::{By, matched};
use rand::SeedableRng;
use rand::rngs::StdRng;
use stats::{Method, Settings};
use std::path::PathBuf;

/// The quantiles compared.
pub const QUANTILES: [f64; 3] = [0.5, 0.99, 0.999];

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
    /// With --markdown, show the rows with no change (or below resolution) at every
    /// quantile too. The table and JSON always show every row.
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
        render::table(&comparison, render::width(), &mut out)
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
    let one_each = base.len() == 1 && new.len() == 1;
    let method = if one_each {
        Method::Blocks
    } else {
        Method::Runs
    };
    let kept = |key: &[String]| key.last().is_some_and(|id| keep(id));
    let rows = matched(base, new, By::Id, step, &kept, None, &mut rng)?;
    let (tree, tree_note) = match tree_runs(base, new, options.flat) {
        Ok(()) => {
            let tree = matched(base, new, By::Path, step, &kept, Some(&rows), &mut rng)?;
            (Some(tree), None)
        }
        Err(note) => (None, note),
    };
    let family_wise = (method == Method::Blocks).then_some(stats::FAMILY_WISE);
    let (comparisons, confidence, open_at) = family(&rows, tree.as_ref(), family_wise);
    let settings = Settings {
        threshold: options.threshold,
        step,
        confidence,
        shift: calibration_shift(base.iter().chain(new)),
        open_at,
    };
    let mut comparison = Comparison {
        base: base.iter().map(Loaded::name).collect(),
        new: new.iter().map(Loaded::name).collect(),
        unit: render::unit_name(base[0].report.unit),
        threshold: options.threshold,
        confidence: settings.confidence,
        family_wise,
        comparisons,
        error_control: render::error_control(comparisons, family_wise),
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
        verdicts: comparison::Counts::default(),
    };
    comparison.fill(rows, tree, &settings);
    Ok(comparison)
}

/// The intervals that share the family-wise rate, the confidence of each, and the
/// confidence at which an interval is judged open. One run per side: Bonferroni over
/// the intervals bounded at the level over all that have one (the open level); an
/// interval open there stays open, so the family holds every interval that decides.
/// Several:
/// 95% each, as the t quantile of a few runs' degrees of freedom at Bonferroni's
/// levels leaves intervals too wide to tell anything (3 runs per side: +-1,000%).
fn family(
    rows: &matched::Matched,
    tree: Option<&matched::Matched>,
    family_wise: Option<f64>,
) -> (usize, f64, f64) {
    let at = |m: usize| match family_wise {
        Some(rate) => 1.0 - rate / m.max(1) as f64,
        None => stats::RUNS_CONFIDENCE,
    };
    let open_at = at(intervals(rows, tree, 0.0));
    let comparisons = intervals(rows, tree, open_at);
    (comparisons, at(comparisons), open_at)
}

/// How many intervals the comparison gives that are bounded at `confidence` (all
/// that have one at 0), a node that repeats its id's row not again: Bonferroni
/// divides the family-wise rate among them.
fn intervals(rows: &matched::Matched, tree: Option<&matched::Matched>, confidence: f64) -> usize {
    let nodes = tree.iter().flat_map(|t| {
        t.compared
            .iter()
            .enumerate()
            .filter(|(i, _)| !t.repeats.contains(i))
            .map(|(_, c)| c)
    });
    rows.compared
        .iter()
        .chain(nodes)
        .flat_map(|(_, estimates)| estimates)
        .filter(|e| e.has_interval() && (confidence == 0.0 || e.bounded(confidence)))
        .count()
}

/// How far the runs' calibrated overheads are apart, in the reports' unit: the widest
/// spread over the overhead's cells (an empty scope's record per mode pair, and a
/// pulse's). Calibration subtracts the overhead from every value, so runs calibrated
/// apart are shifted against each other by up to this; 0 when any report is raw.
fn calibration_shift<'a>(runs: impl Iterator<Item = &'a Loaded> + Clone) -> f64 {
    let cells = |l: &Loaded| -> Option<Vec<f64>> {
        let o = l.report.overhead.as_ref()?;
        let mut cells: Vec<f64> = o.scope.iter().flatten().copied().collect();
        cells.push(o.pulse);
        Some(cells)
    };
    let Some(all) = runs.map(cells).collect::<Option<Vec<_>>>() else {
        return 0.0;
    };
    let spread = |i: usize| {
        let values = all.iter().map(|c| c[i]);
        values.clone().fold(f64::NEG_INFINITY, f64::max) - values.fold(f64::INFINITY, f64::min)
    };
    (0..all.first().map_or(0, Vec::len))
        .map(spread)
        .filter(|s| s.is_finite())
        .fold(0.0, f64::max)
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
