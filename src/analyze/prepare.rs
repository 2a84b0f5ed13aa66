//! One component of one thread, from its whole-run tallies to a report [`Row`]: its
//! values in the report's data, the cleaning rule's flags, the headline figures over
//! every sample (exact where the sums allow) and the cleaned figures beside them;
//! then the same for the component over all threads, by adding the threads'.

use super::calibrate::Calibration;
use super::dist::{self, Runs};
use super::{clean, overhead, stats};
use crate::allocs::{Allocs, ScopeAllocs};
use crate::collect::{ComponentTotals, Exact, SampleKind};
use crate::report::ReportOptions;
use crate::report::histogram::bucketed;
use crate::report::{CleanedSummary, Corrected, Distribution, Row, RowKind, Slowest, Summary};
use std::collections::HashMap;

/// How rows are made: the factor from ticks to the report's unit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowOutput {
    pub(crate) scale: f64,
}

/// One component's distribution in the report's data, with what cleaning flagged.
#[derive(Default)]
pub(crate) struct Prepared {
    kind: RowKind,
    all: Runs,
    exact: Exact,
    cleaned: Runs,
    /// Whether cleaning flagged nothing (then the exact moments describe `cleaned`).
    untouched: bool,
    seen: u64,
    lost: u64,
    bypass: u64,
    outliers: u64,
    /// Sums of the flagged values, in ticks.
    bypass_sum: u128,
    outliers_sum: u128,
    migrated: u64,
    /// Slowest first, values in ticks of the report's data.
    slowest: Vec<Slowest>,
    /// The declared period in ticks, and the values corrected for coordinated
    /// omission.
    corrected: Option<(u64, Runs)>,
    /// Its allocations over its calls, for a flat row ([`Prepared::with_allocs`]); a
    /// tree node has its own (`TreeNode::allocs`).
    allocs: Option<ScopeAllocs>,
}

impl Prepared {
    pub(crate) fn new(
        c: &ComponentTotals,
        thread: &str,
        calibration: &Calibration,
        options: &ReportOptions,
        periods: &[u64],
    ) -> Prepared {
        let overhead = |kind| overhead(kind, calibration, options.data);
        let (all, exact) = dist::kinds_together(&c.kinds, overhead);
        let slowest = c
            .slowest
            .iter()
            .map(|s| Slowest {
                value: s.ticks.saturating_sub(overhead(s.kind)) as f64,
                thread: thread.to_owned(),
                not_before_ms: s.not_before_ms,
                not_after_ms: s.not_after_ms,
            })
            .collect();
        let period_ns = periods.get(c.index as usize).copied().unwrap_or(0);
        let corrected = (period_ns > 0 && c.index != 0).then(|| {
            let period = ((period_ns as f64 * calibration.ticks_per_ns).round() as u64).max(1);
            (period, corrected_runs(c, period, overhead))
        });
        let kept = clean::clean_runs(
            &all,
            &options.cleaning,
            calibration.ticks_per_ns,
            calibration.resolution,
        );
        Prepared {
            kind: row_kind(c),
            cleaned: all[kept.runs].to_vec(),
            untouched: kept.bypass + kept.outliers == 0,
            all,
            exact,
            seen: c.seen,
            lost: c.lost,
            bypass: kept.bypass,
            outliers: kept.outliers,
            bypass_sum: kept.bypass_sum,
            outliers_sum: kept.outliers_sum,
            migrated: c.migrated,
            slowest,
            corrected,
            allocs: None,
        }
    }

    /// The same, with its allocations: `own` while it was the innermost scope,
    /// `inclusive` with the scopes inside it.
    pub(super) fn with_allocs(mut self, own: Allocs, inclusive: Allocs) -> Prepared {
        self.allocs = Some(ScopeAllocs::new(self.seen, own, inclusive));
        self
    }

    /// The row of these values, in the report's unit: its quantiles are read from the
    /// histogram it carries, as a reader of the JSON reads them.
    pub(crate) fn row(&self, component: &str, out: RowOutput) -> Row {
        let scale = out.scale;
        let runs = bucketed(&self.all, self.exact.min, self.exact.max);
        let corrected = self.corrected.as_ref().map(|(period, runs)| {
            let q = |q: f64| dist::quantile(runs, q) as f64 * scale;
            Corrected {
                period: *period as f64 * scale,
                count: dist::count(runs),
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                p9999: q(0.9999),
                // The correction adds values below the largest only: the exact
                // maximum stands.
                max: extremes(&self.exact).1 * scale,
            }
        });
        let slowest = self
            .slowest
            .iter()
            .map(|s| Slowest {
                value: s.value * scale,
                ..s.clone()
            })
            .collect();
        let stats = scaled(self.summary(&runs), scale);
        let mut distribution = Distribution::of_sorted(&self.all);
        distribution.place(scale, stats.min, stats.max);
        Row {
            component: component.to_owned(),
            kind: self.kind,
            stats,
            slowest,
            corrected,
            distribution,
            allocs: self.allocs,
        }
    }

