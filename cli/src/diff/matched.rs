//! What is compared: the flat rows matched by id, or the call-tree nodes matched by
//! path, through the same code (a node's `row` carries its histogram as a flat row
//! does).
//!
//! Tree nodes are compared when they have a parent (depth 1 or more). A root's path is
//! its id alone, and its row equals the flat row of that id unless the id also ran
//! nested, so comparing roots would mostly repeat the flat comparison.

use super::QUANTILES;
use super::stats::{self, Blocks, Estimate, Side};
use crate::load::{self, Loaded};
use crate::outcome::Failure;
use latte::report::Row;
use rand::Rng;

/// What rows are matched by across runs.
#[derive(Clone, Copy)]
pub enum By {
    /// A flat (all-threads) row's id.
    Id,
    /// An all-threads tree node's path, the ids from its root down; depth >= 1 only.
    Path,
}

/// A key (`[id]` or a path) and the rows of a run it names.
type Keyed<'a> = Vec<(Vec<String>, &'a Row)>;

/// The result of matching the runs of both sides.
#[derive(Default)]
pub struct Matched {
    /// Keys in every run of both sides, with the estimated change in each quantile.
    pub compared: Vec<(Vec<String>, Vec<Estimate>)>,
    /// Keys only in the base runs.
    pub only_in_base: Vec<Vec<String>>,
    /// Keys only in the new runs.
    pub only_in_new: Vec<Vec<String>>,
    /// Keys missing from some run of a side they appear on.
    pub not_in_every_run: Vec<Vec<String>>,
    /// Indices into `compared` of the nodes that hold every value of their id in every
    /// run: their estimates are their id's flat row's, the same intervals, so they do
    /// not count again in the error control.
    pub repeats: Vec<usize>,
}

/// Whether the node under `key` holds every value of its id in every run (its
/// row's samples and histogram are its id's flat row's).
fn repeats_its_row(runs: &[Loaded], rows: &[Keyed<'_>], key: &[String]) -> bool {
    let id = key.last().map_or("", String::as_str);
    runs.iter().zip(rows).all(|(run, keyed)| {
        let flat = run.report.all_threads.iter().find(|r| r.component == id);
        let node = find(keyed, key);
        matches!((flat, node), (Some(f), Some(n))
            if f.stats.samples == n.stats.samples
                && !f.distribution.is_empty()
                && f.distribution == n.distribution)
    })
}

/// A run's rows by key.
fn keyed(run: &Loaded, by: By) -> Keyed<'_> {
    let report = &run.report;
    match by {
        By::Id => report
            .all_threads
            .iter()
            .map(|r| (vec![r.component.clone()], r))
            .collect(),
        By::Path => {
            let mut paths: Vec<Vec<String>> = Vec::with_capacity(report.tree.len());
            for node in &report.tree {
                let mut path = node
                    .parent
                    .and_then(|p| paths.get(p))
                    .cloned()
                    .unwrap_or_default();
                path.push(node.row.component.clone());
                paths.push(path);
            }
            paths
                .into_iter()
                .zip(&report.tree)
                .filter(|(_, node)| node.parent.is_some())
                .map(|(path, node)| (path, &node.row))
                .collect()
        }
    }
}

/// The estimates of the flat row of `key`'s own id, when `repeats` says the node
/// holds every value of that id.
fn by_row<'a>(
    flat: Option<&'a Matched>,
    key: &[String],
    repeats: impl FnOnce() -> bool,
) -> Option<&'a Vec<Estimate>> {
    let id = key.last()?;
    let (_, estimates) = flat?
        .compared
        .iter()
        .find(|(k, _)| k.len() == 1 && k[0] == *id)?;
    repeats().then_some(estimates)
}

/// The row of `run` under `key`.
fn find<'a>(run: &Keyed<'a>, key: &[String]) -> Option<&'a Row> {
    run.iter().find(|(k, _)| k == key).map(|r| r.1)
}

