//! latte's OTLP/HTTP export, received by a small server on 127.0.0.1 (`tiny_http`) and
//! decoded with the `opentelemetry-proto` types: counts, bucket totals and the frame
//! counters equal the report.

use crossbeam_channel::{Receiver, unbounded};
use latte::{Data, Id, ReportOptions, Unit};
use latte_otlp::{Histograms, Otlp};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data as MetricData;
use opentelemetry_proto::tonic::metrics::v1::{Metric, number_data_point};
use prost::Message;
use std::time::{Duration, Instant};

static A: Id = Id::new("fleet_otlp_a");
static B: Id = Id::new("fleet_otlp_b");

/// What the collector received: the path and the decoded body.
pub(super) type Pushed = (
    String,
    Result<ExportMetricsServiceRequest, prost::DecodeError>,
);

/// A collector on 127.0.0.1 that answers 200 to every POST, `delay` after reading it,
/// and hands over the path and the decoded body. Returns its URL.
pub(super) fn collector(delay: Duration) -> (String, Receiver<Pushed>) {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/v1/metrics",
        server.server_addr().to_ip().unwrap()
    );
    let (tx, received) = unbounded();
    std::thread::spawn(move || {
        for mut request in server.incoming_requests() {
            let mut body = Vec::new();
            let _ = request.as_reader().read_to_end(&mut body);
            let path = request.url().to_owned();
            std::thread::sleep(delay);
            let _ = request.respond(tiny_http::Response::empty(200));
            let _ = tx.send((path, ExportMetricsServiceRequest::decode(body.as_slice())));
        }
    });
    (url, received)
}

fn component(attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> String {
    let kv = attributes.iter().find(|kv| kv.key == "component");
    match kv.and_then(|kv| kv.value.as_ref()?.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        _ => String::new(),
    }
}

fn metric<'a>(request: &'a ExportMetricsServiceRequest, name: &str) -> &'a Metric {
    let scope = &request.resource_metrics[0].scope_metrics[0];
    scope.metrics.iter().find(|m| m.name == name).unwrap()
}

/// How a histogram point's buckets are laid out.
#[derive(Debug)]
enum Shape {
    /// Explicit: this many bucket counts over this many bounds.
    Explicit(usize, usize),
    /// Exponential, at this scale.
    Exponential(i32),
}

/// The histogram points of a request: (component, count, sum of bucket counts, shape).
fn histograms(request: &ExportMetricsServiceRequest) -> Vec<(String, u64, u64, Shape)> {
    match &metric(request, "latte.latency").data {
        Some(MetricData::Histogram(h)) => h
            .data_points
            .iter()
            .map(|p| {
                let total = p.bucket_counts.iter().sum();
                let shape = Shape::Explicit(p.bucket_counts.len(), p.explicit_bounds.len());
                (component(&p.attributes), p.count, total, shape)
            })
            .collect(),
        Some(MetricData::ExponentialHistogram(h)) => h
            .data_points
            .iter()
            .map(|p| {
                let positive = p
                    .positive
                    .as_ref()
                    .map_or(0, |b| b.bucket_counts.iter().sum());
                let total = p.zero_count + positive;
                (
                    component(&p.attributes),
                    p.count,
                    total,
                    Shape::Exponential(p.scale),
                )
            })
            .collect(),
        other => panic!("latte.latency is not a histogram: {other:?}"),
    }
}

#[test]
fn the_otlp_export_decodes_to_the_report() {
    // Exponential by default; explicit buckets on request.
    for (round, kind) in [(1, None), (2, Some(Histograms::Explicit))] {
        let want_exponential = kind.is_none();
        let request = export_once(kind, round);
        let latency = &metric(&request, "latte.latency").data;
        assert_eq!(
            matches!(latency, Some(MetricData::ExponentialHistogram(_))),
            want_exponential
        );
    }
}

