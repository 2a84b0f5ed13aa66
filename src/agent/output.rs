//! The [`Builder`] settings of what reports say and where they go: unit, data,
//! cleaning, format, table layout, focus, sinks.

use super::builder::Builder;
use crate::report::{Cleaning, Data, ReportOptions, Unit};
use crate::report::{Focus, Format};
use std::io::Write;

impl Builder {
    /// Cycles or time in reports (default [`Unit::Time`]: ns, us, ms or s as the
    /// values need; [`Unit::Cycles`] is the C++ original's view, raw counter ticks).
    pub fn unit(mut self, unit: Unit) -> Builder {
        self.options.unit = unit;
        self
    }

    /// Raw or overhead-corrected data in reports (default [`Data::Calibrated`]: each
    /// sample minus the instrumentation's own overhead; [`Data::Raw`] as recorded).
    ///
    /// ```
    /// use latte::{Data, Unit};
    /// // The C++ original's sample report: counter ticks as recorded.
    /// let guard = latte::builder().unit(Unit::Cycles).data(Data::Raw).sink(std::io::sink()).start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn data(mut self, data: Data) -> Builder {
        self.options.data = data;
        self
    }

    /// The rule that flags samples far above the median (BYPASS) or outside the IQR
    /// fences; flagged samples
    /// stay in every figure, and the cleaned figures leave them out. A number that is NaN,
    /// infinite or negative makes [`start`](Builder::start) return
    /// [`Error::Cleaning`](crate::Error::Cleaning) (see [`Cleaning`]).
    ///
    /// ```
    /// use latte::{Cleaning, Error, report::Fences};
    /// let fences = Fences { k: f64::NAN, ..Fences::default() };
    /// let cleaning = Cleaning { fences: Some(fences), ..Cleaning::default() };
    /// let err = latte::builder().cleaning(cleaning).start().unwrap_err();
    /// assert_eq!(err, Error::Cleaning { setting: "Fences::k", value: f64::NAN });
    /// assert!(err.to_string().contains("Fences::k = NaN"));
    /// ```
    pub fn cleaning(mut self, cleaning: Cleaning) -> Builder {
        self.options.cleaning = cleaning;
        self
    }

    /// The length a frame should stay within (a frame runs from one
    /// [`latte_frame!`](crate::latte_frame) mark to the next): each report counts the
    /// frames over it (`frames_over_budget_total` in the exporters) and names, for the
    /// longest of them, the components that exceeded their own median time per frame
    /// by the most ([`PerFrame`](crate::report::PerFrame)). Sets
    /// [`ReportOptions::frame_budget`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let guard = latte::builder()
    ///     .frame_budget(Duration::from_micros(16_667))
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn frame_budget(mut self, budget: std::time::Duration) -> Builder {
        self.options.frame_budget = Some(budget);
        self
    }

    /// Every report option at once: unit, data, cleaning rule and which figures the
    /// table's main columns show (default [`ReportOptions::default`]: time, calibrated,
    /// every sample). [`ReportOptions::seed`] is the C++ original's view: counter
    /// ticks as recorded, statistics after cleaning.
    ///
    /// ```
    /// use latte::ReportOptions;
    /// let guard = latte::builder()
    ///     .report_options(ReportOptions::seed())
    ///     .sink(std::io::sink())
    ///     .start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn report_options(mut self, options: ReportOptions) -> Builder {
        self.options = options;
        self
    }

    /// Table or JSON; a table's layout is its [`TableOptions`](crate::report::TableOptions): width (the terminal's,
    /// `COLUMNS` or 100 unless set), columns, wide and compact modes. Periodic tables are
    /// always compact (one table over all threads, the top 20 rows), and a sink's
    /// tables after its first are brief: without the ENVIRONMENT and OVERHEAD blocks its
    /// first one carried.
    ///
    /// ```
    /// use latte::Format;
    /// use latte::report::{Column, TableOptions};
    /// let table = TableOptions {
    ///     columns: Some(vec![Column::Component, Column::Samples, Column::P99]),
    ///     ..TableOptions::default()
    /// };
    /// let guard = latte::builder().format(Format::Table(table)).sink(std::io::sink()).start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn format(mut self, format: Format) -> Builder {
        self.format = format;
        self
    }

    /// Which threads and components the agent's reports keep and in what order: a
    /// thread pattern (applied before the analysis, so ALL THREADS covers only those
    /// threads), an id pattern, a sort column, the top N (see [`Focus`]); applied to
    /// every report it writes, tables and JSON alike. An invalid pattern makes [`start`](Builder::start) return
    /// [`Error::Pattern`](crate::Error::Pattern).
    ///
    /// ```
    /// use latte::report::{Column, Focus, Sort};
    /// let focus = Focus {
    ///     ids: Some("order_*".into()),
    ///     sort: Some(Sort { column: Column::P99, descending: true }),
    ///     top: Some(10),
    ///     threads: Some("engine-*".into()),
    /// };
    /// let guard = latte::builder().focus(focus).sink(std::io::sink()).start()?;
    /// guard.stop()?;
    /// # Ok::<(), latte::Error>(())
    /// ```
    pub fn focus(mut self, focus: Focus) -> Builder {
        self.focus = focus;
        self
    }

    /// Where reports are written (stdout unless set).
    pub fn sink(mut self, sink: impl Write + Send + 'static) -> Builder {
        self.sink = Some(Box::new(sink));
        self
    }

    /// Where periodic reports (and [`Guard::report_interval`](crate::Guard::report_interval)) are written, when not to
    /// [`sink`](Builder::sink): a log file for the intervals, say, and the final report
    /// on stdout. Failures are kept and shown as for the main sink.
    ///
    /// ```
    /// use std::time::Duration;
    /// let intervals = std::env::temp_dir().join("latte-doc-intervals.log");
    /// let guard = latte::builder()
    ///     .periodic(Duration::from_secs(1))
    ///     .periodic_sink(std::fs::File::create(&intervals)?)
    ///     .sink(std::io::sink()) // the final report
    ///     .start()?;
    /// latte::latte_pulse!("doc_periodic_sink");
    /// guard.report_interval()?;
    /// guard.stop()?;
    /// assert!(std::fs::read_to_string(&intervals)?.contains("periodic #1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn periodic_sink(mut self, sink: impl Write + Send + 'static) -> Builder {
        self.periodic_sink = Some(Box::new(sink));
        self
    }
}
