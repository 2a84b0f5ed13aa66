//! What the whole run keeps of one sample kind of one (thread, id): an HdrHistogram
//! of raw ticks plus exact count, sums, minimum and maximum.
//!
//! The histogram keeps 3 significant digits: every value below 2,048 ticks has a
//! bucket of its own, and above that a bucket is at most 1/1,024 of the values in it
//! wide. It resizes itself to the largest value seen, so it costs memory for the range
//! a component actually spans (about 150 KiB for values up to 10^8 ticks), and never
//! more than for [`Sample::MAX_TICKS`](crate::collect::Sample::MAX_TICKS).

use hdrhistogram::Histogram;

/// Significant decimal digits the histograms keep.
pub(crate) const SIGNIFICANT_DIGITS: u8 = 3;

/// Every value of one kind: histogram plus exact moments.
#[derive(Clone, Debug)]
pub(crate) struct Tally {
    pub(crate) hist: Histogram<u64>,
    pub(crate) exact: Exact,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            hist: Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are valid"),
            exact: Exact::default(),
        }
    }
}

impl Tally {
    /// Adds one value.
    #[inline]
    pub(crate) fn record(&mut self, value: u64) {
        // `record` grows the histogram to fit (`saturating_record` would not: it
        // clamps to the current top). Values are at most `Sample::MAX_TICKS` (2^52),
        // far inside what an auto-resizing histogram can track, so it cannot fail;
        // if it ever did, clamping is the least wrong answer.
        if self.hist.record(value).is_err() {
            self.hist.saturating_record(value);
        }
        self.exact.record(value);
    }

    /// Adds every value of `other`.
    pub(crate) fn add(&mut self, other: &Tally) {
        if other.exact.count == 0 {
            return;
        }
        self.hist
            .add(&other.hist)
            .expect("auto-resizing histograms of one precision always add");
        self.exact = self.exact.plus(&other.exact);
    }

    /// Bytes this tally holds on the heap (its histogram's counts).
    pub(crate) fn heap_bytes(&self) -> u64 {
        self.hist.distinct_values() as u64 * 8
    }
}

/// Exact count, sums and extremes of a set of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exact {
    pub(crate) count: u64,
    pub(crate) sum: u128,
    /// `None` when the squares no longer fit: the spread then comes from the runs.
    pub(crate) sum_sq: Option<u128>,
    pub(crate) min: u64,
    pub(crate) max: u64,
}

impl Default for Exact {
    fn default() -> Exact {
        Exact {
            count: 0,
            sum: 0,
            sum_sq: Some(0),
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Exact {
    /// Adds one value.
    #[inline]
    pub(crate) fn record(&mut self, value: u64) {
        self.count += 1;
        self.sum += u128::from(value);
        let square = u128::from(value) * u128::from(value);
        self.sum_sq = self.sum_sq.and_then(|s| s.checked_add(square));
        self.min = self.min.min(value);
        self.max = self.max.max(value);
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
        assert_eq!(t.hist.len(), 4);
        // The histogram grew to hold the largest value in a bucket of its own.
        assert_eq!(t.hist.count_at(3_000_000), 1);
        assert!(t.hist.equivalent(t.hist.max(), 3_000_000));
        // Below 2,048 every value has its own bucket.
        assert_eq!(t.hist.count_at(2_047), 1);
        assert_eq!(t.hist.count_at(2_046), 0);
        let mut u = Tally::default();
        u.add(&t);
        u.add(&Tally::default());
        let (a, b) = (u.exact, t.exact);
        assert_eq!((a.count, a.sum, a.min, a.max), (4, b.sum, 1, 3_000_000));
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
