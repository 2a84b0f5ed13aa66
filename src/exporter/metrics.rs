//! A whole-run [`Report`] as one neutral metric set: per component (and thread, when
//! asked), the latency histogram in seconds over the configured buckets, the tail
//! quantiles and the counts; per process, the anomalies and the clock. Every exporter
//! can write this set in its own format (the Prometheus and OTLP crates both do), so
//! what is exported is decided once, here, and none of them reads the report itself.

use super::Exponential;
use super::frames::Frames;
use crate::allocs::Allocs;
use crate::diagnostics::Anomalies;
use crate::report::{Distribution, Report, Row, Unit};
use std::time::Duration;

/// The quantiles of each component: p50, p99, p99.9 (as [`Component::quantiles`] holds them).
pub const QUANTILES: [f64; 3] = [0.5, 0.99, 0.999];

/// The latency histogram's bucket upper bounds, in seconds: at least one, above zero,
/// increasing (a last bucket, `+Inf`, is implied). Each bound is one more series per
/// component in a Prometheus scrape.
///
/// ```
/// use latte::exporter::Buckets;
/// use std::time::Duration;
/// assert_eq!(Buckets::default().seconds().len(), 28); // 10 ns to 10 s, 1-2-5 steps
/// let micros = Buckets::new([1, 10, 100].map(Duration::from_micros))?;
/// assert_eq!(micros.seconds(), [1e-6, 1e-5, 1e-4]);
/// let err = Buckets::new([Duration::from_micros(2), Duration::from_micros(1)]).unwrap_err();
/// assert!(err.to_string().contains("increasing order"));
/// # Ok::<(), latte::exporter::InvalidBuckets>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Buckets {
    seconds: Vec<f64>,
}

impl Buckets {
    /// The bounds, checked: [`InvalidBuckets`] if there are none, one is zero, or they
    /// are not in increasing order.
    pub fn new(bounds: impl IntoIterator<Item = Duration>) -> Result<Buckets, InvalidBuckets> {
        let bounds: Vec<Duration> = bounds.into_iter().collect();
        let ordered = bounds.windows(2).all(|w| w[0] < w[1]);
        if bounds.is_empty() || bounds[0].is_zero() || !ordered {
            return Err(InvalidBuckets { bounds });
        }
        Ok(Buckets {
            seconds: bounds.iter().map(Duration::as_secs_f64).collect(),
        })
    }

    /// The bounds in seconds.
    pub fn seconds(&self) -> &[f64] {
        &self.seconds
    }
}

impl Default for Buckets {
    /// 1-2-5 steps from 10 ns to 10 s: 28 bounds, evenly spaced on a log scale to
    /// within the 1-2-5 rounding.
    fn default() -> Buckets {
        let mut bounds = Vec::with_capacity(28);
        let mut decade = 10u64;
        while decade < 10_000_000_000 {
            for step in [1, 2, 5] {
                bounds.push(Duration::from_nanos(decade * step));
            }
            decade *= 10;
        }
        bounds.push(Duration::from_secs(10));
        Buckets::new(bounds).expect("the default bounds are valid")
    }
}

/// Bucket bounds [`Buckets::new`] refuses: none, a zero, or not in increasing order.
///
/// ```
/// let err = latte::exporter::Buckets::new([]).unwrap_err();
/// assert!(err.bounds.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidBuckets {
    /// The bounds as given.
    pub bounds: Vec<Duration>,
}

impl std::fmt::Display for InvalidBuckets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}: bucket bounds must be at least one, above zero and in increasing order",
            self.bounds
        )
    }
}

impl std::error::Error for InvalidBuckets {}

/// Everything exported from one report: made by [`MetricSet::of`].
///
/// ```
/// use latte::exporter::{Buckets, MetricSet};
/// use latte::{Report, ReportOptions};
/// static PARSE: latte::Id = latte::Id::new("doc_metric_set");
/// latte::record(&PARSE, 1_000);
/// let report = Report::collect(&ReportOptions::default());
/// let set = MetricSet::of(&report, &Buckets::default(), false);
/// let parse = set.components.iter().find(|s| s.component == "doc_metric_set").unwrap();
/// assert_eq!(parse.count, 1);
/// assert_eq!(parse.buckets.iter().sum::<u64>(), 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct MetricSet {
    /// The counter read (`TSC`, ...).
    pub clock: String,
    /// Its calibrated frequency, in hertz.
    pub frequency_hz: f64,
    /// `yes`, `no` or `unknown`.
    pub hypervisor: &'static str,
    /// The histograms' bucket upper bounds in seconds (`+Inf` implied after the last).
    pub bounds: Vec<f64>,
    /// One per component (per component and thread with the thread label).
    pub components: Vec<Component>,
    /// Anomaly counts, by kind (and thread, with the thread label).
    pub anomalies: Vec<Anomaly>,
    /// Frames ([`latte_frame!`](crate::latte_frame)) and frames over budget, per
    /// thread that marked frames (one entry over all threads without the thread
    /// label; none if no thread marked frames).
    pub frames: Vec<Frames>,
}

