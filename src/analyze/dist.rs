//! A distribution as the analysis sees it: ascending runs of `(value, count)`, plus
//! what is known exactly (count, sums, extremes).
//!
//! Runs come from a whole-run histogram (one per bucket, at the bucket's middle) or
//! from a sorted sample set (one per distinct value, exact). Either way, quantiles
//! are order statistics: the `q`-quantile of `n` values is the value of rank
//! `ceil(q * n)` (1-based), the smallest value with at least `q * n` values at or
//! below it — HdrHistogram's definition. From a histogram it is within half a bucket
//! of the exact one: exact below 2,048 ticks, within 1/2,048 relative above.

use crate::collect::{Exact, SampleKind, Tally};
use hdrhistogram::Histogram;

/// Ascending `(value, count)` runs.
pub(crate) type Runs = Vec<(u64, u64)>;

/// One kind's values with `overhead` ticks taken off each (saturating at 0).
pub(crate) fn from_tally(tally: &Tally, overhead: u64) -> (Runs, Exact) {
    let raw = hist_runs(&tally.hist, tally.exact.min, tally.exact.max);
    let exact = shifted_exact(tally, &raw, overhead);
    (shifted(raw, overhead), exact)
}

/// A histogram's buckets as runs, each at its middle pulled inside `[min, max]` (the
/// lowest and highest buckets often hold one value: the extreme itself).
pub(crate) fn hist_runs(hist: &Histogram<u64>, min: u64, max: u64) -> Runs {
    let mut raw: Runs = Vec::with_capacity(hist.distinct_values().min(4096));
    for v in hist.iter_recorded() {
        let high = v.value_iterated_to();
        let low = hist.lowest_equivalent(high);
        let middle = if low == high {
            low
        } else {
            hist.median_equivalent(low)
        };
        raw.push((middle.clamp(min, max), v.count_at_value()));
    }
    raw
}

/// Runs with `overhead` taken off each value (saturating at 0).
pub(crate) fn shifted(raw: Runs, overhead: u64) -> Runs {
    let mut runs: Runs = Vec::with_capacity(raw.len());
    for (value, count) in raw {
        push_run(&mut runs, value.saturating_sub(overhead), count);
    }
    runs
}

/// The exact moments of `max(x - c, 0)` over a tally's values `x`. Values below `c`
/// are read from the runs, which are exact there whenever `c` is below 2,048 ticks
/// (always, for latte's own overheads).
fn shifted_exact(tally: &Tally, raw: &[(u64, u64)], c: u64) -> Exact {
    let (mut n_lo, mut s1_lo, mut s2_lo, mut s3_lo) = (0u64, 0u128, 0u128, 0u128);
    for &(v, k) in raw.iter().take_while(|(v, _)| *v < c) {
        let (v, k) = (u128::from(v), u128::from(k));
        n_lo += k as u64;
        s1_lo += v * k;
        s2_lo += v * v * k;
        s3_lo += v * v * v * k;
    }
    let all = &tally.exact;
    let (c, n_hi) = (u128::from(c), u128::from(all.count - n_lo));
    let s1_hi = all.sum - s1_lo;
    let sum = s1_hi - c * n_hi;
    // sum over x >= c of (x - c)^2 = s2_hi - 2c*s1_hi + c^2*n_hi, and it is >= 0.
    let sum_sq = all.sum_sq.and_then(|s2| {
        (s2 - s2_lo)
            .checked_add(c.checked_mul(c)?.checked_mul(n_hi)?)?
            .checked_sub(c.checked_mul(2)?.checked_mul(s1_hi)?)
    });
    // sum over x >= c of (x - c)^3 = s3_hi + 3c^2*s1_hi - 3c*s2_hi - c^3*n_hi, >= 0.
    let sum_cu = all.sum_sq.zip(all.sum_cu).and_then(|(s2, s3)| {
        let (s2_hi, s3_hi) = (s2 - s2_lo, s3 - s3_lo);
        let cc = c.checked_mul(c)?;
        s3_hi
            .checked_add(cc.checked_mul(3)?.checked_mul(s1_hi)?)?
            .checked_sub(c.checked_mul(3)?.checked_mul(s2_hi)?)?
            .checked_sub(cc.checked_mul(c)?.checked_mul(n_hi)?)
    });
    Exact {
        count: all.count,
        sum,
        sum_sq,
        sum_cu,
        min: all.min.saturating_sub(c as u64),
        max: all.max.saturating_sub(c as u64),
    }
}

/// Runs of an ascending slice: one per distinct value.
pub(crate) fn from_sorted(sorted: &[u64]) -> Runs {
    let mut runs = Runs::new();
    for &v in sorted {
        push_run(&mut runs, v, 1);
    }
    runs
}

/// Appends `count` values of `value` (not below the last run's value).
fn push_run(runs: &mut Runs, value: u64, count: u64) {
    match runs.last_mut() {
        Some((last, n)) if *last == value => *n += count,
        _ => runs.push((value, count)),
    }
}

