//! Reading report files: one JSON report, or the agent's stream of one report per
//! line; for `html`, also the flight recorder's dumps. Every error names the file
//! and what is wrong with it.
//!
//! A report is refused, whatever the subcommand, when it holds what no latte writes: a
//! histogram that does not decode (the error names its field), or a call-tree node
//! whose `parent` or `depth` does not fit the list ([`written`]); and when the library
//! does not read its format (formats 1 to 3, which no release wrote, or a newer one).
//! A report without histograms still reads.

use crate::outcome::Failure;
use latte::Report;
use latte::Unit;
use latte::flight::trace::Trace;
use latte::report::{Distribution, TreeNode};
use std::path::{Path, PathBuf};

/// A report read from a file.
pub struct Loaded {
    /// The file, as the user gave it.
    pub path: PathBuf,
    /// The report used (the final whole-run one when the file holds several).
    pub report: Report,
}

impl Loaded {
    /// The file's name for messages and legends.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// Reads `path`: a single JSON report (compact or pretty), or one report per line as
/// the agent writes them with `Format::Json`; then the last whole-run report (the
/// final one, not a `periodic #N` interval) is used, or the last line when every
/// line is periodic (with a warning on stderr).
pub fn load(path: &Path) -> Result<Loaded, Failure> {
    match input(path)? {
        Input::Report(loaded) => Ok(*loaded),
        Input::Dump(_) => Err(Failure(format!(
            "{}: a flight-recorder dump (trace-event JSON), not a report: \
             `latte-telemetry html` draws it as a timeline",
            path.display()
        ))),
    }
}

/// What a file given to `html` holds.
pub enum Input {
    /// A report ([`load`]).
    Report(Box<Loaded>),
    /// A flight-recorder dump: trace-event JSON.
    Dump(Dump),
}

/// A dump read from a file.
pub struct Dump {
    /// The file, as the user gave it.
    pub path: PathBuf,
    /// Its timeline.
    pub trace: Trace,
}

/// Reads `path`: a report as [`load`] does, or a flight-recorder dump (a JSON
/// object with a `traceEvents` array).
pub fn input(path: &Path) -> Result<Input, Failure> {
    let fail = |problem: String| Failure(format!("{}: {problem}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read it: {e}")))?;
    if text.trim().is_empty() {
        return Err(fail("empty file, not a latte report".into()));
    }
    let documents = documents(&text).map_err(fail)?;
    if let [one] = documents.as_slice()
        && one.get("traceEvents").is_some()
    {
        let trace =
            Trace::from_json(one).map_err(|e| fail(format!("a dump latte cannot read: {e}")))?;
        return Ok(Input::Dump(Dump {
            path: path.to_path_buf(),
            trace,
        }));
    }
    let document = whole_run(&documents, path);
    let fields = ["clock", "unit", "ticks_per_ns", "all_threads", "threads"];
    let missing: Vec<&str> = fields
        .into_iter()
        .filter(|f| document.get(f).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(fail(format!(
            "not a latte report: a JSON document without latte's fields ({})",
            missing.join(", ")
        )));
    }
    let report: Report = serde_path_to_error::deserialize(document.clone()).map_err(|e| match e
        .path()
        .to_string()
    {
        at if at == "." => fail(format!("a latte report this version cannot read: {e}")),
        at => fail(format!(
            "a latte report this version cannot read: `{at}`: {}",
            e.inner()
        )),
    })?;
    if !(report.ticks_per_ns.is_finite() && report.ticks_per_ns > 0.0) {
        return Err(fail(format!(
            "ticks_per_ns is {}: a report's counter frequency is a positive number",
            report.ticks_per_ns
        )));
    }
    written(&report).map_err(fail)?;
    Ok(Input::Report(Box::new(Loaded {
        path: path.to_path_buf(),
        report,
    })))
}

/// The JSON documents of a file: one (compact or pretty), or one per line.
fn documents(text: &str) -> Result<Vec<serde_json::Value>, String> {
    match serde_json::from_str(text) {
        Ok(one) => Ok(vec![one]),
        Err(whole) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, line)| {
                serde_json::from_str(line).map_err(|e| {
                    let at = if i == 0 {
                        whole.to_string()
                    } else {
                        format!("line {}: {e}", i + 1)
                    };
                    format!("not a latte report: not JSON ({at})")
                })
            })
            .collect(),
    }
}

/// The last document that covers the whole run (not a `periodic #N` interval), or
/// the last one, with a warning, when every one is periodic.
fn whole_run<'a>(documents: &'a [serde_json::Value], path: &Path) -> &'a serde_json::Value {
    let periodic = |d: &serde_json::Value| {
        d.get("label")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|l| l.starts_with("periodic"))
    };
    match documents.iter().rposition(|d| !periodic(d)) {
        Some(at) => &documents[at],
        None => {
            eprintln!(
                "latte-telemetry: {}: no whole-run report (every report is periodic): \
                 using the last interval only",
                path.display()
            );
            &documents[documents.len() - 1]
        }
    }
}

