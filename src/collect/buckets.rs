//! A tally's bucket counts: a small table while few buckets are in use, an
//! HdrHistogram once the table would take more memory than the histogram would.
//!
//! The buckets are HdrHistogram's own, at latte's precision
//! ([`SIGNIFICANT_DIGITS`]): the table keys a value's bucket by `lowest_equivalent(value)`
//! of a histogram of that precision, so turning the table into a histogram (one
//! `record_n` per bucket) puts every count in the bucket recording the values one by
//! one would have. The error bound (exact below 2,048 ticks, within 1/2,048 of the
//! value above) and every figure read from the histogram are the same whichever form a
//! tally is in. This file only stores counts; the bucketing is the crate's.
//!
//! Why a table first: the TSC deltas of one code path are few distinct values (the
//! counter steps by ~26 ticks on a virtualised EPYC), so a (thread, id) with a narrow
//! spread uses tens of buckets, 16 B each, where the histogram holds 2,048 counters of
//! 8 B (16 KiB) for values below 2,048 ticks and 8 KiB more per doubling above.
//!
//! The table is open addressing (linear probing, at most 3/4 full, a power of two of
//! slots), not a sorted list: it takes the same memory as a sorted `Vec` grown by
//! doubling, and finding a bucket costs one hash and usually one slot where a binary
//! search costs a dependent load per halving. Measured on a 2-vCPU EPYC guest, per
//! value recorded into one of 1,000 tallies of ~20 buckets: 2.0 ns for the table, 5.0
//! ns for the histogram (23 ns while each new histogram's 16 KiB is first touched); a
//! sorted list took 11 ns over 40 buckets and 16 ns over 1,024. Checking the previous
//! value's bucket first (quantised ticks do repeat) cost more than it saved: where hits
//! and misses alternate, the branch mispredicts (6 ns per value instead of 2).
//!
//! The table doubles only while the doubled table takes no more bytes than the
//! histogram for its largest value would: for values below 4,096 ticks it stops at
//! 1,024 slots (16 KiB, 768 buckets, against a 16 or 24 KiB histogram), and the next
//! new bucket turns it into the histogram. A table is never larger than the histogram
//! it stands for. Counts are `u64` in both forms: reaching 2^64 would take centuries
//! of recording.

use crate::config::SIGNIFICANT_DIGITS;
use hdrhistogram::Histogram;
use std::borrow::Cow;
use std::sync::LazyLock;

/// An empty histogram of latte's precision: the one that says which bucket a value
/// falls in (`lowest_equivalent`), for every table.
static SHAPE: LazyLock<Histogram<u64>> = LazyLock::new(empty);

/// An empty auto-resizing histogram of latte's precision.
pub(crate) fn empty() -> Histogram<u64> {
    Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are a valid precision")
}

/// One slot of a table: a bucket's key (`lowest_equivalent` of its values) and its
/// count; a count of 0 marks a free slot.
type Entry = (u64, u64);

/// Bytes one slot takes.
const ENTRY_BYTES: u64 = size_of::<Entry>() as u64;

/// The fewest slots a table has once it holds anything.
const MIN_SLOTS: usize = 4;

/// A tally's counts per bucket, in whichever form is smaller.
#[derive(Clone, Debug)]
pub(crate) enum Buckets {
    /// Few buckets: a table.
    Sparse(Sparse),
    /// Many: the histogram (boxed, so a tally in table form stays small).
    Dense(Box<Histogram<u64>>),
}

