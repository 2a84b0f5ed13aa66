//! The metric families of one scrape, whatever the format: names, types, help texts,
//! labels and values, built once from a [`MetricSet`]. [`text`](super::text) writes
//! them in the two text formats, [`protobuf`](super::protobuf) in Prometheus's
//! protobuf format (with the native histograms).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `latte_latency_seconds` | histogram (classic buckets; native buckets in protobuf) | component (, thread, thread_serial) |
//! | `latte_latency_quantile_seconds` | summary: p50, p99, p99.9, `_sum`, `_count` | component, quantile (, thread, thread_serial) |
//! | `latte_samples_seen_total`, `latte_samples_lost_total` | counter | component (, thread, thread_serial) |
//! | `latte_samples_bypass`, `latte_samples_outliers` | gauge | component (, thread, thread_serial) |
//! | `latte_allocations_total`, `latte_allocated_bytes_total` | counter, with `latte::alloc::Counting` installed only | component (, thread, thread_serial) |
//! | `latte_anomalies_total` | counter | kind (, thread, thread_serial) |
//! | `latte_frames_total`, `latte_frames_over_budget_total` | counter | (thread, thread_serial) |
//! | `latte_clock_info` | info (OpenMetrics), gauge of 1 (classic, protobuf) | clock, frequency_hz, hypervisor |

use latte::exporter::{Component, FrameCounter, Frames, MetricSet, Thread};

/// A metric family's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Info,
}

/// A family: its series share a name, a type and a help text.
pub(crate) struct Family<'a> {
    /// The name as OpenMetrics gives it: without a counter's `_total` or an info's
    /// `_info` ([`Family::classic_name`] adds them).
    pub(crate) name: String,
    pub(crate) kind: Kind,
    /// `seconds`, for the families in seconds (OpenMetrics's `# UNIT`).
    pub(crate) unit: Option<&'static str>,
    pub(crate) help: &'static str,
    pub(crate) metrics: Vec<Metric<'a>>,
}

/// One series of a family: its labels and its value.
pub(crate) struct Metric<'a> {
    pub(crate) labels: Vec<(&'static str, String)>,
    pub(crate) value: Value<'a>,
}

/// A series' value.
pub(crate) enum Value<'a> {
    /// A counter's or a gauge's count.
    Count(u64),
    /// The latency histogram of a series, over `bounds` (seconds, `+Inf` implied).
    Histogram(&'a Component, &'a [f64]),
    /// The quantiles of a series, with its sum and count.
    Summary(&'a Component),
    /// An info metric: its labels are the information, its value 1.
    Info,
}

impl Family<'_> {
    /// The name in the classic text and protobuf formats: a counter's ends in
    /// `_total`, an info's in `_info`.
    pub(crate) fn classic_name(&self) -> String {
        match self.kind {
            Kind::Counter => format!("{}_total", self.name),
            Kind::Info => format!("{}_info", self.name),
            _ => self.name.clone(),
        }
    }
}

/// A series' labels: component, then the thread's if there is one.
fn labels(s: &Component) -> Vec<(&'static str, String)> {
    let mut labels = vec![("component", s.component.clone())];
    labels.extend(s.thread.iter().flat_map(thread));
    labels
}

/// A thread's labels, owned.
fn thread(t: &Thread) -> [(&'static str, String); 2] {
    t.labels().map(|(k, v)| (k, v.to_owned()))
}

/// The families of `set`, in the order a scrape lists them.
pub(crate) fn families(set: &MetricSet) -> Vec<Family<'_>> {
    let mut families = Vec::from(latency(set));
    families.extend(counts(set));
    families.extend(allocations(set));
    families.push(anomalies(set));
    families.extend(frames(set));
    families.push(clock(set));
    families
}

/// A family with one series per [`Component`] of `set`, valued by `value`.
fn per_series<'a>(
    set: &'a MetricSet,
    (name, kind, help): (&str, Kind, &'static str),
    value: impl Fn(&'a Component) -> Value<'a>,
) -> Family<'a> {
    let unit = matches!(kind, Kind::Histogram | Kind::Summary).then_some("seconds");
    Family {
        name: name.into(),
        kind,
        unit,
        help,
        metrics: set
            .components
            .iter()
            .map(|s| Metric {
                labels: labels(s),
                value: value(s),
            })
            .collect(),
    }
}

/// The latency histogram and the summary of its quantiles.
fn latency(set: &MetricSet) -> [Family<'_>; 2] {
    let histogram = (
        "latte_latency_seconds",
        Kind::Histogram,
        "Latency of each component over the whole run (every folded sample).",
    );
    let summary = (
        "latte_latency_quantile_seconds",
        Kind::Summary,
        "Whole-run quantiles of each component's latency (exact ranks over every \
         folded sample); _sum and _count as the histogram's.",
    );
    [
        per_series(set, histogram, |s| Value::Histogram(s, &set.bounds)),
        per_series(set, summary, Value::Summary),
    ]
}