/// The ALL THREADS distribution of `component` in `loaded` (its quantiles are the
/// report's); `None` when the report has no such component.
pub fn distribution<'a>(loaded: &'a Loaded, component: &str) -> Option<&'a Distribution> {
    let report = &loaded.report;
    let row = report
        .all_threads
        .iter()
        .find(|r| r.component == component)?;
    Some(&row.distribution)
}

/// Reads every file, stopping at the first that fails.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Loaded>, Failure> {
    paths.iter().map(|p| load(p)).collect()
}

/// Fails when a component that has values carries no histogram: a report written
/// before reports carried them.
pub fn require_histograms(loaded: &Loaded) -> Result<(), Failure> {
    let bare = loaded
        .report
        .all_threads
        .iter()
        .find(|row| row.distribution.is_empty() && row.stats.samples > 0);
    match bare {
        Some(row) => Err(Failure(format!(
            "{}: component `{}` has no histogram: the report comes from an older latte, \
             written before reports carried histograms; write it again with this version",
            loaded.name(),
            row.component
        ))),
        None => Ok(()),
    }
}

/// Fails when the reports cannot be compared: values in different units, on
/// different data (raw and calibrated), or from different clocks.
pub fn same_basis(all: &[&Loaded]) -> Result<(), Failure> {
    let Some(first) = all.first() else {
        return Ok(());
    };
    let unit = |u: Unit| match u {
        Unit::Cycles => "cycles",
        Unit::Time => "nanoseconds",
    };
    for other in &all[1..] {
        let (a, b) = (&first.report, &other.report);
        let problem = if a.unit != b.unit {
            Some(format!(
                "its values are in {} but {}'s are in {}: write both with the same Builder::unit",
                unit(b.unit),
                first.name(),
                unit(a.unit)
            ))
        } else if a.data != b.data {
            Some(format!(
                "its data is {:?} but {}'s is {:?}: write both with the same Builder::data",
                b.data,
                first.name(),
                a.data
            ))
        } else if a.clock != b.clock {
            Some(format!(
                "it was measured with the clock `{}` but {} with `{}`: \
                 latencies from different clocks are not comparable",
                b.clock,
                first.name(),
                a.clock
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(Failure(format!("{}: {problem}", other.name())));
        }
    }
    Ok(())
}

/// Fails unless the reports can be compared and drawn together: every one carries its
/// histograms, and all share unit, data and clock.
pub fn comparable(all: &[&Loaded]) -> Result<(), Failure> {
    for loaded in all {
        require_histograms(loaded)?;
    }
    same_basis(all)
}

/// The `--filter` glob, if given (a malformed pattern is an error naming it).
pub fn filter(pattern: Option<&str>) -> Result<Option<glob::Pattern>, Failure> {
    pattern
        .map(glob::Pattern::new)
        .transpose()
        .map_err(|e| Failure(format!("--filter: {e}")))
}

/// The blocks of time of `component` (a flat row's id) in `loaded`, oldest first:
/// `Err` says why there are none, naming the file (a report written without a series).
pub fn blocks(loaded: &Loaded, component: &str) -> Result<Vec<Distribution>, String> {
    let report = &loaded.report;
    let name = loaded.name();
    let Some(series) = &report.series else {
        return Err(format!(
            "{name}: no blocks of time (a capture's or an interval's report)"
        ));
    };
    let Some(mine) = series.component(component) else {
        return Err(format!("{name}: `{component}` has no blocks of time"));
    };
    Ok(mine.blocks.clone())
}

/// Fails, naming the field, unless the call trees of `report` link as a latte writes
/// them (its histograms decoded as the report was read).
pub fn written(report: &latte::Report) -> Result<(), String> {
    links("tree", &report.tree)?;
    for (t, thread) in report.threads.iter().enumerate() {
        links(&format!("threads[{t}].tree"), &thread.tree)?;
    }
    Ok(())
}

/// Fails unless every node of `tree` (the list at `field`) links as latte writes a
/// tree, depth first: a root at depth 0, any other node under a node before it, one
/// level deeper.
fn links(field: &str, tree: &[TreeNode]) -> Result<(), String> {
    for (i, node) in tree.iter().enumerate() {
        match node.parent {
            None if node.depth != 0 => {
                return Err(format!(
                    "`{field}[{i}].depth` is {}, but the node has no parent (a root is at depth 0)",
                    node.depth
                ));
            }
            None => {}
            Some(p) if p >= i => {
                return Err(format!(
                    "`{field}[{i}].parent` is {p}: a node's parent is a node before it in the \
                     list (depth first), and this is node {i} of {}",
                    tree.len()
                ));
            }
            Some(p) if node.depth != tree[p].depth + 1 => {
                return Err(format!(
                    "`{field}[{i}].depth` is {}, but its parent (node {p}) is at depth {}",
                    node.depth, tree[p].depth
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}
