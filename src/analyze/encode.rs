//! Per-id interval histograms, for the agent's `.hlog` interval log. (A report row's
//! own histogram is `report::histogram`'s.)

use super::dist::{self, Runs};
use super::{Calibration, overhead};
use crate::collect::Totals;
use crate::report::Data;
use crate::report::histogram::to_histogram;
use hdrhistogram::Histogram;

/// Per id, every thread's folded values in ticks of `data` (uncleaned), in order of
/// first appearance: what one interval of an `.hlog` holds.
pub(crate) fn per_id(
    totals: &Totals,
    calibration: &Calibration,
    data: Data,
) -> Vec<(&'static str, Histogram<u64>)> {
    let mut ids: Vec<(&'static str, Runs)> = Vec::new();
    for c in totals.threads.values().flat_map(|t| &t.components) {
        let (runs, _) = dist::kinds_together(&c.kinds, |kind| overhead(kind, calibration, data));
        match ids.iter_mut().find(|(name, _)| *name == c.name) {
            Some((_, all)) => *all = dist::merge(all, &runs),
            None => ids.push((c.name, runs)),
        }
    }
    ids.into_iter()
        .map(|(name, runs)| (name, to_histogram(&runs)))
        .collect()
}
