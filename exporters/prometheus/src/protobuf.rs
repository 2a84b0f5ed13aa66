//! Metric families in Prometheus's protobuf exposition format: length-delimited
//! `io.prometheus.client.MetricFamily` messages, the only format that carries
//! **native histograms**. A Prometheus started with
//! `--enable-feature=native-histograms` asks for it first
//! ([`Format`](super::format::Format)).
//!
//! The latency histogram goes out with both layouts: its classic buckets (`bucket`)
//! and its native buckets (`schema`, `zero_threshold`, `zero_count`, `positive_span`,
//! `positive_delta`), from the series' [`Exponential`] at its scale, or at schema 8,
//! Prometheus's finest, if it was finer (a bucket's middle then within 1/738 of any
//! value in it). Prometheus keeps the native buckets of a histogram that has them.
//!
//! The messages are declared here for `prost`, which writes the wire format, field for
//! field as `io/prometheus/client/metrics.proto` of `prometheus/client_model` defines
//! them (proto2: optional fields, unpacked repeated numbers); the fields latte does
//! not send are left out. Why not a crate that ships them: docs/design.md
//! ("Exporters").

use crate::families::{Family, Kind, Value};
use latte::exporter::{Exponential, QUANTILES};
use prost::Message;

/// Prometheus's finest native-histogram schema.
pub(crate) const MAX_SCHEMA: i32 = 8;
/// The zero bucket's width, `2^-128` as client_golang's default: latte's values of 0
/// count there.
const ZERO_THRESHOLD: f64 = 2.938_735_877_055_719e-39;

/// `io.prometheus.client.LabelPair`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct LabelPair {
    #[prost(string, optional, tag = "1")]
    pub(crate) name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub(crate) value: Option<String>,
}

/// `io.prometheus.client.MetricType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub(crate) enum MetricType {
    Counter = 0,
    Gauge = 1,
    Summary = 2,
    Histogram = 4,
}

/// `io.prometheus.client.Gauge` (and `Counter`, whose other fields latte leaves out).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Number {
    #[prost(double, optional, tag = "1")]
    pub(crate) value: Option<f64>,
}

/// `io.prometheus.client.Quantile`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Quantile {
    #[prost(double, optional, tag = "1")]
    pub(crate) quantile: Option<f64>,
    #[prost(double, optional, tag = "2")]
    pub(crate) value: Option<f64>,
}

/// `io.prometheus.client.Summary`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Summary {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) sample_count: Option<u64>,
    #[prost(double, optional, tag = "2")]
    pub(crate) sample_sum: Option<f64>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) quantile: Vec<Quantile>,
}

/// `io.prometheus.client.Bucket`: a classic bucket.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Bucket {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) cumulative_count: Option<u64>,
    #[prost(double, optional, tag = "2")]
    pub(crate) upper_bound: Option<f64>,
}

/// `io.prometheus.client.BucketSpan`: consecutive native buckets, `offset` after the
/// previous span's end (the first span's: its first bucket's index).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct BucketSpan {
    #[prost(sint32, optional, tag = "1")]
    pub(crate) offset: Option<i32>,
    #[prost(uint32, optional, tag = "2")]
    pub(crate) length: Option<u32>,
}

/// `io.prometheus.client.Histogram`: classic and native buckets.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Histogram {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) sample_count: Option<u64>,
    #[prost(double, optional, tag = "2")]
    pub(crate) sample_sum: Option<f64>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) bucket: Vec<Bucket>,
    #[prost(sint32, optional, tag = "5")]
    pub(crate) schema: Option<i32>,
    #[prost(double, optional, tag = "6")]
    pub(crate) zero_threshold: Option<f64>,
    #[prost(uint64, optional, tag = "7")]
    pub(crate) zero_count: Option<u64>,
    #[prost(message, repeated, tag = "12")]
    pub(crate) positive_span: Vec<BucketSpan>,
    /// Each bucket's count less the one before it (the first's less 0).
    #[prost(sint64, repeated, packed = "false", tag = "13")]
    pub(crate) positive_delta: Vec<i64>,
}

/// `io.prometheus.client.Metric`: one series.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Metric {
    #[prost(message, repeated, tag = "1")]
    pub(crate) label: Vec<LabelPair>,
    #[prost(message, optional, tag = "2")]
    pub(crate) gauge: Option<Number>,
    #[prost(message, optional, tag = "3")]
    pub(crate) counter: Option<Number>,
    #[prost(message, optional, tag = "4")]
    pub(crate) summary: Option<Summary>,
    #[prost(message, optional, tag = "7")]
    pub(crate) histogram: Option<Histogram>,
}

/// `io.prometheus.client.MetricFamily`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct MetricFamily {
    #[prost(string, optional, tag = "1")]
    pub(crate) name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub(crate) help: Option<String>,
    #[prost(enumeration = "MetricType", optional, tag = "3")]
    pub(crate) r#type: Option<i32>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) metric: Vec<Metric>,
}

