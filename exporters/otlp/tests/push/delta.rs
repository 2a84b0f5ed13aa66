//! Delta temporality: each push has what the run added since the last push the
//! collector accepted, so the accepted pushes' counts add up to the whole run, each
//! window starting where the last accepted one ended; a push the collector refused
//! in between loses nothing.

use super::collector::{self, Answer, Received, latency};
use latte::Id;
use latte_otlp::{Otlp, Temporality};
use opentelemetry_proto::tonic::metrics::v1::AggregationTemporality;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static DELTA: Id = Id::new("otlp_delta");

/// The accepted pushes' delta counts of `DELTA` add up to `total`, each a delta whose
/// buckets hold its count, each window starting at the previous one's end.
pub(super) fn check_deltas(accepted: &[Received], component: &str, total: u64) {
    let points: Vec<_> = accepted
        .iter()
        .filter_map(|r| latency(&r.request, component))
        .collect();
    let counts: Vec<u64> = points.iter().map(|p| p.0).collect();
    eprintln!("{component}: delta counts of the accepted pushes {counts:?}");
    assert_eq!(counts.iter().sum::<u64>(), total, "{counts:?}");
    for (i, (count, buckets, temporality, start, time)) in points.iter().enumerate() {
        assert_eq!(*temporality, AggregationTemporality::Delta as i32);
        assert_eq!(count, buckets, "push {i}: the buckets hold the count");
        assert!(start < time, "push {i}");
        if i > 0 {
            assert_eq!(
                *start,
                points[i - 1].4,
                "push {i} starts where {} ended",
                i - 1
            );
        }
    }
}

#[test]
fn delta_pushes_add_up_to_the_run_and_a_failed_push_loses_nothing() {
    let _turn = super::agent_turn();
    let refuse = Arc::new(AtomicBool::new(false));
    let script = {
        let refuse = refuse.clone();
        Arc::new(move |_| {
            Answer::status(if refuse.load(Ordering::SeqCst) {
                500
            } else {
                200
            })
        })
    };
    let (url, received) = collector::start(None, script);
    let otlp = Otlp::new(&url, Duration::from_millis(100)).temporality(Temporality::Delta);
    let pushes = otlp.pushes();
    let guard = super::quiet(otlp);
    let mut all = Vec::new();
    let count = |r: &Received| latency(&r.request, DELTA.name()).map_or(0, |p| p.0);
    // 100 samples, until an accepted push has them.
    (1..=100).for_each(|v| latte::record(&DELTA, v * 1_000));
    while !all
        .iter()
        .any(|r: &Received| r.status == 200 && count(r) > 0)
    {
        all.push(collector::next(&received));
    }
    // 50 more while the collector refuses, until a refused push carried them.
    refuse.store(true, Ordering::SeqCst);
    (1..=50).for_each(|v| latte::record(&DELTA, v * 3_000));
    while !all
        .iter()
        .any(|r: &Received| r.status == 500 && count(r) >= 50)
    {
        all.push(collector::next(&received));
    }
    collector::wait_until("the refused push counted", || pushes.failed() >= 1);
    // 25 more once it accepts again, and the final push.
    refuse.store(false, Ordering::SeqCst);
    (1..=25).for_each(|v| latte::record(&DELTA, v * 7_000));
    guard.stop().unwrap();
    all.extend(received.try_iter());
    let accepted: Vec<Received> = all.into_iter().filter(|r| r.status == 200).collect();
    eprintln!(
        "delta: {} accepted pushes, sent {}, failed {}",
        accepted.len(),
        pushes.sent(),
        pushes.failed()
    );
    assert_eq!(accepted.len() as u64, pushes.sent());
    check_deltas(&accepted, DELTA.name(), 175);
    // The counters are deltas too: the samples seen add up as well.
    assert_eq!(seen(&accepted, DELTA.name()), 175);
}

/// The sum of `component`'s `latte.samples.seen` points over `pushes`, each a delta.
fn seen(pushes: &[Received], component: &str) -> i64 {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as Number;
    let name = Value::StringValue(component.into());
    let seen = pushes.iter().filter_map(|r| {
        let scope = &r.request.resource_metrics[0].scope_metrics[0];
        let metric = scope
            .metrics
            .iter()
            .find(|m| m.name == "latte.samples.seen")?;
        let Some(Data::Sum(sum)) = &metric.data else {
            return None;
        };
        assert_eq!(
            sum.aggregation_temporality,
            AggregationTemporality::Delta as i32
        );
        let point = sum.data_points.iter().find(|p| {
            let values = p
                .attributes
                .iter()
                .filter_map(|kv| kv.value.as_ref()?.value.as_ref());
            values.into_iter().any(|v| *v == name)
        })?;
        match point.value {
            Some(Number::AsInt(n)) => Some(n),
            _ => None,
        }
    });
    seen.sum()
}
