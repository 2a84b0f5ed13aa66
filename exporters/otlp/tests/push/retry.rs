//! A collector that is busy: 503 with `Retry-After` then 200, or 429 with an HTTP
//! date, gets the same push again and counts it sent once; one that answers 503
//! forever fails the push within its deadline, and the failure is counted and shows
//! in the agent's JSON report.

use super::Text;
use super::collector::{self, Answer};
use latte::{Format, Id};
use latte_otlp::Otlp;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

static RETRIED: Id = Id::new("otlp_retried");

/// Runs an agent whose only push is the final one, to a collector answering `first`
/// then 200; returns the requests it got and (sent, failed, retries).
fn busy_then_ok(first: fn() -> Answer) -> (Vec<collector::Received>, (u64, u64, u64)) {
    let _turn = super::agent_turn();
    let script = Arc::new(move |n| if n == 0 { first() } else { Answer::status(200) });
    let (url, received) = collector::start(None, script);
    let otlp = Otlp::new(&url, Duration::from_secs(3_600)).timeout(Duration::from_secs(5));
    let pushes = otlp.pushes();
    let guard = super::quiet(otlp);
    (1..=100).for_each(|v| latte::record(&RETRIED, v * 1_000));
    guard.stop().unwrap();
    let got = vec![collector::next(&received), collector::next(&received)];
    (got, (pushes.sent(), pushes.failed(), pushes.retries()))
}

#[test]
fn a_503_with_retry_after_is_retried_and_sent_once() {
    let (got, counts) = busy_then_ok(|| Answer {
        status: 503,
        headers: vec![("Retry-After", "1".into())],
    });
    let waited = got[1].at - got[0].at;
    eprintln!("503 then 200: (sent, failed, retries) {counts:?}, retried after {waited:?}");
    assert_eq!(counts, (1, 0, 1));
    assert_eq!((got[0].status, got[1].status), (503, 200));
    assert_eq!(got[0].raw, got[1].raw, "the same push again");
    assert!(
        waited >= Duration::from_secs(1),
        "Retry-After honoured: {waited:?}"
    );
}

#[test]
fn a_429_with_an_http_date_is_retried_and_sent_once() {
    let (got, counts) = busy_then_ok(|| Answer {
        status: 429,
        headers: vec![(
            "Retry-After",
            httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(1)),
        )],
    });
    eprintln!("429 then 200: (sent, failed, retries) {counts:?}");
    assert_eq!(counts, (1, 0, 1));
    assert_eq!((got[0].status, got[1].status), (429, 200));
    assert_eq!(got[0].raw, got[1].raw, "the same push again");
}

#[test]
fn a_collector_that_answers_503_forever_fails_the_push_within_its_deadline() {
    let _turn = super::agent_turn();
    let (url, received) = collector::start(None, Arc::new(|_| Answer::status(503)));
    let otlp = Otlp::new(&url, Duration::from_millis(100));
    let pushes = otlp.pushes();
    let json = Text::default();
    let guard = latte::builder()
        .exporter(otlp)
        .format(Format::Json)
        .final_report(false)
        .sink(json.clone())
        .start()
        .unwrap();
    latte::record(&RETRIED, 1_000);
    collector::wait_until("a failed push", || pushes.failed() >= 1);
    guard.report().unwrap();
    let stopping = Instant::now();
    guard.stop().unwrap();
    let stop = stopping.elapsed();
    let attempts = received.try_iter().count();
    let (failed, retries) = (pushes.failed(), pushes.retries());
    let error = pushes.last_error().unwrap();
    eprintln!(
        "503 forever: {attempts} attempts, failed {failed}, retries {retries}, stop took {stop:?}; {error}"
    );
    assert_eq!(pushes.sent(), 0);
    assert!(
        retries >= 1 && attempts as u64 > failed,
        "retried before failing"
    );
    assert!(error.contains("status 503"), "{error}");
    // The stop waits for the last push at most the push's timeout and 0.5 s (on a
    // busy machine, somewhat longer).
    assert!(
        stop < Otlp::TIMEOUT + Duration::from_secs(2),
        "stop took {stop:?}"
    );
    let report: serde_json::Value =
        serde_json::from_str(json.text().lines().next().unwrap()).unwrap();
    let failures = &report["exporter_failures"][0];
    eprintln!("report: {failures}");
    assert_eq!(failures["exporter"], "otlp");
    assert!(failures["count"].as_u64().unwrap() >= 1);
    assert!(
        failures["last_error"]
            .as_str()
            .unwrap()
            .contains("status 503")
    );
}
