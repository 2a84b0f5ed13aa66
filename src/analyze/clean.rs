//! Data cleaning per (thread, id): BYPASS first, then Tukey's IQR fences, on the
//! whole-run distribution. Cleaning *flags*: a report counts the flagged samples and
//! their share of the time, keeps them in every headline figure, and computes the C++
//! original's cleaned statistics without them (`Summary::cleaned`).
//!
//! **BYPASS** (far above the median: what an OS preemption, an interrupt or a page
//! fault taken inside a scope looks like, and slow work too): a value is flagged when it exceeds both `factor x median` and `median + floor_ns` of the
//! component's values. The factor keeps components with a naturally wide distribution
//! intact; the floor means only delays of the size of an interrupt or a context switch
//! (microseconds) can be classified as the OS's doing. A value rule cannot tell a
//! preemption from real slow work (a replan, a cache-miss storm): that is why flagged
//! samples stay in the headline.
//!
//! **Outliers**: on what is left, values outside `[Q1 - k·IQR, Q3 + k·IQR]` are
//! flagged (Tukey's fences). The spread used is never less than one step of the
//! counter (`Calibration::resolution`): on a counter that moves in steps, a workload
//! whose values straddle two steps is not a workload with outliers. When the IQR is 0
//! (at least half the values share one value) the spread is
//! `zero_iqr_fraction x median`, and again at least one step, so a lone far value is
//! still caught but neither the mode nor its neighbouring step is split off.
//!
//! Both steps only take from the ends of the sorted values, so cleaning is two
//! binary searches. On a histogram it takes whole buckets: a value is flagged or kept
//! with the other values of its bucket (within 1/2,048 of it).

use super::calibrate::Calibration;
use super::dist::{self, Runs};
use crate::report::Cleaning;
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

/// What cleaning kept of a distribution's runs, and the sums of what it flagged.
pub(crate) struct KeptRuns {
    pub(crate) runs: Range<usize>,
    pub(crate) bypass: u64,
    pub(crate) outliers: u64,
    /// Sum of the values flagged by BYPASS (ticks, from the runs).
    pub(crate) bypass_sum: u128,
    /// Sum of the values outside the fences (ticks, from the runs).
    pub(crate) outliers_sum: u128,
}

/// Sum of the runs' values.
fn sum(runs: &[(u64, u64)]) -> u128 {
    runs.iter()
        .map(|&(v, k)| u128::from(v) * u128::from(k))
        .sum()
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
    let bypass_sum = sum(&runs[end..]);
    let mut start = 0;
    let mut outliers = 0;
    let mut outliers_sum = 0;
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
        // 0 x infinity (k = 0 with an infinite spread) is no reach, not NaN.
        let reach = rule.k * spread;
        let reach = if reach.is_nan() && rule.k == 0.0 {
            0.0
        } else {
            reach
        };
        let (low, high) = (q1 - reach, q3 + reach);
        // A negative or NaN reach (refused by `Builder::start`, possible through
        // `Report::collect`) would put the fences in reverse: then nothing is kept.
        let new_end = rest.partition_point(|&(v, _)| v as f64 <= high);
        start = rest
            .partition_point(|&(v, _)| (v as f64) < low)
            .min(new_end);
        outliers = dist::count(rest) - dist::count(&rest[start..new_end]);
        outliers_sum = sum(&rest[..start]) + sum(&rest[new_end..]);
        end = new_end;
    }
    KeptRuns {
        runs: start..end,
        bypass,
        outliers,
        bypass_sum,
        outliers_sum,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Bypass, Fences};

    fn runs() -> Runs {
        let mut sorted = vec![100; 40];
        sorted.extend([90, 95, 105, 110, 400, 5_000, 900_000]);
        sorted.sort_unstable();
        dist::from_sorted(&sorted)
    }

    fn cleaning(factor: f64, floor_ns: f64, k: f64, zero_iqr_fraction: f64) -> Cleaning {
        Cleaning {
            bypass: Some(Bypass { factor, floor_ns }),
            fences: Some(Fences {
                k,
                zero_iqr_fraction,
            }),
        }
    }

    /// What was kept, and every value accounted for exactly once.
    fn kept(cleaning: &Cleaning) -> u64 {
        let runs = runs();
        let k = clean_runs(&runs, cleaning, 1.0, 1);
        assert!(k.runs.start <= k.runs.end && k.runs.end <= runs.len());
        let kept = dist::count(&runs[k.runs]);
        assert_eq!(kept + k.bypass + k.outliers, dist::count(&runs));
        kept
    }

    #[test]
    fn nan_and_negative_numbers_never_panic_and_remove_everything() {
        let n = dist::count(&runs());
        assert_eq!(kept(&cleaning(10.0, 2_000.0, -1.0, 0.25)), 0);
        assert_eq!(
            kept(&cleaning(10.0, 2_000.0, f64::NEG_INFINITY, f64::NAN)),
            0
        );
        assert_eq!(kept(&cleaning(10.0, 2_000.0, f64::NAN, 0.25)), 0);
        assert_eq!(kept(&cleaning(f64::NAN, f64::NAN, 1.5, 0.25)), 0);
        assert_eq!(kept(&cleaning(-1.0, f64::NEG_INFINITY, 1.5, 0.25)), 0);
        assert!(kept(&Cleaning::default()) < n);
    }

    #[test]
    fn infinity_removes_nothing_and_zero_reach_is_the_quartiles() {
        let n = dist::count(&runs());
        assert_eq!(kept(&cleaning(f64::INFINITY, 0.0, f64::INFINITY, 0.0)), n);
        assert_eq!(
            kept(&cleaning(10.0, f64::INFINITY, f64::INFINITY, f64::INFINITY)),
            n
        );
        // k = 0 with an infinite spread: the fences are the quartiles (100 and 100 here).
        let c = Cleaning {
            bypass: None,
            fences: Some(Fences {
                k: 0.0,
                zero_iqr_fraction: f64::INFINITY,
            }),
        };
        assert_eq!(kept(&c), 40);
    }
}
