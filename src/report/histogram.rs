//! A row's values and the one way latte reads quantiles: every value of a component in
//! latte's buckets of counter ticks ([`Distribution`], held by [`Row::distribution`](super::Row::distribution)),
//! each bucket standing for its middle, and the `q`-quantile of `n` values as the
//! value of rank `ceil(q * n)` ([`rank`]).
//!
//! The analysis puts a row's values into a distribution and reads the row's quantiles
//! from the same buckets; JSON carries the distribution as an HdrHistogram (V2
//! deflate, base64), encoded and decoded only at that edge, so a [`Distribution`]'s
//! quantiles are the row's own quantile fields, exactly, whoever reads the JSON.

use super::Unit;
use crate::config::SIGNIFICANT_DIGITS;
use crate::packed::{pack, unpack};
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// Ascending `(value, count)` runs of tick values.
pub(crate) type Runs = Vec<(u64, u64)>;

/// The 1-based rank of the `q`-quantile among `n` values: `ceil(q * n)`, at least 1.
/// A product that lands a rounding error above a whole number counts as that number
/// (`0.07 * 100` is 7, not 8). `q` is clamped to [0, 1]; NaN counts as 0. Every
/// quantile latte reports uses it, and so does [`Distribution::quantile`].
///
/// ```
/// use latte::report::rank;
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

/// How many values the runs hold.
pub(crate) fn count(runs: &[(u64, u64)]) -> u64 {
    runs.iter().map(|(_, k)| k).sum()
}