/// A thread, as labels: its name, and its serial number in the process, since names
/// repeat (a pool's workers) and series must not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Thread {
    /// The thread's name.
    pub name: String,
    /// Its serial number, as the report's `THREAD name (#serial)` line gives it.
    pub serial: String,
}

impl Thread {
    /// The labels (or attributes) for this thread: `thread` and `thread_serial`.
    ///
    /// ```
    /// let t = latte::exporter::Thread { name: "worker".into(), serial: "3".into() };
    /// assert_eq!(t.labels(), [("thread", "worker"), ("thread_serial", "3")]);
    /// ```
    pub fn labels(&self) -> [(&'static str, &str); 2] {
        [("thread", &self.name), ("thread_serial", &self.serial)]
    }
}

/// One component's metrics (on one thread, with the thread label).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Component {
    /// The component (the id's name).
    pub component: String,
    /// The thread, with the thread label.
    pub thread: Option<Thread>,
    /// Samples in each bucket of [`MetricSet::bounds`] (not cumulative), and one more
    /// for the values above the last bound.
    pub buckets: Vec<u64>,
    /// The same samples in exponential buckets, in seconds, at the finest scale (at
    /// most 10) that fits [`Exponential::DEFAULT_MAX_BUCKETS`]: what merges across
    /// processes (OTLP exponential histograms, Prometheus native histograms).
    pub exponential: Exponential,
    /// Samples in the histogram (every folded one).
    pub count: u64,
    /// Their sum, in seconds.
    pub sum: f64,
    /// [`QUANTILES`]' values in seconds, from the whole-run histogram (exact ranks,
    /// not bucket interpolation).
    pub quantiles: [f64; 3],
    /// Samples recorded (folded and lost): only grows.
    pub seen: u64,
    /// Samples overwritten before latte read them: only grows.
    pub lost: u64,
    /// Values the cleaning rule flags as far above the median (BYPASS): may go down
    /// again.
    pub bypass: u64,
    /// Values the cleaning rule flags as outliers: may go down again.
    pub outliers: u64,
    /// With a [`Counting`](crate::alloc::Counting) allocator installed: the
    /// component's allocations, its scopes inside included (inclusive): only grow.
    pub allocs: Option<Allocs>,
}

/// One anomaly counter: misuse or a clock event latte counted
/// (`latte::collect::Anomalies`), over all threads or on one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Anomaly {
    /// The thread, with the thread label.
    pub thread: Option<Thread>,
    /// The kind: the counter's name in `Anomalies::NAMES`, but for `abandoned_frames`
    /// and `orphaned_frames`, the first names of `abandoned_scopes` and
    /// `orphaned_scopes`, which `/metrics` and OTLP keep.
    pub kind: &'static str,
    /// How many.
    pub count: u64,
}

impl MetricSet {
    /// The metric set of `report` over `buckets`; one series per (component, thread)
    /// if `by_thread`, else per component over all threads.
    pub fn of(report: &Report, buckets: &Buckets, by_thread: bool) -> MetricSet {
        let bounds = buckets.seconds();
        let component_of =
            |row: &Row, thread: Option<&Thread>| component(row, thread, report, bounds);
        let mut set = MetricSet {
            clock: report.clock.clone(),
            frequency_hz: report.ticks_per_ns * 1e9,
            hypervisor: match report.environment.as_ref().and_then(|e| e.hypervisor) {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown",
            },
            bounds: bounds.to_vec(),
            ..MetricSet::default()
        };
        if by_thread {
            for thread in &report.threads {
                let label = Thread {
                    name: thread.name.clone(),
                    serial: thread.serial.to_string(),
                };
                let rows = thread.rows.iter();
                set.components
                    .extend(rows.map(|row| component_of(row, Some(&label))));
                set.anomalies
                    .extend(anomalies(&thread.anomalies, Some(&label)));
            }
        } else {
            set.components = report
                .all_threads
                .iter()
                .map(|r| component_of(r, None))
                .collect();
            let mut total = Anomalies::default();
            for thread in &report.threads {
                total = total.plus(&thread.anomalies);
            }
            set.anomalies = anomalies(&total, None).collect();
        }
        set.frames = super::frames::frames(report, by_thread);
        set
    }
}

/// The counters of `counts`, by kind, for `thread` (or all threads).
fn anomalies<'a>(
    counts: &'a Anomalies,
    thread: Option<&'a Thread>,
) -> impl Iterator<Item = Anomaly> + 'a {
    counts.metric_iter().map(move |(kind, count)| Anomaly {
        thread: thread.cloned(),
        kind,
        count,
    })
}

