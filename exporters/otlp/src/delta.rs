//! Delta temporality: what a whole-run report adds over the last one the collector
//! accepted. The baseline moves only when a push is accepted, so a failed push loses
//! nothing (the next delta covers everything since the last accepted one). The delta
//! is the metric set of [`Report::since`], latte's one subtraction: a series' counts,
//! sums and buckets are the interval's, its exponential histogram made from the
//! difference of the two distributions, at the finest scale that difference fits.

use latte::Report;
use latte::exporter::{Buckets, Component, Exponential, MetricSet};
use std::sync::Arc;
use std::time::SystemTime;

/// The last accepted push: its report and its time.
#[derive(Debug)]
pub(crate) struct Baseline {
    last: Option<Arc<Report>>,
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

    /// The collector accepted the push of `report` made at `at`.
    pub(crate) fn accepted(&mut self, report: Arc<Report>, at: SystemTime) {
        self.last = Some(report);
        self.since = at;
    }

    /// `set` (of `report`, over `buckets`) less the baseline: its histograms if
    /// `histograms`, its counters (samples seen and lost, anomalies, frames) if `sums`.
    /// Gauges (the quantiles, the flagged samples) stay whole-run values.
    pub(crate) fn delta(
        &self,
        report: &Report,
        mut set: MetricSet,
        buckets: &Buckets,
        by_thread: bool,
        (histograms, sums): (bool, bool),
    ) -> MetricSet {
        let Some(earlier) = &self.last else {
            return set;
        };
        let gained = MetricSet::of(&report.since(earlier), buckets, by_thread);
        for s in &mut set.components {
            let got = gained.components.iter().find(|g| same(g, s));
            if histograms {
                s.exponential = got.map_or_else(Exponential::default, |g| g.exponential.clone());
                s.count = got.map_or(0, |g| g.count);
                s.sum = got.map_or(0.0, |g| g.sum);
                match got {
                    Some(g) => s.buckets.clone_from(&g.buckets),
                    None => s.buckets.fill(0),
                }
            }
            if sums {
                s.seen = got.map_or(0, |g| g.seen);
                s.lost = got.map_or(0, |g| g.lost);
                if s.allocs.is_some() {
                    s.allocs = Some(got.and_then(|g| g.allocs).unwrap_or_default());
                }
            }
        }
        if sums {
            for a in &mut set.anomalies {
                let got =
                    (gained.anomalies.iter()).find(|g| g.kind == a.kind && g.thread == a.thread);
                a.count = got.map_or(0, |g| g.count);
            }
            for f in &mut set.frames {
                let got = gained.frames.iter().find(|g| g.thread == f.thread);
                f.frames = got.map_or(0, |g| g.frames);
                f.over_budget = got.map_or(0, |g| g.over_budget);
            }
        }
        set
    }
}

/// Whether two series are the same component on the same thread.
fn same(a: &Component, b: &Component) -> bool {
    a.component == b.component
        && a.thread.as_ref().map(|t| &t.serial) == b.thread.as_ref().map(|t| &t.serial)
}
