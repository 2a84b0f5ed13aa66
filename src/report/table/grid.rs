//! The grid of a section: which columns fit, how wide each is, and the rows laid out
//! by `comfy-table` with the same widths in every section so all tables line up.

use super::ids::{self, Names};
use super::numbers::{self, Scale};
use super::options::{Column, TableOptions};
use crate::report::{Report, Row};
use comfy_table::{
    CellAlignment, ColumnConstraint, ContentArrangement, LineStyle, Table, TableStyle, Width,
};

/// Columns between two cells: `comfy-table`'s junction (a blank here) and a padding
/// of one.
const GAP: usize = 2;
/// The COMPONENT column is never made narrower than this (or its longest id) to let
/// another column in.
const NAME_FLOOR: usize = 24;

/// Rows with no borders, and a rule under the header.
const STYLE: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('-').junction('-'));

/// The columns a report's tables show, with their units and widths, and the ids as
/// they fit.
pub(super) struct Grid {
    /// Shown after COMPONENT, in display order, with unit and width.
    columns: Vec<(Column, Scale, usize)>,
    /// Chosen, but left out for want of room (priority order).
    pub(super) omitted: Vec<Column>,
    name_width: usize,
    pub(super) names: Names,
}

impl Grid {
    /// Lays out every row of `report` for `options` within `width` columns.
    pub(super) fn new(report: &Report, options: &TableOptions, width: usize) -> Grid {
        let rows: Vec<&Row> = report
            .threads
            .iter()
            .flat_map(|t| &t.rows)
            .chain(&report.all_threads)
            .collect();
        let mut ids: Vec<&str> = Vec::new();
        for row in &rows {
            if !ids.contains(&row.component.as_str()) {
                ids.push(&row.component);
            }
        }
        let natural = ids
            .iter()
            .map(|id| ids::width(&ids::escape(id)))
            .chain([Column::Component.header().len()])
            .max()
            .unwrap_or(0);
        let measured: Vec<(Column, Scale, usize)> = options
            .candidates()
            .into_iter()
            .map(|column| {
                let scale = numbers::scale(column, &rows, report.unit, report.resolution);
                let cells = rows.iter().map(|r| numbers::cell(column, &r.stats, &scale));
                let wide = cells.chain([scale.header(column)]).map(|c| ids::width(&c));
                (column, scale, wide.max().unwrap_or(0))
            })
            .collect();
        let (columns, omitted, name_width) = if options.wide {
            (measured, Vec::new(), natural)
        } else {
            fit(measured, options.columns.is_some(), natural, width)
        };
        let names = if options.wide {
            Names::fit(&ids, usize::MAX)
        } else {
            Names::fit(&ids, name_width)
        };
        Grid {
            columns,
            omitted,
            name_width,
            names,
        }
    }

    /// Display columns of a table line.
    pub(super) fn width(&self) -> usize {
        self.name_width + self.columns.iter().map(|(_, _, w)| w + GAP).sum::<usize>()
    }

    /// The table of `rows`: header, rule, one line per row (no trailing spaces).
    pub(super) fn lines(&self, rows: &[Row]) -> Vec<String> {
        let mut table = Table::new();
        table
            .load_style(STYLE)
            .set_content_arrangement(ContentArrangement::Disabled);
        let header = self.columns.iter().map(|(c, scale, _)| scale.header(*c));
        table.set_header(
            [Column::Component.header().to_owned()]
                .into_iter()
                .chain(header),
        );
        for row in rows {
            let cells = self
                .columns
                .iter()
                .map(|(c, scale, _)| numbers::cell(*c, &row.stats, scale));
            table.add_row([self.names.get(&row.component)].into_iter().chain(cells));
        }
        let widths = [self.name_width]
            .into_iter()
            .chain(self.columns.iter().map(|c| c.2));
        for (i, (column, w)) in table.column_iter_mut().zip(widths).enumerate() {
            let padding = if i == 0 { 0 } else { GAP - 1 };
            column.set_padding((padding as u16, 0));
            let fixed = u16::try_from(w + padding).unwrap_or(u16::MAX);
            column.set_constraint(ColumnConstraint::Absolute(Width::Fixed(fixed)));
            if i > 0 {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        table
            .lines()
            .map(|line| line.trim_end().to_owned())
            .collect()
    }
}

/// The columns that fit in `width` next to COMPONENT, given room in priority order
/// (the chosen order when `chosen`); the rest are omitted. COMPONENT keeps at least
/// [`NAME_FLOOR`] columns (or its natural width) and takes what is left over.
fn fit(
    measured: Vec<(Column, Scale, usize)>,
    chosen: bool,
    natural: usize,
    width: usize,
) -> (Vec<(Column, Scale, usize)>, Vec<Column>, usize) {
    let rank = |c: Column| Column::PRIORITY.iter().position(|p| *p == c);
    let mut order: Vec<usize> = (0..measured.len()).collect();
    if !chosen {
        order.sort_by_key(|&i| rank(measured[i].0));
    }
    let mut room = width.saturating_sub(natural.min(NAME_FLOOR));
    let mut keep = vec![false; measured.len()];
    let mut full = false;
    for i in order.iter().copied() {
        let cost = measured[i].2 + GAP;
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
    let shown: Vec<(Column, Scale, usize)> = measured
        .into_iter()
        .zip(keep)
        .filter_map(|(m, k)| k.then_some(m))
        .collect();
    let used: usize = shown.iter().map(|(_, _, w)| w + GAP).sum();
    let name_width = natural.min(width.saturating_sub(used));
    (shown, omitted, name_width)
}
