//! A distribution as the analysis sees it: ascending runs of `(value, count)`, plus
//! what is known exactly (count, sums, extremes).
//!
//! Runs come from a whole-run histogram (one per bucket, at the bucket's middle) or
//! from a sorted sample set (one per distinct value, exact). Either way, quantiles
//! are order statistics: the `q`-quantile of `n` values is the value of rank
//! `ceil(q * n)` (1-based), the smallest value with at least `q * n` values at or
//! below it — HdrHistogram's definition. The rule, the runs of a histogram and the
//! histogram a report row carries live in `report::histogram`, which decodes it too.

use crate::collect::{Exact, SampleKind, Tally};
pub(crate) use crate::report::histogram::{Runs, bucketed, count, hist_runs, quantile, rank};

/// One kind's values with `overhead` ticks taken off each (saturating at 0).
pub(crate) fn from_tally(tally: &Tally, overhead: u64) -> (Runs, Exact) {
    let raw = bucketed(&tally.buckets(), tally.exact.min, tally.exact.max);
    let exact = shifted_exact(tally, &raw, overhead);
    (shifted(raw, overhead), exact)
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

    proptest::proptest! {
        /// Bucketing values without a histogram gives the runs a histogram holding them
        /// gives, clamped the same way; so does the collector's table, sorted.
        #[test]
        fn bucketing_without_a_histogram_reads_as_the_histogram(
            mut values in proptest::collection::vec((0u64..1 << 40, 1u64..5), 0..200),
            spread in 0u32..40,
        ) {
            for v in &mut values {
                v.0 >>= spread;
            }
            values.sort_unstable();
            let (min, max) = (
                values.first().map_or(0, |v| v.0),
                values.last().map_or(0, |v| v.0),
            );
            let want = hist_runs(&crate::report::histogram::to_histogram(&values), min, max);
            proptest::prop_assert_eq!(bucketed(&values, min, max), want.clone());
            let mut tally = Tally::default();
            for &(v, k) in &values {
                (0..k).for_each(|_| tally.record(v));
            }
            proptest::prop_assert_eq!(bucketed(&tally.buckets(), min, max), want);
        }
    }
}