/// Counts of the buckets in use.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sparse {
    /// A power of two of slots (or none), at most 3/4 in use.
    slots: Box<[Entry]>,
    /// Slots in use.
    len: usize,
    /// The largest key in use (0 for none).
    max: u64,
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
        self.record_all(std::iter::once(value));
    }

    /// Counts every value of `values`, deciding the form once, not per value.
    #[inline]
    pub(crate) fn record_all(&mut self, mut values: impl Iterator<Item = u64>) {
        if let Buckets::Sparse(s) = self {
            let Some(first) = s.record_until_full(&mut values) else {
                return;
            };
            let mut dense = s.to_histogram();
            record_dense(&mut dense, first);
            *self = Buckets::Dense(Box::new(dense));
        }
        if let Buckets::Dense(h) = self {
            values.for_each(|value| record_dense(h, value));
        }
    }

    /// Adds every count of `other`. The table form is kept only while the table
    /// holding both stays no larger than the histogram would be.
    pub(crate) fn add(&mut self, other: &Buckets) {
        match (&mut *self, other) {
            (_, Buckets::Sparse(b)) if b.len == 0 => {}
            (Buckets::Sparse(a), Buckets::Sparse(b)) => {
                let mut rest = b.entries();
                while let Some((key, count)) = rest.next() {
                    if !a.add_n(key, count) {
                        // The table would outgrow the histogram: count everything there.
                        let mut dense = a.to_histogram();
                        record_entries(&mut dense, std::iter::once((key, count)).chain(rest));
                        *self = Buckets::Dense(Box::new(dense));
                        return;
                    }
                }
            }
            (Buckets::Sparse(a), Buckets::Dense(b)) => {
                let mut dense = b.clone();
                record_entries(&mut dense, a.entries());
                *self = Buckets::Dense(dense);
            }
            (Buckets::Dense(a), Buckets::Sparse(b)) => record_entries(a, b.entries()),
            (Buckets::Dense(a), Buckets::Dense(b)) => a
                .add(&**b)
                .expect("auto-resizing histograms of one precision always add"),
        }
    }

    /// Empties the counts, keeping the memory (and the form) for what comes next.
    pub(crate) fn clear(&mut self) {
        match self {
            Buckets::Sparse(s) => {
                s.slots.fill((0, 0));
                (s.len, s.max) = (0, 0);
            }
            Buckets::Dense(h) => h.reset(),
        }
    }

    /// The counts as an HdrHistogram: the one held, or one made from the table.
    pub(crate) fn histogram(&self) -> Cow<'_, Histogram<u64>> {
        match self {
            Buckets::Sparse(s) => Cow::Owned(s.to_histogram()),
            Buckets::Dense(h) => Cow::Borrowed(h),
        }
    }

    /// Bytes held on the heap: the table's slots, or the histogram with its counters.
    pub(crate) fn heap_bytes(&self) -> u64 {
        match self {
            Buckets::Sparse(s) => s.slots.len() as u64 * ENTRY_BYTES,
            Buckets::Dense(h) => {
                h.distinct_values() as u64 * 8 + size_of::<Histogram<u64>>() as u64
            }
        }
    }

    /// Whether the counts are in table form.
    #[cfg(test)]
    pub(crate) fn is_sparse(&self) -> bool {
        matches!(self, Buckets::Sparse(_))
    }
}

impl Sparse {
    /// Counts values of `values` until one would need a new bucket the table cannot
    /// afford: that one is returned, uncounted (the rest are left in `values`).
    #[inline]
    fn record_until_full(&mut self, values: &mut impl Iterator<Item = u64>) -> Option<u64> {
        let shape: &Histogram<u64> = &SHAPE;
        for value in values {
            let key = shape.lowest_equivalent(value);
            match self.find(key) {
                Some(at) if self.slots[at].1 > 0 => self.slots[at].1 += 1,
                _ if self.add_n(key, 1) => {}
                _ => return Some(value),
            }
        }
        None
    }

    /// Adds `count` to bucket `key`; `false` (nothing added) when a new bucket would
    /// make the table larger than the histogram.
    fn add_n(&mut self, key: u64, count: u64) -> bool {
        let Some(at) = self.slot_for(key) else {
            return false;
        };
        self.slots[at].1 += count;
        true
    }

    /// The slot of bucket `key`, taken (with a count of 0) if the bucket is new,
    /// after doubling the table if it is 3/4 full; `None` when the doubled table
    /// would be larger than the histogram.
    fn slot_for(&mut self, key: u64) -> Option<usize> {
        if let Some(at) = self.find(key).filter(|&at| self.slots[at].1 > 0) {
            return Some(at);
        }
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            let grown = (2 * self.slots.len()).max(MIN_SLOTS);
            if !fits(grown, self.max.max(key)) {
                return None;
            }
            self.rehash(grown);
        }
        let at = self
            .find(key)
            .expect("a table under 3/4 full has a free slot");
        self.slots[at].0 = key;
        self.len += 1;
        self.max = self.max.max(key);
        Some(at)
    }

    /// The slot holding `key`, or the free slot where it would go (`None` for no
    /// slots).
    #[inline]
    fn find(&self, key: u64) -> Option<usize> {
        let mask = self.slots.len().checked_sub(1)?;
        // Fibonacci hashing: the product's bits from 32 up spread keys that step evenly.
        let mut at = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
        loop {
            let (k, count) = self.slots[at];
            if count == 0 || k == key {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// Moves the buckets into a table of `slots` slots.
    fn rehash(&mut self, slots: usize) {
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); slots].into_boxed_slice());
        for &(key, count) in old.iter().filter(|e| e.1 > 0) {
            let at = self
                .find(key)
                .expect("the new table has room for every bucket");
            self.slots[at] = (key, count);
        }
    }

    /// The buckets in use, in no order.
    fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        self.slots.iter().copied().filter(|e| e.1 > 0)
    }

    /// The table as a histogram.
    fn to_histogram(&self) -> Histogram<u64> {
        histogram_of(self.entries())
    }
}