    /// Statistics in ticks: the headline over every sample, exact where the sums
    /// allow, its quantiles from `runs` (the values' buckets, as the row's distribution
    /// holds them); the cleaned figures over what
    /// cleaning kept.
    fn summary(&self, runs: &Runs) -> Summary {
        let all = stats::run_moments(&self.all);
        let q = |q: f64| dist::quantile(runs, q) as f64;
        let (min, max) = extremes(&self.exact);
        let std_dev = self.exact.std_dev().unwrap_or(all.std_dev);
        let skew = self.exact.skew().unwrap_or(all.skew);
        let mut c = stats::run_moments(&self.cleaned);
        if self.untouched {
            // Nothing was flagged: the exact figures hold for the cleaned set too.
            (c.mean, c.std_dev, c.skew) = (self.exact.mean(), std_dev, skew);
            (c.min, c.max) = (min, max);
        }
        Summary {
            samples: self.exact.count,
            seen: self.seen,
            lost: self.lost,
            avg: self.exact.mean(),
            median: q(0.5),
            std_dev,
            skew,
            min,
            max,
            range: max - min,
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
            total: self.exact.sum as f64,
            bypass: self.bypass,
            bypass_total: self.bypass_sum as f64,
            outliers: self.outliers,
            outliers_total: self.outliers_sum as f64,
            migrated: self.migrated,
            cleaned: CleanedSummary {
                samples: c.count,
                avg: c.mean,
                // Nothing flagged: the headline's, as the histogram holds it.
                median: if self.untouched {
                    q(0.5)
                } else {
                    dist::quantile(&self.cleaned, 0.5) as f64
                },
                std_dev: c.std_dev,
                skew: c.skew,
                min: c.min,
                max: c.max,
                range: c.max - c.min,
            },
        }
    }

    /// Adds another thread's prepared values of the same id.
    pub(crate) fn add(&mut self, other: &Prepared) {
        self.all = dist::merge(&self.all, &other.all);
        self.cleaned = dist::merge(&self.cleaned, &other.cleaned);
        self.untouched &= other.untouched;
        self.exact = self.exact.plus(&other.exact);
        self.seen += other.seen;
        self.lost += other.lost;
        self.bypass += other.bypass;
        self.outliers += other.outliers;
        self.bypass_sum += other.bypass_sum;
        self.outliers_sum += other.outliers_sum;
        self.migrated += other.migrated;
        self.allocs = match (self.allocs, other.allocs) {
            (Some(a), Some(b)) => Some(a.plus(&b)),
            (a, b) => a.or(b),
        };
        let keep = self.slowest.len().max(other.slowest.len());
        self.slowest.extend(other.slowest.iter().cloned());
        self.slowest.sort_by(|a, b| b.value.total_cmp(&a.value));
        self.slowest.truncate(keep);
        self.corrected = match (self.corrected.take(), &other.corrected) {
            (Some((p, a)), Some((_, b))) => Some((p, dist::merge(&a, b))),
            (mine, theirs) => mine.or_else(|| theirs.clone()),
        };
    }
}

/// What recorded a component: pulses, values, timers or busy times when every sample
/// is one, else scopes.
fn row_kind(c: &ComponentTotals) -> RowKind {
    let all = |f: fn(&SampleKind) -> bool| c.kinds.iter().all(|(k, _)| f(k));
    if c.kinds.is_empty() {
        RowKind::Scope
    } else if all(|k| matches!(k, SampleKind::Pulse)) {
        RowKind::Pulse
    } else if all(|k| matches!(k, SampleKind::Recorded)) {
        RowKind::Value
    } else if all(|k| matches!(k, SampleKind::Timer { .. })) {
        RowKind::Timer
    } else if all(|k| matches!(k, SampleKind::Busy { .. })) {
        RowKind::Busy
    } else {
        RowKind::Scope
    }
}

/// Every kind's values corrected for coordinated omission with `period` ticks (raw
/// ticks, as HdrHistogram's correction is defined), then minus the kind's overhead.
fn corrected_runs(c: &ComponentTotals, period: u64, overhead: impl Fn(SampleKind) -> u64) -> Runs {
    let mut runs = Runs::new();
    for (kind, tally) in &c.kinds {
        let hist = tally.histogram().clone_correct(period);
        let raw = dist::hist_runs(&hist, hist.min().min(tally.exact.min), tally.exact.max);
        runs = dist::merge(&runs, &dist::shifted(raw, overhead(*kind)));
    }
    runs
}

/// Exact minimum and maximum (0 for no values).
fn extremes(exact: &Exact) -> (f64, f64) {
    match exact.count {
        0 => (0.0, 0.0),
        _ => (exact.min as f64, exact.max as f64),
    }
}