/// The `q`-quantile of the runs: the value of rank [`rank`]`(q, n)`; 0 for no values.
pub(crate) fn quantile(runs: &[(u64, u64)], q: f64) -> u64 {
    at_rank(runs, rank(q, count(runs)))
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

/// Ascending values put into latte's buckets, as runs: each bucket at its middle
/// pulled inside `[min, max]`, exactly as [`hist_runs`] reads a histogram holding
/// them, without making one (a bucket of width 1 stands for its value).
pub(crate) fn bucketed(values: &[(u64, u64)], min: u64, max: u64) -> Runs {
    let shape: &Histogram<u64> = &SHAPE;
    let mut runs: Runs = Vec::with_capacity(values.len());
    let mut last: Option<u64> = None;
    for &(value, count) in values.iter().filter(|(_, k)| *k > 0) {
        let low = shape.lowest_equivalent(value);
        if last == Some(low) {
            if let Some(run) = runs.last_mut() {
                run.1 += count;
            }
            continue;
        }
        last = Some(low);
        let middle = if shape.highest_equivalent(low) == low {
            low
        } else {
            shape.median_equivalent(low)
        };
        runs.push((middle.clamp(min, max), count));
    }
    runs
}

/// An empty histogram of latte's precision: which bucket a value falls in.
static SHAPE: LazyLock<Histogram<u64>> = LazyLock::new(|| to_histogram(&[]));

/// A histogram of the runs, with latte's precision.
pub(crate) fn to_histogram(runs: &[(u64, u64)]) -> Histogram<u64> {
    let mut hist =
        Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are a valid precision");
    for &(value, count) in runs {
        // Auto-resizing: values up to `Sample::MAX_TICKS` always fit.
        let _ = hist.record_n(value, count);
    }
    hist
}

/// One counter tick in `unit`: 1 for cycles, `1 / ticks_per_ns` for nanoseconds (a
/// report's durations are its ticks times this).
pub(crate) fn per_tick(unit: Unit, ticks_per_ns: f64) -> f64 {
    match unit {
        Unit::Cycles => 1.0,
        Unit::Time => 1.0 / ticks_per_ns,
    }
}

/// A histogram of the runs, with latte's precision, encoded as JSON carries it (V2
/// deflate, base64): the bytes a histogram that recorded the values themselves has.
/// Its header names a highest trackable value, which auto-resizing sets to the top of
/// the range of powers of two holding the largest value (2 below 2,048, where it never
/// resizes): the same for the bucket's lowest value as for any value in it.
fn encode(runs: impl Iterator<Item = (u64, u64)> + Clone) -> String {
    let highest = match runs.clone().last() {
        Some((max, _)) if max >= 2_048 => u64::MAX >> (63 - max.ilog2()),
        _ => 2,
    };
    let mut hist = Histogram::<u64>::new_with_bounds(1, highest, SIGNIFICANT_DIGITS)
        .expect("1 to at least 2 with 3 significant digits is a valid range");
    hist.auto(true);
    for (value, count) in runs {
        // Auto-resizing: values up to `Sample::MAX_TICKS` always fit.
        let _ = hist.record_n(value, count);
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&hist, &mut bytes)
        .expect("a histogram serialises into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The values a row (or a block of time) holds, in the report's unit: latte's
/// histogram of counter ticks (3 significant digits: each bucket within 1/2,048 of
/// its values), kept sparse (the non-empty buckets, packed as varints), and quantiles
/// read as
/// the report reads them ([`rank`]; each bucket standing for its middle, pulled inside
/// the row's exact extremes).
///
/// It is what [`Row::distribution`](super::Row::distribution) holds; JSON carries it as an HdrHistogram (V2
/// deflate, base64), encoded and decoded only there. Its memory: 2 to 4 bytes per
/// non-empty bucket and 48 bytes more (`docs/report-format.md`, "Memory").
///
/// ```
/// use latte::report::Distribution;
/// let d = Distribution::from_ticks(&[(100, 9), (5_000, 1)]);
/// assert_eq!((d.len(), d.quantile(0.5), d.quantile(1.0)), (10, 100.0, 5_000.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    /// Each non-empty bucket's lowest tick value and count, ascending, packed.
    packed: Box<[u8]>,
    count: u64,
    per_tick: f64,
    /// The row's exact extremes, in the report's unit, where they clamp the extreme
    /// buckets' middles; else infinite.
    clamp: (f64, f64),
}

impl Default for Distribution {
    fn default() -> Distribution {
        Distribution {
            packed: Box::default(),
            count: 0,
            per_tick: 1.0,
            clamp: (f64::NEG_INFINITY, f64::INFINITY),
        }
    }
}

/// One non-empty bucket of a [`Distribution`], in the report's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    /// The lowest value the bucket covers.
    pub low: f64,
    /// Where the bucket ends: its highest value plus one tick.
    pub high: f64,
    /// The value the bucket stands for in quantiles: its middle, within the row's
    /// exact minimum and maximum.
    pub value: f64,
    /// How many values it holds.
    pub count: u64,
}

/// A bucket's lowest and highest tick value and the middle it stands for, from its
/// lowest value.
fn bucket_of(low: u64) -> (u64, u64, u64) {
    let high = SHAPE.highest_equivalent(low);
    let middle = if high == low {
        low
    } else {
        SHAPE.median_equivalent(low)
    };
    (low, high, middle)
}

impl Distribution {
    /// `values`, counter ticks each with how many times it occurred (in any order),
    /// put into latte's buckets, at one tick per unit (cycles) and pulled inside their
    /// exact extremes: what [`Row::with_ticks`](super::Row::with_ticks) holds.
    ///
    /// ```
    /// use latte::report::Distribution;
    /// let d = Distribution::from_ticks(&[(5_003, 10), (9_000, 10)]);
    /// assert_eq!((d.quantile(0.0), d.quantile(1.0)), (5_003.0, 9_000.0));
    /// assert!(Distribution::from_ticks(&[]).is_empty());
    /// ```
    pub fn from_ticks(values: &[(u64, u64)]) -> Distribution {
        let mut sorted: Runs = values.iter().copied().filter(|v| v.1 > 0).collect();
        sorted.sort_unstable();
        let mut d = Distribution::of_sorted(&sorted);
        if let (Some(&(min, _)), Some(&(max, _))) = (sorted.first(), sorted.last()) {
            d.place(1.0, min as f64, max as f64);
        }
        d
    }

    /// `values`, ascending, put into latte's buckets (at one tick per unit, no
    /// extremes known).
    pub(crate) fn of_sorted(values: &[(u64, u64)]) -> Distribution {
        let mut buckets: Runs = Vec::with_capacity(values.len());
        let mut count = 0u64;
        for &(value, k) in values.iter().filter(|(_, k)| *k > 0) {
            let low = SHAPE.lowest_equivalent(value);
            count += k;
            match buckets.last_mut() {
                Some(last) if last.0 == low => last.1 += k,
                _ => buckets.push((low, k)),
            }
        }
        Distribution {
            packed: pack(buckets),
            count,
            ..Distribution::default()
        }
    }

    /// Puts it in the report's unit (`per_tick` units a tick) and pulls its extreme
    /// buckets' middles to the row's exact `min` and `max` (in that unit) where those
    /// lie in them.
    pub(crate) fn place(&mut self, per_tick: f64, min: f64, max: f64) {
        self.per_tick = per_tick;
        self.clamp = (f64::NEG_INFINITY, f64::INFINITY);
        self.clamp = self.extremes(min, max);
    }

    /// Decodes the JSON's text of a histogram: base64 of a V2 HdrHistogram of
    /// latte's precision.
    fn decode(text: &str) -> Result<Distribution, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| format!("a histogram that is not base64: {e}"))?;
        let hist: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("a histogram that is not a V2 HdrHistogram: {e:?}"))?;
        if hist.sigfig() != SIGNIFICANT_DIGITS || hist.low() != 1 {
            return Err(format!(
                "a histogram of {} significant digits from {}: latte writes {} from 1",
                hist.sigfig(),
                hist.low(),
                SIGNIFICANT_DIGITS
            ));
        }
        let buckets: Runs = hist
            .iter_recorded()
            .map(|v| {
                (
                    hist.lowest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect();
        let count = buckets
            .iter()
            .try_fold(0u64, |sum, &(_, k)| sum.checked_add(k))
            .ok_or("a histogram whose counts add up to more than 2^64")?;
        Ok(Distribution {
            packed: pack(buckets),
            count,
            ..Distribution::default()
        })
    }

    /// How many values.
    ///
    /// ```
    /// assert_eq!(latte::report::Distribution::default().len(), 0);
    /// ```
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether it holds no values.
    ///
    /// ```
    /// assert!(latte::report::Distribution::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The `q`-quantile in the report's unit: the value of rank [`rank`]`(q, n)`, as
    /// the report computes its quantiles (0 for no values). `q` is clamped to [0, 1].
    ///
    /// ```
    /// assert_eq!(latte::report::Distribution::default().quantile(0.99), 0.0);
    /// ```
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let r = rank(q, self.count);
        let mut below = 0;
        let mut low = 0;
        for (l, k) in unpack(&self.packed) {
            (low, below) = (l, below + k);
            if below >= r {
                break;
            }
        }
        self.value(bucket_of(low).2)
    }

    /// The bytes its buckets take on the heap (packed, 2 to 4 a bucket).
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.packed.len()
    }

    /// One counter tick in the report's unit: 1 in cycles, `1 / ticks_per_ns` in time.
    ///
    /// ```
    /// assert_eq!(latte::report::Distribution::default().per_tick(), 1.0);
    /// ```
    pub fn per_tick(&self) -> f64 {
        self.per_tick
    }

    /// The non-empty buckets, in increasing order.
    ///
    /// ```
    /// assert_eq!(latte::report::Distribution::default().buckets().count(), 0);
    /// ```
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        unpack(&self.packed).map(|(low, count)| {
            let (low, high, middle) = bucket_of(low);
            Bucket {
                low: low as f64 * self.per_tick,
                high: (high + 1) as f64 * self.per_tick,
                value: self.value(middle),
                count,
            }
        })
    }

    /// A bucket middle of `ticks` in the report's unit, within the row's extremes:
    /// the product the report's own figures are (ticks times the unit's factor).
    fn value(&self, ticks: u64) -> f64 {
        (ticks as f64 * self.per_tick).clamp(self.clamp.0, self.clamp.1)
    }

    /// The row's `min` and `max` where they lie in the lowest and the highest bucket
    /// (as a report's exact extremes do: then the analysis clamped those buckets'
    /// middles to them), else no bound. Compared in the report's unit, where the row
    /// holds them: `min * per_tick` keeps the order of the ticks.
    fn extremes(&self, min: f64, max: f64) -> (f64, f64) {
        let inside = |v: f64, low: u64| {
            let (low, high, _) = bucket_of(low);
            low as f64 * self.per_tick <= v && v <= high as f64 * self.per_tick
        };
        let lo = match unpack(&self.packed).next() {
            Some((first, _)) if inside(min, first) => min,
            _ => f64::NEG_INFINITY,
        };
        let hi = match unpack(&self.packed).last() {
            Some((last, _)) if inside(max, last) => max,
            _ => f64::INFINITY,
        };
        if lo <= hi {
            (lo, hi)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        }
    }
}

/// JSON carries a distribution as its histogram's text, `null` for no values.
impl Serialize for Distribution {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_empty() {
            return serializer.serialize_none();
        }
        serializer.serialize_some(&encode(unpack(&self.packed)))
    }
}

/// Read from the histogram's text (at one tick per unit, no extremes known: the
/// report it belongs to places it, see [`Report`](super::Report)'s reader).
impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Distribution, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(Distribution::default()),
            Some(text) => Distribution::decode(&text).map_err(serde::de::Error::custom),
        }
    }
}

mod since;
#[cfg(test)]
mod tests;
