//! The lines under a thread's rows that name ids: the anomalies, with the ids of the
//! Stops that found no scope; timers cancelled on purpose (information, not misuse);
//! the scopes open when the report was taken.
//!
//! Pure functions from a thread's report data to text. A long list names the first
//! [`NAMED`] ids and counts the rest (`and 3 more`): the JSON has them all.

use crate::report::{Anomalies, FrameCounts, ThreadReport};

/// Ids a line names before it counts the rest.
const NAMED: usize = 6;

/// The non-zero anomaly counters, those of Stops with their ids, e.g. `anomalies: 2
/// empty stops (parse 2), 1 unmatched stop (commit), 1 orphaned frame`; `None` when
/// every counter is zero. Ids are named as far as the report has them per id (a report
/// written before they were counted per id has none).
pub(super) fn anomalies(thread: &ThreadReport) -> Option<String> {
    let ids = |count: fn(&FrameCounts) -> u64| {
        let per_id = thread
            .frames
            .iter()
            .map(|f| (f.component.as_str(), count(&f.counts)));
        by_count(per_id)
    };
    let phrases: Vec<String> = Anomalies::LABELS
        .iter()
        .zip(thread.anomalies.iter())
        .filter(|(_, (_, n))| *n > 0)
        .map(|((one, many), (name, n))| {
            let label = if n == 1 { one } else { many };
            let ids = match name {
                "empty_stops" => ids(|c| c.empty_stops),
                "unmatched_stops" => ids(|c| c.unmatched_stops),
                _ => Vec::new(),
            };
            match ids.is_empty() {
                true => format!("{n} {label}"),
                false => format!("{n} {label} ({})", named(&ids)),
            }
        })
        .collect();
    (!phrases.is_empty()).then(|| format!("anomalies: {}", phrases.join(", ")))
}

/// The timers cancelled on the thread, per id (most first), e.g. `cancelled timers
/// (not recorded): fetch 3, quote`; `None` when there were none.
pub(super) fn cancelled(thread: &ThreadReport) -> Option<String> {
    let ids = by_count(
        thread
            .frames
            .iter()
            .map(|f| (f.component.as_str(), f.counts.cancelled_timers)),
    );
    (!ids.is_empty()).then(|| format!("cancelled timers (not recorded): {}", named(&ids)))
}

/// The scopes open on the thread when the report was taken, per id, outermost first,
/// e.g. `open now: frame 1, physics 1`; `None` when there were none.
pub(super) fn open_now(thread: &ThreadReport) -> Option<String> {
    let mut parts: Vec<String> = thread
        .open
        .iter()
        .take(NAMED)
        .map(|o| format!("{} {}", o.component, o.count))
        .collect();
    if thread.open.len() > NAMED {
        parts.push(format!("and {} more", thread.open.len() - NAMED));
    }
    (!parts.is_empty()).then(|| format!("open now: {}", parts.join(", ")))
}

/// The ids with a non-zero count, most first (ties in their order).
fn by_count<'a>(counts: impl Iterator<Item = (&'a str, u64)>) -> Vec<(&'a str, u64)> {
    let mut ids: Vec<(&str, u64)> = counts.filter(|(_, n)| *n > 0).collect();
    ids.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    ids
}

/// `parse 2, commit` (a count of 1 is left out), at most [`NAMED`] ids, then `and N
/// more`.
fn named(ids: &[(&str, u64)]) -> String {
    let mut parts: Vec<String> = ids
        .iter()
        .take(NAMED)
        .map(|(id, n)| match n {
            1 => (*id).to_owned(),
            n => format!("{id} {n}"),
        })
        .collect();
    if ids.len() > NAMED {
        parts.push(format!("and {} more", ids.len() - NAMED));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_names_six_ids_and_counts_the_rest() {
        let ids: Vec<(&str, u64)> = ["a", "b", "c", "d", "e", "f", "g", "h"]
            .into_iter()
            .zip([1, 2, 1, 1, 1, 1, 1, 1])
            .collect();
        let ids = by_count(ids.into_iter());
        assert_eq!(named(&ids), "b 2, a, c, d, e, f, and 2 more");
    }
}
