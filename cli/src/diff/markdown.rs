//! `diff --markdown`: the comparison as GitHub-flavoured markdown, for a pull-request
//! comment. A one-line verdict comes first, then the threshold, the error control and
//! where the intervals come from. The table holds the rows (components, then call-tree
//! nodes by path) that regressed, improved or are inconclusive at some quantile, each
//! inconclusive cell with its reason; with `--all`, every row. A list at the end says
//! how many rows were left out, and what is on one side only.
//!
//! Values, changes and intervals are the table's own words ([`render::cells`]). The
//! layout is comfy-table's markdown preset, so the source lines up too; only the
//! separator line is rewritten, to right-align the numbers.

use super::Comparison;
use super::render::{self, cells, confidence, percent};
use super::stats::{Change, Verdict};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use std::io::{self, Write};

/// The columns whose cells are right-aligned: base, new, change and interval.
const RIGHT: [usize; 4] = [2, 3, 4, 5];

/// Writes the comparison as markdown: the rows with a verdict other than `no change`
/// at some quantile, or every row when `all`.
pub fn markdown(c: &Comparison, all: bool, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{}\n", headline(c))?;
    writeln!(out, "{}\n", context(c))?;
    if let Some(note) = &c.note {
        writeln!(out, "> note: {}\n", escape(note))?;
    }
    let shown = |changes: &[Change]| {
        all || !matches!(
            row_verdict(changes),
            Verdict::NoChange | Verdict::BelowResolution
        )
    };
    let components: Vec<(String, &[Change])> = c
        .components
        .iter()
        .filter(|comp| shown(&comp.changes))
        .map(|comp| (escape(&comp.component), comp.changes.as_slice()))
        .collect();
    table(out, "component", &components, c)?;
    let nodes: Vec<(String, &[Change])> = c
        .nodes
        .iter()
        .filter(|n| shown(&n.changes))
        .map(|n| (path(&n.path), n.changes.as_slice()))
        .collect();
    if !nodes.is_empty() {
        writeln!(out, "Call tree, by path (nodes with a parent):\n")?;
        table(out, "path", &nodes, c)?;
    }
    let left_out = [
        c.components.len() - components.len(),
        c.nodes.len() - nodes.len(),
    ];
    for line in footnotes(c, left_out) {
        writeln!(out, "- {line}")?;
    }
    Ok(())
}

/// The row's verdict over its quantiles: `regressed` if any quantile regressed, else
/// `improved` if any improved, else `inconclusive` if any is, else `below resolution`
/// if every quantile is, else `no change`.
pub fn row_verdict(changes: &[Change]) -> Verdict {
    let below = |c: &Change| c.verdict == Verdict::BelowResolution;
    [Verdict::Regressed, Verdict::Improved, Verdict::Inconclusive]
        .into_iter()
        .find(|v| changes.iter().any(|c| c.verdict == *v))
        .unwrap_or(if changes.iter().all(below) {
            Verdict::BelowResolution
        } else {
            Verdict::NoChange
        })
}

/// The first line: the rows' verdicts counted, a row under its [`row_verdict`].
fn headline(c: &Comparison) -> String {
    let rows: Vec<Verdict> = c
        .components
        .iter()
        .map(|comp| row_verdict(&comp.changes))
        .chain(c.nodes.iter().map(|n| row_verdict(&n.changes)))
        .collect();
    let count = |v: Verdict| rows.iter().filter(|&&r| r == v).count();
    let (regressed, improved, inconclusive) = (
        count(Verdict::Regressed),
        count(Verdict::Improved),
        count(Verdict::Inconclusive),
    );
    let noun = match (c.nodes.is_empty(), rows.len()) {
        (true, 1) => "component",
        (true, _) => "components",
        (false, _) => "components and call-tree paths",
    };
    let of = format!("of {} {noun}", rows.len());
    let t = percent(c.threshold);
    let also = |counts: &[(usize, &str)]| {
        let listed: Vec<String> = counts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, word)| format!("{n} {word}"))
            .collect();
        match listed.is_empty() {
            true => String::new(),
            false => format!(" ({})", listed.join(", ")),
        }
    };
    if regressed > 0 {
        let others = also(&[(improved, "improved"), (inconclusive, "inconclusive")]);
        format!("**regressed** beyond ±{t}%: {regressed} {of}{others}")
    } else if improved > 0 {
        let others = also(&[(inconclusive, "inconclusive")]);
        format!("**improved** beyond ±{t}%: {improved} {of}, none regressed{others}")
    } else if inconclusive > 0 {
        format!("**no regression** beyond ±{t}%, but {inconclusive} {of} inconclusive")
    } else {
        let below = match count(Verdict::BelowResolution) {
            0 => String::new(),
            n => format!(" ({n} of them below resolution: below one clock step)"),
        };
        format!("**no change** beyond ±{t}% in {} {noun}{below}", rows.len())
    }
}

/// The second paragraph: the threshold, the error control and the intervals' source.
fn context(c: &Comparison) -> String {
    format!(
        "Threshold ±{}% (a smaller change is no change). Error control: {}. \
         {} base run(s), {} new run(s); intervals {}.",
        percent(c.threshold),
        c.error_control,
        c.base.len(),
        c.new.len(),
        render::method_words(c.method)
    )
}

