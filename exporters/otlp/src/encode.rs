//! One push as an OTLP `ExportMetricsServiceRequest` (`opentelemetry-proto` messages):
//! the metric set's histograms, quantile gauges and counters, with the resource and
//! scope, each point stamped with its time window and temporality.

use crate::Histograms;
use crate::config::Temporality;
use latte::exporter::{Component, Frames, MetricSet, QUANTILES, Thread};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, ExponentialHistogram, ExponentialHistogramDataPoint, Gauge, Histogram,
    HistogramDataPoint, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
    exponential_histogram_data_point, metric::Data, number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use std::time::{SystemTime, UNIX_EPOCH};

fn nanos(t: SystemTime) -> u64 {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
}

fn text(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.into())),
        }),
        ..KeyValue::default()
    }
}

fn attributes(s: &Component) -> Vec<KeyValue> {
    let mut attributes = vec![text("component", &s.component)];
    attributes.extend(thread_attributes(s.thread.as_ref()));
    attributes
}

/// The thread's attributes, `thread` and `thread.serial`, if there is a thread.
fn thread_attributes(thread: Option<&Thread>) -> impl Iterator<Item = KeyValue> + '_ {
    thread
        .into_iter()
        .flat_map(Thread::labels)
        .map(|(key, value)| text(&key.replace('_', "."), value))
}

/// A metric of one kind of data.
fn metric(name: &str, description: &str, unit: &str, data: Data) -> Metric {
    Metric {
        name: name.into(),
        description: description.into(),
        unit: unit.into(),
        data: Some(data),
        ..Metric::default()
    }
}

/// A data point's window: from `start` to `time`.
#[derive(Clone, Copy)]
struct Stamp {
    start: u64,
    time: u64,
}

/// The windows and temporalities of one request's points.
#[derive(Clone, Copy)]
pub(crate) struct Window {
    /// When the agent started: where cumulative points and gauges begin.
    pub(crate) began: SystemTime,
    /// When the last accepted push was made (the agent's start before one was):
    /// where delta points begin.
    pub(crate) since: SystemTime,
    /// This push's time.
    pub(crate) now: SystemTime,
    pub(crate) temporality: Temporality,
}

impl Window {
    /// The stamp and temporality of points that go out as deltas if `delta`.
    fn of(self, delta: bool) -> (Stamp, i32) {
        let (start, temporality) = match delta {
            true => (self.since, AggregationTemporality::Delta),
            false => (self.began, AggregationTemporality::Cumulative),
        };
        let stamp = Stamp {
            start: nanos(start),
            time: nanos(self.now),
        };
        (stamp, temporality as i32)
    }

    /// The latency histogram's.
    fn histograms(self) -> (Stamp, i32) {
        self.of(self.temporality.histograms_delta())
    }

    /// The counters'.
    fn sums(self) -> (Stamp, i32) {
        self.of(self.temporality.sums_delta())
    }

    /// The gauges' (whole-run values, from the agent's start).
    fn gauges(self) -> Stamp {
        self.of(false).0
    }
}

impl Stamp {
    fn point(self, attributes: Vec<KeyValue>, value: number_data_point::Value) -> NumberDataPoint {
        NumberDataPoint {
            attributes,
            start_time_unix_nano: self.start,
            time_unix_nano: self.time,
            value: Some(value),
            ..NumberDataPoint::default()
        }
    }
}

