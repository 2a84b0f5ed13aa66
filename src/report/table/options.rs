//! What a table shows: [`TableOptions`] (width, columns, wide and compact modes) and
//! the [`Column`]s with their priority.

use comfy_table::Table;

/// Width used when neither the options, `COLUMNS` nor a terminal give one.
pub const DEFAULT_WIDTH: usize = 100;
/// Narrowest table: a smaller width (e.g. `COLUMNS=20`) is raised to this.
pub const MIN_WIDTH: usize = 40;

/// A column of the table, in the order a wide table shows them; [`Column::header`]
/// is its title.
///
/// [`Column::PRIORITY`] is the order in which columns are given room when the table
/// is narrower than all of them: component, samples, median, p99, p99.9, the largest
/// sample before cleaning (`MAX ALL`), then the rest.
///
/// ```
/// use latte::report::Column;
/// assert_eq!(Column::P999.header(), "P99.9");
/// assert_eq!(Column::PRIORITY[..3], [Column::Component, Column::Samples, Column::Median]);
/// assert_eq!(Column::ALL.len(), Column::PRIORITY.len());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Column {
    /// The id's text (shortened when too long, see `docs/report-format.md`).
    Component,
    /// Values left after cleaning.
    Samples,
    /// Mean after cleaning.
    Avg,
    /// Median after cleaning.
    Median,
    /// Standard deviation after cleaning.
    StdDev,
    /// Skewness after cleaning.
    Skew,
    /// Smallest value after cleaning.
    Min,
    /// Largest value after cleaning.
    Max,
    /// `MAX - MIN` after cleaning.
    Range,
    /// Values removed as OS preemption.
    Bypass,
    /// Values removed by the IQR fences.
    Outliers,
    /// 90th percentile of every folded sample.
    P90,
    /// 99th percentile of every folded sample.
    P99,
    /// 99.9th percentile of every folded sample.
    P999,
    /// Largest folded sample, before cleaning.
    MaxAll,
    /// Samples recorded: folded + lost.
    Seen,
    /// Samples overwritten before latte read them (`!` when not 0).
    Lost,
    /// Folded samples whose Start and Stop ran on different CPUs.
    Migrated,
}

impl Column {
    /// Every column, in the order a table shows them.
    pub const ALL: [Column; 18] = [
        Column::Component,
        Column::Samples,
        Column::Avg,
        Column::Median,
        Column::StdDev,
        Column::Skew,
        Column::Min,
        Column::Max,
        Column::Range,
        Column::Bypass,
        Column::Outliers,
        Column::P90,
        Column::P99,
        Column::P999,
        Column::MaxAll,
        Column::Seen,
        Column::Lost,
        Column::Migrated,
    ];

    /// Every column, most important first: what a narrow table keeps.
    pub const PRIORITY: [Column; 18] = [
        Column::Component,
        Column::Samples,
        Column::Median,
        Column::P99,
        Column::P999,
        Column::MaxAll,
        Column::Lost,
        Column::Avg,
        Column::P90,
        Column::Min,
        Column::Max,
        Column::StdDev,
        Column::Bypass,
        Column::Outliers,
        Column::Seen,
        Column::Migrated,
        Column::Skew,
        Column::Range,
    ];

    /// The column's title, without the unit a table adds to time columns
    /// (`MEDIAN (us)`).
    ///
    /// ```
    /// assert_eq!(latte::report::Column::MaxAll.header(), "MAX ALL");
    /// ```
    pub fn header(self) -> &'static str {
        match self {
            Column::Component => "COMPONENT",
            Column::Samples => "SAMPLES",
            Column::Avg => "AVG",
            Column::Median => "MEDIAN",
            Column::StdDev => "STD DEV",
            Column::Skew => "SKEW",
            Column::Min => "MIN",
            Column::Max => "MAX",
            Column::Range => "RANGE",
            Column::Bypass => "BYPASS",
            Column::Outliers => "OUTLIERS",
            Column::P90 => "P90",
            Column::P99 => "P99",
            Column::P999 => "P99.9",
            Column::MaxAll => "MAX ALL",
            Column::Seen => "SEEN",
            Column::Lost => "LOST",
            Column::Migrated => "MIGR",
        }
    }
}