/// The blocks of time of the row under `key` in a run: its id's series, which holds
/// a tree node's values only when the node holds every value of its id.
fn run_blocks(run: &Loaded, key: &[String], row: &Row, by: By) -> Result<Blocks, String> {
    let id = key.last().map_or("", String::as_str);
    if let By::Path = by {
        let flat = run.report.all_threads.iter().find(|r| r.component == id);
        if flat.is_none_or(|f| f.stats.samples != row.stats.samples) {
            return Err(format!(
                "{}: `{id}` runs at other paths too (blocks are per id)",
                run.name()
            ));
        }
    }
    let dists = load::blocks(run, id)?;
    Blocks::new(
        dists
            .iter()
            .map(|d| d.buckets().map(|b| (b.value, b.count))),
    )
    .map(|b| match &run.report.series {
        Some(series) => b.with_block_ms(series.block_ms as f64),
        None => b,
    })
    .map_err(|why| format!("{}: {why}", run.name()))
}

/// Matches the rows of the runs by `by` whose key passes `keep` and estimates the
/// change of those in every run of both sides: median, p99 and p99.9, floored at the
/// clock's `step`. A node that holds every value of its id takes the estimates of its
/// id's row in `flat` (the flat rows' match), and is listed in `repeats`.
pub fn matched(
    base: &[Loaded],
    new: &[Loaded],
    by: By,
    step: f64,
    keep: &dyn Fn(&[String]) -> bool,
    flat: Option<&Matched>,
    rng: &mut impl Rng,
) -> Result<Matched, Failure> {
    let (base_rows, new_rows): (Vec<Keyed<'_>>, Vec<Keyed<'_>>) = (
        base.iter().map(|l| keyed(l, by)).collect(),
        new.iter().map(|l| keyed(l, by)).collect(),
    );
    let mut keys: Vec<&Vec<String>> = Vec::new();
    for (key, _) in base_rows.iter().chain(&new_rows).flatten() {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let in_all = |runs: &[Keyed<'_>], key: &[String]| runs.iter().all(|r| find(r, key).is_some());
    let in_any = |runs: &[Keyed<'_>], key: &[String]| runs.iter().any(|r| find(r, key).is_some());
    let mut out = Matched::default();
    for key in keys.into_iter().filter(|k| keep(k)) {
        match (in_all(&base_rows, key), in_all(&new_rows, key)) {
            (true, true)
                if by_row(flat, key, || {
                    repeats_its_row(base, &base_rows, key) && repeats_its_row(new, &new_rows, key)
                })
                .is_some() =>
            {
                let estimates = by_row(flat, key, || true).expect("checked").clone();
                out.repeats.push(out.compared.len());
                out.compared.push((key.clone(), estimates));
            }
            (true, true) => {
                let side = |runs: &[Loaded], rows: &[Keyed<'_>]| -> Result<Side, Failure> {
                    let found: Vec<(&Loaded, &Row)> = runs
                        .iter()
                        .zip(rows)
                        .map(|(l, r)| (l, find(r, key).expect("in every run")))
                        .collect();
                    let runs = found
                        .iter()
                        .map(|(_, row)| row.distribution.clone())
                        .collect();
                    let blocks = match found.as_slice() {
                        [(l, row)] => run_blocks(l, key, row, by),
                        _ => Err("several runs".into()),
                    };
                    Ok(Side { runs, blocks })
                };
                let (b, n) = (side(base, &base_rows)?, side(new, &new_rows)?);
                let estimates = stats::estimate(&b, &n, &QUANTILES, step, rng);
                out.compared.push((key.clone(), estimates));
            }
            (true, false) if !in_any(&new_rows, key) => out.only_in_base.push(key.clone()),
            (false, true) if !in_any(&base_rows, key) => out.only_in_new.push(key.clone()),
            _ => out.not_in_every_run.push(key.clone()),
        }
    }
    Ok(out)
}
