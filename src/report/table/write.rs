//! The last step: the lines, in order. Text is escaped onto one line and wrapped to
//! the width; table lines are padded to the layout's widths (counted in display
//! columns) with no trailing spaces.

use super::ids::{self, escape};
use super::layout::{GAP, Layout, TAIL_GAP};
use super::model::{Block, Cells, Doc, Section, TAIL_HEADERS, Tail, Tails};
use super::options::Column;
use super::text::INDENT;
use std::io::{self, Write};

/// Writes `doc` laid out by `layout`, between two `=` rules, a blank line between two
/// blocks, then the footer (columns left out, numbered ids).
pub(super) fn write(doc: &Doc, layout: &Layout, out: &mut dyn Write) -> io::Result<()> {
    // A compact report (one of a periodic series) has its opening rule only: the
    // next report's rule closes it.
    let mut lines = Lines::new(layout.width);
    let rule = "=".repeat(layout.width);
    lines.fixed(&rule);
    lines.text(&doc.title);
    doc.head.iter().for_each(|l| lines.text(l));
    for block in &doc.blocks {
        lines.blank();
        match block {
            Block::Text(text) => text.iter().for_each(|l| lines.text(l)),
            // Laid out already; wrapped only where it cannot fit (absurd values).
            Block::Fixed(fixed) if fixed.iter().all(|l| ids::width(l) <= layout.width) => {
                fixed.iter().for_each(|l| lines.fixed(l))
            }
            Block::Fixed(fixed) => fixed.iter().for_each(|l| lines.text(l.trim())),
            Block::Section(section) => write_section(&mut lines, section, layout),
            Block::Tails(tails) => write_tails(&mut lines, tails, layout),
        }
    }
    let footer = footer(layout, doc.rows().next().is_some(), doc.tree);
    if !footer.is_empty() {
        lines.blank();
        footer.iter().for_each(|l| lines.text(l));
    }
    if !doc.compact {
        lines.fixed(&rule);
    }
    out.write_all(lines.text.as_bytes())
}

/// Output being built.
struct Lines {
    text: String,
    wrap: textwrap::Options<'static>,
}

impl Lines {
    fn new(width: usize) -> Lines {
        let words = textwrap::WordSeparator::Custom(words);
        Lines {
            text: String::new(),
            wrap: textwrap::Options::new(width)
                .subsequent_indent(INDENT)
                .word_separator(words),
        }
    }

    /// Free text: escaped and wrapped.
    fn text(&mut self, line: &str) {
        for part in textwrap::wrap(&escape(line), &self.wrap) {
            self.fixed(&part);
        }
    }

    /// A line already laid out.
    fn fixed(&mut self, line: &str) {
        self.text.push_str(line.trim_end());
        self.text.push('\n');
    }

    fn blank(&mut self) {
        self.text.push('\n');
    }
}

/// The words of a line for wrapping: split at spaces, except between a number and
/// its unit (`6.581 ms` stays on one line).
fn words(line: &str) -> Box<dyn Iterator<Item = textwrap::core::Word<'_>> + '_> {
    const UNITS: [&str; 10] = ["ps", "ns", "us", "ms", "s", "k", "M", "G", "T", "P"];
    // Each word with the spaces after it, as byte ranges of `line`.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, c) in line.char_indices() {
        let after_space = i > 0 && line.as_bytes()[i - 1] == b' ';
        if c != ' ' && after_space {
            spans.push((start, i));
            start = i;
        }
    }
    spans.push((start, line.len()));
    let is_unit = |word: &str| {
        let word = word.trim_end_matches([' ', ',', ';', ')', '.', ':']);
        UNITS.contains(&word)
    };
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match merged.last_mut() {
            Some((_, end))
                if is_unit(&line[a..b])
                    && line[..*end]
                        .trim_end()
                        .ends_with(|c: char| c.is_ascii_digit()) =>
            {
                *end = b;
            }
            _ => merged.push((a, b)),
        }
    }
    Box::new(
        merged
            .into_iter()
            .map(move |(a, b)| textwrap::core::Word::from(&line[a..b])),
    )
}

/// A section: title, header, rule, rows, notices.
fn write_section(lines: &mut Lines, section: &Section, layout: &Layout) {
    lines.text(&section.title);
    if !section.rows.is_empty() {
        let headers: Vec<&str> = layout.columns.iter().map(|(c, _)| c.header()).collect();
        let header = row(layout, Column::Component.header(), &headers);
        lines.fixed(&header);
        lines.fixed(&"-".repeat(ids::width(&header)));
        for r in &section.rows {
            lines.fixed(&cells(layout, r));
        }
    }
    section.notices.iter().for_each(|n| lines.text(n));
}