/// Records into A and B under an agent pushing to a collector (`kind`: the
/// exporter's histograms, if not the default), checks the first push holding every
/// sample against the report, and returns it. `round`: how many times this ran
/// (the counters are whole-run).
fn export_once(kind: Option<Histograms>, round: i64) -> ExportMetricsServiceRequest {
    let _turn = super::agent_turn();
    let (url, received) = collector(Duration::ZERO);
    let otlp = Otlp::new(url, Duration::from_millis(200));
    let otlp = match kind {
        Some(kind) => otlp.histograms(kind),
        None => otlp,
    };
    let pushes = otlp.pushes();
    let guard = latte::builder()
        .unit(Unit::Time)
        .data(Data::Raw)
        .exporter(otlp)
        .frame_budget(Duration::from_nanos(1))
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    // Five frames, each longer than the 1 ns budget.
    std::thread::spawn(|| (0..6).for_each(|_| latte::latte_frame!()))
        .join()
        .unwrap();
    for i in 0..7_000u64 {
        latte::record(&A, 50 + i % 700);
    }
    for i in 0..900u64 {
        latte::record(&B, 40_000 + i * 11);
    }
    let report = latte::Report::collect(&ReportOptions {
        unit: Unit::Time,
        data: Data::Raw,
        ..ReportOptions::default()
    });
    let want = expected(&report);
    assert_eq!(want[0].1 % 7_000, 0);
    assert_eq!(want[1].1 % 900, 0);
    let request = first_complete_push(&received, &want, 5 * round);
    check_histograms(&request, &want);
    check_seen(&request, &want);
    assert_eq!(frame_counter(&request, "latte.frames"), 5 * round);
    assert_eq!(
        frame_counter(&request, "latte.frames.over_budget"),
        5 * round
    );
    // The push thread counts a push once it has read the answer: wait for that.
    let deadline = Instant::now() + Duration::from_secs(5);
    while pushes.sent() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let (sent, dropped) = (pushes.sent(), pushes.dropped());
    assert!(sent >= 1, "pushes the collector accepted: {sent}");
    assert_eq!(dropped, 0, "a collector that answers at once drops nothing");
    guard.stop().unwrap();
    request
}

/// The value of a frame counter: a monotonic sum of one point (no thread label).
fn frame_counter(request: &ExportMetricsServiceRequest, name: &str) -> i64 {
    let Some(MetricData::Sum(sum)) = &metric(request, name).data else {
        panic!("{name} is not a sum");
    };
    assert!(sum.is_monotonic, "{name} is a counter");
    match sum.data_points[..] {
        [ref point] => match point.value {
            Some(number_data_point::Value::AsInt(n)) => n,
            ref other => panic!("{name}: {other:?}"),
        },
        ref points => panic!("{name}: {} points", points.len()),
    }
}

/// Per component of this test: its name, samples and seen, as the report has them.
fn expected(report: &latte::Report) -> Vec<(String, u64, u64)> {
    [&A, &B]
        .iter()
        .map(|id| {
            let row = report
                .all_threads
                .iter()
                .find(|r| r.component == id.name())
                .unwrap();
            (id.name().to_owned(), row.stats.samples, row.stats.seen)
        })
        .collect()
}

/// The first push made after everything was recorded.
/// The first push with every sample of `want` and `frames` frames: the frames are
/// marked on a thread of their own, whose ring the drain may read after the samples'.
fn first_complete_push(
    received: &Receiver<Pushed>,
    want: &[(String, u64, u64)],
    frames: i64,
) -> ExportMetricsServiceRequest {
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut last = None;
    loop {
        let Ok((path, decoded)) = received.recv_deadline(deadline) else {
            panic!("no push with every sample and {frames} frames; the last: {last:?}");
        };
        assert_eq!(path, "/v1/metrics");
        let request = decoded.expect("a valid ExportMetricsServiceRequest");
        let points = histograms(&request);
        let mine = |name: &str| points.iter().find(|p| p.0 == name).map_or(0, |p| p.1);
        let scope = &request.resource_metrics[0].scope_metrics[0];
        let seen = scope.metrics.iter().any(|m| m.name == "latte.frames");
        let has_frames = seen && frame_counter(&request, "latte.frames") == frames;
        let counts: Vec<(String, u64)> = points.iter().map(|p| (p.0.clone(), p.1)).collect();
        last = Some((
            counts,
            seen.then(|| frame_counter(&request, "latte.frames")),
        ));
        if mine(&want[0].0) == want[0].1 && mine(&want[1].0) == want[1].1 && has_frames {
            return request;
        }
    }
}

