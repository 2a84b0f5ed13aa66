//! A thread's frames as a block: the frames' lengths and the budget on one line, each
//! component's time and calls per frame, and the longest frames over budget with what
//! ate them.
//!
//! ```text
//! FRAMES of main (#1): 599 frames, length median 2.000 ms, p99 2.492 ms, max 11.52 ms
//! budget 2.200 ms: 11 frames over (1.8%)
//!
//! PER FRAME   TIME P50      MEAN       P99       MAX  CALLS P50  P99  MAX  IN FRAMES
//! -------------------------------------------------------------------------------
//! Physics     20.72 us  32.80 us  281.7 us  411.8 us          1    1    1        599
//! AI_Replan       0 ns  54.34 us  171.2 us  9.518 ms          0    1    1         19
//!
//! longest frames over budget, their time in no scope (sleep, waits, uninstrumented
//!   code), and what took more than its median:
//! #150 11.52 ms (1.942 ms in no scope): AI_Replan +9.518 ms (9.518 ms, median 0 ns)
//! ```

use super::ids::{self, Names};
use super::model::Block;
use super::text;
use crate::report::numbers;
use crate::report::{PerFrame, Report, RowKind, ThreadReport};

/// Widest a component's name may be in the block.
const NAME_ROOM: usize = 28;

/// Names are shortened to this width before a column gives way.
const SHORT_NAME: usize = 16;

/// Headers after PER FRAME; [`ALLOC_HEADERS`] follow when the report counted
/// allocations.
const HEADERS: [&str; 8] = [
    "TIME P50",
    "MEAN",
    "P99",
    "MAX",
    "CALLS P50",
    "P99",
    "MAX",
    "IN FRAMES",
];

/// Allocations per frame (with the counting allocator installed).
const ALLOC_HEADERS: [&str; 3] = ["ALLOCS P50", "P99", "MAX"];

/// The columns (indices into the headers) a narrow width leaves out, first to go
/// first: allocations' P99 and MAX, calls' P99 and MAX, IN FRAMES, the time's MEAN,
/// then ALLOCS P50. TIME P50, P99, MAX and CALLS P50 always stay; names are first
/// shortened to [`SHORT_NAME`].
const GIVE_WAY: [usize; 7] = [9, 10, 5, 6, 7, 1, 8];

/// The frames blocks of `t` (none if it marked no frame): the summary and the worst
/// frames wrap to the width, the table is laid out.
pub(super) fn blocks(report: &Report, t: &ThreadReport, width: usize) -> Vec<Block> {
    let Some(f) = t.per_frame.as_ref() else {
        return Vec::new();
    };
    let mut blocks = vec![Block::Text(summary(report, t, f))];
    if !f.components.is_empty() {
        blocks.push(Block::Fixed(table(report, t, f, width)));
    }
    let worst = worst(report, f);
    if !worst.is_empty() {
        blocks.push(Block::Text(worst));
    }
    blocks
}

/// The summary: frames and their lengths; the budget.
fn summary(report: &Report, t: &ThreadReport, f: &PerFrame) -> Vec<String> {
    let v = |x: f64| text::value(report, x);
    let mut lines = vec![format!(
        "FRAMES of {} (#{}): {} frames, length median {}, p99 {}, max {}",
        ids::escape(&t.name),
        t.serial,
        numbers::count(f.frames),
        v(f.length.p50),
        v(f.length.p99),
        v(f.length.max),
    )];
    if let (Some(budget), Some(over)) = (f.budget, f.over_budget) {
        lines.push(format!(
            "budget {}: {} frames over ({})",
            v(budget),
            numbers::count(over),
            numbers::share(over as f64, f.frames as f64)
        ));
    }
    lines
}

/// The header and each component's cells, by [`HEADERS`].
fn cells<'a>(report: &Report, t: &ThreadReport, f: &'a PerFrame) -> Vec<(&'a str, Vec<String>)> {
    let timed = |id: &str| {
        t.rows
            .iter()
            .find(|r| r.component == id)
            .is_none_or(|r| r.kind == RowKind::Scope)
    };
    let v = |x: f64| text::value(report, x);
    let calls = |x: f64| numbers::count(x.round() as u64);
    let allocs = f.components.iter().any(|c| c.allocs.is_some());
    let extra: &[&str] = if allocs { &ALLOC_HEADERS } else { &[] };
    let headers = HEADERS.iter().chain(extra).map(|h| (*h).to_owned());
    let mut rows: Vec<(&str, Vec<String>)> = vec![("PER FRAME", headers.collect())];
    for c in &f.components {
        let time = |x: f64| match timed(&c.component) {
            true => v(x),
            false => "-".to_owned(),
        };
        let mut cells = vec![
            time(c.time.p50),
            time(c.time.mean),
            time(c.time.p99),
            time(c.time.max),
            calls(c.calls.p50),
            calls(c.calls.p99),
            calls(c.calls.max),
            numbers::count(c.frames_with_calls),
        ];
        if allocs {
            let spread = c.allocs.unwrap_or_default();
            cells.extend([spread.p50, spread.p99, spread.max].map(calls));
        }
        rows.push((&c.component, cells));
    }
    rows
}