/// One markdown table of rows (components or paths, already escaped) under a `first`
/// column, each quantile a line, followed by a blank line; nothing when there are no
/// rows.
fn table(
    out: &mut impl Write,
    first: &str,
    items: &[(String, &[Change])],
    c: &Comparison,
) -> io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let mut table = Table::new();
    table.load_style(presets::ASCII_MARKDOWN);
    table.set_content_arrangement(ContentArrangement::Disabled);
    let interval = format!("{}% interval", confidence(c.confidence));
    table.set_header([
        first, "quantile", "base", "new", "change", &interval, "verdict",
    ]);
    for (label, changes) in items {
        for (i, change) in changes.iter().enumerate() {
            let mut row = vec![if i == 0 { label.clone() } else { String::new() }];
            row.extend(cells(change, c.unit));
            row.push(verdict_cell(change, c.threshold));
            table.add_row(row);
        }
    }
    for column in RIGHT {
        if let Some(col) = table.column_mut(column) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    for (i, line) in table.lines().enumerate() {
        match i {
            1 => writeln!(out, "{}", right_aligned(&line))?,
            _ => writeln!(out, "{line}")?,
        }
    }
    writeln!(out)
}

/// The separator line under the header with `---:` under the [`RIGHT`] columns, which
/// GitHub then right-aligns.
fn right_aligned(separator: &str) -> String {
    separator
        .split('|')
        .enumerate()
        .map(|(i, dashes)| match i.checked_sub(1) {
            Some(column) if RIGHT.contains(&column) && dashes.len() > 1 => {
                format!("{}:", &dashes[..dashes.len() - 1])
            }
            _ => dashes.to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// A change's verdict as a cell: escaped, with its reason when inconclusive, and in
/// bold when regressed.
fn verdict_cell(change: &Change, threshold: f64) -> String {
    let words = escape(&render::verdict(change, threshold));
    match change.verdict {
        Verdict::Regressed => format!("**{words}**"),
        _ => words,
    }
}

/// A path as `a > b > c`, each id escaped, in full (a cell wraps in the browser).
fn path(path: &[String]) -> String {
    path.iter()
        .map(|id| escape(id))
        .collect::<Vec<_>>()
        .join(" > ")
}

/// The list at the end: the rows left out, what is on one side only or missing from
/// some runs, and why the tree was not compared.
fn footnotes(c: &Comparison, [components, nodes]: [usize; 2]) -> Vec<String> {
    let mut lines = Vec::new();
    let counted = [(components, "component"), (nodes, "call-tree path")];
    let left_out: Vec<String> = counted
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|&(n, what)| format!("{n} {what}{}", if n == 1 { "" } else { "s" }))
        .collect();
    if !left_out.is_empty() {
        let one = components + nodes == 1;
        lines.push(format!(
            "{} with no change (or below resolution) at every quantile {} left out; `--all` \
             shows {}.",
            left_out.join(" and "),
            if one { "is" } else { "are" },
            if one { "it" } else { "them" }
        ));
    }
    let names = |names: &[String]| names.iter().map(|n| escape(n)).collect::<Vec<_>>();
    let paths = |paths: &[Vec<String>]| paths.iter().map(|p| path(p)).collect::<Vec<_>>();
    let lists = [
        ("only in base", names(&c.only_in_base), ", "),
        ("only in new", names(&c.only_in_new), ", "),
        (
            "not in every run of its side, not compared",
            names(&c.not_in_every_run),
            ", ",
        ),
        (
            "call-tree paths only in base",
            paths(&c.paths_only_in_base),
            "; ",
        ),
        (
            "call-tree paths only in new",
            paths(&c.paths_only_in_new),
            "; ",
        ),
        (
            "call-tree paths not in every run of their side, not compared",
            paths(&c.paths_not_in_every_run),
            "; ",
        ),
    ];
    for (label, listed, separator) in lists {
        if !listed.is_empty() {
            lines.push(format!("{label}: {}", listed.join(separator)));
        }
    }
    if c.tree_compared && c.nodes.is_empty() {
        lines.push("no call-tree path with a parent is in every run of both sides".into());
    }
    lines.extend(c.tree_note.iter().map(|note| escape(note)));
    lines
}

/// `text` as literal text in a markdown table cell, on one line. The characters that
/// start or end inline markup in GitHub's markdown (`` \ ` * _ [ ] < | ~ & $ ``) get
/// a backslash, which CommonMark allows before any ASCII punctuation and which keeps
/// a `|` from splitting the cell; line breaks and other control characters become
/// spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch.is_control() {
            out.push(' ');
            continue;
        }
        if matches!(
            ch,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '|' | '~' | '&' | '$'
        ) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_a_name_literal_and_in_its_cell() {
        assert_eq!(escape("Sim_Tick|*x*"), r"Sim\_Tick\|\*x\*");
        assert_eq!(escape(r"a\|b"), r"a\\\|b");
        assert_eq!(
            escape("<b>`x`</b> &amp; $y$"),
            r"\<b>\`x\`\</b> \&amp; \$y\$"
        );
        assert_eq!(escape("two\nlines\t"), "two lines ");
        assert_eq!(escape("Frame.Physics-2 (hot)"), "Frame.Physics-2 (hot)");
    }

    #[test]
    fn the_separator_right_aligns_the_numbers() {
        assert_eq!(
            right_aligned("|---|----|----|---|---|---|---|"),
            "|---|----|---:|--:|--:|--:|---|"
        );
    }
}