fn as_int(n: u64) -> number_data_point::Value {
    number_data_point::Value::AsInt(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The latency histogram, exponential or over explicit bounds.
fn histogram(set: &MetricSet, window: Window, kind: Histograms) -> Data {
    let (at, temporality) = window.histograms();
    match kind {
        Histograms::Explicit => {
            let points = set.components.iter().map(|s| HistogramDataPoint {
                attributes: attributes(s),
                start_time_unix_nano: at.start,
                time_unix_nano: at.time,
                count: s.count,
                sum: Some(s.sum),
                bucket_counts: s.buckets.clone(),
                explicit_bounds: set.bounds.clone(),
                ..HistogramDataPoint::default()
            });
            Data::Histogram(Histogram {
                data_points: points.collect(),
                aggregation_temporality: temporality,
            })
        }
        Histograms::Exponential => {
            let points = set.components.iter().map(|s| {
                let e = &s.exponential;
                ExponentialHistogramDataPoint {
                    attributes: attributes(s),
                    start_time_unix_nano: at.start,
                    time_unix_nano: at.time,
                    count: e.count(),
                    sum: Some(s.sum),
                    scale: e.scale,
                    zero_count: e.zero_count,
                    positive: Some(exponential_histogram_data_point::Buckets {
                        offset: e.offset,
                        bucket_counts: e.counts.clone(),
                    }),
                    ..ExponentialHistogramDataPoint::default()
                }
            });
            Data::ExponentialHistogram(ExponentialHistogram {
                data_points: points.collect(),
                aggregation_temporality: temporality,
            })
        }
    }
}

/// The latency histogram and its quantile gauges.
fn latency(set: &MetricSet, window: Window, kind: Histograms) -> [Metric; 2] {
    let histogram = histogram(set, window, kind);
    let at = window.gauges();
    let quantiles = set.components.iter().flat_map(|s| {
        QUANTILES.iter().zip(s.quantiles).map(|(q, v)| {
            let mut attributes = attributes(s);
            attributes.push(text("quantile", &q.to_string()));
            at.point(attributes, number_data_point::Value::AsDouble(v))
        })
    });
    let gauge = Gauge {
        data_points: quantiles.collect(),
    };
    [
        metric(
            "latte.latency",
            "Latency of each component over the whole run (every folded sample).",
            "s",
            histogram,
        ),
        metric(
            "latte.latency.quantile",
            "Whole-run quantiles.",
            "s",
            Data::Gauge(gauge),
        ),
    ]
}

/// What a count metric reads of a component.
type Pick = fn(&Component) -> u64;

/// The per-component counts: (name, monotonic, value, unit, description). The samples
/// seen and lost, flagged; with the counting allocator only, the allocations, the
/// scopes inside included.
fn count_metrics(set: &MetricSet) -> Vec<(&'static str, bool, Pick, &'static str, &'static str)> {
    let samples = "Samples, see docs/fleet.md.";
    let sample = "{sample}";
    let mut counts: Vec<(&str, bool, Pick, &str, &str)> = vec![
        ("latte.samples.seen", true, |s| s.seen, sample, samples),
        ("latte.samples.lost", true, |s| s.lost, sample, samples),
        ("latte.samples.bypass", false, |s| s.bypass, sample, samples),
        (
            "latte.samples.outliers",
            false,
            |s| s.outliers,
            sample,
            samples,
        ),
    ];
    if set.components.iter().any(|s| s.allocs.is_some()) {
        let help = "Allocations in the component's scopes, inclusive, see docs/report-format.md.";
        let count: Pick = |s| s.allocs.map_or(0, |a| a.count());
        let bytes: Pick = |s| s.allocs.map_or(0, |a| a.bytes());
        counts.push(("latte.allocations", true, count, "{allocation}", help));
        counts.push(("latte.allocated.bytes", true, bytes, "By", help));
    }
    counts
}

/// The sample counts (sums that only grow, gauges that cleaning may lower) and the
/// anomalies.
fn counts(set: &MetricSet, window: Window) -> Vec<Metric> {
    let (at, temporality) = window.sums();
    let gauge_at = window.gauges();
    let counts = count_metrics(set);
    let sum = |data_points| {
        Data::Sum(Sum {
            data_points,
            aggregation_temporality: temporality,
            is_monotonic: true,
        })
    };
    let mut metrics = Vec::new();
    for (name, monotonic, pick, unit, help) in counts {
        let points = set.components.iter();
        let stamp = if monotonic { at } else { gauge_at };
        let data_points = points
            .map(|s| stamp.point(attributes(s), as_int(pick(s))))
            .collect();
        let data = match monotonic {
            true => sum(data_points),
            false => Data::Gauge(Gauge { data_points }),
        };
        metrics.push(metric(name, help, unit, data));
    }
    let anomalies = set.anomalies.iter().map(|a| {
        let mut attributes = vec![text("kind", a.kind)];
        attributes.extend(thread_attributes(a.thread.as_ref()));
        at.point(attributes, as_int(a.count))
    });
    let data = sum(anomalies.collect());
    metrics.push(metric(
        "latte.anomalies",
        "Misuse and clock anomalies, by kind.",
        "{anomaly}",
        data,
    ));
    metrics.extend(frames(set, at, sum));
    metrics
}

/// The frame counters, if a thread marked frames.
fn frames(set: &MetricSet, at: Stamp, sum: impl Fn(Vec<NumberDataPoint>) -> Data) -> Vec<Metric> {
    if set.frames.is_empty() {
        return Vec::new();
    }
    Frames::COUNTERS
        .iter()
        .map(|counter| {
            let points = set.frames.iter().map(|f| {
                let attributes = thread_attributes(f.thread.as_ref()).collect();
                at.point(attributes, as_int((counter.value)(f)))
            });
            let name = format!("latte.{}", counter.words.join("."));
            metric(&name, counter.help, "{frame}", sum(points.collect()))
        })
        .collect()
}

/// The process: its name and id, the clock.
fn resource(set: &MetricSet) -> Resource {
    let exe = std::env::current_exe().ok();
    let service = exe
        .as_ref()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy());
    Resource {
        attributes: vec![
            text("service.name", service.as_deref().unwrap_or("latte")),
            text("process.pid", &std::process::id().to_string()),
            text("latte.clock", &set.clock),
            text(
                "latte.clock.frequency_hz",
                &format!("{:.0}", set.frequency_hz),
            ),
            text("latte.hypervisor", set.hypervisor),
        ],
        ..Resource::default()
    }
}

/// The export request of `set` (whose histograms and counters are deltas where
/// `window`'s temporality says so) over `window`.
pub(crate) fn request(
    set: &MetricSet,
    window: Window,
    kind: Histograms,
) -> ExportMetricsServiceRequest {
    let mut metrics = latency(set, window, kind).to_vec();
    metrics.extend(counts(set, window));
    let scope = InstrumentationScope {
        name: "latte".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..InstrumentationScope::default()
    };
    let scope_metrics = ScopeMetrics {
        scope: Some(scope),
        metrics,
        ..ScopeMetrics::default()
    };
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(resource(set)),
            scope_metrics: vec![scope_metrics],
            ..ResourceMetrics::default()
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The allocation counts are sums of each component's inclusive counts, and absent
    /// without the counting allocator.
    #[test]
    fn allocations_are_sums_only_with_the_counting_allocator() {
        let mut set = MetricSet::default();
        set.components = vec![Component {
            component: "parse".into(),
            ..Component::default()
        }];
        let names = |set: &MetricSet| -> Vec<&str> {
            count_metrics(set).iter().map(|(name, ..)| *name).collect()
        };
        assert!(!names(&set).iter().any(|n| n.starts_with("latte.alloc")));
        set.components[0].allocs = Some(latte::alloc::Allocs::new(12, 3_000, 11, 2_900));
        let counts = count_metrics(&set);
        let find = |name: &str| counts.iter().find(|c| c.0 == name).unwrap();
        let (_, monotonic, pick, unit, _) = find("latte.allocations");
        assert_eq!(
            (*monotonic, pick(&set.components[0]), *unit),
            (true, 12, "{allocation}")
        );
        let (_, monotonic, pick, unit, _) = find("latte.allocated.bytes");
        assert_eq!(
            (*monotonic, pick(&set.components[0]), *unit),
            (true, 3_000, "By")
        );
    }
}
