//! Statistics over a set of tick values: exact ones over a slice (for a user's own
//! samples, say from [`snapshot`](crate::snapshot)), and the same over a distribution's
//! runs (for reports).

use super::dist::{self, Runs};
use serde::Serialize;

/// Count, mean, spread, skewness and extremes of a sample set.
///
/// ```
/// let m = latte::analyze::moments(&[2, 4, 4, 4, 5, 5, 7, 9]);
/// assert_eq!((m.count, m.mean, m.std_dev, m.min, m.max), (8, 5.0, 2.0, 2.0, 9.0));
/// assert!(m.skew > 0.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Moments {
    /// Number of samples.
    pub count: u64,
    /// Arithmetic mean (0 for no samples).
    pub mean: f64,
    /// Population standard deviation.
    pub std_dev: f64,
    /// Population skewness `m3 / m2^1.5`; 0 when the spread is 0.
    pub skew: f64,
    /// Smallest sample (0 for no samples).
    pub min: f64,
    /// Largest sample (0 for no samples).
    pub max: f64,
}

/// Two-pass moments of `values` (any order). Never NaN: an empty set gives all zeros.
///
/// Deviations are taken from offsets to the minimum, which are exact integers in `f64`
/// for any tick delta, so a small spread under a large common value (or no spread at
/// all) is not swamped by the rounding of the mean.
pub fn moments(values: &[u64]) -> Moments {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    run_moments(&dist::from_sorted(&sorted))
}

/// The `q`-quantile (0 <= q <= 1) of an ascending slice: the value of rank
/// `ceil(q * n)`, the smallest value with at least `q * n` values at or below it (the
/// definition reports use, and HdrHistogram's). `q` is clamped to [0, 1] (a NaN `q`
/// counts as 0); an empty slice gives 0.
///
/// ```
/// use latte::analyze::quantile;
/// let sorted = [10, 20, 30, 40];
/// assert_eq!(quantile(&sorted, 0.5), 20);
/// assert_eq!(quantile(&sorted, 0.51), 30);
/// assert_eq!(quantile(&sorted, 0.0), 10);
/// assert_eq!(quantile(&sorted, 1.0), 40);
/// assert_eq!(quantile(&sorted, f64::NAN), 10);
/// assert_eq!(quantile(&[], 0.5), 0);
/// ```
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    debug_assert!(sorted.is_sorted());
    match sorted.len() {
        0 => 0,
        n => sorted[dist::rank(q, n as u64) as usize - 1],
    }
}

/// Two-pass moments of ascending runs (each value taken `count` times), with
/// deviations from the minimum as in [`moments`].
pub(crate) fn run_moments(runs: &Runs) -> Moments {
    let (Some(&(min, _)), Some(&(max, _))) = (runs.first(), runs.last()) else {
        return Moments::default();
    };
    let n = dist::count(runs);
    let total: u128 = runs
        .iter()
        .map(|&(v, k)| u128::from(v - min) * u128::from(k))
        .sum();
    let offset_mean = total as f64 / n as f64;
    let (mut m2, mut m3) = (0.0f64, 0.0f64);
    for &(v, k) in runs {
        let d = (v - min) as f64 - offset_mean;
        m2 += d * d * k as f64;
        m3 += d * d * d * k as f64;
    }
    m2 /= n as f64;
    m3 /= n as f64;
    Moments {
        count: n,
        mean: (min as f64 + offset_mean).clamp(min as f64, max as f64),
        std_dev: m2.sqrt(),
        skew: crate::collect::skewness(m2, m3),
        min: min as f64,
        max: max as f64,
    }
}