/// The spans and deltas of native buckets `counts`, the first at (Prometheus's)
/// index `first`. Up to two empty buckets between full ones go in as zeros, longer
/// gaps start a new span (as client_golang writes them); none at all is one empty
/// span, so a histogram without values is still a native one.
fn spans(first: i32, counts: &[u64]) -> (Vec<BucketSpan>, Vec<i64>) {
    let (mut spans, mut deltas) = (Vec::<BucketSpan>::new(), Vec::new());
    let (mut previous, mut end) = (0i64, None::<i32>);
    for (k, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let index = first + k as i32;
        match end {
            Some(e) if index - e <= 2 => {
                for _ in e..index {
                    deltas.push(-previous);
                    previous = 0;
                }
                let span = spans.last_mut().expect("a span is open");
                span.length = Some(span.length() + (index - e) as u32);
            }
            _ => spans.push(BucketSpan {
                offset: Some(end.map_or(index, |e| index - e)),
                length: Some(0),
            }),
        }
        let count = count as i64;
        deltas.push(count - previous);
        previous = count;
        let span = spans.last_mut().expect("a span is open");
        span.length = Some(span.length() + 1);
        end = Some(index + 1);
    }
    if spans.is_empty() {
        spans.push(BucketSpan {
            offset: Some(0),
            length: Some(0),
        });
    }
    (spans, deltas)
}

/// A series' histogram: its classic buckets over `bounds` (seconds) and its native
/// buckets, at schema [`MAX_SCHEMA`] at the finest.
fn histogram(
    exponential: &Exponential,
    buckets: &[u64],
    bounds: &[f64],
    sum: f64,
    count: u64,
) -> Histogram {
    let mut native = exponential.clone();
    native.downscale(native.scale.saturating_sub(MAX_SCHEMA).max(0) as u32);
    // Prometheus numbers the bucket (base^i, base^(i+1)] `i + 1`.
    let (positive_span, positive_delta) = spans(native.offset + 1, &native.counts);
    let bounds = bounds.iter().copied().chain([f64::INFINITY]);
    let cumulative = buckets.iter().scan(0, |total, n| {
        *total += n;
        Some(*total)
    });
    Histogram {
        sample_count: Some(count),
        sample_sum: Some(sum),
        bucket: bounds
            .zip(cumulative)
            .map(|(bound, total)| Bucket {
                cumulative_count: Some(total),
                upper_bound: Some(bound),
            })
            .collect(),
        schema: Some(native.scale),
        zero_threshold: Some(ZERO_THRESHOLD),
        zero_count: Some(native.zero_count),
        positive_span,
        positive_delta,
    }
}

/// One series of a family of type `kind` as a `Metric`.
fn metric(labels: &[(&str, String)], value: &Value, kind: MetricType) -> Metric {
    let label = labels
        .iter()
        .map(|(name, value)| LabelPair {
            name: Some((*name).to_owned()),
            value: Some(value.clone()),
        })
        .collect();
    let mut metric = Metric {
        label,
        ..Metric::default()
    };
    match *value {
        Value::Count(n) => {
            let n = Some(Number {
                value: Some(n as f64),
            });
            match kind {
                MetricType::Counter => metric.counter = n,
                _ => metric.gauge = n,
            }
        }
        Value::Info => metric.gauge = Some(Number { value: Some(1.0) }),
        Value::Histogram(s, bounds) => {
            metric.histogram = Some(histogram(
                &s.exponential,
                &s.buckets,
                bounds,
                s.sum,
                s.count,
            ));
        }
        Value::Summary(s) => {
            let quantile = QUANTILES
                .iter()
                .zip(s.quantiles)
                .map(|(&q, v)| Quantile {
                    quantile: Some(q),
                    value: Some(v),
                })
                .collect();
            metric.summary = Some(Summary {
                sample_count: Some(s.count),
                sample_sum: Some(s.sum),
                quantile,
            });
        }
    }
    metric
}

/// A family as a `MetricFamily`: named as in the classic text (a counter's name ends
/// in `_total`), an info metric as a gauge of 1.
fn family(family: &Family) -> MetricFamily {
    let kind = match family.kind {
        Kind::Counter => MetricType::Counter,
        Kind::Gauge | Kind::Info => MetricType::Gauge,
        Kind::Histogram => MetricType::Histogram,
        Kind::Summary => MetricType::Summary,
    };
    let metrics = family
        .metrics
        .iter()
        .map(|m| metric(&m.labels, &m.value, kind))
        .collect();
    MetricFamily {
        name: Some(family.classic_name()),
        help: Some(family.help.to_owned()),
        r#type: Some(kind as i32),
        metric: metrics,
    }
}

