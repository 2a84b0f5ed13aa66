//! A report's values in the other unit ([`Report::in_unit`]): every duration scaled by
//! the report's counter frequency, counts and shapes left as they are.

use super::{Corrected, Overhead, Report, Row, Summary};
use crate::report::Unit;

impl Report {
    /// This report with its durations in `unit`: counter ticks divided by
    /// [`ticks_per_ns`](Report::ticks_per_ns) for [`Unit::Time`] (nanoseconds),
    /// multiplied back for [`Unit::Cycles`]. Counts, skewness and the histograms (which
    /// are always ticks) do not change; a report already in `unit` comes back as it was.
    ///
    /// ```
    /// use latte::{Report, ReportOptions, Unit};
    /// let id: &'static latte::Id = Box::leak(Box::new(latte::Id::new("doc_in_unit")));
    /// (1..=9).for_each(|v| latte::record(id, v * 1_000));
    /// let cycles = Report::collect(&ReportOptions { unit: Unit::Cycles, ..Default::default() });
    /// let ns = cycles.in_unit(Unit::Time);
    /// let row = |r: &Report| r.all_threads.iter().find(|r| r.component == "doc_in_unit").unwrap().stats;
    /// assert_eq!(ns.unit, Unit::Time);
    /// assert!((row(&ns).max * cycles.ticks_per_ns - row(&cycles).max).abs() < 1e-6);
    /// assert_eq!(row(&ns).samples, row(&cycles).samples);
    /// ```
    #[must_use]
    pub fn in_unit(&self, unit: Unit) -> Report {
        let factor = match (self.unit, unit) {
            (Unit::Cycles, Unit::Time) if self.ticks_per_ns > 0.0 => 1.0 / self.ticks_per_ns,
            (Unit::Time, Unit::Cycles) => self.ticks_per_ns,
            _ => return self.clone(),
        };
        let mut report = self.clone();
        report.unit = unit;
        report.resolution *= factor;
        if let Some(overhead) = &mut report.overhead {
            scale_overhead(overhead, factor);
        }
        let rows = report.threads.iter_mut().flat_map(|t| t.rows.iter_mut());
        for row in rows.chain(report.all_threads.iter_mut()) {
            scale_row(row, factor);
        }
        report
    }
}

fn scale_overhead(overhead: &mut Overhead, factor: f64) {
    overhead
        .scope
        .iter_mut()
        .flatten()
        .for_each(|v| *v *= factor);
    overhead.pulse *= factor;
}

fn scale_row(row: &mut Row, factor: f64) {
    scale_summary(&mut row.stats, factor);
    row.slowest.iter_mut().for_each(|s| s.value *= factor);
    if let Some(c) = &mut row.corrected {
        scale_corrected(c, factor);
    }
}

/// Multiplies every duration of a summary by `factor` (counts and skewness stay): the
/// one conversion of a summary's unit, for the analysis and for [`Report::in_unit`].
pub(crate) fn scale_summary(s: &mut Summary, factor: f64) {
    let c = &mut s.cleaned;
    for v in [
        &mut s.avg,
        &mut s.median,
        &mut s.std_dev,
        &mut s.min,
        &mut s.max,
        &mut s.range,
        &mut s.p90,
        &mut s.p99,
        &mut s.p999,
        &mut s.p9999,
        &mut s.total,
        &mut s.bypass_total,
        &mut s.outliers_total,
        &mut c.avg,
        &mut c.median,
        &mut c.std_dev,
        &mut c.min,
        &mut c.max,
        &mut c.range,
    ] {
        *v *= factor;
    }
}

fn scale_corrected(c: &mut Corrected, factor: f64) {
    for v in [
        &mut c.period,
        &mut c.p50,
        &mut c.p90,
        &mut c.p99,
        &mut c.p999,
        &mut c.p9999,
        &mut c.max,
    ] {
        *v *= factor;
    }
}
