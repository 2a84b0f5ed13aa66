//! A tally's bucket counts: a short sorted list while few buckets are in use, an
//! HdrHistogram once the list would take more memory than the histogram would.
//!
//! The buckets are HdrHistogram's own, at latte's precision
//! ([`SIGNIFICANT_DIGITS`]): the list keys a value's bucket by `lowest_equivalent(value)`
//! of a histogram of that precision, so turning the list into a histogram (one
//! `record_n` per bucket) puts every count in the bucket recording the values one by
//! one would have. The error bound (exact below 2,048 ticks, within 1/2,048 of the
//! value above) and every figure read from the histogram are the same whichever form a
//! tally is in. This file only stores counts; the bucketing is the crate's.
//!
//! Why a list first: the TSC deltas of one code path are few distinct values (the
//! counter steps by ~26 ticks on a virtualised EPYC), so a (thread, id) with a narrow
//! spread uses tens of buckets, 16 B each, where the histogram holds 2,048 counters of
//! 8 B (16 KiB) for values below 2,048 ticks and 8 KiB more per doubling above.
//!
//! The list grows by doubling its capacity, and only while the doubled list takes no
//! more bytes than the histogram for its largest value would: for values below 4,096
//! ticks it stops at 1,024 buckets (16 KiB, against 16 or 24 KiB), and the next new
//! bucket turns it into the histogram. A list is never larger than the histogram it
//! stands for.

use crate::config::SIGNIFICANT_DIGITS;
use hdrhistogram::Histogram;
use std::borrow::Cow;
use std::sync::LazyLock;

/// An empty histogram of latte's precision: the one that says which bucket a value
/// falls in (`lowest_equivalent`, `equivalent_range`), for every list.
static SHAPE: LazyLock<Histogram<u64>> = LazyLock::new(empty);

/// An empty auto-resizing histogram of latte's precision.
pub(crate) fn empty() -> Histogram<u64> {
    Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are a valid precision")
}

/// One bucket of a list: its key (`lowest_equivalent` of its values) and its count.
type Entry = (u64, u64);

/// Bytes one list entry takes.
const ENTRY_BYTES: u64 = size_of::<Entry>() as u64;

/// The smallest capacity a list grows to (what `Vec` itself starts with for 16-byte
/// items).
const MIN_CAPACITY: usize = 4;

/// A tally's counts per bucket, in whichever form is smaller.
#[derive(Clone, Debug)]
pub(crate) enum Buckets {
    /// Few buckets: a sorted list.
    Sparse(Sparse),
    /// Many: the histogram (boxed, so a tally in list form stays small).
    Dense(Box<Histogram<u64>>),
}

/// Counts of the buckets in use, ascending by key, and the bucket the previous value
/// fell in (quantised ticks repeat: most values land in it again).
#[derive(Clone, Debug, Default)]
pub(crate) struct Sparse {
    entries: Vec<Entry>,
    /// The previous value's bucket holds `low .. low + width`, counted at `entries[at]`;
    /// `width` 0 when there is none (nothing recorded since the list was made or
    /// changed shape).
    low: u64,
    width: u64,
    at: usize,
}

impl Default for Buckets {
    fn default() -> Buckets {
        Buckets::Sparse(Sparse::default())
    }
}

impl Buckets {
    /// Counts one value.
    #[inline]
    pub(crate) fn record(&mut self, value: u64) {
        match self {
            Buckets::Sparse(s) => {
                if value.wrapping_sub(s.low) < s.width {
                    s.entries[s.at].1 += 1;
                } else if !s.record_elsewhere(value) {
                    let mut dense = s.to_histogram();
                    record_dense(&mut dense, value);
                    *self = Buckets::Dense(Box::new(dense));
                }
            }
            Buckets::Dense(h) => record_dense(h, value),
        }
    }

