//! Delta temporality: what a whole-run report adds over the last one the collector
//! accepted. The baseline moves only when a push is accepted, so a failed push loses
//! nothing (the next delta covers everything since the last accepted one). A series'
//! counts and buckets are differences; its exponential histogram is made from the
//! difference of the two histograms (`Distribution::since`), at the finest scale that
//! difference fits, as `Live::between` cuts the live view's intervals.

use latte::Report;
use latte::exporter::{Exponential, MetricSet, Series};
use latte::report::{Row, Unit};
use std::sync::Arc;
use std::time::SystemTime;

/// The last accepted push: its report, its metric set and its time.
#[derive(Debug)]
pub(crate) struct Baseline {
    last: Option<(Arc<Report>, MetricSet)>,
    /// When the last accepted push was made; the agent's start before one was.
    pub(crate) since: SystemTime,
}

impl Baseline {
    /// No push accepted yet: deltas cover the run from `began`.
    pub(crate) fn new(began: SystemTime) -> Baseline {
        Baseline {
            last: None,
            since: began,
        }
    }

    /// The collector accepted the push of `report` (as `set`) made at `at`.
    pub(crate) fn accepted(&mut self, report: Arc<Report>, set: MetricSet, at: SystemTime) {
        self.last = Some((report, set));
        self.since = at;
    }

    /// `set` (of `report`) less the baseline: its histograms if `histograms`, its
    /// counters (samples seen and lost, anomalies, frames) if `sums`. Gauges (the
    /// quantiles, the flagged samples) stay whole-run values.
    pub(crate) fn delta(
        &self,
        report: &Report,
        mut set: MetricSet,
        by_thread: bool,
        histograms: bool,
        sums: bool,
    ) -> MetricSet {
        let Some((earlier, before)) = &self.last else {
            return set;
        };
        let rows = rows(report, by_thread);
        let aligned = rows.len() == set.series.len()
            && rows
                .iter()
                .zip(&set.series)
                .all(|((r, _), s)| r.component == s.component);
        for (i, s) in set.series.iter_mut().enumerate() {
            let Some(old) = before.series.iter().find(|o| same(o, s)) else {
                continue; // new since the baseline: all of it is the delta
            };
            if histograms {
                let row = aligned.then(|| rows[i]);
                s.exponential = exponential(report, earlier, row, s, old, by_thread);
                s.count = s.count.saturating_sub(old.count);
                s.sum = (s.sum - old.sum).max(0.0);
                for (b, o) in s.buckets.iter_mut().zip(&old.buckets) {
                    *b = b.saturating_sub(*o);
                }
            }
            if sums {
                s.seen = s.seen.saturating_sub(old.seen);
                s.lost = s.lost.saturating_sub(old.lost);
            }
        }
        if sums {
            for a in &mut set.anomalies {
                let old = before
                    .anomalies
                    .iter()
                    .find(|o| o.kind == a.kind && o.thread == a.thread);
                a.count = a.count.saturating_sub(old.map_or(0, |o| o.count));
            }
            for f in &mut set.frames {
                if let Some(old) = before.frames.iter().find(|o| o.thread == f.thread) {
                    f.frames = f.frames.saturating_sub(old.frames);
                    f.over_budget = f.over_budget.saturating_sub(old.over_budget);
                }
            }
        }
        set
    }
}

/// Whether two series are the same component on the same thread.
fn same(a: &Series, b: &Series) -> bool {
    a.component == b.component
        && a.thread.as_ref().map(|t| &t.serial) == b.thread.as_ref().map(|t| &t.serial)
}

/// The rows `MetricSet::of` makes its series of, in its order, with their thread's
/// serial number (`by_thread`).
fn rows(report: &Report, by_thread: bool) -> Vec<(&Row, Option<u64>)> {
    match by_thread {
        true => report
            .threads
            .iter()
            .flat_map(|t| t.rows.iter().map(move |r| (r, Some(t.serial))))
            .collect(),
        false => report.all_threads.iter().map(|r| (r, None)).collect(),
    }
}

/// One of `report`'s units in seconds.
fn seconds_per_unit(report: &Report) -> f64 {
    match report.unit {
        Unit::Cycles => 1e-9 / report.ticks_per_ns,
        Unit::Time => 1e-9,
    }
}

/// The exponential histogram of what `row` (series `now`) gained over the same row of
/// `earlier` (series `old`): from the difference of the two distributions; if the row
/// is missing, the difference of the two exponential histograms at the coarser scale.
fn exponential(
    report: &Report,
    earlier: &Report,
    row: Option<(&Row, Option<u64>)>,
    now: &Series,
    old: &Series,
    by_thread: bool,
) -> Exponential {
    let before = |(row, serial): (&Row, Option<u64>)| {
        let rows = match (by_thread, serial) {
            (true, Some(serial)) => &earlier.threads.iter().find(|t| t.serial == serial)?.rows,
            _ => &earlier.all_threads,
        };
        rows.iter().find(|r| r.component == row.component)
    };
    let gained = row.and_then(|row| {
        let then = &before(row)?.distribution;
        Some(row.0.distribution.since(then))
    });
    match gained {
        Some(d) => Exponential::of(
            &d,
            seconds_per_unit(report),
            Exponential::MAX_SCALE,
            Exponential::DEFAULT_MAX_BUCKETS,
        ),
        None => subtract(&now.exponential, &old.exponential),
    }
}

/// `now - old`, bucket by bucket, at the coarser of their scales.
fn subtract(now: &Exponential, old: &Exponential) -> Exponential {
    let scale = now.scale.min(old.scale);
    let (mut now, mut old) = (now.clone(), old.clone());
    now.downscale(u32::try_from(now.scale - scale).unwrap_or(0));
    old.downscale(u32::try_from(old.scale - scale).unwrap_or(0));
    now.zero_count = now.zero_count.saturating_sub(old.zero_count);
    for (i, c) in old.counts.iter().enumerate() {
        let index = i64::from(old.offset) + i as i64 - i64::from(now.offset);
        if let Some(n) = usize::try_from(index)
            .ok()
            .and_then(|k| now.counts.get_mut(k))
        {
            *n = n.saturating_sub(*c);
        }
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtracting_exponentials_leaves_what_was_added() {
        let old = Exponential::from_values([(1e-3, 100)], Exponential::MAX_SCALE, 2_048);
        let mut now = old.clone();
        now.merge(&Exponential::from_values([(8e-3, 10), (1e-3, 5)], 8, 2_048));
        let gained = subtract(&now, &old);
        assert_eq!((gained.scale, gained.count()), (8, 15));
    }
}