/// Sample counts: counters for what only grows, gauges for what cleaning may lower
/// again.
fn counts(set: &MetricSet) -> [Family<'_>; 4] {
    let seen = (
        "latte_samples_seen",
        Kind::Counter,
        "Samples recorded (folded or lost).",
    );
    let lost = (
        "latte_samples_lost",
        Kind::Counter,
        "Samples overwritten in their ring before latte read them.",
    );
    let bypass = (
        "latte_samples_bypass",
        Kind::Gauge,
        "Samples the cleaning rule flags as OS preemption (BYPASS); they stay in every figure.",
    );
    let outliers = (
        "latte_samples_outliers",
        Kind::Gauge,
        "Samples the cleaning rule flags as outliers (IQR fences); they stay in every figure.",
    );
    [
        per_series(set, seen, |s| Value::Count(s.seen)),
        per_series(set, lost, |s| Value::Count(s.lost)),
        per_series(set, bypass, |s| Value::Count(s.bypass)),
        per_series(set, outliers, |s| Value::Count(s.outliers)),
    ]
}

/// Allocations per component, inclusive (its scopes inside included): none without
/// the counting allocator.
fn allocations(set: &MetricSet) -> Vec<Family<'_>> {
    if set.components.iter().all(|s| s.allocs.is_none()) {
        return Vec::new();
    }
    let count = (
        "latte_allocations",
        Kind::Counter,
        "Allocations while the component's scopes were open (those inside included).",
    );
    let bytes = (
        "latte_allocated_bytes",
        Kind::Counter,
        "Bytes allocated while the component's scopes were open (those inside included).",
    );
    let pick = |f: fn(&latte::alloc::Allocs) -> u64| {
        move |s: &Component| Value::Count(s.allocs.as_ref().map_or(0, f))
    };
    vec![
        per_series(set, count, pick(latte::alloc::Allocs::count)),
        per_series(set, bytes, pick(latte::alloc::Allocs::bytes)),
    ]
}

fn anomalies(set: &MetricSet) -> Family<'_> {
    Family {
        name: "latte_anomalies".into(),
        kind: Kind::Counter,
        unit: None,
        help: "Misuse and clock anomalies latte counted, by kind.",
        metrics: set
            .anomalies
            .iter()
            .map(|a| {
                let mut labels = vec![("kind", a.kind.to_owned())];
                labels.extend(a.thread.iter().flat_map(thread));
                Metric {
                    labels,
                    value: Value::Count(a.count),
                }
            })
            .collect(),
    }
}

/// The frame counters, if a thread marked frames.
fn frames(set: &MetricSet) -> Vec<Family<'_>> {
    if set.frames.is_empty() {
        return Vec::new();
    }
    let counter = |counter: &FrameCounter| Family {
        name: format!("latte_{}", counter.words.join("_")),
        kind: Kind::Counter,
        unit: None,
        help: counter.help,
        metrics: set
            .frames
            .iter()
            .map(|f| Metric {
                labels: f.thread.iter().flat_map(thread).collect(),
                value: Value::Count((counter.value)(f)),
            })
            .collect(),
    };
    Frames::COUNTERS.iter().map(counter).collect()
}

fn clock(set: &MetricSet) -> Family<'_> {
    Family {
        name: "latte_clock".into(),
        kind: Kind::Info,
        unit: None,
        help: "The clock latte reads, its calibrated frequency, and whether a hypervisor runs.",
        metrics: vec![Metric {
            labels: vec![
                ("clock", set.clock.clone()),
                ("frequency_hz", format!("{:.0}", set.frequency_hz)),
                ("hypervisor", set.hypervisor.to_owned()),
            ],
            value: Value::Info,
        }],
    }
}

/// A metric set with one series and one anomaly, for the formats' tests.
#[cfg(test)]
pub(crate) fn example_set() -> MetricSet {
    use latte::exporter::{Anomaly, Exponential};
    let mut set = MetricSet::default();
    set.clock = "TSC".into();
    set.frequency_hz = 2.6e9;
    set.hypervisor = "yes";
    set.bounds = vec![1e-6, 1e-3];
    set.components = vec![Component {
        component: "say \"hi\"".into(),
        buckets: vec![2, 3, 1],
        count: 6,
        sum: 0.5,
        quantiles: [1e-6, 2e-3, 0.25],
        seen: 7,
        lost: 1,
        exponential: Exponential::from_values([(1e-6, 2), (5e-4, 3), (0.25, 1)], 10, 2_048),
        ..Component::default()
    }];
    set.anomalies = vec![Anomaly {
        thread: None,
        kind: "clock_backwards",
        count: 4,
    }];
    set
}
