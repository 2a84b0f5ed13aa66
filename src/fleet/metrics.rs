//! A whole-run [`Report`] as one neutral metric set: per component (and thread, when
//! asked), the latency histogram in seconds over the configured buckets, the tail
//! quantiles and the counts; per process, the anomalies and the clock. Both encoders
//! (Prometheus, OTLP) write this set; neither reads the report itself.

use crate::report::Unit;
use crate::report::{Report, Row};

/// The quantiles exported as gauges.
pub(crate) const QUANTILES: [f64; 3] = [0.5, 0.99, 0.999];

/// Everything exported from one report.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct MetricSet {
    /// The counter read (`TSC`, ...).
    pub(crate) clock: String,
    /// Its calibrated frequency, in hertz.
    pub(crate) frequency_hz: f64,
    /// `yes`, `no` or `unknown`.
    pub(crate) hypervisor: &'static str,
    /// The histograms' bucket upper bounds in seconds (`+Inf` implied after the last).
    pub(crate) bounds: Vec<f64>,
    /// One per component (per component and thread with the thread label).
    pub(crate) series: Vec<Series>,
    /// Anomaly counts: (thread, kind, count); the thread is `None` (all threads
    /// together) without the thread label.
    pub(crate) anomalies: Vec<(Option<Thread>, &'static str, u64)>,
}

/// A thread, as labels: its name, and its serial number in the process, since names
/// repeat (a pool's workers) and series must not.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Thread {
    /// The thread's name.
    pub(crate) name: String,
    /// Its serial number, as the report's `THREAD name (#serial)` line gives it.
    pub(crate) serial: String,
}

impl Thread {
    /// The labels (or attributes) for this thread: `thread` and `thread_serial`.
    pub(crate) fn labels(&self) -> [(&'static str, &str); 2] {
        [("thread", &self.name), ("thread_serial", &self.serial)]
    }
}

/// One component's metrics.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Series {
    /// The component (the id's name).
    pub(crate) component: String,
    /// The thread, with the thread label.
    pub(crate) thread: Option<Thread>,
    /// Samples in each bucket of [`MetricSet::bounds`] (not cumulative), and one more
    /// for the values above the last bound.
    pub(crate) buckets: Vec<u64>,
    /// Samples in the histogram (every folded one).
    pub(crate) count: u64,
    /// Their sum, in seconds.
    pub(crate) sum: f64,
    /// [`QUANTILES`]' values in seconds, from the whole-run histogram.
    pub(crate) quantiles: [f64; 3],
    /// Samples recorded (folded and lost): only grows.
    pub(crate) seen: u64,
    /// Samples overwritten before latte read them: only grows.
    pub(crate) lost: u64,
    /// Values the cleaning rule flags as preemption (BYPASS): may go down again.
    pub(crate) bypass: u64,
    /// Values the cleaning rule flags as outliers: may go down again.
    pub(crate) outliers: u64,
}

impl MetricSet {
    /// The metric set of `report` over buckets `bounds` (seconds, increasing).
    pub(crate) fn of(report: &Report, bounds: &[f64], by_thread: bool) -> MetricSet {
        let per_second = |v: f64| match report.unit {
            Unit::Cycles => v / report.ticks_per_ns * 1e-9,
            Unit::Time => v * 1e-9,
        };
        let series_of = |row: &Row, thread: Option<&Thread>| Series {
            component: row.component.clone(),
            thread: thread.cloned(),
            buckets: buckets(row, report, bounds),
            count: row.stats.samples,
            sum: per_second(row.stats.total),
            quantiles: [row.stats.median, row.stats.p99, row.stats.p999].map(per_second),
            seen: row.stats.seen,
            lost: row.stats.lost,
            bypass: row.stats.bypass,
            outliers: row.stats.outliers,
        };
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
                set.series
                    .extend(rows.map(|row| series_of(row, Some(&label))));
                for (kind, count) in thread.anomalies.iter() {
                    set.anomalies.push((Some(label.clone()), kind, count));
                }
            }
        } else {
            set.series = report
                .all_threads
                .iter()
                .map(|r| series_of(r, None))
                .collect();
            let mut total = crate::diagnostics::Anomalies::default();
            for thread in &report.threads {
                total = total.plus(&thread.anomalies);
            }
            set.anomalies = total.iter().map(|(kind, n)| (None, kind, n)).collect();
        }
        set
    }
}

/// The row's histogram ([`Row::distribution`]) spread over `bounds` (seconds): a
/// histogram bucket goes to the first bound at least its lowest value (to within a part
/// per billion, so a value on a bound stays in its bucket). All zeros if the row has no
/// histogram or it does not decode.
fn buckets(row: &Row, report: &Report, bounds: &[f64]) -> Vec<u64> {
    let mut counts = vec![0u64; bounds.len() + 1];
    let Ok(dist) = row.distribution(report) else {
        return counts;
    };
    // The bucket's lowest value, from the report's unit to seconds.
    let per_second = match report.unit {
        Unit::Cycles => 1e-9 / report.ticks_per_ns,
        Unit::Time => 1e-9,
    };
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
    use base64::Engine;
    use hdrhistogram::Histogram;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

    fn row(values: &[(u64, u64)]) -> Row {
        let mut hist = Histogram::<u64>::new(3).unwrap();
        for (v, n) in values {
            hist.record_n(*v, *n).unwrap();
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&hist, &mut bytes)
            .unwrap();
        Row {
            component: "c".into(),
            stats: Summary {
                samples: hist.len(),
                ..Summary::default()
            },
            histogram: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            ..Row::default()
        }
    }

    /// A report in `unit` at `ticks_per_ns`, with no rows: what `buckets` reads of it.
    fn report(unit: Unit, ticks_per_ns: f64) -> Report {
        Report {
            format_version: Report::FORMAT_VERSION,
            label: None,
            unit,
            data: crate::report::Data::Raw,
            figures: crate::report::Figures::default(),
            clock: "TSC".into(),
            ticks_per_ns,
            frequency_accuracy: 1e-6,
            resolution: 1.0,
            cleaning: crate::report::Cleaning::default(),
            overhead: None,
            threads: Vec::new(),
            all_threads: Vec::new(),
            teardown_drops: 0,
            footprint: None,
            environment: None,
            periodic_failures: None,
        }
    }

    #[test]
    fn values_fall_in_the_first_bucket_at_or_above_them() {
        // 2 ticks per ns: 200 ticks = 100 ns, exactly on the second bound.
        let row = row(&[(20, 3), (200, 5), (202, 7), (4_000_000, 1)]);
        let bounds = [50e-9, 100e-9, 1e-6];
        for unit in [Unit::Cycles, Unit::Time] {
            assert_eq!(buckets(&row, &report(unit, 2.0), &bounds), [3, 5, 7, 1]);
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
        assert_eq!(buckets(&row, &report(Unit::Cycles, 1.0), &[1e-6]), [0, 0]);
        let garbled = Row {
            histogram: Some("not base64!".into()),
            ..row
        };
        assert_eq!(
            buckets(&garbled, &report(Unit::Cycles, 1.0), &[1e-6]),
            [0, 0]
        );
    }
}
