//! What a table shows: [`TableOptions`] (width, columns, wide and compact modes) and
//! the [`Column`]s with their priority.

use crate::report::Row;

/// Width used when neither the options, `COLUMNS` nor a terminal give one.
pub const DEFAULT_WIDTH: usize = 100;
/// Narrowest table: a smaller width (e.g. `COLUMNS=20`) is raised to this.
pub const MIN_WIDTH: usize = 40;

/// A column of the table, in the order a wide table shows them; [`Column::header`]
/// is its title.
///
/// Which columns a table shows unless [`TableOptions::columns`] chooses: at 120
/// display columns or more, [`Column::SEED`] (the C++ original's nine, in its order,
/// plus P99, P99.9 and TOTAL); narrower, [`Column::NARROW`]; where even those do not
/// fit, the least important go first ([`Column::PRIORITY`]) and a line names them.
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
    /// Samples the figures cover.
    Samples,
    /// Mean.
    Avg,
    /// Median.
    Median,
    /// Standard deviation.
    StdDev,
    /// Skewness.
    Skew,
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
    /// `MAX - MIN`.
    Range,
    /// Samples flagged as far above the median (BYPASS; in every figure).
    Bypass,
    /// Samples flagged by the IQR fences (in every figure).
    Outliers,
    /// 90th percentile.
    P90,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    P999,
    /// Sum of the values: where the time goes.
    Total,
    /// Samples recorded: SAMPLES + LOST.
    Seen,
    /// Samples overwritten before latte read them (in no figure).
    Lost,
    /// Samples whose Start and Stop ran on different CPUs.
    Migrated,
    /// A call-tree node's self time: its `TOTAL` less the scopes inside it.
    SelfTime,
    /// A call-tree node's `TOTAL` as a share of its parent's.
    OfParent,
    /// Allocations per call, the scopes inside included (with a
    /// [`Counting`](crate::alloc::Counting) allocator installed).
    AllocsPerCall,
    /// Bytes allocated per call, the scopes inside included (likewise).
    BytesPerCall,
}

impl Column {
    /// Every column, in the order a table shows them.
    pub const ALL: [Column; 22] = [
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
        Column::Total,
        Column::Seen,
        Column::Lost,
        Column::Migrated,
        Column::SelfTime,
        Column::OfParent,
        Column::AllocsPerCall,
        Column::BytesPerCall,
    ];

    /// What a table of 120 display columns or more shows: the C++ original's nine
    /// columns in its order, then P99, P99.9 and TOTAL.
    pub const SEED: [Column; 12] = [
        Column::Samples,
        Column::Avg,
        Column::Median,
        Column::StdDev,
        Column::Skew,
        Column::Min,
        Column::Max,
        Column::Range,
        Column::Bypass,
        Column::P99,
        Column::P999,
        Column::Total,
    ];

    /// What a narrower table shows, as far as it fits: the seed's columns without
    /// SKEW, RANGE and BYPASS (the seed's own table is 110 columns wide).
    pub const NARROW: [Column; 9] = [
        Column::Samples,
        Column::Avg,
        Column::Median,
        Column::StdDev,
        Column::Min,
        Column::Max,
        Column::P99,
        Column::P999,
        Column::Total,
    ];

    /// What a call tree's table shows below 120 display columns, as far as it fits:
    /// [`NARROW`](Column::NARROW) without STD DEV, MIN and P99.9, and with SELF and
    /// % PARENT. From 120 columns on, [`SEED`](Column::SEED) and these two.
    pub const TREE: [Column; 8] = [
        Column::Samples,
        Column::Avg,
        Column::Median,
        Column::P99,
        Column::Max,
        Column::Total,
        Column::SelfTime,
        Column::OfParent,
    ];

    /// Every column, most important first: what a narrow table keeps.
    pub const PRIORITY: [Column; 22] = [
        Column::Component,
        Column::Samples,
        Column::Median,
        Column::P99,
        Column::Avg,
        Column::Total,
        Column::SelfTime,
        Column::OfParent,
        Column::AllocsPerCall,
        Column::BytesPerCall,
        Column::P999,
        Column::Max,
        Column::Min,
        Column::StdDev,
        Column::Bypass,
        Column::Skew,
        Column::Range,
        Column::P90,
        Column::Outliers,
        Column::Lost,
        Column::Seen,
        Column::Migrated,
    ];