/// One row's metrics: its buckets over `bounds`, its exponential buckets, its counts.
fn component(row: &Row, thread: Option<&Thread>, report: &Report, bounds: &[f64]) -> Component {
    let unit = seconds_per_unit(report);
    let dist = &row.distribution;
    let max = Exponential::DEFAULT_MAX_BUCKETS;
    Component {
        component: row.component.clone(),
        thread: thread.cloned(),
        buckets: spread(dist, report, bounds),
        exponential: Exponential::of(dist, unit, Exponential::MAX_SCALE, max),
        count: row.stats.samples,
        sum: row.stats.total * unit,
        quantiles: [row.stats.median, row.stats.p99, row.stats.p999].map(|v| v * unit),
        seen: row.stats.seen,
        lost: row.stats.lost,
        bypass: row.stats.bypass,
        outliers: row.stats.outliers,
        allocs: row.allocs.map(|a| a.inclusive()),
    }
}

/// One of `report`'s units in seconds.
fn seconds_per_unit(report: &Report) -> f64 {
    match report.unit {
        Unit::Cycles => 1e-9 / report.ticks_per_ns,
        Unit::Time => 1e-9,
    }
}

/// A row's distribution ([`Row::distribution`]) spread over `bounds` (seconds): a
/// bucket goes to the first bound at least its lowest value (to within a part per
/// billion, so a value on a bound stays in its bucket). All zeros for no values.
fn spread(dist: &Distribution, report: &Report, bounds: &[f64]) -> Vec<u64> {
    let mut counts = vec![0u64; bounds.len() + 1];
    // The bucket's lowest value, from the report's unit to seconds.
    let per_second = seconds_per_unit(report);
    for bucket in dist.buckets() {
        let secs = bucket.low * per_second;
        // On a bound is in its bucket, whatever the rounding of ticks to seconds.
        let i = bounds.partition_point(|bound| *bound * (1.0 + 1e-9) < secs);
        counts[i] += bucket.count;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Summary;

    fn row(values: &[(u64, u64)]) -> Row {
        Row::with_ticks("c", values)
    }

    /// A report in `unit` at `ticks_per_ns`, with no rows: what `spread` reads of it.
    fn report(unit: Unit, ticks_per_ns: f64) -> Report {
        Report {
            unit,
            ticks_per_ns,
            frequency_accuracy: 1e-6,
            ..Report::default()
        }
    }

    /// `row`'s buckets over `bounds` as in `report` (its distribution in the report's
    /// unit, as a report read from JSON places it).
    fn spread_of(row: &Row, report: &Report, bounds: &[f64]) -> Vec<u64> {
        let mut report = Report {
            all_threads: vec![row.clone()],
            ..report.clone()
        };
        report.place_distributions();
        spread(&report.all_threads[0].distribution, &report, bounds)
    }

    #[test]
    fn a_series_holds_its_values_in_exponential_buckets_too() {
        // 2 ticks per ns: 10 ns, 100 ns and 101 ns.
        let row = row(&[(20, 3), (200, 5), (202, 7)]);
        let report = Report {
            all_threads: vec![Row {
                component: "c".into(),
                ..row.clone()
            }],
            ..report(Unit::Cycles, 2.0)
        };
        let set = MetricSet::of(&report, &Buckets::default(), false);
        let e = &set.components[0].exponential;
        // 10 to 101 ns: 3.3 doublings, 3,400 buckets at scale 10; 1,700 at scale 9.
        assert_eq!((e.scale, e.count()), (9, 15));
        assert!(e.counts.len() <= Exponential::DEFAULT_MAX_BUCKETS);
        for (q, seconds) in [(0.1, 10e-9), (0.3, 100e-9), (0.9, 101e-9)] {
            let got = e.quantile(q);
            assert!(
                (got / seconds - 1.0).abs() < 1e-3,
                "q {q}: {got} against {seconds}"
            );
        }
    }

    #[test]
    fn values_fall_in_the_first_bucket_at_or_above_them() {
        // 2 ticks per ns: 200 ticks = 100 ns, exactly on the second bound.
        let row = row(&[(20, 3), (200, 5), (202, 7), (4_000_000, 1)]);
        let bounds = [50e-9, 100e-9, 1e-6];
        for unit in [Unit::Cycles, Unit::Time] {
            assert_eq!(spread_of(&row, &report(unit, 2.0), &bounds), [3, 5, 7, 1]);
        }
    }

    #[test]
    fn a_row_without_histogram_has_empty_buckets() {
        let row = Row {
            stats: Summary {
                samples: 3,
                ..Summary::default()
            },
            ..Row::default()
        };
        assert_eq!(spread_of(&row, &report(Unit::Cycles, 1.0), &[1e-6]), [0, 0]);
    }

    #[test]
    fn bucket_bounds_are_checked() {
        let us = Duration::from_micros;
        assert!(Buckets::new([us(1), us(2)]).is_ok());
        for bad in [vec![], vec![Duration::ZERO, us(1)], vec![us(2), us(2)]] {
            assert_eq!(
                Buckets::new(bad.clone()),
                Err(InvalidBuckets { bounds: bad })
            );
        }
        let default = Buckets::default();
        assert_eq!(default.seconds()[0], 1e-8);
        assert_eq!(default.seconds().last(), Some(&10.0));
    }
}
