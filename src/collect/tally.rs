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
    pub(crate) count: u64,
    /// Sum of the values.
    pub(crate) sum: u128,
    /// Sum of the squared values; `None` once it no longer fits (values near 2^52
    /// ticks in their millions), after which the spread comes from the histogram.
    pub(crate) sum_sq: Option<u128>,
    /// Smallest value (`u64::MAX` while empty).
    pub(crate) min: u64,
    /// Largest value (0 while empty).
    pub(crate) max: u64,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            hist: Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are valid"),
            count: 0,
            sum: 0,
            sum_sq: Some(0),
            min: u64::MAX,
            max: 0,
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
        self.count += 1;
        self.sum += u128::from(value);
        let square = u128::from(value) * u128::from(value);
        self.sum_sq = self.sum_sq.and_then(|s| s.checked_add(square));
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Adds every value of `other`.
    pub(crate) fn add(&mut self, other: &Tally) {
        if other.count == 0 {
            return;
        }
        self.hist
            .add(&other.hist)
            .expect("auto-resizing histograms of one precision always add");
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq = self
            .sum_sq
            .zip(other.sum_sq)
            .and_then(|(a, b)| a.checked_add(b));
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Bytes this tally holds on the heap (its histogram's counts).
    pub(crate) fn heap_bytes(&self) -> u64 {
        self.hist.distinct_values() as u64 * 8
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
        assert_eq!((t.count, t.min, t.max), (4, 1, 3_000_000));
        assert_eq!(t.sum, 3_002_053);
        assert_eq!(t.sum_sq, Some(25 + 1 + 9_000_000_000_000 + 2_047 * 2_047));
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
        assert_eq!((u.count, u.sum, u.min, u.max), (4, t.sum, 1, 3_000_000));
    }

    #[test]
    fn squares_that_overflow_are_given_up_not_wrapped() {
        let mut t = Tally {
            sum_sq: Some(u128::MAX - 1),
            ..Tally::default()
        };
        t.record(1 << 30);
        assert_eq!(t.sum_sq, None);
        t.record(1);
        assert_eq!(t.sum_sq, None);
    }
}