/// Each histogram point holds every sample, in one bucket per bound plus `+Inf`.
fn check_histograms(request: &ExportMetricsServiceRequest, want: &[(String, u64, u64)]) {
    let scope = &request.resource_metrics[0].scope_metrics[0];
    for m in &scope.metrics {
        let kind = match &m.data {
            Some(MetricData::Histogram(h)) => format!("histogram, {} points", h.data_points.len()),
            Some(MetricData::ExponentialHistogram(h)) => {
                format!("exponential histogram, {} points", h.data_points.len())
            }
            Some(MetricData::Sum(s)) => format!("sum, {} points", s.data_points.len()),
            Some(MetricData::Gauge(g)) => format!("gauge, {} points", g.data_points.len()),
            _ => "other".into(),
        };
        eprintln!("{} [{}] {kind}", m.name, m.unit);
    }
    for (name, count, total, shape) in histograms(request) {
        eprintln!("{name}: count {count}, buckets add up to {total}, {shape:?}");
        let Some(expected) = want.iter().find(|w| w.0 == name) else {
            continue; // another test's component
        };
        assert_eq!(count, expected.1, "{name}: count");
        assert_eq!(total, expected.1, "{name}: the buckets add up to the count");
        match shape {
            Shape::Explicit(buckets, bounds) => {
                assert_eq!(
                    buckets,
                    bounds + 1,
                    "{name}: one bucket per bound, and +Inf"
                );
            }
            Shape::Exponential(scale) => {
                let scales = latte::exporter::Exponential::MIN_SCALE
                    ..=latte::exporter::Exponential::MAX_SCALE;
                assert!(scales.contains(&scale), "{name}: scale {scale}");
            }
        }
    }
}

/// `latte.samples.seen` is a monotonic sum with each component's count.
fn check_seen(request: &ExportMetricsServiceRequest, want: &[(String, u64, u64)]) {
    let Some(MetricData::Sum(seen)) = &metric(request, "latte.samples.seen").data else {
        panic!("latte.samples.seen is not a sum");
    };
    assert!(seen.is_monotonic);
    for (name, _, seen_count) in want {
        let point = seen
            .data_points
            .iter()
            .find(|p| &component(&p.attributes) == name)
            .unwrap();
        assert_eq!(
            point.value,
            Some(number_data_point::Value::AsInt(*seen_count as i64))
        );
    }
}

/// A collector that takes 600 ms per push, well within the push timeout but six
/// intervals long, still gets the final state: the push at stop replaces the report
/// waiting for the one in flight.
#[test]
fn a_slow_collector_still_gets_the_final_state() {
    static STEADY: Id = Id::new("fleet_otlp_steady");
    static LAST: Id = Id::new("fleet_otlp_last");
    let _turn = super::agent_turn();
    let (url, received) = collector(Duration::from_millis(600));
    let otlp = Otlp::new(url, Duration::from_millis(100));
    let pushes = otlp.pushes();
    let guard = super::quiet(otlp);
    latte::record(&STEADY, 5);
    // Wait until the collector is slow enough to matter: a push arrived, and a push
    // that fell due was dropped because a report still waited.
    let deadline = Instant::now() + Duration::from_secs(20);
    received
        .recv_deadline(deadline)
        .expect("a first push")
        .1
        .expect("a valid ExportMetricsServiceRequest");
    while pushes.dropped() == 0 {
        assert!(Instant::now() < deadline, "no push was ever dropped");
        std::thread::yield_now();
    }
    for i in 0..3 {
        latte::record(&LAST, 10 + i);
    }
    guard.stop().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, decoded) = received
            .recv_deadline(deadline)
            .expect("a push with the samples recorded just before stop");
        let points = histograms(&decoded.expect("a valid ExportMetricsServiceRequest"));
        if points.iter().any(|p| p.0 == LAST.name() && p.1 == 3) {
            break;
        }
    }
}
