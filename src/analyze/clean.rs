//! Data cleaning per (thread, id): BYPASS first, then Tukey's IQR fences.
//!
//! **BYPASS** (OS preemption, interrupts, page faults taken inside a scope): a sample is
//! removed and counted when it exceeds both `factor x median` and
//! `median + floor_ns` of the component's samples. The factor keeps components with a
//! naturally wide distribution intact; the floor means only delays of the size of an
//! interrupt or a context switch (microseconds) can be classified as the OS's doing.
//!
//! **Outliers**: on what is left, samples outside `[Q1 - k·IQR, Q3 + k·IQR]` are removed
//! and counted (Tukey's fences). When the IQR is 0 (at least half the samples share
//! one value, common with a coarse counter) the spread used is
//! `zero_iqr_fraction x median` (at least one tick), so a lone far value is still caught
//! but the mode is never split.
//!
//! Both steps only ever remove from the ends of the sorted samples, so cleaning is two
//! binary searches on a sorted slice.

use super::stats::quantile;
use crate::config::Cleaning;
use std::ops::Range;

/// What cleaning kept of a sorted slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cleaned {
    /// The kept samples: `sorted[kept]`.
    pub kept: Range<usize>,
    /// Samples removed by the BYPASS rule.
    pub bypass: u64,
    /// Samples removed by the fences.
    pub outliers: u64,
}

/// Cleans an ascending slice of ticks; `ticks_per_ns` converts the BYPASS floor.
///
/// First BYPASS: samples above both `factor x median` and `median + floor_ns` are
/// removed as OS preemption. Then Tukey's fences on what is left: samples outside
/// `[Q1 - k·IQR, Q3 + k·IQR]` are removed as outliers; a zero IQR is replaced by
/// `zero_iqr_fraction x median` (at least one tick). Both only trim the ends of the
/// sorted slice.
///
/// ```
/// use latte::{Cleaning, analyze::clean};
/// let mut ticks = vec![100; 50];
/// ticks.extend([90, 110, 101, 400, 900_000]);
/// ticks.sort();
/// let c = clean(&ticks, &Cleaning::default(), 1.0);
/// assert_eq!((c.bypass, c.outliers), (1, 1)); // 900,000: preemption; 400: outlier
/// assert_eq!(ticks[c.kept.end - 1], 110);
/// ```
pub fn clean(sorted: &[u64], cleaning: &Cleaning, ticks_per_ns: f64) -> Cleaned {
    debug_assert!(sorted.is_sorted());
    let mut end = sorted.len();
    let mut bypass = 0;
    if let Some(rule) = cleaning.bypass {
        let median = quantile(sorted, 0.5);
        let limit = (rule.factor * median).max(median + rule.floor_ns * ticks_per_ns);
        end = sorted.partition_point(|&v| v as f64 <= limit);
        bypass = (sorted.len() - end) as u64;
    }
    let mut start = 0;
    let mut outliers = 0;
    if let Some(rule) = cleaning.fences {
        let rest = &sorted[..end];
        let (q1, q3) = (quantile(rest, 0.25), quantile(rest, 0.75));
        let iqr = q3 - q1;
        let spread = if iqr > 0.0 {
            iqr
        } else {
            (rule.zero_iqr_fraction * quantile(rest, 0.5)).max(1.0)
        };
        let (low, high) = (q1 - rule.k * spread, q3 + rule.k * spread);
        start = rest.partition_point(|&v| (v as f64) < low);
        let new_end = rest.partition_point(|&v| v as f64 <= high);
        outliers = (start + end - new_end) as u64;
        end = new_end;
    }
    Cleaned {
        kept: start..end,
        bypass,
        outliers,
    }
}
