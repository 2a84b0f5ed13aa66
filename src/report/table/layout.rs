//! The second step: which columns fit the width, how wide each is, and how the ids
//! are shown. Every section's table has the same columns and widths, so all tables
//! of a report line up.

use super::ids::{self, Names};
use super::model::{Block, Doc, TAIL_HEADERS};
use super::options::{Column, TableOptions};

/// Spaces between two columns. One, as the C++ original's table: every time cell
/// ends in its unit, which keeps neighbours apart.
pub(super) const GAP: usize = 1;
/// Spaces between two columns of the tails block, whose cells have no unit.
pub(super) const TAIL_GAP: usize = 2;
/// The COMPONENT column is never made narrower than this (or its longest id) to let
/// another column in.
const NAME_FLOOR: usize = 16;

/// Where everything goes.
pub(super) struct Layout {
    /// The width lines are wrapped to (a wide table may be wider than asked).
    pub(super) width: usize,
    /// Shown after COMPONENT, in display order, with their widths.
    pub(super) columns: Vec<(Column, usize)>,
    /// Chosen, but left out for want of room (priority order).
    pub(super) omitted: Vec<Column>,
    /// Width of the COMPONENT column.
    pub(super) name_width: usize,
    /// The text shown for each id.
    pub(super) names: Names,
    /// Widths of the tails block's columns after COMPONENT, SLOWEST last (the room
    /// left for it).
    pub(super) tails: [usize; 5],
}

/// Lays out `doc` for `options` within `width` display columns.
pub(super) fn fit(doc: &Doc, options: &TableOptions, width: usize) -> Layout {
    let (candidates, chosen) = options.candidates(width, doc.tree, doc.allocs);
    let ids = doc.ids();
    // The widest indent a tree row takes before its id.
    let indent = doc
        .rows()
        .map(|r| ids::width(&indent(r.depth)))
        .max()
        .unwrap_or(0);
    let natural = ids
        .iter()
        .map(|id| ids::width(&ids::escape(id)) + indent)
        .chain([Column::Component.header().len()])
        .max()
        .unwrap_or(0);
    let measured: Vec<(Column, usize)> = candidates
        .into_iter()
        .map(|column| {
            let cells = doc.rows().map(|r| ids::width(&r.cells[column.index()]));
            let widest = cells.chain([column.header().len()]).max().unwrap_or(0);
            (column, widest)
        })
        .collect();
    let (columns, omitted, name_width) = if options.wide {
        (measured, Vec::new(), natural)
    } else {
        choose(measured, chosen, natural, width)
    };
    let room = name_width.saturating_sub(indent);
    let names = Names::fit(&ids, if options.wide { usize::MAX } else { room });
    let table = name_width + columns.iter().map(|(_, w)| w + GAP).sum::<usize>();
    let any_rows = doc.rows().next().is_some();
    let width = if options.wide && any_rows {
        width.max(table)
    } else {
        width
    };
    let tails = tail_widths(doc, name_width, width, options.wide);
    Layout {
        width,
        columns,
        omitted,
        name_width,
        names,
        tails,
    }
}

/// Levels of a call tree shown by indentation (two columns each); deeper nodes show
/// their depth instead, in the same room.
const INDENTED_LEVELS: u32 = 8;

/// What goes before a tree row's id: two spaces per level, or, past
/// [`INDENTED_LEVELS`], the depth and `>` right-aligned in their room.
pub(super) fn indent(depth: Option<u32>) -> String {
    match depth {
        None | Some(0) => String::new(),
        Some(d) if d <= INDENTED_LEVELS => "  ".repeat(d as usize),
        Some(d) => format!("{:>w$}", format!("{d}> "), w = 2 * INDENTED_LEVELS as usize),
    }
}

/// The columns that fit in `width` next to COMPONENT, given room in priority order
/// (the chosen order when `chosen`); from the first that does not fit on, the rest
/// are omitted. COMPONENT keeps at least [`NAME_FLOOR`] columns (or its natural
/// width) and takes what is left over.
fn choose(
    measured: Vec<(Column, usize)>,
    chosen: bool,
    natural: usize,
    width: usize,
) -> (Vec<(Column, usize)>, Vec<Column>, usize) {
    let rank = |c: Column| Column::PRIORITY.iter().position(|p| *p == c);
    let mut order: Vec<usize> = (0..measured.len()).collect();
    if !chosen {
        order.sort_by_key(|&i| rank(measured[i].0));
    }
    let mut room = width.saturating_sub(natural.min(NAME_FLOOR));
    let mut keep = vec![false; measured.len()];
    let mut full = false;
    for &i in &order {
        let cost = measured[i].1 + GAP;
        full |= cost > room;
        if !full {
            room -= cost;
            keep[i] = true;
        }
    }
    let omitted = order
        .iter()
        .filter(|&&i| !keep[i])
        .map(|&i| measured[i].0)
        .collect();
    let shown: Vec<(Column, usize)> = measured
        .into_iter()
        .zip(keep)
        .filter_map(|(m, k)| k.then_some(m))
        .collect();
    let used: usize = shown.iter().map(|(_, w)| w + GAP).sum();
    let name_width = natural.min(width.saturating_sub(used));
    (shown, omitted, name_width)
}

/// The tails block's column widths: each the widest of its cells and header; SLOWEST
/// gets what is left of the width (everything, when wide).
fn tail_widths(doc: &Doc, name_width: usize, width: usize, wide: bool) -> [usize; 5] {
    let mut widths = TAIL_HEADERS.map(str::len);
    for block in &doc.blocks {
        if let Block::Tails(tails) = block {
            for t in &tails.rows {
                for (w, cell) in widths.iter_mut().zip(&t.flagged) {
                    *w = (*w).max(ids::width(cell));
                }
            }
        }
    }
    let used = name_width + widths[..4].iter().map(|w| w + TAIL_GAP).sum::<usize>() + TAIL_GAP;
    widths[4] = if wide {
        usize::MAX
    } else {
        width.saturating_sub(used).max(TAIL_HEADERS[4].len())
    };
    widths
}
