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
use serde::Serialize;
use std::ops::Range;

/// The cleaning applied before the main statistics. `Default` is both steps on with
/// the documented constants; [`Cleaning::OFF`] keeps every sample.
///
/// ```
/// use latte::Cleaning;
/// let c = Cleaning::default();
/// assert_eq!(c.bypass.unwrap().factor, 10.0);
/// assert_eq!(c.fences.unwrap().k, 1.5);
/// assert!(Cleaning::OFF.bypass.is_none() && Cleaning::OFF.fences.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cleaning {
    /// The OS-preemption rule, or `None` to keep such samples.
    pub bypass: Option<Bypass>,
    /// The IQR outlier rule, or `None` to keep outliers.
    pub fences: Option<Fences>,
}

/// BYPASS rule: remove samples above `max(factor x median, median + floor_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bypass {
    /// Multiple of the median a sample must exceed (default 10).
    pub factor: f64,
    /// Absolute excess over the median a sample must exceed, in nanoseconds
    /// (default 2,000: an interrupt or context switch, not a cache miss).
    pub floor_ns: f64,
}

/// Tukey fences: remove samples outside `[Q1 - k·IQR, Q3 + k·IQR]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Fences {
    /// Fence distance in IQRs (default 1.5).
    pub k: f64,
    /// Spread used instead of a zero IQR, as a fraction of the median (default 0.25).
    pub zero_iqr_fraction: f64,
}

impl Cleaning {
    /// No cleaning: statistics over every retained sample.
    pub const OFF: Cleaning = Cleaning {
        bypass: None,
        fences: None,
    };
}

impl Default for Bypass {
    fn default() -> Bypass {
        Bypass {
            factor: 10.0,
            floor_ns: 2_000.0,
        }
    }
}

impl Default for Fences {
    fn default() -> Fences {
        Fences {
            k: 1.5,
            zero_iqr_fraction: 0.25,
        }
    }
}

impl Default for Cleaning {
    fn default() -> Cleaning {
        Cleaning {
            bypass: Some(Bypass::default()),
            fences: Some(Fences::default()),
        }
    }
}

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
/// ```
/// use latte::{Cleaning, stats::clean};
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
