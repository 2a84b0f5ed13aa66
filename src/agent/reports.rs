//! The reports, each assembled by `analyze` with the features' sections added
//! ([`assemble`]): the whole-run reports ([`Report::collect`] and
//! [`Report::collect_focused`], with or without an agent running, and the drain's),
//! which install the features' observers of the fold before they fold, and
//! [`Report::from_capture`].

use crate::analyze::{self, Calibration, Context, calibration, of_threads};
use crate::collect::{self, Capture, Totals};
use crate::error::Error;
use crate::report::{Focus, Report, ReportOptions};
use crate::{frames, series, tree};

impl Report {
    /// Whole run so far: folds everything recorded until now and analyses it.
    ///
    /// ```
    /// latte::latte_pulse!("doc_collect");
    /// latte::latte_pulse!("doc_collect");
    /// let report = latte::Report::collect(&latte::ReportOptions::default());
    /// assert!(report.all_threads.iter().any(|row| row.component == "doc_collect"));
    /// assert!(report.environment.is_some() && report.footprint.is_some());
    /// ```
    pub fn collect(options: &ReportOptions) -> Report {
        // latte's own work: not counted in the scope it runs in.
        crate::record::alloc::uncounted(|| Report::collect_now(options))
    }

    fn collect_now(options: &ReportOptions) -> Report {
        whole_run(options, None, None, true)
    }

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
        crate::record::alloc::uncounted(|| Report::collect_focused_now(options, focus))
    }

    fn collect_focused_now(options: &ReportOptions, focus: &Focus) -> Result<Report, Error> {
        let threads = focus.thread_pattern()?;
        whole_run(options, threads.as_ref(), None, true).focus(focus)
    }

    /// Analyses a stored capture with a given calibration (for reproducible reports):
    /// its retained samples are the folded ones, its overwritten samples are lost. No
    /// label, footprint or environment.
    pub fn from_capture(
        capture: &Capture,
        calibration: &Calibration,
        options: &ReportOptions,
    ) -> Report {
        let totals = Totals::from_capture(capture);
        assemble(&totals, calibration, options, Context::default())
    }
}

/// A report of the whole run so far, describing this process now: of the threads
/// `threads` matches (every thread without it), labelled, with its series when
/// `with_series` and ALL THREADS is all threads (the series log is over all threads).
pub(super) fn whole_run(
    options: &ReportOptions,
    threads: Option<&glob::Pattern>,
    label: Option<String>,
    with_series: bool,
) -> Report {
    let context = Context { label, live: true };
    // Calibration before the ledger's lock: a first calibration takes ~60 ms, and the
    // drain's folds must not wait for it.
    let calibration = calibration();
    series::install();
    frames::install();
    let with_series = with_series && threads.is_none();
    let (mut report, blocks) = collect::whole_run(|totals, watches| {
        let totals = of_threads(totals, threads);
        let blocks = with_series.then(|| series::blocks(watches)).flatten();
        (assemble(&totals, calibration, options, context), blocks)
    });
    if let Some(blocks) = blocks {
        // After the ledger's lock: the folds need not wait for the encoding.
        series::add(&mut report, &blocks, calibration, options.data);
    }
    report
}

/// The report of `totals`: `analyze`'s, with the call tree where a scope ran inside
/// another and the frames of each thread that marked some.
pub(super) fn assemble(
    totals: &Totals,
    calibration: &Calibration,
    options: &ReportOptions,
    context: Context,
) -> Report {
    let mut report = analyze::assemble(totals, calibration, options, context);
    tree::add(&mut report, totals, calibration, options);
    frames::add(&mut report, totals, calibration, options);
    report
}
