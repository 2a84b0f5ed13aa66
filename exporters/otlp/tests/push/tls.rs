//! A private collector over HTTPS: its certificate, made at test time, is trusted
//! through the configured CA; the auth header arrives, the body is gzip and decodes to
//! exponential histograms whose counts add up. Without the CA the push fails, counted
//! and shown in the agent's report, and nothing panics.

use super::Text;
use super::collector::{self, Answer, Pki, latency};
use latte::Id;
use latte_otlp::{Compression, Otlp};
use opentelemetry_proto::tonic::metrics::v1::metric::Data as MetricData;
use std::sync::Arc;
use std::time::Duration;

static TLS_A: Id = Id::new("otlp_tls_a");
static TLS_B: Id = Id::new("otlp_tls_b");
static TLS_FAILED: Id = Id::new("otlp_tls_failed");

#[test]
fn https_through_the_configured_ca_carries_the_header_and_gzip() {
    let _turn = super::agent_turn();
    let pki = Pki::new();
    let ca = std::env::temp_dir().join(format!("latte-otlp-ca-{}.pem", std::process::id()));
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let (url, received) =
        collector::start(Some(pki.server.clone()), Arc::new(|_| Answer::status(200)));
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let otlp = Otlp::new(&url, Duration::from_secs(3_600)) // only the final push
        .ca_certificate(&ca)
        .header("Authorization", "Bearer t0ken")
        .compression(Compression::Gzip);
    let pushes = otlp.pushes();
    let guard = super::quiet(otlp);
    (0..1_000u64).for_each(|i| latte::record(&TLS_A, 1_000 + i * 37));
    (0..250u64).for_each(|i| latte::record(&TLS_B, 50_000 + i * 911));
    guard.stop().unwrap();
    let _ = std::fs::remove_file(&ca);

    let push = collector::next(&received);
    eprintln!(
        "https: {} bytes gzip, {} bytes protobuf; sent {}, failed {}",
        push.raw.len(),
        collector::gunzip(&push.raw).len(),
        pushes.sent(),
        pushes.failed()
    );
    assert_eq!((pushes.sent(), pushes.failed()), (1, 0));
    assert_eq!(push.path, "/v1/metrics");
    assert_eq!(push.header("authorization"), Some("Bearer t0ken"));
    assert_eq!(push.header("content-encoding"), Some("gzip"));
    assert_eq!(push.header("content-type"), Some("application/x-protobuf"));
    assert!(push.raw.starts_with(&[0x1f, 0x8b]), "the body is gzip");
    let scope = &push.request.resource_metrics[0].scope_metrics[0];
    let latency_metric = scope
        .metrics
        .iter()
        .find(|m| m.name == "latte.latency")
        .unwrap();
    assert!(matches!(
        latency_metric.data,
        Some(MetricData::ExponentialHistogram(_))
    ));
    for (id, n) in [(&TLS_A, 1_000), (&TLS_B, 250)] {
        let (count, buckets, ..) = latency(&push.request, id.name()).unwrap();
        assert_eq!((count, buckets), (n, n), "{}", id.name());
    }
}

#[test]
fn https_without_the_ca_fails_the_push_counted_and_shown_in_the_report() {
    let _turn = super::agent_turn();
    let pki = Pki::new();
    let (url, received) =
        collector::start(Some(pki.server.clone()), Arc::new(|_| Answer::status(200)));
    // The system's roots do not know the test CA.
    let otlp = Otlp::new(&url, Duration::from_millis(100));
    let pushes = otlp.pushes();
    let text = Text::default();
    let guard = latte::builder()
        .exporter(otlp)
        .final_report(false)
        .sink(text.clone())
        .start()
        .unwrap();
    latte::record(&TLS_FAILED, 1_000);
    collector::wait_until("a failed push", || pushes.failed() >= 1);
    guard.report().unwrap();
    guard.stop().unwrap();
    let error = pushes.last_error().unwrap();
    let table = text.text();
    eprintln!(
        "without the CA: failed {}, last error: {error}",
        pushes.failed()
    );
    assert_eq!(pushes.sent(), 0);
    assert!(error.contains(&url), "{error}");
    assert!(received.try_recv().is_err(), "no request got through");
    let line = table
        .lines()
        .find(|l| l.contains("exporter otlp failed"))
        .unwrap_or_else(|| panic!("no failure line in:\n{table}"));
    eprintln!("report: {line}");
    assert!(line.contains(&url), "{line}");
}
