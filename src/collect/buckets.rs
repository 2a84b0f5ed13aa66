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

    /// The buckets in use, ascending, each as its lowest value and its count: the
    /// table's sorted (no histogram made), or the histogram's walked.
    pub(crate) fn ascending(&self) -> Vec<(u64, u64)> {
        match self {
            Buckets::Sparse(s) => {
                let mut entries: Vec<Entry> = s.entries().collect();
                entries.sort_unstable_by_key(|e| e.0);
                entries
            }
            Buckets::Dense(h) => h
                .iter_recorded()
                .map(|v| {
                    (
                        h.lowest_equivalent(v.value_iterated_to()),
                        v.count_at_value(),
                    )
                })
                .collect(),
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
mod tests;
