//! `diff`'s output: a table for people, JSON for scripts.

use super::Comparison;
use super::stats::{Change, Method, Verdict};
use comfy_table::{CellAlignment, Table, presets};
use latte::Unit;
use latte::report::numbers;
use std::io::{self, Write};

/// The unit's name in output.
pub fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::Cycles => "cycles",
        Unit::Time => "ns",
    }
}

/// `0.999` as `99.9`, `0.5` as `50`.
pub fn percent(q: f64) -> String {
    let p = format!("{:.3}", q * 100.0);
    p.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The caveat printed above the table for the method used.
pub fn method_note(method: Method, base: usize, new: usize) -> Option<String> {
    match method {
        Method::Blocks => Some(
            "one run per side: the intervals come from resampling each run's blocks of time \
             (a stationary bootstrap), which sees the variation within a run but not what \
             differs from one run to the next (layout, frequency, a host that changed): \
             several runs per side (--base A1 A2 A3 --new B1 B2 B3) see that too."
                .into(),
        ),
        Method::Runs if base == 1 || new == 1 => Some(
            "one run on a side: its run-to-run variance is taken to be the other side's.".into(),
        ),
        Method::Runs => None,
    }
}

/// A value in its own unit with 4 significant figures, by the library's rules
/// (`41.23 ns`, `1.204 us`; cycles as `1.234 k cycles`).
pub fn value(v: f64, unit: &str) -> String {
    match unit {
        "ns" => numbers::time(v),
        _ if !v.is_finite() => numbers::ticks(v),
        _ => format!("{} {unit}", numbers::ticks(v)),
    }
}

/// A relative change as a signed percentage (`+20.1%`).
pub fn signed(v: f64) -> String {
    match v * 100.0 {
        p if !p.is_finite() => "-".into(),
        p if p.abs() < 0.05 => "0.0%".into(),
        p => format!("{p:+.1}%"),
    }
}

/// The table `diff` prints.
pub fn table(c: &Comparison, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "latte-telemetry diff: {} base run(s) -> {} new run(s), threshold ±{}%, {}% intervals ({})",
        c.base.len(),
        c.new.len(),
        percent(c.threshold),
        percent(c.confidence),
        match c.method {
            Method::Runs => "from run-to-run variation",
            Method::Blocks => "from resampling blocks of time",
        }
    )?;
    if let Some(note) = &c.note {
        writeln!(out, "{}", textwrap::fill(&format!("note: {note}"), 100))?;
    }
    writeln!(out)?;
    let components: Vec<(String, &[Change])> = c
        .components
        .iter()
        .map(|comp| (comp.component.clone(), comp.changes.as_slice()))
        .collect();
    let names = |names: &[String]| names.to_vec();
    section(out, "COMPONENT", &components, c.unit)?;
    missing(
        out,
        [&c.only_in_base, &c.only_in_new, &c.not_in_every_run].map(|n| names(n)),
        ", ",
    )?;
    if let Some(note) = &c.tree_note {
        writeln!(out, "{}", textwrap::fill(&format!("note: {note}"), 100))?;
    }
    if c.tree_compared {
        writeln!(out, "\nCALL TREE (by path; nodes with a parent)")?;
        let nodes: Vec<(String, &[Change])> = c
            .nodes
            .iter()
            .map(|n| (short_path(&n.path, PATH_WIDTH), n.changes.as_slice()))
            .collect();
        if nodes.is_empty() {
            writeln!(out, "no path with a parent is in every run of both sides")?;
        }
        section(out, "PATH", &nodes, c.unit)?;
        let paths = |paths: &[Vec<String>]| paths.iter().map(|p| p.join(" > ")).collect();
        missing(
            out,
            [
                &c.paths_only_in_base,
                &c.paths_only_in_new,
                &c.paths_not_in_every_run,
            ]
            .map(|p| paths(p)),
            "; ",
        )?;
    }
    writeln!(out, "{}", summary(c))
}