    /// The column's title (headers carry no unit: every cell has its own).
    ///
    /// ```
    /// assert_eq!(latte::report::Column::StdDev.header(), "STD DEV");
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
            Column::Total => "TOTAL",
            Column::Seen => "SEEN",
            Column::Lost => "LOST",
            Column::Migrated => "MIGR",
            Column::SelfTime => "SELF",
            Column::OfParent => "% PARENT",
            Column::AllocsPerCall => "ALLOCS/CALL",
            Column::BytesPerCall => "BYTES/CALL",
        }
    }

    /// The column's place in [`Column::ALL`].
    pub(super) fn index(self) -> usize {
        self as usize
    }

    /// The number this column shows for `row` (its headline figure), to sort rows by;
    /// `None` for COMPONENT, which sorts by text.
    pub(in crate::report) fn number(self, row: &Row) -> Option<f64> {
        let s = &row.stats;
        let count = |n: u64| Some(n as f64);
        let per_call =
            |pick: fn((f64, f64)) -> f64| Some(row.allocs.map_or(f64::NAN, |a| pick(a.per_call())));
        match self {
            Column::Component => None,
            Column::Samples => count(s.samples),
            Column::Avg => Some(s.avg),
            Column::Median => Some(s.median),
            Column::StdDev => Some(s.std_dev),
            Column::Skew => Some(s.skew),
            Column::Min => Some(s.min),
            Column::Max => Some(s.max),
            Column::Range => Some(s.range),
            Column::Bypass => count(s.bypass),
            Column::Outliers => count(s.outliers),
            Column::P90 => Some(s.p90),
            Column::P99 => Some(s.p99),
            Column::P999 => Some(s.p999),
            Column::Total => Some(s.total),
            Column::Seen => count(s.seen),
            Column::Lost => count(s.lost),
            Column::Migrated => count(s.migrated),
            // A flat row has neither: they sort as unknown.
            Column::SelfTime | Column::OfParent => Some(f64::NAN),
            Column::AllocsPerCall => per_call(|(allocs, _)| allocs),
            Column::BytesPerCall => per_call(|(_, bytes)| bytes),
        }
    }
}

/// How a table is laid out: [`Format::Table`](crate::Format::Table) carries it to
/// [`Report::write`](crate::Report::write) and the agent. `Default` is the width of
/// the terminal, the columns for that width, the full report.
///
/// * **Width**: `width` if set, else the `COLUMNS` environment variable, else the
///   terminal's width when stdout is a terminal, else 100 columns (never below 40).
///   No line is wider, counted in display columns.
/// * **Columns**: `columns` chooses them (in that order; `COMPONENT` is always
///   first); otherwise [`Column::SEED`] from 120 columns on, [`Column::NARROW`] below.
///   Columns that do not fit are left out, least important first
///   ([`Column::PRIORITY`]; chosen ones from the end), and named in one line.
/// * **Wide**: every column (or every chosen one), every id in full and every list
///   unabridged, whatever the width.
/// * **Compact** (what periodic reports use): the clock line and the notices (lost
///   samples, failures) under the title, one table over all threads (plus each
///   thread's with `per_thread`), its first 20 rows and a line counting the rest; no
///   memory or cleaning lines, no flagged and slowest samples, no closing rule.
/// * **Brief**: no ENVIRONMENT or OVERHEAD blocks, for a report whose reader has seen
///   them in an earlier one (the agent's reports after the first to the same sink). A
///   clocksource change during the run, lost samples and anomalies still print.
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
/// report.write(&mut out, latte::Format::Table(options))?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.lines().all(|line| line.chars().count() <= 80));
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// Width in display columns; `None`: `COLUMNS`, the terminal, or 100.
    pub width: Option<usize>,
    /// The columns to show after `COMPONENT`, in this order; `None`: by width.
    pub columns: Option<Vec<Column>>,
    /// Every chosen column, every id in full, every list unabridged, however wide.
    pub wide: bool,
    /// One table over all threads, its first 20 rows, no slowest samples.
    pub compact: bool,
    /// With `compact`: each thread's table too.
    pub per_thread: bool,
    /// One row per id, as if no scope ran inside another, instead of the call tree
    /// (each node under the scope it ran in, with SELF and % PARENT).
    pub flat: bool,
    /// Leave out the blocks an earlier report showed (ENVIRONMENT, OVERHEAD).
    pub brief: bool,
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
        resolve_width(self.width, env.as_deref(), stdout_columns)
    }

    /// The columns after `COMPONENT` a table of `width` tries to show, in display
    /// order, and whether the user chose them.
    /// The columns to lay out at `width`, and whether they were chosen; `tree` when a
    /// section shows a call tree, `allocs` when the report counted allocations (then
    /// ALLOCS/CALL and BYTES/CALL come last, unless the columns were chosen).
    pub(super) fn candidates(&self, width: usize, tree: bool, allocs: bool) -> (Vec<Column>, bool) {
        let tree_cells = [Column::SelfTime, Column::OfParent];
        let seed_tree: Vec<Column> = Column::SEED.iter().chain(&tree_cells).copied().collect();
        let alloc_cells = [Column::AllocsPerCall, Column::BytesPerCall];
        let (wanted, chosen): (&[Column], bool) = match &self.columns {
            Some(columns) => (columns, true),
            None if self.wide && tree => (&Column::ALL[..20], false),
            None if self.wide => (&Column::ALL[..18], false),
            None if width >= SEED_WIDTH && tree => (&seed_tree, false),
            None if width >= SEED_WIDTH => (&Column::SEED, false),
            None if tree => (&Column::TREE, false),
            None => (&Column::NARROW, false),
        };
        let extra: &[Column] = if allocs && !chosen { &alloc_cells } else { &[] };
        let mut out: Vec<Column> = Vec::new();
        for &column in wanted.iter().chain(extra) {
            if column != Column::Component && !out.contains(&column) {
                out.push(column);
            }
        }
        (out, chosen)
    }
}