/// `families` as the body of one scrape: each family with a series, length-delimited.
pub(crate) fn encode(families: &[Family]) -> Vec<u8> {
    let mut body = Vec::new();
    for f in families.iter().filter(|f| !f.metrics.is_empty()) {
        family(f)
            .encode_length_delimited(&mut body)
            .expect("a Vec grows as needed");
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::{example_set, families};

    /// The families of a body, decoded.
    fn decode(mut body: &[u8]) -> Vec<MetricFamily> {
        let mut families = Vec::new();
        while !body.is_empty() {
            families.push(MetricFamily::decode_length_delimited(&mut body).unwrap());
        }
        families
    }

    /// The native buckets of `h` as (Prometheus index, count) pairs.
    fn native_buckets(h: &Histogram) -> Vec<(i32, u64)> {
        let (mut out, mut index, mut count, mut deltas) =
            (Vec::new(), 0, 0i64, h.positive_delta.iter());
        for span in &h.positive_span {
            index += span.offset();
            for _ in 0..span.length() {
                count += deltas.next().unwrap();
                out.push((index, count as u64));
                index += 1;
            }
        }
        out
    }

    #[test]
    fn spans_leave_out_long_gaps_and_keep_short_ones_as_zeros() {
        let (spans, deltas) = spans(-3, &[4, 0, 0, 5, 0, 0, 0, 1]);
        let spans: Vec<_> = spans.iter().map(|s| (s.offset(), s.length())).collect();
        assert_eq!(spans, [(-3, 4), (3, 1)]);
        assert_eq!(deltas, [4, -4, 0, 5, -4]);
        let (empty, none) = super::spans(7, &[0, 0]);
        assert_eq!((empty.len(), empty[0].length(), none.len()), (1, 0, 0));
    }

    #[test]
    fn the_histogram_carries_classic_and_native_buckets_that_add_up() {
        let set = example_set();
        let decoded = decode(&encode(&families(&set)));
        let latency = decoded
            .iter()
            .find(|f| f.name() == "latte_latency_seconds")
            .unwrap();
        assert_eq!(latency.r#type(), MetricType::Histogram);
        let h = latency.metric[0].histogram.clone().unwrap();
        assert_eq!((h.sample_count(), h.sample_sum()), (6, 0.5));
        let classic: Vec<_> = h
            .bucket
            .iter()
            .map(|b| (b.upper_bound(), b.cumulative_count()))
            .collect();
        assert_eq!(classic, [(1e-6, 2), (1e-3, 5), (f64::INFINITY, 6)]);
        // 18 doublings in 2,048 buckets: scale 6, kept.
        assert_eq!(h.schema(), 6);
        let buckets = native_buckets(&h);
        assert_eq!(buckets.iter().map(|b| b.1).sum::<u64>() + h.zero_count(), 6);
        for (value, n) in [(1e-6, 2), (5e-4, 3), (0.25, 1)] {
            let i = Exponential::index(value, 6) + 1;
            assert!(buckets.contains(&(i, n)), "{value}: {i} in {buckets:?}");
        }
        // A narrow series at scale 10 comes down to schema 8.
        let narrow = Exponential::from_values([(1e-3, 5), (1.5e-3, 4)], 10, 2_048);
        assert_eq!(narrow.scale, 10);
        let h8 = histogram(&narrow, &[9], &[], 11e-3, 9);
        assert_eq!(h8.schema(), MAX_SCHEMA);
        let at = |v: f64| Exponential::index(v, MAX_SCHEMA) + 1;
        assert_eq!(native_buckets(&h8), [(at(1e-3), 5), (at(1.5e-3), 4)]);
        assert!(
            h.zero_threshold() > 0.0,
            "a native histogram even when empty"
        );
    }

    #[test]
    fn counters_end_in_total_gauges_and_info_are_gauges() {
        let decoded = decode(&encode(&families(&example_set())));
        let find = |name: &str| decoded.iter().find(|f| f.name() == name).unwrap();
        let seen = find("latte_samples_seen_total");
        assert_eq!(seen.r#type(), MetricType::Counter);
        assert_eq!(seen.metric[0].counter.as_ref().unwrap().value(), 7.0);
        assert_eq!(seen.metric[0].label[0].value(), "say \"hi\"");
        let bypass = find("latte_samples_bypass");
        assert_eq!(bypass.r#type(), MetricType::Gauge);
        assert!(bypass.metric[0].gauge.is_some() && bypass.metric[0].counter.is_none());
        let clock = find("latte_clock_info");
        assert_eq!(clock.metric[0].gauge.as_ref().unwrap().value(), 1.0);
        let summary = find("latte_latency_quantile_seconds").metric[0]
            .summary
            .clone();
        let p99 = summary.unwrap().quantile[1].clone();
        assert_eq!((p99.quantile(), p99.value()), (0.99, 2e-3));
    }
}