/// The longest path shown in the table, in characters.
pub const PATH_WIDTH: usize = 48;

/// A path as `a > b > c`, shortened from the middle to at most `max` characters: the
/// root and the node's own id stay, the ids between give way to `…` first.
pub fn short_path(path: &[String], max: usize) -> String {
    let full = path.join(" > ");
    if full.chars().count() <= max {
        return full;
    }
    if let [first, .., last] = path {
        let kept = format!("{first} > … > {last}");
        if kept.chars().count() <= max {
            return kept;
        }
    }
    let chars: Vec<char> = full.chars().collect();
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// The table of compared rows (components or paths) under a `first` column, if any.
fn section(
    out: &mut impl Write,
    first: &str,
    items: &[(String, &[Change])],
    unit: &str,
) -> io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    for line in rows(first, items, unit).lines() {
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// The lines listing what was only on one side, or not in every run.
fn missing(out: &mut impl Write, lists: [Vec<String>; 3], separator: &str) -> io::Result<()> {
    let labels = [
        "only in base",
        "only in new",
        "not in every run of its side, not compared",
    ];
    for (label, names) in labels.into_iter().zip(lists) {
        if !names.is_empty() {
            writeln!(out, "{label}: {}", names.join(separator))?;
        }
    }
    Ok(())
}

fn rows(first: &str, items: &[(String, &[Change])], unit: &str) -> Table {
    let mut table = Table::new();
    table.load_style(presets::NOTHING);
    table.set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    table.set_header([
        first,
        "QUANTILE",
        "BASE",
        "NEW",
        "CHANGE",
        "95% INTERVAL",
        "VERDICT",
    ]);
    for (label, changes) in items {
        for (i, change) in changes.iter().enumerate() {
            let name = if i == 0 { label.as_str() } else { "" };
            table.add_row(row(name, change, unit));
        }
    }
    for column in 2..=5 {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

fn row(name: &str, c: &Change, unit: &str) -> Vec<String> {
    let verdict = match (&c.note, c.verdict) {
        (Some(note), Verdict::Inconclusive) => format!("inconclusive: {note}"),
        (_, v) => v.word().to_string(),
    };
    vec![
        name.to_string(),
        format!("p{}", percent(c.quantile)),
        value(c.base, unit),
        value(c.new, unit),
        signed(c.change),
        if c.low.is_finite() {
            format!("[{}, {}]", signed(c.low), signed(c.high))
        } else {
            "-".into()
        },
        verdict,
    ]
}

/// The last line: what regressed, or that nothing did.
fn summary(c: &Comparison) -> String {
    let named = c
        .components
        .iter()
        .map(|comp| (comp.component.clone(), &comp.changes))
        .chain(
            c.nodes
                .iter()
                .map(|n| (format!("path {}", n.path.join(" > ")), &n.changes)),
        );
    let regressed: Vec<String> = named
        .filter_map(|(name, changes)| {
            let qs: Vec<String> = changes
                .iter()
                .filter(|ch| ch.verdict == Verdict::Regressed)
                .map(|ch| format!("p{}", percent(ch.quantile)))
                .collect();
            (!qs.is_empty()).then(|| format!("{name} ({})", qs.join(", ")))
        })
        .collect();
    if regressed.is_empty() {
        format!("no regression beyond ±{}%", percent(c.threshold))
    } else {
        format!(
            "REGRESSED beyond ±{}%: {}",
            percent(c.threshold),
            regressed.join("; ")
        )
    }
}

/// The comparison as one JSON document.
pub fn json(c: &Comparison, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, c)?;
    writeln!(out)
}

/// The error control in words: Bonferroni over the comparison's intervals.
pub fn error_control(comparisons: usize, family_wise: f64) -> String {
    let each = 1.0 - family_wise / comparisons.max(1) as f64;
    format!(
        "Bonferroni over {comparisons} interval(s), each at {}%: at most a {}% chance of any \
         false alarm when nothing changed",
        percent(each),
        percent(family_wise)
    )
}
