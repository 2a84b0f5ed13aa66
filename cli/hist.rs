//! A component's histogram, decoded from a report row, with quantiles in the report's
//! unit.

use crate::load::Loaded;
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use latte::Unit;

/// One component's distribution in one report: an HdrHistogram of counter ticks and
/// the factor from ticks to the report's unit.
#[derive(Clone, Debug)]
pub struct Dist {
    /// Every folded value (before cleaning), in ticks.
    pub hist: Histogram<u64>,
    /// The report's unit per tick: 1 for cycles, `1 / ticks_per_ns` for nanoseconds.
    pub per_tick: f64,
    /// Per non-empty bucket in increasing order: the count up to and including it,
    /// and the bucket's highest value in the report's unit (what HdrHistogram's
    /// `value_at_quantile` returns), for quantiles by binary search.
    cdf: Vec<(u64, f64)>,
}

impl Dist {
    /// A histogram of values already in the report's unit (`per_tick` 1).
    #[cfg(test)]
    pub fn new(hist: Histogram<u64>) -> Dist {
        Dist::with_unit(hist, 1.0).expect("test histograms count less than u64::MAX")
    }

    /// `None` when the counts add up to more than `u64::MAX` (no real run does).
    fn with_unit(hist: Histogram<u64>, per_tick: f64) -> Option<Dist> {
        let mut cum = 0u64;
        let cdf = hist
            .iter_recorded()
            .map(|v| {
                cum = cum.checked_add(v.count_at_value())?;
                let high = hist.highest_equivalent(v.value_iterated_to());
                Some((cum, high as f64 * per_tick))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Dist {
            hist,
            per_tick,
            cdf,
        })
    }

    /// The ALL THREADS distribution of `component` in `loaded`: `Ok(None)` when the
    /// report has no such component, an error naming the file when its histogram
    /// cannot be decoded.
    pub fn of(loaded: &Loaded, component: &str) -> Result<Option<Dist>, crate::outcome::Failure> {
        let Some(row) = loaded
            .report
            .all_threads
            .iter()
            .find(|r| r.component == component)
        else {
            return Ok(None);
        };
        let Some(text) = &row.histogram else {
            return Ok(Dist::with_unit(empty(), 1.0));
        };
        let fail = |why: String| {
            crate::outcome::Failure(format!(
                "{}: component `{component}`: the histogram cannot be read: {why}",
                loaded.name()
            ))
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| fail(e.to_string()))?;
        let hist: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| fail(format!("{e:?}")))?;
        let report = &loaded.report;
        let per_tick = match report.unit {
            Unit::Time if report.ticks_per_ns > 0.0 => 1.0 / report.ticks_per_ns,
            _ => 1.0,
        };
        Dist::with_unit(hist, per_tick)
            .map(Some)
            .ok_or_else(|| fail("its counts add up to more than 2^64".into()))
    }

    /// How many values.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// The value of rank `ceil(q * n)` ([`latte::report::rank`]), in the report's
    /// unit (0 for no values).
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.hist.len();
        if n == 0 {
            return 0.0;
        }
        let rank = latte::report::rank(q, n);
        let at = self.cdf.partition_point(|&(cum, _)| cum < rank);
        self.cdf[at.min(self.cdf.len() - 1)].1
    }

    /// Smallest and largest value, in the report's unit.
    pub fn range(&self) -> (f64, f64) {
        (
            self.hist.min() as f64 * self.per_tick,
            self.hist.max() as f64 * self.per_tick,
        )
    }

    /// Each non-empty bucket as (lowest value, highest value, count), in the report's
    /// unit, in increasing order.
    pub fn buckets(&self) -> Vec<(f64, f64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| {
                let low = self.hist.lowest_equivalent(v.value_iterated_to());
                let high = self.hist.highest_equivalent(v.value_iterated_to());
                (
                    low as f64 * self.per_tick,
                    (high + 1) as f64 * self.per_tick,
                    v.count_at_value(),
                )
            })
            .collect()
    }
}

/// An empty histogram with latte's precision.
pub fn empty() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is a valid precision")
}