/// Both distributions together, still ascending.
pub(crate) fn merge(a: &[(u64, u64)], b: &[(u64, u64)]) -> Runs {
    let mut out = Runs::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j == b.len() || (i < a.len() && a[i].0 <= b[j].0);
        let (v, k) = if take_a { a[i] } else { b[j] };
        if take_a {
            i += 1;
        } else {
            j += 1;
        }
        push_run(&mut out, v, k);
    }
    out
}

/// How many values the runs hold.
pub(crate) fn count(runs: &[(u64, u64)]) -> u64 {
    runs.iter().map(|(_, k)| k).sum()
}

/// The 1-based rank of the `q`-quantile among `n` values: `ceil(q * n)`, at least 1.
/// A product that lands a rounding error above a whole number counts as that number
/// (`0.07 * 100` is 7, not 8). `q` is clamped to [0, 1]; NaN counts as 0. Every
/// quantile latte reports uses it, and so does the `latte-telemetry` tool.
///
/// ```
/// use latte::analyze::rank;
/// assert_eq!(rank(0.07, 100), 7);
/// assert_eq!(rank(0.5, 3), 2);
/// assert_eq!(rank(0.999, 10), 10);
/// assert_eq!(rank(0.0, 10), 1);
/// ```
pub fn rank(q: f64, n: u64) -> u64 {
    let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
    let x = q * n as f64;
    ((x - x * 1e-12).ceil() as u64).clamp(1, n.max(1))
}

/// The value of 1-based rank `r` (0 for no values).
pub(crate) fn at_rank(runs: &[(u64, u64)], r: u64) -> u64 {
    let mut below = 0;
    for &(v, k) in runs {
        below += k;
        if below >= r {
            return v;
        }
    }
    runs.last().map_or(0, |&(v, _)| v)
}

/// The `q`-quantile (see the module docs); 0 for no values.
pub(crate) fn quantile(runs: &[(u64, u64)], q: f64) -> u64 {
    at_rank(runs, rank(q, count(runs)))
}

/// What a distribution's kinds are worth in the report's data: the overhead per kind
/// is what calibration says (0 for raw data and for user-recorded values).
pub(crate) fn kinds_together(
    kinds: &[(SampleKind, Tally)],
    overhead: impl Fn(SampleKind) -> u64,
) -> (Runs, Exact) {
    let mut runs = Runs::new();
    let mut exact = Exact::default();
    for (kind, tally) in kinds {
        let (r, e) = from_tally(tally, overhead(*kind));
        runs = if runs.is_empty() { r } else { merge(&runs, &r) };
        exact = exact.plus(&e);
    }
    (runs, exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_ceilings_without_rounding_surprises() {
        assert_eq!(rank(0.07, 100), 7);
        assert_eq!(rank(0.5, 4), 2);
        assert_eq!(rank(0.51, 4), 3);
        assert_eq!(rank(0.0, 10), 1);
        assert_eq!(rank(1.0, 10), 10);
        assert_eq!(rank(f64::NAN, 10), 1);
        assert_eq!(rank(0.99, 1_000_000), 990_000);
        assert_eq!(rank(0.999, 1_000_000), 999_000);
        assert_eq!(rank(0.5, 0), 1);
    }

    #[test]
    fn shifted_moments_are_exact() {
        let values = [3u64, 10, 50, 51, 400, 10_000, 3_000_000];
        let mut t = Tally::default();
        values.iter().for_each(|&v| t.record(v));
        for c in [0u64, 5, 50, 60, 2_000] {
            let (runs, e) = from_tally(&t, c);
            let shifted: Vec<u64> = values.iter().map(|v| v.saturating_sub(c)).collect();
            let sum: u128 = shifted.iter().map(|&v| u128::from(v)).sum();
            let sq: u128 = shifted.iter().map(|&v| u128::from(v) * u128::from(v)).sum();
            let cu: u128 = shifted.iter().map(|&v| u128::from(v).pow(3)).sum();
            assert_eq!((e.count, e.sum, e.sum_sq), (7, sum, Some(sq)), "c = {c}");
            assert_eq!(e.sum_cu, Some(cu), "c = {c}");
            assert_eq!((e.min, e.max), (3u64.saturating_sub(c), 3_000_000 - c));
            assert_eq!(count(&runs), 7);
            let mean = sum as f64 / 7.0;
            let var = shifted
                .iter()
                .map(|&v| (v as f64 - mean).powi(2))
                .sum::<f64>()
                / 7.0;
            assert!((e.std_dev().unwrap() - var.sqrt()).abs() < 1e-9 * var.sqrt());
        }
    }

    #[test]
    fn quantiles_are_order_statistics() {
        let runs = from_sorted(&[1, 2, 2, 2, 9]);
        assert_eq!(runs, [(1, 1), (2, 3), (9, 1)]);
        assert_eq!(quantile(&runs, 0.2), 1);
        assert_eq!(quantile(&runs, 0.21), 2);
        assert_eq!(quantile(&runs, 0.8), 2);
        assert_eq!(quantile(&runs, 0.81), 9);
        assert_eq!(quantile(&[], 0.5), 0);
        assert_eq!(
            merge(&runs, &[(2, 1), (5, 2)]),
            [(1, 1), (2, 4), (5, 2), (9, 1)]
        );
    }
}
