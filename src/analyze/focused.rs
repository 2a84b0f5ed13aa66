//! Reports of some threads only: the thread pattern of a [`Focus`] applied to the
//! whole run before the analysis, so ALL THREADS covers only the threads kept.

use super::{Context, assemble, calibration};
use crate::collect::{self, Totals};
use crate::error::Error;
use crate::report::ReportOptions;
use crate::report::{Focus, Report};
use std::borrow::Cow;

impl Report {
    /// [`Report::collect`] for the threads and components `focus` keeps, in its
    /// order: the thread pattern is applied before the analysis (ALL THREADS covers
    /// only those threads), then [`Report::focus`]. An invalid pattern is
    /// [`Error::Pattern`].
    ///
    /// ```
    /// use latte::report::Focus;
    /// use latte::{Report, ReportOptions};
    /// static WORK: latte::Id = latte::Id::new("doc_collect_focused");
    /// for (name, n) in [("engine-1", 3), ("logger", 5)] {
    ///     std::thread::Builder::new()
    ///         .name(name.into())
    ///         .spawn(move || (0..n).for_each(|v| latte::record(&WORK, v)))?
    ///         .join()
    ///         .unwrap();
    /// }
    /// let focus = Focus { threads: Some("engine-*".into()), ..Focus::default() };
    /// let report = Report::collect_focused(&ReportOptions::default(), &focus)?;
    /// assert!(report.threads.iter().all(|t| t.name == "engine-1"));
    /// let all = report.all_threads.iter().find(|r| r.component == WORK.name()).unwrap();
    /// assert_eq!(all.stats.seen, 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn collect_focused(options: &ReportOptions, focus: &Focus) -> Result<Report, Error> {
        let threads = focus.thread_pattern()?;
        let live = Context {
            label: None,
            live: true,
        };
        let calibration = calibration();
        let report = collect::whole_run(|totals| {
            assemble(
                &of_threads(totals, threads.as_ref()),
                calibration,
                options,
                live,
            )
        });
        report.focus(focus)
    }
}

/// `totals` with only the threads `pattern` matches (all of them, not copied, without
/// one).
pub(crate) fn of_threads<'a>(
    totals: &'a Totals,
    pattern: Option<&glob::Pattern>,
) -> Cow<'a, Totals> {
    match pattern {
        Some(p) => Cow::Owned(totals.only_threads(|name| p.matches(name))),
        None => Cow::Borrowed(totals),
    }
}
