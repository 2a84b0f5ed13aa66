//! What the whole run keeps of one sample kind of one (thread, id): counts per
//! HdrHistogram bucket of raw ticks (`buckets.rs`: a short list while few buckets are
//! in use, the histogram itself once that is smaller) plus exact count, sums of values,
//! squares and cubes, minimum and maximum.
//!
//! The buckets are those of a histogram of 3 significant digits: every value below
//! 2,048 ticks has a bucket of its own, and above that a bucket is at most 1/1,024 of
//! the values in it wide. A tally of a narrow spread (one code path's quantised TSC
//! deltas) holds a few hundred bytes; one of a wide spread holds the histogram, which
//! resizes itself to the largest value seen: 16 KiB below 2,048 ticks, about 150 KiB
//! for values up to 10^8, and never more than for
//! [`Sample::MAX_TICKS`](crate::collect::Sample::MAX_TICKS).

use super::buckets::Buckets;
use hdrhistogram::Histogram;
use std::borrow::Cow;

/// Every value of one kind: counts per histogram bucket plus exact moments.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    buckets: Buckets,
    pub(crate) exact: Exact,
}

impl Tally {
    /// Adds one value.
    #[inline]
    pub(crate) fn record(&mut self, value: u64) {
        self.buckets.record(value);
        self.exact.record(value);
    }

    /// Adds every value of `values` (the fold's path: a run of one ring's samples).
    #[inline]
    pub(crate) fn record_all(&mut self, values: &[u64]) {
        self.buckets.record_all(values.iter().copied());
        self.exact.record_all(values);
    }

    /// Adds every value of `other`.
    pub(crate) fn add(&mut self, other: &Tally) {
        if other.exact.count == 0 {
            return;
        }
        self.buckets.add(&other.buckets);
        self.exact = self.exact.plus(&other.exact);
    }

    /// Empties the tally, keeping its memory (the start of a new interval).
    pub(crate) fn clear(&mut self) {
        self.buckets.clear();
        self.exact = Exact::default();
    }

    /// The values as an HdrHistogram of raw ticks, for the analysis: the one held, or
    /// one made from the list of buckets (per report, never per sample).
    pub(crate) fn histogram(&self) -> Cow<'_, Histogram<u64>> {
        self.buckets.histogram()
    }

    /// The buckets in use, ascending: each one's lowest value and count.
    pub(crate) fn buckets(&self) -> Vec<(u64, u64)> {
        self.buckets.ascending()
    }

    /// Bytes this tally holds on the heap (its bucket list, or its histogram).
    pub(crate) fn heap_bytes(&self) -> u64 {
        self.buckets.heap_bytes()
    }
}

/// Exact count, sums and extremes of a set of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exact {
    pub(crate) count: u64,
    pub(crate) sum: u128,
    /// `None` when the squares no longer fit: the spread then comes from the runs.
    pub(crate) sum_sq: Option<u128>,
    /// `None` when the cubes no longer fit (values past 2^42 ticks, or many large
    /// ones): the skewness then comes from the runs.
    pub(crate) sum_cu: Option<u128>,
    pub(crate) min: u64,
    pub(crate) max: u64,
}

