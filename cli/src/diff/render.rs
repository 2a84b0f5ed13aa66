//! `diff`'s output: a table for people, JSON for scripts (the pull-request comment in
//! markdown is [`super::markdown`]), and the words both share: values, changes, the
//! error control, why an interval is inconclusive.

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

/// A confidence as a percentage with the digits that tell it from 100%: two
/// significant digits of what it leaves out (`0.95` as `95`, `1 - 0.01 / 30` as
/// `99.967`).
pub fn confidence(conf: f64) -> String {
    let left_out = (1.0 - conf) * 100.0;
    if !(left_out.is_finite() && left_out > 0.0) {
        return percent(conf);
    }
    let decimals = ((-left_out.log10()).ceil() + 1.0).max(0.0) as usize;
    let p = format!("{:.*}", decimals, conf * 100.0);
    if p.contains('.') {
        p.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        p
    }
}

/// The error control over `comparisons` intervals, in one line: Bonferroni, each
/// interval at `1 - family_wise / comparisons`, so that the chance of any false alarm
/// when nothing changed is at most `family_wise`; or none (`None`: several runs per
/// side, 95% each).
pub fn error_control(comparisons: usize, family_wise: Option<f64>) -> String {
    let Some(family_wise) = family_wise else {
        return format!(
            "none (several runs per side): {comparisons} intervals at {}% each; with no real \
             change, some may still read regressed: narrow the comparison with --filter",
            confidence(super::stats::RUNS_CONFIDENCE)
        );
    };
    let rate = percent(family_wise);
    match comparisons {
        0 => "no interval compared".into(),
        1 => format!(
            "one interval, at {}%: at most a {rate}% chance of a false alarm when nothing changed",
            confidence(1.0 - family_wise)
        ),
        k => format!(
            "Bonferroni over {k} intervals (each at {}%): at most a {rate}% chance of any false \
             alarm when nothing changed",
            confidence(1.0 - family_wise / k as f64)
        ),
    }
}

/// Why a change is inconclusive, in a few words: its note, or else what its interval
/// does that no verdict allows (with a change beyond the threshold, the interval holds
/// 0; within it, the interval reaches past the threshold).
pub fn reason(c: &Change, threshold: f64) -> String {
    if let Some(note) = &c.note {
        note.clone()
    } else if ![c.change, c.low, c.high].iter().all(|v| v.is_finite()) {
        "no finite interval".into()
    } else if c.change.abs() > threshold {
        "the interval holds 0".into()
    } else {
        format!("the interval reaches past ±{}%", percent(threshold))
    }
}

/// A change's verdict in words; an inconclusive one with its reason
/// (`inconclusive: too few samples (2000 of the 10000 needed)`).
pub fn verdict(c: &Change, threshold: f64) -> String {
    match c.verdict {
        Verdict::Inconclusive => format!("inconclusive: {}", reason(c, threshold)),
        v => v.word().to_string(),
    }
}

/// The cells every output shows of a change, after its row's name: quantile, base,
/// new, change, interval; the verdict is [`verdict`].
pub fn cells(c: &Change, unit: &str) -> [String; 5] {
    [
        format!("p{}", percent(c.quantile)),
        value(c.base, unit),
        value(c.new, unit),
        signed(c.change),
        interval(c),
    ]
}

/// A change's interval in a fixed width: `[-3.1%, +8.2%]`, an end beyond +500% as
/// `> +500%`, an interval the data cannot bound as `[-100%, open]`, none as `-`.
pub fn interval(c: &Change) -> String {
    if c.open {
        "[-100%, open]".into()
    } else if c.low.is_finite() && c.high.is_finite() {
        format!("[{}, {}]", end(c.low), end(c.high))
    } else {
        "-".into()
    }
}

/// An end of an interval: a signed percentage, or `> +500%` beyond
/// [`SHOWN_UP_TO`](super::stats::SHOWN_UP_TO).
fn end(v: f64) -> String {
    if v > super::stats::SHOWN_UP_TO {
        format!("> +{:.0}%", super::stats::SHOWN_UP_TO * 100.0)
    } else {
        signed(v)
    }
}