/// Converts the value fields of a tick summary to the report's unit.
fn scaled(mut s: Summary, f: f64) -> Summary {
    crate::report::scale_summary(&mut s, f);
    s
}

/// Each node's allocations with those of every node below it (a parent comes before
/// its children: summed backwards).
pub(crate) fn inclusive_allocs(components: &[ComponentTotals]) -> Vec<Allocs> {
    let mut sums: Vec<Allocs> = components.iter().map(|c| c.allocs).collect();
    for k in (0..components.len()).rev() {
        if let Some(p) = components[k].parent.map(|p| p as usize).filter(|&p| p < k) {
            sums[p] = sums[p].plus(&sums[k]);
        }
    }
    sums
}

/// Per id, its nodes' inclusive allocations, counting only nodes with no node of the
/// same id above them (a recursion's inner calls are inside its outer ones).
pub(crate) fn flat_inclusive_allocs(
    components: &[ComponentTotals],
) -> HashMap<&'static str, Allocs> {
    let inclusive = inclusive_allocs(components);
    let mut out: HashMap<&'static str, Allocs> = HashMap::new();
    for (k, c) in components.iter().enumerate() {
        let mut above = c.parent.map(|p| p as usize).filter(|&p| p < k);
        let mut nested = false;
        while let Some(p) = above {
            if components[p].name == c.name {
                nested = true;
                break;
            }
            above = components[p].parent.map(|q| q as usize).filter(|&q| q < p);
        }
        if !nested {
            let sum = out.entry(c.name).or_default();
            *sum = sum.plus(&inclusive[k]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::collect::ThreadCapture;
    use crate::collect::{Anomalies, Capture, ComponentCapture, Sample, SampleKind};
    use crate::report::{Distribution, Report, Row};

    /// A thread's capture of 10,000 ids, each with 1,000 values spread log-uniformly
    /// over 100 to 10,000 ticks.
    fn ten_thousand_ids() -> Capture {
        let scope = SampleKind::Scope {
            start: crate::clock::Mode::Fast,
            stop: crate::clock::Mode::Fast,
        };
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let components = (0..10_000)
            .map(|i| ComponentCapture {
                allocs: None,
                parent: None,
                self_ticks: None,
                name: Box::leak(format!("id_{i}").into_boxed_str()),
                seen: 1_000,
                capacity: 1_024,
                first: 0,
                samples: (0..1_000)
                    .map(|_| Sample::new(100.0f64.powf(1.0 + next()) as u64, scope, false).unwrap())
                    .collect(),
            })
            .collect();
        Capture {
            process_allocs: None,
            threads: vec![ThreadCapture {
                alloc_breach: None,
                outside_allocs: None,
                serial: 1,
                name: "worker".into(),
                exited: false,
                anomalies: Anomalies::default(),
                components,
                unpaired: Vec::new(),
            }],
            teardown_drops: 0,
        }
    }

    /// What a report's distributions take in memory at 10,000 ids, each with 1,000 values
    /// spread over two decades (100 to 10,000 ticks, log-uniform): a count to read,
    /// quoted in `docs/report-format.md` ("Memory"):
    /// `cargo test --release --all-features --lib -- --ignored --nocapture distributions_at`
    #[test]
    #[ignore = "a count to read"]
    fn the_memory_of_the_distributions_at_10000_ids() {
        let capture = ten_thousand_ids();
        let calibration = crate::analyze::Calibration {
            ticks_per_ns: 2.6,
            accuracy: 1e-6,
            resolution: 26,
            scope: [[0; 3]; 3],
            pulse: 0,
            inside: [[0.0; 3]; 3],
            took: std::time::Duration::ZERO,
        };
        let report = Report::from_capture(
            &capture,
            &calibration,
            &crate::report::ReportOptions::default(),
        );
        let rows: Vec<&Row> = (report.all_threads.iter())
            .chain(report.threads.iter().flat_map(|t| &t.rows))
            .collect();
        let buckets: usize = rows.iter().map(|r| r.distribution.buckets().count()).sum();
        let packed: usize = rows.iter().map(|r| r.distribution.heap_bytes()).sum();
        let bytes = rows.len() * size_of::<Distribution>() + packed;
        let json = report.to_json(crate::report::JsonStyle::Compact).len();
        println!(
            "{} rows (10,000 ids, ALL THREADS and one thread), {buckets} buckets ({:.0} a \
             row, {:.2} B each): {:.1} MB in memory ({} B a row), {:.1} MB of JSON",
            rows.len(),
            buckets as f64 / rows.len() as f64,
            packed as f64 / buckets as f64,
            bytes as f64 / 1e6,
            bytes / rows.len(),
            json as f64 / 1e6
        );
        assert_eq!(rows.len(), 20_000);
    }
}
