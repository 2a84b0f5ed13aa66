//! Focus: which components a report keeps and in what order ([`Focus`],
//! [`Report::focus`]), on the report value itself, so it works the same on a report
//! just made and on one read back from JSON.

use super::table::Column;
use super::{Report, Row, RowKind, SeriesComponent};
use crate::error::Error;
use std::cmp::Ordering;
use std::collections::HashMap;

/// Which components a report keeps, and in what order. Applied by
/// [`Report::focus`] to every section (each thread's and ALL THREADS); a report read
/// back from JSON focuses the same way. An id pattern, a sort or a top makes each
/// section a flat list of ids: the focused report carries no call tree
/// ([`Report::tree`], [`ThreadReport::tree`](crate::report::ThreadReport::tree)).
///
/// ```
/// use latte::report::{Column, Focus, Sort};
/// use latte::{Report, ReportOptions};
/// for (id, n) in [("doc_focus_a", 3), ("doc_focus_b", 5), ("other", 9)] {
///     let id: &'static latte::Id = Box::leak(Box::new(latte::Id::new(id)));
///     (0..n).for_each(|v| latte::record(id, v));
/// }
/// let report = Report::collect(&ReportOptions::default());
/// let focus = Focus {
///     ids: Some("doc_focus_*".into()),
///     sort: Some(Sort { column: Column::Samples, descending: true }),
///     top: Some(1),
///     ..Focus::default()
/// };
/// let top = report.focus(&focus)?;
/// let rows: Vec<&str> = top.all_threads.iter().map(|r| r.component.as_str()).collect();
/// assert_eq!(rows, ["doc_focus_b"]);
/// # Ok::<(), latte::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Focus {
    /// Keep only the components whose id matches this glob pattern (`*`, `?`,
    /// `[...]`; e.g. `"Sim_*"`). `None` keeps every component.
    pub ids: Option<String>,
    /// Keep only the threads whose name matches this glob pattern (e.g. `"engine-*"`;
    /// the merged entry is named `<exited threads>`). Applied where the report is made
    /// ([`Report::collect_focused`], [`Builder::focus`](crate::Builder::focus)), ALL
    /// THREADS then covers only those threads; [`Report::focus`] on a finished report
    /// can only drop the other threads' sections, and leaves ALL THREADS as it was.
    pub threads: Option<String>,
    /// The order of the rows (`None`: scopes by TOTAL, largest first, then pulses by
    /// TOTAL).
    pub sort: Option<Sort>,
    /// Keep only the first `n` rows of each section, after sorting.
    pub top: Option<usize>,
}

/// A sort order: by `column`, largest first when `descending`. Components sort by
/// name; rows with no value in the column (a dash in the table) come last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sort {
    /// The column to sort by.
    pub column: Column,
    /// Largest (or last in name order) first.
    pub descending: bool,
}

impl Report {
    /// This report with only the components `focus` keeps, in its order, and only the
    /// sections of the threads it keeps (ALL THREADS is not recomputed: see
    /// [`Focus::threads`]). Threads with no component left keep their section (their
    /// anomalies still count). The [`series`](Report::series) keeps the components
    /// of ALL THREADS, in its order. An invalid pattern is [`Error::Pattern`].
    ///
    /// ```
    /// use latte::report::Focus;
    /// let report = latte::Report::collect(&latte::ReportOptions::default());
    /// let bad = Focus { ids: Some("[".into()), ..Focus::default() };
    /// assert!(matches!(report.focus(&bad), Err(latte::Error::Pattern { .. })));
    /// ```
    pub fn focus(&self, focus: &Focus) -> Result<Report, Error> {
        let pattern = focus.pattern()?;
        let threads = focus.thread_pattern()?;
        let keep = |rows: &[Row]| -> Vec<Row> {
            let mut rows: Vec<Row> = rows
                .iter()
                .filter(|r| pattern.as_ref().is_none_or(|p| p.matches(&r.component)))
                .cloned()
                .collect();
            if let Some(sort) = focus.sort {
                rows.sort_by(|a, b| compare(a, b, sort));
            }
            rows.truncate(focus.top.unwrap_or(usize::MAX));
            rows
        };
        let mut out = self.clone();
        out.threads
            .retain(|t| threads.as_ref().is_none_or(|p| p.matches(&t.name)));
        // Rows picked by id, sorted or cut make a flat list: the trees go.
        let flat = pattern.is_some() || focus.sort.is_some() || focus.top.is_some();
        for t in &mut out.threads {
            t.rows = keep(&t.rows);
            if flat {
                t.tree.clear();
            }
        }
        out.all_threads = keep(&self.all_threads);
        if flat {
            out.tree.clear();
        }
        if let Some(series) = &mut out.series {
            let mut by_id: HashMap<String, SeriesComponent> =
                std::mem::take(&mut series.components)
                    .into_iter()
                    .map(|c| (c.component.clone(), c))
                    .collect();
            series.components = (out.all_threads.iter())
                .filter_map(|r| by_id.remove(&r.component))
                .collect();
        }
        Ok(out)
    }
}

impl Focus {
    /// The compiled id pattern, or [`Error::Pattern`].
    pub(crate) fn pattern(&self) -> Result<Option<glob::Pattern>, Error> {
        compile(self.ids.as_deref())
    }

    /// The compiled thread pattern, or [`Error::Pattern`].
    pub(crate) fn thread_pattern(&self) -> Result<Option<glob::Pattern>, Error> {
        compile(self.threads.as_deref())
    }
}

fn compile(text: Option<&str>) -> Result<Option<glob::Pattern>, Error> {
    text.map(|text| {
        glob::Pattern::new(text).map_err(|e| Error::Pattern {
            pattern: text.to_owned(),
            reason: e.msg.to_owned(),
        })
    })
    .transpose()
}

/// `a` before `b` in `sort`'s order (a stable sort keeps ties in their order).
fn compare(a: &Row, b: &Row, sort: Sort) -> Ordering {
    let (x, y) = (sort.column.number(a), sort.column.number(b));
    let order = match (x, y) {
        (None, None) => a.component.cmp(&b.component),
        // A NaN (no value) goes last whichever the direction.
        (Some(x), Some(y)) if x.is_nan() || y.is_nan() => {
            return x.is_nan().cmp(&y.is_nan());
        }
        (Some(x), Some(y)) => x.total_cmp(&y),
        (x, y) => x.is_none().cmp(&y.is_none()),
    };
    if sort.descending {
        order.reverse()
    } else {
        order
    }
}

/// The order a report's rows come in: scopes and values by TOTAL, largest first, then
/// pulses by TOTAL (a pulse's TOTAL is about the time its loop ran, not time spent
/// in it). A [`Focus::sort`] replaces it.
pub(crate) fn by_total(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        let pulse = |r: &Row| r.kind == RowKind::Pulse;
        pulse(a)
            .cmp(&pulse(b))
            .then(b.stats.total.total_cmp(&a.stats.total))
    });
}