/// The warning (or, with `strict`, the failure) when some intervals are inconclusive:
/// how many of how many, and why, the most frequent reasons first. `None` when every
/// interval reached a verdict.
pub fn inconclusive(c: &Comparison, strict: bool) -> Option<String> {
    let mut reasons: Vec<(usize, String)> = Vec::new();
    for change in c.changes().filter(|ch| ch.verdict == Verdict::Inconclusive) {
        let why = reason(change, c.threshold);
        match reasons.iter_mut().find(|(_, r)| *r == why) {
            Some((n, _)) => *n += 1,
            None => reasons.push((1, why)),
        }
    }
    let count: usize = reasons.iter().map(|(n, _)| n).sum();
    if count == 0 {
        return None;
    }
    reasons.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    const LISTED: usize = 3;
    let mut why: Vec<String> = reasons
        .iter()
        .take(LISTED)
        .map(|(n, r)| format!("{n} × {r}"))
        .collect();
    match reasons.len().saturating_sub(LISTED) {
        0 => {}
        1 => why.push("1 other reason".into()),
        more => why.push(format!("{more} other reasons")),
    }
    let what = format!(
        "{count} of {} verdicts inconclusive ({})",
        c.changes().count(),
        why.join("; ")
    );
    Some(if strict {
        format!("latte-telemetry: {what}: --strict fails on that")
    } else {
        format!("warning: {what}; --strict makes that fail")
    })
}

/// A relative change as a signed percentage (`+20.1%`); from +1,000% on without
/// decimals and from +100,000% as a power of ten (`+2.6e5%`), so that it never runs
/// long.
pub fn signed(v: f64) -> String {
    match v * 100.0 {
        p if !p.is_finite() => "-".into(),
        p if p.abs() < 0.05 => "0.0%".into(),
        p if p.abs() < 1_000.0 => format!("{p:+.1}%"),
        p if p.abs() < 100_000.0 => format!("{p:+.0}%"),
        p => format!("{}{:.1e}%", if p < 0.0 { "-" } else { "+" }, p.abs()),
    }
}

/// Where the intervals come from, in a few words.
pub fn method_words(method: Method) -> &'static str {
    match method {
        Method::Runs => "from run-to-run variation",
        Method::Blocks => "from resampling blocks of time",
    }
}

/// The lines above the table: the runs, the threshold, the intervals, the error
/// control and the method's caveat.
fn header(c: &Comparison, width: usize, out: &mut impl Write) -> io::Result<()> {
    let first = format!(
        "latte-telemetry diff: {} base run(s) -> {} new run(s), threshold ±{}%, {}% intervals ({})",
        c.base.len(),
        c.new.len(),
        percent(c.threshold),
        confidence(c.confidence),
        method_words(c.method)
    );
    writeln!(out, "{}", textwrap::fill(&first, width))?;
    let control = format!("error control: {}", c.error_control);
    writeln!(out, "{}", textwrap::fill(&control, width))?;
    if let Some(note) = &c.note {
        writeln!(out, "{}", textwrap::fill(&format!("note: {note}"), width))?;
    }
    writeln!(out)
}

/// The width the table is laid out to: the report tables' (`COLUMNS`, else the
/// terminal's, else 100).
pub fn width() -> usize {
    latte::report::TableOptions::default().resolved_width()
}

/// The table `diff` prints: every row, whatever its verdicts, its lines at most
/// `width` columns (the verdict's reason wraps).
pub fn table(c: &Comparison, width: usize, out: &mut impl Write) -> io::Result<()> {
    header(c, width, out)?;
    let components: Vec<(String, &[Change])> = c
        .components
        .iter()
        .map(|comp| (comp.component.clone(), comp.changes.as_slice()))
        .collect();
    let names = |names: &[String]| names.to_vec();
    section(out, "COMPONENT", &components, c, width)?;
    missing(
        out,
        [&c.only_in_base, &c.only_in_new, &c.not_in_every_run].map(|n| names(n)),
        ", ",
        width,
    )?;
    if let Some(note) = &c.tree_note {
        writeln!(out, "{}", textwrap::fill(&format!("note: {note}"), width))?;
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
        section(out, "PATH", &nodes, c, width)?;
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
            width,
        )?;
    }
    writeln!(out, "{}", textwrap::fill(&summary(c), width))
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