/// How [`Report::write_table`](crate::Report::write_table) lays out a table.
/// `Default` is what [`Report::write`](crate::Report::write) uses: the width of the
/// terminal, the columns that fit in [`Column::PRIORITY`] order, every header line.
///
/// * **Width**: `width` if set, else the `COLUMNS` environment variable, else the
///   terminal's width when stdout is a terminal, else 100 columns (never below 40).
///   No line of the table is wider, counted in display columns.
/// * **Columns**: `columns` chooses them (in that order; `COMPONENT` is always first);
///   otherwise every column is a candidate. Candidates are given room in priority
///   order; those that do not fit are left out and named in a footer line.
/// * **Wide**: every chosen column and every id in full, whatever the width.
/// * **Compact**: the title line and the tables only: no clock, memory, cleaning,
///   ENVIRONMENT, overhead or slowest lines (for periodic reports).
///
/// ```
/// use latte::report::{Column, TableOptions};
/// let report = latte::Report::collect(&latte::ReportOptions::default());
/// let options = TableOptions {
///     width: Some(80),
///     columns: Some(vec![Column::Samples, Column::P99]),
///     ..TableOptions::default()
/// };
/// let mut out = Vec::new();
/// report.write_table(&mut out, &options)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.lines().all(|line| line.chars().count() <= 80));
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// Width in display columns; `None`: `COLUMNS`, the terminal, or 100.
    pub width: Option<usize>,
    /// The columns to show after `COMPONENT`, in this order; `None`: all that fit.
    pub columns: Option<Vec<Column>>,
    /// Show every chosen column and every id in full, however wide.
    pub wide: bool,
    /// Only the title line and the tables (periodic reports).
    pub compact: bool,
}

impl TableOptions {
    /// The width the table is laid out to, in display columns (see the type's docs).
    ///
    /// ```
    /// let options = latte::report::TableOptions { width: Some(120), ..Default::default() };
    /// assert_eq!(options.resolved_width(), 120);
    /// ```
    pub fn resolved_width(&self) -> usize {
        let env = std::env::var("COLUMNS").ok();
        resolve_width(self.width, env.as_deref(), || {
            Table::new().width().map(usize::from)
        })
    }

    /// The columns after `COMPONENT` that are candidates, in display order.
    pub(super) fn candidates(&self) -> Vec<Column> {
        let mut chosen: Vec<Column> = Vec::new();
        let wanted = match &self.columns {
            Some(columns) => columns.as_slice(),
            None => &Column::ALL[..],
        };
        for &column in wanted {
            if column != Column::Component && !chosen.contains(&column) {
                chosen.push(column);
            }
        }
        chosen
    }
}

/// `explicit`, else `COLUMNS` (a positive number), else the terminal's width, else
/// [`DEFAULT_WIDTH`]; never below [`MIN_WIDTH`].
pub(super) fn resolve_width(
    explicit: Option<usize>,
    columns_env: Option<&str>,
    terminal: impl FnOnce() -> Option<usize>,
) -> usize {
    let from_env = || {
        columns_env
            .and_then(|text| text.trim().parse::<usize>().ok())
            .filter(|&w| w > 0)
    };
    explicit
        .or_else(from_env)
        .or_else(terminal)
        .unwrap_or(DEFAULT_WIDTH)
        .max(MIN_WIDTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_comes_from_the_first_source_that_has_one() {
        let terminal = || Some(132);
        assert_eq!(resolve_width(Some(80), Some("120"), terminal), 80);
        assert_eq!(resolve_width(None, Some("120"), terminal), 120);
        assert_eq!(resolve_width(None, Some(" 90 "), terminal), 90);
        assert_eq!(resolve_width(None, Some("wide"), terminal), 132);
        assert_eq!(resolve_width(None, Some("0"), terminal), 132);
        assert_eq!(resolve_width(None, None, terminal), 132);
        assert_eq!(resolve_width(None, None, || None), DEFAULT_WIDTH);
        assert_eq!(resolve_width(Some(3), None, || None), MIN_WIDTH);
    }

    #[test]
    fn every_column_has_a_priority_and_a_distinct_header() {
        let mut sorted = Column::PRIORITY;
        sorted.sort();
        assert_eq!(sorted, Column::ALL);
        let mut headers: Vec<&str> = Column::ALL.iter().map(|c| c.header()).collect();
        headers.sort_unstable();
        headers.dedup();
        assert_eq!(headers.len(), Column::ALL.len());
    }

    #[test]
    fn chosen_columns_keep_their_order_without_component_or_repeats() {
        let options = TableOptions {
            columns: Some(vec![
                Column::P99,
                Column::Component,
                Column::Samples,
                Column::P99,
            ]),
            ..TableOptions::default()
        };
        assert_eq!(options.candidates(), [Column::P99, Column::Samples]);
        assert_eq!(
            TableOptions::default().candidates().len(),
            Column::ALL.len() - 1
        );
    }
}
