//! Histograms that leave the process: a row's values as an HdrHistogram in the V2
//! deflate format, base64 (in the JSON report), and per-id interval histograms (for
//! the agent's `.hlog` interval log).

use super::dist::{self, Runs};
use super::{Calibration, overhead};
use crate::collect::{Tally, Totals};
use crate::report::Data;
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

/// A histogram of the runs (3 significant digits, like latte's own).
pub(crate) fn to_histogram(runs: &Runs) -> Histogram<u64> {
    let mut hist = Tally::default().hist;
    for &(value, count) in runs {
        // Auto-resizing: values up to `Sample::MAX_TICKS` always fit.
        let _ = hist.record_n(value, count);
    }
    hist
}

/// The runs as a base64 V2-deflate HdrHistogram (`None` for no values).
pub(crate) fn encode(runs: &Runs) -> Option<String> {
    if runs.is_empty() {
        return None;
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&to_histogram(runs), &mut bytes)
        .ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn encoded_histograms_decode_to_the_same_counts() {
        let runs: Runs = vec![(0, 3), (26, 1_000), (52, 500), (1_000_000, 2)];
        let text = encode(&runs).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap();
        let hist: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(hist.len(), 1_505);
        assert_eq!(hist.count_at(26), 1_000);
        assert_eq!(
            hist.value_at_quantile(1.0),
            hist.highest_equivalent(1_000_000)
        );
        assert_eq!(encode(&Vec::new()), None);
    }
}
