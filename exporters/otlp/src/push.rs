//! OTLP/HTTP push: the agent's drain thread leaves a whole-run report at every
//! interval in a one-report mailbox ([`Queue::offer`], never blocking), and the
//! `latte-otlp` thread turns each into an `ExportMetricsServiceRequest`
//! (`opentelemetry-proto` messages, protobuf) and POSTs it with `ureq`, within a
//! timeout. The data is cumulative, so the newest report is the one worth sending:
//! while one waits, a periodic push is skipped (counted as dropped; the endpoint is
//! slow), and the final one replaces it. Why not the `opentelemetry` SDK:
//! docs/design.md ("Exporters").

use crate::Histograms;
use crossbeam_channel::{Receiver, Sender, bounded};
use latte::Report;
use latte::exporter::{Buckets, Frames, MetricSet, QUANTILES, Series, Thread};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, ExponentialHistogram, ExponentialHistogramDataPoint, Gauge, Histogram,
    HistogramDataPoint, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
    exponential_histogram_data_point, metric::Data, number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest a push may take (connect, send, answer), and so the longest the agent's
/// stop waits for the last one.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(2);

/// Counts the push thread and the drain thread share with the user's [`Pushes`](crate::Pushes).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    /// Reports dropped because the queue was full (the endpoint slow or stalled).
    pub(crate) dropped: AtomicU64,
    /// Pushes the endpoint accepted (a 2xx answer).
    pub(crate) sent: AtomicU64,
    /// Pushes that failed (no connection, a timeout, an error status).
    pub(crate) failed: AtomicU64,
}

/// The report waiting for the push thread, if one is.
type Mailbox = Arc<Mutex<Option<Arc<Report>>>>;

/// The drain's end: a one-report mailbox and the bell that wakes the push thread.
/// Dropping it lets the push thread end once the mailbox is empty.
#[derive(Debug)]
pub(crate) struct Queue {
    mailbox: Mailbox,
    bell: Sender<()>,
    stats: Arc<Stats>,
}

