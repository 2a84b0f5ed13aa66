//! A row's histogram and the one way latte reads quantiles: every value of a component
//! as an HdrHistogram of counter ticks (V2 deflate, base64: [`Row::histogram`]), each
//! bucket standing for its middle, and the `q`-quantile of `n` values as the value of
//! rank `ceil(q * n)` ([`rank`]).
//!
//! The analysis puts a row's values into that histogram and reads the row's quantiles
//! back out of it ([`held`]); [`Row::distribution`] decodes the histogram of a report
//! with the same functions, so a [`Distribution`]'s quantiles are the row's own
//! quantile fields, exactly, whoever reads the JSON.

use super::Unit;
use super::{Report, Row};
use crate::config::SIGNIFICANT_DIGITS;
use crate::error::Error;
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
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

/// A row's values as the report holds them: the runs its quantiles are read from and
/// its encoded histogram.
pub(crate) struct Held {
    /// One run per bucket of the histogram, at its middle within `[min, max]`.
    pub(crate) runs: Runs,
    /// The histogram, base64 V2 deflate (`None` for no values).
    pub(crate) histogram: Option<String>,
}

/// `values` (whose exact extremes are `min` and `max`) put into the row's histogram,
/// and the runs read back from it: a quantile of these runs is what a reader of the
/// histogram finds. The histogram is encoded only if `encode`.
pub(crate) fn held(values: &[(u64, u64)], min: u64, max: u64, encode: bool) -> Held {
    if values.is_empty() {
        return Held {
            runs: Runs::new(),
            histogram: None,
        };
    }
    Held {
        runs: bucketed(values, min, max),
        histogram: encode.then(|| encoded(values)).flatten(),
    }
}

/// `values` encoded as a row's histogram is ([`Row::histogram`]): a histogram of
/// latte's precision holding them, V2 deflate, base64; `None` for no values.
pub(crate) fn encoded(values: &[(u64, u64)]) -> Option<String> {
    if values.is_empty() {
        return None;
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&to_histogram(values), &mut bytes)
        .ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A row's values, decoded from its histogram ([`Row::distribution`]), in the report's
/// unit: one [`Bucket`] per non-empty bucket, each standing for its middle (within the
/// row's exact extremes), and quantiles read as the report reads them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Distribution {
    /// Bucket middles (ticks, not yet clamped) and counts.
    runs: Runs,
    /// Each bucket's lowest and highest tick value.
    bounds: Vec<(u64, u64)>,
    count: u64,
    per_tick: f64,
    /// The row's exact extremes, in the report's unit, where they clamp the extreme
    /// buckets' middles; else infinite.
    clamp: (f64, f64),
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

impl Row {
    /// This row's values, decoded from its [`histogram`](Row::histogram), in the unit of
    /// `report` (the report the row belongs to, for its unit and counter frequency).
    /// Its quantiles are the ones the report gives: for a report as latte made it (or
    /// read back from its JSON), [`Distribution::quantile`] of 0.5, 0.9, 0.99, 0.999
    /// and 0.9999 equals [`median`](super::Summary::median) .. [`p9999`](super::Summary::p9999)
    /// exactly.
    ///
    /// A row with no samples gives an empty distribution. [`Error::Histogram`] when the
    /// histogram is missing from a row with samples, is not base64 of a V2 HdrHistogram,
    /// or counts more than `u64::MAX` values, or when a report in time has no positive
    /// counter frequency.
    ///
    /// ```
    /// use latte::{Id, Report, ReportOptions};
    /// static WAIT: Id = Id::new("doc_distribution_wait");
    /// (1..=1_000).for_each(|v| latte::record(&WAIT, v * 100));
    /// let report = Report::collect(&ReportOptions::default());
    /// let row = report.all_threads.iter().find(|r| r.component == "doc_distribution_wait").unwrap();
    /// let dist = row.distribution(&report).unwrap();
    /// assert_eq!(dist.len(), 1_000);
    /// assert_eq!(dist.quantile(0.99), row.stats.p99);
    /// assert_eq!(dist.quantile(0.5), row.stats.median);
    /// ```
    pub fn distribution(&self, report: &Report) -> Result<Distribution, Error> {
        let extremes = (self.stats.min, self.stats.max);
        let dist = decode(&self.component, self.histogram.as_deref(), extremes, report)?;
        if self.histogram.is_none() && self.stats.samples > 0 {
            return Err(Error::Histogram {
                component: self.component.clone(),
                reason: "the row has samples but no histogram".into(),
            });
        }
        Ok(dist)
    }
}

/// Decodes `text`, a histogram of `component` encoded as a row's, in the unit of
/// `report`, its extreme buckets' middles pulled to `extremes` (a row's exact minimum
/// and maximum, in the report's unit) where those lie in them; no text is no values.
pub(crate) fn decode(
    component: &str,
    text: Option<&str>,
    extremes: (f64, f64),
    report: &Report,
) -> Result<Distribution, Error> {
    let fail = |reason: String| Error::Histogram {
        component: component.to_owned(),
        reason,
    };
    let per_tick = per_tick(report.unit, report.ticks_per_ns);
    if !(per_tick.is_finite() && per_tick > 0.0) {
        return Err(fail(format!(
            "the report's counter frequency ({} ticks/ns) cannot turn ticks into time",
            report.ticks_per_ns
        )));
    }
    let Some(text) = text else {
        return Ok(Distribution {
            per_tick,
            ..Distribution::default()
        });
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| fail(format!("not base64: {e}")))?;
    let hist: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| fail(format!("not a V2 HdrHistogram: {e:?}")))?;
    let runs = hist_runs(&hist, 0, u64::MAX);
    let count = runs
        .iter()
        .try_fold(0u64, |sum, &(_, k)| sum.checked_add(k))
        .ok_or_else(|| fail("its counts add up to more than 2^64".into()))?;
    let bounds: Vec<(u64, u64)> = hist
        .iter_recorded()
        .map(|v| {
            let high = v.value_iterated_to();
            (hist.lowest_equivalent(high), high)
        })
        .collect();
    let mut dist = Distribution {
        runs,
        bounds,
        count,
        per_tick,
        clamp: (f64::NEG_INFINITY, f64::INFINITY),
    };
    dist.clamp = dist.extremes(extremes.0, extremes.1);
    Ok(dist)
}

impl Distribution {
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
        self.value(at_rank(&self.runs, rank(q, self.count)))
    }

    /// One counter tick in the report's unit: 1 in cycles, `1 / ticks_per_ns` in time.
    ///
    /// ```
    /// assert_eq!(latte::report::Distribution::default().per_tick(), 0.0);
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
        self.runs
            .iter()
            .zip(&self.bounds)
            .map(|(&(middle, count), &(low, high))| Bucket {
                low: low as f64 * self.per_tick,
                high: (high + 1) as f64 * self.per_tick,
                value: self.value(middle),
                count,
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
        let inside = |v: f64, (low, high): (u64, u64)| {
            low as f64 * self.per_tick <= v && v <= high as f64 * self.per_tick
        };
        let lo = match self.bounds.first() {
            Some(&first) if inside(min, first) => min,
            _ => f64::NEG_INFINITY,
        };
        let hi = match self.bounds.last() {
            Some(&last) if inside(max, last) => max,
            _ => f64::INFINITY,
        };
        if lo <= hi {
            (lo, hi)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        }
    }
}

mod since;
#[cfg(test)]
mod tests;
