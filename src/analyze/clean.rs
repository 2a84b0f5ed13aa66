//! Data cleaning per (thread, id): BYPASS first, then Tukey's IQR fences, on the
//! whole-run distribution.
//!
//! **BYPASS** (OS preemption, interrupts, page faults taken inside a scope): a value is
//! removed and counted when it exceeds both `factor x median` and
//! `median + floor_ns` of the component's values. The factor keeps components with a
//! naturally wide distribution intact; the floor means only delays of the size of an
//! interrupt or a context switch (microseconds) can be classified as the OS's doing.
//!
//! **Outliers**: on what is left, values outside `[Q1 - k·IQR, Q3 + k·IQR]` are removed
//! and counted (Tukey's fences). The spread used is never less than one step of the
//! counter (`Calibration::resolution`): on a counter that moves in steps, a workload
//! whose values straddle two steps is not a workload with outliers. When the IQR is 0
//! (at least half the values share one value) the spread is
//! `zero_iqr_fraction x median`, and again at least one step, so a lone far value is
//! still caught but neither the mode nor its neighbouring step is split off.
//!
//! Both steps only remove from the ends of the sorted values, so cleaning is two
//! binary searches. On a histogram it removes whole buckets: a value is kept or
//! removed with the other values of its bucket (within 1/2,048 of it).

use super::calibrate::Calibration;
use super::dist::{self, Runs};
use crate::config::Cleaning;
use std::ops::Range;

/// What cleaning kept of a sorted slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cleaned {
    /// The kept values: `sorted[kept]`.
    pub kept: Range<usize>,
    /// Values removed by the BYPASS rule.
    pub bypass: u64,
    /// Values removed by the fences.
    pub outliers: u64,
}

/// Cleans an ascending slice of ticks measured with `calibration`'s counter (its
/// frequency converts the BYPASS floor, its resolution is the least spread).
///
/// ```
/// use latte::{Cleaning, analyze::{calibration, clean}};
/// let mut ticks = vec![100; 50];
/// ticks.extend([90, 110, 101, 400, 900_000_000]);
/// ticks.sort();
/// let c = clean(&ticks, &Cleaning::default(), calibration());
/// assert_eq!((c.bypass, c.outliers), (1, 1)); // 900,000,000: preemption; 400: outlier
/// assert_eq!(ticks[c.kept.end - 1], 110);
/// ```
pub fn clean(sorted: &[u64], cleaning: &Cleaning, calibration: &Calibration) -> Cleaned {
    debug_assert!(sorted.is_sorted());
    let runs = dist::from_sorted(sorted);
    let kept = clean_runs(
        &runs,
        cleaning,
        calibration.ticks_per_ns,
        calibration.resolution,
    );
    let start = dist::count(&runs[..kept.runs.start]) as usize;
    let end = start + dist::count(&runs[kept.runs.clone()]) as usize;
    Cleaned {
        kept: start..end,
        bypass: kept.bypass,
        outliers: kept.outliers,
    }
}

/// What cleaning kept of a distribution's runs.
pub(crate) struct KeptRuns {
    pub(crate) runs: Range<usize>,
    pub(crate) bypass: u64,
    pub(crate) outliers: u64,
}

/// Cleans ascending runs of ticks; `step` is the counter's resolution in ticks.
pub(crate) fn clean_runs(
    runs: &Runs,
    cleaning: &Cleaning,
    ticks_per_ns: f64,
    step: u64,
) -> KeptRuns {
    let mut end = runs.len();
    let mut bypass = 0;
    if let Some(rule) = cleaning.bypass {
        let median = dist::quantile(runs, 0.5) as f64;
        let limit = (rule.factor * median).max(median + rule.floor_ns * ticks_per_ns);
        end = runs.partition_point(|&(v, _)| v as f64 <= limit);
        bypass = dist::count(&runs[end..]);
    }
    let mut start = 0;
    let mut outliers = 0;
    if let Some(rule) = cleaning.fences {
        let rest = &runs[..end];
        let (q1, q3) = (
            dist::quantile(rest, 0.25) as f64,
            dist::quantile(rest, 0.75) as f64,
        );
        let iqr = q3 - q1;
        let spread = if iqr > 0.0 {
            iqr
        } else {
            rule.zero_iqr_fraction * dist::quantile(rest, 0.5) as f64
        };
        let spread = spread.max(step as f64).max(1.0);
        let (low, high) = (q1 - rule.k * spread, q3 + rule.k * spread);
        start = rest.partition_point(|&(v, _)| (v as f64) < low);
        let new_end = rest.partition_point(|&(v, _)| v as f64 <= high);
        outliers = dist::count(&rest[..start]) + dist::count(&rest[new_end..]);
        end = new_end;
    }
    KeptRuns {
        runs: start..end,
        bypass,
        outliers,
    }
}