impl Queue {
    /// Whether a report still waits for the push thread (the endpoint is slow): then a
    /// periodic push is skipped, counted as a drop, and the drain need not make the
    /// report.
    pub(crate) fn is_full(&self) -> bool {
        if lock(&self.mailbox).is_some() {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Leaves `report` for the push thread; never blocks. A report still waiting is
    /// replaced (and counted as dropped): the newest state wins.
    pub(crate) fn offer(&self, report: Arc<Report>) {
        if lock(&self.mailbox).replace(report).is_some() {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
        // A bell already rung wakes the thread all the same.
        let _ = self.bell.try_send(());
    }
}

/// The mailbox's lock: held only to put or take one `Arc`, so a poisoned one (which
/// cannot happen there) still holds a valid value.
fn lock(mailbox: &Mailbox) -> std::sync::MutexGuard<'_, Option<Arc<Report>>> {
    mailbox.lock().unwrap_or_else(|e| e.into_inner())
}

/// The running push thread.
#[derive(Debug)]
pub(crate) struct Pusher {
    handle: JoinHandle<()>,
    /// Disconnects when the thread ends.
    done: Receiver<()>,
}

impl Pusher {
    /// Starts the push thread, counting into `stats`; returns it and the queue for
    /// the drain.
    pub(crate) fn start(
        url: String,
        buckets: Buckets,
        by_thread: bool,
        kind: Histograms,
        stats: Arc<Stats>,
    ) -> std::io::Result<(Pusher, Queue)> {
        let mailbox = Mailbox::default();
        let (bell, rung) = bounded::<()>(1);
        let (done_tx, done) = bounded::<()>(0);
        let counts = stats.clone();
        let began = SystemTime::now();
        let inbox = mailbox.clone();
        let handle = std::thread::Builder::new()
            .name("latte-otlp".into())
            .spawn(move || {
                let _done = done_tx;
                let config = ureq::Agent::config_builder()
                    .timeout_global(Some(TIMEOUT))
                    .build();
                let agent = ureq::Agent::new_with_config(config);
                // After the bell's last ring (the drain gone), what is left is pushed.
                let waiting = rung.iter().chain([()]).map(|()| lock(&inbox).take());
                for report in waiting.flatten() {
                    let set = MetricSet::of(&report, &buckets, by_thread);
                    let body = request(&set, began, SystemTime::now(), kind).encode_to_vec();
                    let sent = agent
                        .post(&url)
                        .header("Content-Type", "application/x-protobuf")
                        .send(&body[..]);
                    let counter = if sent.is_ok() {
                        &counts.sent
                    } else {
                        &counts.failed
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })?;
        let queue = Queue {
            mailbox,
            bell,
            stats,
        };
        Ok((Pusher { handle, done }, queue))
    }

    /// Waits for the last pushes (the queue has been dropped) at most [`TIMEOUT`] plus
    /// a little; a push still stuck then is left to end on its own.
    pub(crate) fn stop(self) {
        let _ = self.done.recv_timeout(TIMEOUT + Duration::from_millis(500));
        if self.handle.is_finished() {
            let _ = self.handle.join();
        }
    }
}

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

fn attributes(s: &Series) -> Vec<KeyValue> {
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

/// The times of every data point of one request.
#[derive(Clone, Copy)]
struct Stamp {
    start: u64,
    time: u64,
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

const CUMULATIVE: i32 = AggregationTemporality::Cumulative as i32;

fn as_int(n: u64) -> number_data_point::Value {
    number_data_point::Value::AsInt(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The latency histogram, exponential or over explicit bounds.
fn histogram(set: &MetricSet, at: Stamp, kind: Histograms) -> Data {
    match kind {
        Histograms::Explicit => {
            let points = set.series.iter().map(|s| HistogramDataPoint {
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
                aggregation_temporality: CUMULATIVE,
            })
        }
        Histograms::Exponential => {
            let points = set.series.iter().map(|s| {
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
                aggregation_temporality: CUMULATIVE,
            })
        }
    }
}

/// The latency histogram and its quantile gauges.
fn latency(set: &MetricSet, at: Stamp, kind: Histograms) -> [Metric; 2] {
    let histogram = histogram(set, at, kind);
    let quantiles = set.series.iter().flat_map(|s| {
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

/// The sample counts (sums that only grow, gauges that cleaning may lower) and the
/// anomalies.
fn counts(set: &MetricSet, at: Stamp) -> Vec<Metric> {
    type Pick = fn(&Series) -> u64;
    let counts: [(&str, bool, Pick); 4] = [
        ("latte.samples.seen", true, |s| s.seen),
        ("latte.samples.lost", true, |s| s.lost),
        ("latte.samples.bypass", false, |s| s.bypass),
        ("latte.samples.outliers", false, |s| s.outliers),
    ];
    let sum = |data_points| {
        Data::Sum(Sum {
            data_points,
            aggregation_temporality: CUMULATIVE,
            is_monotonic: true,
        })
    };
    let mut metrics = Vec::new();
    for (name, monotonic, pick) in counts {
        let points = set.series.iter();
        let data_points = points
            .map(|s| at.point(attributes(s), as_int(pick(s))))
            .collect();
        let data = match monotonic {
            true => sum(data_points),
            false => Data::Gauge(Gauge { data_points }),
        };
        metrics.push(metric(
            name,
            "Samples, see docs/fleet.md.",
            "{sample}",
            data,
        ));
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

/// The export request of `set`: cumulative since `began`, as of `now`.
pub(crate) fn request(
    set: &MetricSet,
    began: SystemTime,
    now: SystemTime,
    kind: Histograms,
) -> ExportMetricsServiceRequest {
    let at = Stamp {
        start: nanos(began),
        time: nanos(now),
    };
    let mut metrics = latency(set, at, kind).to_vec();
    metrics.extend(counts(set, at));
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