    /// Adds every count of `other`. The list form is kept only while the merged list
    /// is no larger than the histogram would be.
    pub(crate) fn add(&mut self, other: &Buckets) {
        match (&mut *self, other) {
            (_, Buckets::Sparse(b)) if b.entries.is_empty() => {}
            (Buckets::Sparse(a), Buckets::Sparse(b)) => {
                let merged = merge(&a.entries, &b.entries);
                let max = merged.last().map_or(0, |e| e.0);
                *self = if fits(merged.len(), max) {
                    Buckets::Sparse(Sparse {
                        entries: merged,
                        ..Sparse::default()
                    })
                } else {
                    Buckets::Dense(Box::new(histogram_of(&merged)))
                };
            }
            (Buckets::Sparse(a), Buckets::Dense(b)) => {
                let mut dense = b.clone();
                record_entries(&mut dense, &a.entries);
                *self = Buckets::Dense(dense);
            }
            (Buckets::Dense(a), Buckets::Sparse(b)) => record_entries(a, &b.entries),
            (Buckets::Dense(a), Buckets::Dense(b)) => a
                .add(&**b)
                .expect("auto-resizing histograms of one precision always add"),
        }
    }

    /// Empties the counts, keeping the memory (and the form) for what comes next.
    pub(crate) fn clear(&mut self) {
        match self {
            Buckets::Sparse(s) => {
                s.entries.clear();
                s.width = 0;
            }
            Buckets::Dense(h) => h.reset(),
        }
    }

    /// The counts as an HdrHistogram: the one held, or one made from the list.
    pub(crate) fn histogram(&self) -> Cow<'_, Histogram<u64>> {
        match self {
            Buckets::Sparse(s) => Cow::Owned(s.to_histogram()),
            Buckets::Dense(h) => Cow::Borrowed(h),
        }
    }

    /// Bytes held on the heap: the list's capacity, or the histogram with its counters.
    pub(crate) fn heap_bytes(&self) -> u64 {
        match self {
            Buckets::Sparse(s) => s.entries.capacity() as u64 * ENTRY_BYTES,
            Buckets::Dense(h) => {
                h.distinct_values() as u64 * 8 + size_of::<Histogram<u64>>() as u64
            }
        }
    }

    /// Whether the counts are in list form.
    #[cfg(test)]
    pub(crate) fn is_sparse(&self) -> bool {
        matches!(self, Buckets::Sparse(_))
    }
}

impl Sparse {
    /// Counts `value`, which is not in the previous value's bucket; `false` (nothing
    /// counted) when a new bucket would make the list larger than the histogram.
    #[inline(never)]
    fn record_elsewhere(&mut self, value: u64) -> bool {
        let key = SHAPE.lowest_equivalent(value);
        let at = match self.entries.binary_search_by_key(&key, |e| e.0) {
            Ok(at) => {
                self.entries[at].1 += 1;
                at
            }
            Err(at) => {
                if self.entries.len() == self.entries.capacity() {
                    let grown = (2 * self.entries.capacity()).max(MIN_CAPACITY);
                    let max = self.entries.last().map_or(key, |e| e.0.max(key));
                    if !fits(grown, max) {
                        return false;
                    }
                    self.entries.reserve_exact(grown - self.entries.len());
                }
                self.entries.insert(at, (key, 1));
                at
            }
        };
        self.low = key;
        self.width = SHAPE.equivalent_range(value);
        self.at = at;
        true
    }

    /// The list as a histogram.
    fn to_histogram(&self) -> Histogram<u64> {
        histogram_of(&self.entries)
    }
}

/// Whether a list of `capacity` entries whose largest key is `max` takes no more bytes
/// than the histogram holding `max` would.
fn fits(capacity: usize, max: u64) -> bool {
    let bytes = capacity as u64 * ENTRY_BYTES;
    // The smallest histogram (values below 2,048 ticks) settles most cases without
    // making one for the comparison.
    bytes <= SHAPE.distinct_values() as u64 * 8 || bytes <= dense_bytes(max)
}

/// Bytes of the counters of a histogram of latte's precision whose largest value is
/// `max` (an auto-resizing one grows to exactly this).
fn dense_bytes(max: u64) -> u64 {
    let sized = Histogram::<u64>::new_with_max(max.max(2), SIGNIFICANT_DIGITS)
        .expect("values up to Sample::MAX_TICKS fit a histogram");
    sized.distinct_values() as u64 * 8
}

/// A histogram holding the list's counts.
fn histogram_of(entries: &[Entry]) -> Histogram<u64> {
    let mut h = empty();
    record_entries(&mut h, entries);
    h
}