impl Default for Exact {
    fn default() -> Exact {
        Exact {
            count: 0,
            sum: 0,
            sum_sq: Some(0),
            sum_cu: Some(0),
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Exact {
    /// Adds one value.
    #[inline]
    pub(crate) fn record(&mut self, value: u64) {
        self.record_all(&[value]);
    }

    /// Adds every value of `values`, summing in locals (registers) and storing once.
    #[inline]
    pub(crate) fn record_all(&mut self, values: &[u64]) {
        // Most values are far below 2^38 ticks (a minute and more): then 4,096 of them
        // sum without overflow (squares below 2^88, cubes below 2^126 in all), and
        // the checks move to once per block. A block with a larger value is summed
        // again with a check per value.
        const SMALL: u64 = 1 << 38;
        const BLOCK: usize = 4096;
        for block in values.chunks(BLOCK) {
            let (mut s1, mut s2, mut s3) = (0u128, 0u128, 0u128);
            let (mut lo, mut hi) = (u64::MAX, 0);
            for &value in block {
                // Wrapping: the sums are used only when no value was large, and then
                // nothing wraps.
                let x = u128::from(value);
                let square = x * x;
                s1 += x;
                s2 = s2.wrapping_add(square);
                s3 = s3.wrapping_add(square.wrapping_mul(x));
                (lo, hi) = (lo.min(value), hi.max(value));
            }
            if hi < SMALL {
                self.add_sums(block.len() as u64, s1, Some(s2), Some(s3), (lo, hi));
            } else {
                block.iter().for_each(|&value| self.record_checked(value));
            }
        }
    }

    /// Adds `n` values with these sums and extremes.
    fn add_sums(&mut self, n: u64, s1: u128, s2: Option<u128>, s3: Option<u128>, ext: (u64, u64)) {
        self.count += n;
        self.sum += s1;
        self.sum_sq = self.sum_sq.zip(s2).and_then(|(a, b)| a.checked_add(b));
        self.sum_cu = self.sum_cu.zip(s3).and_then(|(a, b)| a.checked_add(b));
        self.min = self.min.min(ext.0);
        self.max = self.max.max(ext.1);
    }

    /// Adds one value of any size, giving up the sums that no longer fit.
    fn record_checked(&mut self, value: u64) {
        let x = u128::from(value);
        let square = x * x;
        self.add_sums(1, x, Some(square), square.checked_mul(x), (value, value));
    }

    /// Both sets together.
    pub(crate) fn plus(&self, other: &Exact) -> Exact {
        Exact {
            count: self.count + other.count,
            sum: self.sum + other.sum,
            sum_sq: self
                .sum_sq
                .zip(other.sum_sq)
                .and_then(|(a, b)| a.checked_add(b)),
            sum_cu: self
                .sum_cu
                .zip(other.sum_cu)
                .and_then(|(a, b)| a.checked_add(b)),
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The mean (0 for no values): the whole part of `sum / n` exactly, then the
    /// remainder's fraction, so equal values average to themselves and the mean stays
    /// within `[min, max]` (dividing the rounded sum does neither near 2^52).
    pub(crate) fn mean(&self) -> f64 {
        match u128::from(self.count) {
            0 => 0.0,
            n => {
                let (q, r) = (self.sum / n, self.sum % n);
                (q as f64 + r as f64 / n as f64).clamp(self.min as f64, self.max as f64)
            }
        }
    }

    /// The population standard deviation, exact up to the final rounding: with
    /// `sum = n*q + r`, `n * variance = sum_sq - n*q^2 - 2*q*r - r^2/n`, where
    /// everything but the last term is an integer.
    pub(crate) fn std_dev(&self) -> Option<f64> {
        let n = u128::from(self.count);
        let sum_sq = self.sum_sq?;
        if n == 0 {
            return Some(0.0);
        }
        let (q, r) = (self.sum / n, self.sum % n);
        let whole = q
            .checked_mul(q)
            .and_then(|qq| qq.checked_mul(n))
            .and_then(|nqq| nqq.checked_add(2 * q * r))
            .and_then(|t| sum_sq.checked_sub(t))?;
        let m2 = whole as f64 - (r as f64 * r as f64) / n as f64;
        Some((m2.max(0.0) / n as f64).sqrt())
    }

    /// The population skewness `m3 / m2^1.5` (0 when there is no spread), exact up
    /// to the final rounding, or `None` when the sums no longer fit.
    ///
    /// With `sum = n*q + r` and `d = x - q`, the sums of `d^2` and `d^3` are
    /// integers (`S2 - n*q^2 - 2*q*r` and `S3 - 3*q*S2 + 2*n*q^3 + 3*q^2*r`); the
    /// moments about the mean `q + r/n` follow from them with one small fractional
    /// correction each, so a spread of a few ticks under a large common value keeps
    /// its shape (three values in one histogram bucket included).
    pub(crate) fn skew(&self) -> Option<f64> {
        let n = u128::from(self.count);
        let (s2, s3) = (self.sum_sq?, self.sum_cu?);
        if n == 0 {
            return Some(0.0);
        }
        let (q, r) = (self.sum / n, self.sum % n);
        let qq = q.checked_mul(q)?;
        let d2 = s2.checked_sub(qq.checked_mul(n)?.checked_add(2 * q * r)?)?;
        let plus = s3
            .checked_add(qq.checked_mul(q)?.checked_mul(2 * n)?)?
            .checked_add(qq.checked_mul(3 * r)?)?;
        let minus = s2.checked_mul(3 * q)?;
        let d3 = if plus >= minus {
            (plus - minus) as f64
        } else {
            -((minus - plus) as f64)
        };
        let (n, r) = (n as f64, r as f64);
        let f = r / n;
        let m2 = (d2 as f64 - r * r / n) / n;
        let m3 = (d3 - 3.0 * f * d2 as f64 + 2.0 * r * r * r / (n * n)) / n;
        Some(skewness(m2, m3))
    }
}

/// The skewness from the second and third central moments (0 without spread).
/// `m2 * m2.sqrt()`, not `m2.powf(1.5)`: `sqrt` and `*` are exact to the last bit on
/// every platform, where `pow` is the C library's (mingw-w64's differs from glibc's by
/// one ulp for some arguments, and a report's skew then differs in its last digit).
pub(crate) fn skewness(m2: f64, m3: f64) -> f64 {
    if m2 > 0.0 { m3 / (m2 * m2.sqrt()) } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_fields_and_histogram_agree() {
        let mut t = Tally::default();
        for v in [5, 1, 3_000_000, 2_047] {
            t.record(v);
        }
        let e = t.exact;
        assert_eq!((e.count, e.min, e.max), (4, 1, 3_000_000));
        assert_eq!(e.sum, 3_002_053);
        assert_eq!(e.sum_sq, Some(25 + 1 + 9_000_000_000_000 + 2_047 * 2_047));
        let hist = t.histogram();
        assert_eq!(hist.len(), 4);
        // The histogram grew to hold the largest value in a bucket of its own.
        assert_eq!(hist.count_at(3_000_000), 1);
        assert!(hist.equivalent(hist.max(), 3_000_000));
        // Below 2,048 every value has its own bucket.
        assert_eq!(hist.count_at(2_047), 1);
        assert_eq!(hist.count_at(2_046), 0);
        let mut u = Tally::default();
        u.add(&t);
        u.add(&Tally::default());
        let (a, b) = (u.exact, t.exact);
        assert_eq!((a.count, a.sum, a.min, a.max), (4, b.sum, 1, 3_000_000));
    }

    /// The skewness of `values` by its definition, in f64 about the exact mean.
    fn skew_of(values: &[u64]) -> f64 {
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
        let m = |k: i32| {
            values
                .iter()
                .map(|&v| (v as f64 - mean).powi(k))
                .sum::<f64>()
                / n
        };
        if m(2) > 0.0 {
            m(3) / m(2).powf(1.5)
        } else {
            0.0
        }
    }

    #[test]
    fn skewness_is_exact_even_inside_one_bucket() {
        let mut e = Exact::default();
        [3_000, 3_001, 3_001].iter().for_each(|&v| e.record(v));
        // By the definition: -2/27 / (2/9)^1.5 = -1/sqrt(2).
        assert!((e.skew().unwrap() + std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        for values in [
            vec![1u64, 2, 3, 10],
            vec![5; 7],
            vec![1 << 40, (1 << 40) + 3, (1 << 40) + 3, (1 << 40) + 4],
            (0..1_000u64).map(|i| 100 + i * i % 977).collect(),
            vec![0, 0, 0, 26, 26_000_000],
        ] {
            let mut e = Exact::default();
            values.iter().for_each(|&v| e.record(v));
            let (got, want) = (e.skew().unwrap(), skew_of(&values));
            assert!(
                (got - want).abs() < 1e-9 * want.abs().max(1.0),
                "{values:?}: {got} vs {want}"
            );
        }
        assert_eq!(Exact::default().skew(), Some(0.0));
    }

    /// Adds one value as a tally always did: every sum checked at every value.
    fn record_one_by_one(e: &mut Exact, value: u64) {
        let x = u128::from(value);
        e.count += 1;
        e.sum += x;
        e.sum_sq = e.sum_sq.and_then(|s| s.checked_add(x * x));
        let cube = (x * x).checked_mul(x);
        e.sum_cu = e.sum_cu.zip(cube).and_then(|(s, c)| s.checked_add(c));
        e.min = e.min.min(value);
        e.max = e.max.max(value);
    }

    #[test]
    fn sums_taken_in_blocks_are_the_sums_taken_one_by_one() {
        let max = crate::collect::Sample::MAX_TICKS;
        let mut x = 3u64;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            x >> 11
        };
        let cases: Vec<Vec<u64>> = vec![
            (0..10_000).map(|_| 2_600 + next() % 1_000).collect(),
            // A large value in the second block only: that block is summed with checks.
            (0..9_000)
                .map(|i| if i == 5_000 { 1 << 40 } else { next() % 5_000 })
                .collect(),
            // Cubes past 2^128 (and squares, eventually): given up, in both ways.
            (0..5_000).map(|_| next() % max).collect(),
            vec![max; 300],
            Vec::new(),
        ];
        for values in cases {
            let mut want = Exact::default();
            values.iter().for_each(|&v| record_one_by_one(&mut want, v));
            let mut got = Exact::default();
            got.record_all(&values);
            assert_eq!(got, want, "{} values", values.len());
            let mut tally = Tally::default();
            tally.record_all(&values);
            assert_eq!(tally.exact, want);
            assert_eq!(tally.histogram().len(), values.len() as u64);
        }
    }

    #[test]
    fn cubes_that_overflow_are_given_up_not_wrapped() {
        let mut e = Exact::default();
        e.record(1 << 43);
        assert_eq!(e.sum_cu, None);
        assert_eq!(e.skew(), None);
        assert!(e.std_dev().is_some());
    }

    #[test]
    fn squares_that_overflow_are_given_up_not_wrapped() {
        let mut t = Exact {
            sum_sq: Some(u128::MAX - 1),
            ..Exact::default()
        };
        t.record(1 << 30);
        assert_eq!(t.sum_sq, None);
        t.record(1);
        assert_eq!(t.sum_sq, None);
        assert_eq!(t.std_dev(), None);
    }
}