/// Whether a table of `slots` slots whose largest key is `max` takes no more bytes
/// than the histogram holding `max` would.
fn fits(slots: usize, max: u64) -> bool {
    let bytes = slots as u64 * ENTRY_BYTES;
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

/// A histogram holding the buckets' counts.
fn histogram_of(entries: impl Iterator<Item = Entry>) -> Histogram<u64> {
    let mut h = empty();
    record_entries(&mut h, entries);
    h
}

/// Adds the buckets' counts to `h`.
fn record_entries(h: &mut Histogram<u64>, entries: impl Iterator<Item = Entry>) {
    for (key, count) in entries {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The oracle: every value recorded one by one into a histogram, as a tally did
    /// before it had a table form.
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
    fn table_and_histogram_agree_on_seeded_data() {
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
            println!("{name}: {} B, table: {}", b.heap_bytes(), b.is_sparse());
        }
        // The narrow spread stays a table of its 40 buckets: 64 slots of 16 B.
        let narrow = buckets_of(&cases[0].1);
        assert!(narrow.is_sparse());
        assert_eq!(narrow.heap_bytes(), 64 * 16);
        // 5,000 values below 2,048 use more than 768 buckets: the histogram.
        assert!(!buckets_of(&cases[1].1).is_sparse());
    }

    proptest! {
        #[test]
        fn table_and_histogram_agree(
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
    fn the_table_turns_into_the_histogram_where_it_would_be_larger() {
        // Below 2,048 ticks the histogram takes 16 KiB: the table stops at 1,024 slots,
        // 768 buckets.
        let below: Vec<u64> = (0..768).collect();
        let mut b = buckets_of(&below);
        assert!(b.is_sparse());
        assert_eq!(b.heap_bytes(), 16 * 1024);
        b.record(5); // a bucket already in the table
        assert!(b.is_sparse());
        b.record(2_000); // the 769th bucket
        assert!(!b.is_sparse());
        let mut all = below.clone();
        all.extend([5, 2_000]);
        assert_same(&b, &reference(&all));
        assert_eq!(
            b.heap_bytes(),
            16 * 1024 + size_of::<Histogram<u64>>() as u64
        );

        // Below 8,192 ticks the histogram takes 32 KiB: the table holds 1,536 buckets.
        let wider: Vec<u64> = (0..768)
            .map(|i| 4_096 + 4 * i)
            .chain((0..768).map(|i| 2_048 + 2 * i))
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
    fn tables_and_histograms_add_up_in_every_combination() {
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
        let mut tables = buckets_of(&few);
        tables.add(&buckets_of(&others));
        assert!(tables.is_sparse(), "two small tables stay a table");
        // Two tables of 500 buckets each below 2,048 ticks: 1,000 buckets, the
        // histogram (the sum outgrows the table partway).
        let (low, high): (Vec<u64>, Vec<u64>) = ((0..500).collect(), (500..1_000).collect());
        let (mut sum, other) = (buckets_of(&low), buckets_of(&high));
        assert!(sum.is_sparse() && other.is_sparse());
        sum.add(&other);
        assert!(!sum.is_sparse());
        assert_same(&sum, &reference(&joined(&low, &high)));
        // The cached bucket of a table is not stale after adding: counts go where they
        // belong.
        let mut a = buckets_of(&[3_000, 3_000]);
        a.add(&buckets_of(&[10, 3_000]));
        a.record(10);
        a.record(3_001);
        assert_same(&a, &reference(&[3_000, 3_000, 10, 3_000, 10, 3_001]));
    }

    #[test]
    fn clearing_empties_and_keeps_the_form_and_memory() {
        let mut table = buckets_of(&[100, 200, 300]);
        let bytes = table.heap_bytes();
        table.clear();
        assert!(table.is_sparse());
        assert_eq!(table.heap_bytes(), bytes);
        assert_same(&table, &empty());
        // The bucket cached before clearing is not counted into.
        table.record(300);
        table.record(400);
        assert_same(&table, &reference(&[300, 400]));

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