/// Adds the list's counts to `h`.
fn record_entries(h: &mut Histogram<u64>, entries: &[Entry]) {
    for &(key, count) in entries {
        // Auto-resizing: keys are values latte recorded (at most `Sample::MAX_TICKS`,
        // far inside what it can track), so this cannot fail.
        h.record_n(key, count)
            .expect("an auto-resizing histogram holds every sample value");
    }
}

/// Counts one value in `h`.
#[inline]
fn record_dense(h: &mut Histogram<u64>, value: u64) {
    // `record` grows the histogram to fit (`saturating_record` would not: it clamps to
    // the current top). Values are at most `Sample::MAX_TICKS` (2^52), far inside what
    // an auto-resizing histogram can track, so it cannot fail; if it ever did, clamping
    // is the least wrong answer.
    if h.record(value).is_err() {
        h.saturating_record(value);
    }
}

/// Two ascending lists as one, counts of equal keys added.
fn merge(a: &[Entry], b: &[Entry]) -> Vec<Entry> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        if x.0 == y.0 {
            out.push((x.0, x.1 + y.1));
            (i, j) = (i + 1, j + 1);
        } else if x.0 < y.0 {
            out.push(x);
            i += 1;
        } else {
            out.push(y);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The oracle: every value recorded one by one into a histogram, as a tally did
    /// before it had a list form.
    fn reference(values: &[u64]) -> Histogram<u64> {
        let mut h = empty();
        values.iter().for_each(|&v| record_dense(&mut h, v));
        h
    }

    fn buckets_of(values: &[u64]) -> Buckets {
        let mut b = Buckets::default();
        values.iter().for_each(|&v| b.record(v));
        b
    }

    /// Same histogram as the oracle: same size, buckets, counts, extremes, quantiles.
    fn assert_same(b: &Buckets, want: &Histogram<u64>) {
        let got = b.histogram();
        assert!(*got == *want, "the histograms differ");
        assert_eq!(got.distinct_values(), want.distinct_values());
        assert_same_counts(b, want);
    }

    /// Same buckets, counts, extremes and quantiles as the oracle (a histogram cleared
    /// for reuse keeps the size it had grown to).
    fn assert_same_counts(b: &Buckets, want: &Histogram<u64>) {
        let got = b.histogram();
        let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        };
        assert_eq!(buckets(&got), buckets(want));
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                got.value_at_quantile(q),
                want.value_at_quantile(q),
                "q = {q}"
            );
        }
        assert_eq!(
            (got.len(), got.min(), got.max()),
            (want.len(), want.min(), want.max())
        );
    }

    /// A seeded splitmix64 stream: reproducible values without a `rand` dependency.
    fn values(seed: u64, n: usize, f: impl Fn(u64) -> u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                f(z ^ (z >> 31))
            })
            .collect()
    }

    #[test]
    fn list_and_histogram_agree_on_seeded_data() {
        let max_ticks = crate::collect::Sample::MAX_TICKS;
        let cases: [(&str, Vec<u64>); 5] = [
            // One code path's TSC deltas: ~2,600 ticks in steps of 26.
            ("narrow", values(1, 1_000, |r| 2_600 + 26 * (r % 40))),
            ("small", values(2, 5_000, |r| r % 2_048)),
            ("wide", values(3, 20_000, |r| r % 10_000_000)),
            ("huge", values(4, 3_000, |r| r % (max_ticks + 1))),
            ("zeros and one", vec![0, 0, 1, 0]),
        ];
        for (name, v) in &cases {
            let b = buckets_of(v);
            assert_same(&b, &reference(v));
            println!("{name}: {} B, list: {}", b.heap_bytes(), b.is_sparse());
        }
        // The narrow spread stays a list of its 40 buckets: 64 entries of 16 B.
        let narrow = buckets_of(&cases[0].1);
        assert!(narrow.is_sparse());
        assert_eq!(narrow.heap_bytes(), 64 * 16);
        // 5,000 values below 2,048 use more than 1,024 buckets: the histogram.
        assert!(!buckets_of(&cases[1].1).is_sparse());
    }

    proptest! {
        #[test]
        fn list_and_histogram_agree(
            v in prop_oneof![
                prop::collection::vec(0u64..3_000, 0..3_000),
                prop::collection::vec(2_000u64..1 << 20, 0..3_000),
                prop::collection::vec(0u64..=crate::collect::Sample::MAX_TICKS, 0..300),
            ]
        ) {
            assert_same(&buckets_of(&v), &reference(&v));
        }
    }

    #[test]
    fn the_list_turns_into_the_histogram_where_it_would_be_larger() {
        // Below 2,048 ticks the histogram takes 16 KiB: the list stops at 1,024 buckets.
        let below: Vec<u64> = (0..1_024).collect();
        let mut b = buckets_of(&below);
        assert!(b.is_sparse());
        assert_eq!(b.heap_bytes(), 16 * 1024);
        b.record(5); // a bucket already in the list
        assert!(b.is_sparse());
        b.record(2_000); // the 1,025th bucket
        assert!(!b.is_sparse());
        let mut all = below.clone();
        all.extend([5, 2_000]);
        assert_same(&b, &reference(&all));
        assert_eq!(
            b.heap_bytes(),
            16 * 1024 + size_of::<Histogram<u64>>() as u64
        );

        // Below 8,192 ticks the histogram takes 32 KiB: the list holds 2,048 buckets.
        let wider: Vec<u64> = (0..1_024)
            .map(|i| 4_096 + 4 * i)
            .chain((0..1_024).map(|i| 2_048 + 2 * i))
            .collect();
        let mut b = buckets_of(&wider);
        assert!(b.is_sparse());
        assert_eq!(b.heap_bytes(), 32 * 1024);
        b.record(7);
        assert!(!b.is_sparse());
        let mut all = wider.clone();
        all.push(7);
        assert_same(&b, &reference(&all));
    }

    #[test]
    fn lists_and_histograms_add_up_in_every_combination() {
        let few = values(5, 500, |r| 1_000 + 26 * (r % 30));
        let others = values(6, 500, |r| 1_300 + 26 * (r % 30));
        let many = values(7, 5_000, |r| r % 100_000);
        let joined = |a: &[u64], b: &[u64]| [a, b].concat();
        for (a, b) in [
            (&few, &others),
            (&few, &many),
            (&many, &few),
            (&many, &many),
        ] {
            let mut sum = buckets_of(a);
            sum.add(&buckets_of(b));
            assert_same(&sum, &reference(&joined(a, b)));
            // Adding nothing changes nothing.
            sum.add(&Buckets::default());
            assert_same(&sum, &reference(&joined(a, b)));
        }
        let mut lists = buckets_of(&few);
        lists.add(&buckets_of(&others));
        assert!(lists.is_sparse(), "two short lists stay a list");
        // Two lists of 800 buckets each below 2,048 ticks: 1,600 buckets, the histogram.
        let (low, high): (Vec<u64>, Vec<u64>) = ((0..800).collect(), (800..1_600).collect());
        let mut sum = buckets_of(&low);
        sum.add(&buckets_of(&high));
        assert!(!sum.is_sparse());
        assert_same(&sum, &reference(&joined(&low, &high)));
        // The cached bucket of a list is not stale after adding: counts go where they belong.
        let mut a = buckets_of(&[3_000, 3_000]);
        a.add(&buckets_of(&[10, 3_000]));
        a.record(10);
        a.record(3_001);
        assert_same(&a, &reference(&[3_000, 3_000, 10, 3_000, 10, 3_001]));
    }

    #[test]
    fn clearing_empties_and_keeps_the_form_and_memory() {
        let mut list = buckets_of(&[100, 200, 300]);
        let bytes = list.heap_bytes();
        list.clear();
        assert!(list.is_sparse());
        assert_eq!(list.heap_bytes(), bytes);
        assert_same(&list, &empty());
        // The bucket cached before clearing is not counted into.
        list.record(300);
        list.record(400);
        assert_same(&list, &reference(&[300, 400]));

        let many = values(8, 20_000, |r| r % 1_000_000);
        let mut dense = buckets_of(&many);
        assert!(!dense.is_sparse());
        let bytes = dense.heap_bytes();
        dense.clear();
        assert!(!dense.is_sparse());
        assert_eq!(dense.heap_bytes(), bytes);
        assert_eq!(dense.histogram().len(), 0);
        dense.record(42);
        assert_same_counts(&dense, &reference(&[42]));
    }
}