/// One line per component: time per frame (median, mean, p99, max), calls per frame,
/// frames with a call (and allocations per frame, when counted), within `width` ([`GIVE_WAY`] says what goes first). A pulse's
/// or a value's time is `-`: they count calls only.
fn table(report: &Report, t: &ThreadReport, f: &PerFrame, width: usize) -> Vec<String> {
    let rows = cells(report, t, f);
    let columns = rows[0].1.len();
    let widths: Vec<usize> = (0..columns)
        .map(|k| {
            rows.iter()
                .map(|(_, c)| ids::width(&c[k]))
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Names as wide as the longest (to NAME_ROOM); shortened to SHORT_NAME before a
    // column gives way, and further only when nothing else can.
    let longest = rows
        .iter()
        .map(|(n, _)| ids::width(&ids::escape(n)))
        .max()
        .unwrap_or(0)
        .min(NAME_ROOM);
    let mut shown: Vec<usize> = (0..columns).collect();
    let cells_width = |shown: &[usize]| shown.iter().map(|&k| widths[k] + 2).sum::<usize>();
    for k in GIVE_WAY {
        if longest.min(SHORT_NAME) + cells_width(&shown) <= width {
            break;
        }
        shown.retain(|&s| s != k);
    }
    let room = longest.min(width.saturating_sub(cells_width(&shown)));
    let names: Vec<&str> = rows.iter().map(|(n, _)| *n).collect();
    let fitted = Names::fit(&names, room);
    let name_width = names
        .iter()
        .map(|n| ids::width(&fitted.get(n)))
        .max()
        .unwrap_or(0);
    let mut lines: Vec<String> = rows
        .iter()
        .map(|(name, cells)| {
            let name = fitted.get(name);
            let mut line = format!("{name}{}", " ".repeat(name_width - ids::width(&name)));
            for &k in &shown {
                let (cell, w) = (&cells[k], widths[k]);
                line.push_str(&format!("  {}{cell}", " ".repeat(w - ids::width(cell))));
            }
            line
        })
        .collect();
    let rule = "-".repeat(ids::width(&lines[0]));
    lines.insert(1, rule);
    lines.extend(
        fitted
            .legend
            .iter()
            .map(|(shown, full)| format!("{shown} = {full}")),
    );
    lines
}

/// The longest frames over budget (the longest frames without one), each with the
/// components that exceeded their median time per frame by the most.
fn worst(report: &Report, f: &PerFrame) -> Vec<String> {
    let v = |x: f64| text::value(report, x);
    let title = match f.budget {
        Some(_) if f.worst.is_empty() => return Vec::new(),
        Some(_) => {
            "longest frames over budget, their time in no scope (sleep, waits, \
             uninstrumented code), and what took more than its median:"
        }
        None => {
            "longest frames, their time in no scope (sleep, waits, uninstrumented code), \
             and what took more than its median:"
        }
    };
    let mut lines = vec![title.to_owned()];
    for w in f.worst.iter().take(PerFrame::WORST) {
        let culprits: Vec<String> = w
            .culprits
            .iter()
            .map(|c| {
                format!(
                    "{} +{} ({}, median {})",
                    ids::escape(&c.component),
                    v(c.excess),
                    v(c.time),
                    v(c.median)
                )
            })
            .collect();
        let named = if culprits.is_empty() {
            "no component took 1% of it more than its median".to_owned()
        } else {
            culprits.join(", ")
        };
        lines.push(format!(
            "#{} {} ({} in no scope): {named}",
            w.number,
            v(w.length),
            v(w.outside_scopes)
        ));
    }
    let more = f.worst.len().saturating_sub(PerFrame::WORST) as u64 + f.unlisted;
    if more > 0 {
        let listed = f.worst.len().saturating_sub(PerFrame::WORST);
        lines.push(match (listed, f.unlisted) {
            (0, _) => format!(
                "and {} more over budget, not kept whole",
                numbers::count(more)
            ),
            (_, 0) => format!("and {} more over budget, in the JSON", numbers::count(more)),
            (l, u) => format!(
                "and {} more over budget: {} in the JSON, {} not kept whole",
                numbers::count(more),
                numbers::count(l as u64),
                numbers::count(u)
            ),
        });
    }
    lines
}