/// A row of the table: the name padded to its column, each cell right-aligned.
fn row(layout: &Layout, name: &str, cells: &[&str]) -> String {
    let mut line = pad_right(name, layout.name_width);
    for ((_, width), cell) in layout.columns.iter().zip(cells) {
        line.push_str(&" ".repeat(GAP));
        line.push_str(&pad_left(cell, *width));
    }
    line
}

/// A component's row.
fn cells(layout: &Layout, r: &Cells) -> String {
    let shown: Vec<&str> = layout
        .columns
        .iter()
        .map(|(c, _)| r.cells[c.index()].as_str())
        .collect();
    let name = format!(
        "{}{}",
        super::layout::indent(r.depth),
        layout.names.get(&r.id)
    );
    row(layout, &name, &shown)
}

/// The tails block: its title, a header, one line per component; where the width
/// leaves SLOWEST no room for one value, a wrapped line per component instead.
fn write_tails(lines: &mut Lines, tails: &Tails, layout: &Layout) {
    lines.text(&tails.title);
    if layout.tails[4] < SLOWEST_ROOM {
        for t in &tails.rows {
            let [bypass, of_bypass, outliers, of_outliers] = &t.flagged;
            let slowest = slowest(t, usize::MAX);
            lines.text(&format!(
                "{}: bypass {bypass} ({of_bypass} of its time), outliers {outliers} \
                 ({of_outliers}); slowest {slowest}",
                layout.names.get(&t.id)
            ));
        }
        tails.more.iter().for_each(|m| lines.text(m));
        return;
    }
    let header = tail_line(
        layout,
        Column::Component.header(),
        &TAIL_HEADERS.map(String::from),
    );
    lines.fixed(&header);
    lines.fixed(&"-".repeat(ids::width(&header)));
    for t in &tails.rows {
        let [a, b, c, d] = t.flagged.clone();
        let cells = [a, b, c, d, slowest(t, layout.tails[4])];
        lines.fixed(&tail_line(layout, &layout.names.get(&t.id), &cells));
    }
    tails.more.iter().for_each(|m| lines.text(m));
}

/// The room SLOWEST needs for one value and its thread.
const SLOWEST_ROOM: usize = 20;

/// A line of the tails block: flagged counts right-aligned, SLOWEST left-aligned.
fn tail_line(layout: &Layout, name: &str, cells: &[String; 5]) -> String {
    let mut line = pad_right(name, layout.name_width);
    for (cell, width) in cells[..4].iter().zip(layout.tails) {
        line.push_str(&" ".repeat(TAIL_GAP));
        line.push_str(&pad_left(cell, width));
    }
    line.push_str(&" ".repeat(TAIL_GAP));
    line.push_str(&cells[4]);
    line
}

/// The slowest values that fit in `room` columns: `a, b, c on thread`, or each with
/// its thread; values are dropped from the end (never cut) until the text fits, and
/// at the last the thread too.
fn slowest(t: &Tail, room: usize) -> String {
    let fits = |text: &String| ids::width(text) <= room;
    let on = |text: String| match &t.on {
        Some(thread) => format!("{text} on {thread}"),
        None => text,
    };
    let tries = (1..=t.slowest.len())
        .rev()
        .map(|n| on(t.slowest[..n].join(", ")));
    let last = t.slowest.first().cloned().unwrap_or_default();
    tries
        .map(|text| escape(&text))
        .find(fits)
        .unwrap_or_else(|| escape(&last))
}

/// The footer: how to read a call tree, the columns left out, and the ids numbered
/// to stay distinct.
fn footer(layout: &Layout, any_rows: bool, tree: bool) -> Vec<String> {
    let mut lines = Vec::new();
    if tree {
        lines.push(
            "call tree: each scope under the one it ran in; its children, (self), (latte \
             inside) and (not attributed) add up to its TOTAL, their % PARENT to 100% (flat: \
             one row per id)"
                .to_owned(),
        );
    }
    if any_rows && !layout.omitted.is_empty() {
        let names: Vec<&str> = layout.omitted.iter().map(|c| c.header()).collect();
        lines.push(format!(
            "left out to fit {} columns: {} (wide shows every column)",
            layout.width,
            names.join(", ")
        ));
    }
    for (shown, full) in &layout.names.legend {
        lines.push(format!("{shown} is {full}"));
    }
    lines
}

/// `text` followed by spaces up to `width` display columns.
fn pad_right(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(ids::width(text));
    format!("{text}{}", " ".repeat(pad))
}

/// Spaces up to `width` display columns, then `text`.
fn pad_left(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(ids::width(text));
    format!("{}{text}", " ".repeat(pad))
}