/// The table of compared rows (components or paths) under a `first` column, if any,
/// laid out to `width`: the figures keep their width and the name and the verdict's
/// reason wrap; when that leaves the verdict fewer than [`VERDICT_ROOM`] columns, the
/// BASE and NEW columns are left out (with a line that says so).
fn section(
    out: &mut impl Write,
    first: &str,
    items: &[(String, &[Change])],
    c: &Comparison,
    width: usize,
) -> io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let figures = |table: &Table| -> usize {
        let widths = table.column_max_content_widths();
        let n = widths.len().saturating_sub(1);
        widths[..n].iter().map(|w| usize::from(*w) + 2).sum()
    };
    let values = figures(&rows(first, items, c, true)) + VERDICT_ROOM <= width;
    let mut table = rows(first, items, c, values);
    table.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    table.set_width(u16::try_from(width).unwrap_or(u16::MAX));
    let last = table.column_count() - 2;
    for column in 1..=last {
        if let Some(c) = table.column_mut(column) {
            c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
    for line in table.lines() {
        writeln!(out, "{}", line.trim_end())?;
    }
    if !values {
        let note = format!(
            "BASE and NEW left out to fit {width} columns (COLUMNS): --json has every figure"
        );
        writeln!(out, "{}", textwrap::fill(&note, width))?;
    }
    Ok(())
}

/// The fewest columns the verdict is given before BASE and NEW are left out.
pub const VERDICT_ROOM: usize = 24;

/// The lines listing what was only on one side, or not in every run.
fn missing(
    out: &mut impl Write,
    lists: [Vec<String>; 3],
    separator: &str,
    width: usize,
) -> io::Result<()> {
    let labels = [
        "only in base",
        "only in new",
        "not in every run of its side, not compared",
    ];
    for (label, names) in labels.into_iter().zip(lists) {
        if !names.is_empty() {
            let line = format!("{label}: {}", names.join(separator));
            writeln!(out, "{}", textwrap::fill(&line, width))?;
        }
    }
    Ok(())
}

/// The table's rows: name, quantile, base and new (with `values`), change, interval,
/// verdict.
fn rows(first: &str, items: &[(String, &[Change])], c: &Comparison, values: bool) -> Table {
    let mut table = Table::new();
    table.load_style(presets::NOTHING);
    let interval = format!("{}% INTERVAL", confidence(c.confidence));
    let keep = |i: usize| values || !(2..=3).contains(&i);
    let header = [
        first, "QUANTILE", "BASE", "NEW", "CHANGE", &interval, "VERDICT",
    ];
    table.set_header(
        header
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(_, h)| *h),
    );
    for (label, changes) in items {
        for (i, change) in changes.iter().enumerate() {
            let name = if i == 0 { label.as_str() } else { "" };
            let mut row = vec![name.to_string()];
            row.extend(cells(change, c.unit));
            row.push(verdict(change, c.threshold));
            table.add_row(
                row.into_iter()
                    .enumerate()
                    .filter(|(i, _)| keep(*i))
                    .map(|(_, r)| r),
            );
        }
    }
    for column in 2..table.column_count() - 1 {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
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
    let below = match c.verdicts.below_resolution {
        0 => String::new(),
        n => format!(
            "\n{n} below resolution: below one clock step on both sides, neither no change nor \
             compared"
        ),
    };
    if regressed.is_empty() {
        format!("no regression beyond ±{}%{below}", percent(c.threshold))
    } else {
        format!(
            "REGRESSED beyond ±{}%: {}{below}",
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

#[cfg(test)]
mod tests;
