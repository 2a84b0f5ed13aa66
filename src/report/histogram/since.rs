//! What a row gained between two reports of one run: the difference of two
//! distributions, bucket by bucket (the live view's intervals).

use super::Distribution;
use crate::packed::{pack, unpack};

impl Distribution {
    /// The values of `self` that `earlier` does not hold, bucket by bucket: `earlier`
    /// is the same row of an earlier report of the same run (each of its buckets holds
    /// at most what the same bucket holds here; more counts as none left). What a row
    /// gained between two whole-run reports. The extremes are not known for the
    /// difference: its extreme buckets stand for their middles.
    ///
    /// ```
    /// use latte::{Id, Report, ReportOptions};
    /// static WAIT: Id = Id::new("doc_since_wait");
    /// let row = |r: &Report| r.all_threads.iter().find(|r| r.component == "doc_since_wait").unwrap().distribution.clone();
    /// (1..=100).for_each(|_| latte::record(&WAIT, 1_000));
    /// let earlier = Report::collect(&ReportOptions::default());
    /// (1..=10).for_each(|_| latte::record(&WAIT, 900_000));
    /// let later = Report::collect(&ReportOptions::default());
    /// let gained = row(&later).since(&row(&earlier));
    /// assert_eq!(gained.len(), 10);
    /// assert!(gained.quantile(0.5) > 100.0 * row(&earlier).quantile(0.5));
    /// ```
    pub fn since(&self, earlier: &Distribution) -> Distribution {
        let mut before = unpack(&earlier.packed).peekable();
        let mut count = 0u64;
        let buckets: Vec<(u64, u64)> = unpack(&self.packed)
            .filter_map(|(low, k)| {
                while before.next_if(|b| b.0 < low).is_some() {}
                let had = before.next_if(|b| b.0 == low).map_or(0, |b| b.1);
                let gained = k.saturating_sub(had);
                count += gained;
                (gained > 0).then_some((low, gained))
            })
            .collect();
        Distribution {
            packed: pack(buckets),
            count,
            per_tick: self.per_tick,
            clamp: (f64::NEG_INFINITY, f64::INFINITY),
        }
    }
}