/// From this width on, a table shows the seed's columns.
pub const SEED_WIDTH: usize = 120;

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

/// The width of the terminal stdout writes to, in columns; `None` when stdout is not a
/// terminal. One `ioctl` (Unix) or console call (Windows) through the `libc` and
/// `windows-sys` crates latte has already (see `docs/design.md`, "Dependencies").
#[cfg(unix)]
#[allow(unsafe_code)] // one ioctl(2)
fn stdout_columns() -> Option<usize> {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: `TIOCGWINSZ` writes one `winsize` through the pointer, which points at
    // `size`, alive and writable for the call; on a stdout that is no terminal the call
    // fails (`ENOTTY`) and writes nothing.
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &raw mut size) };
    (rc == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

/// The width of the console stdout writes to, in columns (its window, not its buffer);
/// `None` when stdout is not a console.
#[cfg(windows)]
#[allow(unsafe_code)] // one console call
fn stdout_columns() -> Option<usize> {
    use windows_sys::Win32::System::Console::{
        CONSOLE_SCREEN_BUFFER_INFO, GetConsoleScreenBufferInfo, GetStdHandle, STD_OUTPUT_HANDLE,
    };
    // SAFETY: plain data of integers, for which all zeros is a valid value.
    let mut info: CONSOLE_SCREEN_BUFFER_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: `GetStdHandle` takes no pointer and returns a handle (or an invalid one,
    // which the next call refuses); `GetConsoleScreenBufferInfo` writes one
    // `CONSOLE_SCREEN_BUFFER_INFO` through the pointer, which points at `info`, alive
    // and writable for the call, and returns 0 for a handle that is no console.
    let ok = unsafe { GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &raw mut info) };
    let window = info.srWindow;
    let width = i32::from(window.Right) - i32::from(window.Left) + 1;
    (ok != 0)
        .then_some(width)
        .and_then(|w| usize::try_from(w).ok())
        .filter(|&w| w > 0)
}

/// No terminal width to read on this platform: `COLUMNS` or the default decides.
#[cfg(not(any(unix, windows)))]
fn stdout_columns() -> Option<usize> {
    None
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
        for (i, c) in Column::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
    }

    #[test]
    fn the_width_picks_the_columns_and_chosen_ones_keep_their_order() {
        let options = TableOptions {
            columns: Some(vec![
                Column::P99,
                Column::Component,
                Column::Samples,
                Column::P99,
            ]),
            ..TableOptions::default()
        };
        assert_eq!(
            options.candidates(80, false, false),
            (vec![Column::P99, Column::Samples], true)
        );
        let default = TableOptions::default();
        assert_eq!(default.candidates(119, false, false).0, Column::NARROW);
        assert_eq!(default.candidates(120, false, false).0, Column::SEED);
        assert_eq!(default.candidates(100, true, false).0, Column::TREE);
        assert_eq!(
            default.candidates(120, true, false).0.len(),
            Column::SEED.len() + 2
        );
        let wide = TableOptions {
            wide: true,
            ..TableOptions::default()
        };
        // Every column; SELF and % PARENT only for a tree.
        assert_eq!(
            wide.candidates(80, false, false).0.len(),
            Column::ALL.len() - 5
        );
        assert_eq!(
            wide.candidates(80, true, false).0.len(),
            Column::ALL.len() - 3
        );
    }
}
