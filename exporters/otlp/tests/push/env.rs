//! The OpenTelemetry variables, in child processes (this test binary run again with
//! `LATTE_OTLP_ENV_CHILD` set, since a process's environment is set before it starts):
//! the generic endpoint gets `/v1/metrics`, the metrics one overrides it and is used
//! as it is, headers are percent-decoded, the delta preference sends deltas that add
//! up, and a bad value is a start error naming the variable (and no header's value).

use super::collector::{self, Answer, Received};
use latte::Id;
use latte_otlp::Otlp;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

static CHILD: Id = Id::new("otlp_env_child");

/// The child: 100 samples, then (when pushing periodically) 50 more after a push was
/// accepted; prints the start's error if there is one.
fn child() {
    let interval = match std::env::var("LATTE_OTLP_ENV_INTERVAL_MS") {
        Ok(ms) => Duration::from_millis(ms.parse().unwrap()),
        Err(_) => Duration::from_secs(3_600),
    };
    let otlp = Otlp::from_env(interval);
    let pushes = otlp.pushes();
    let started = latte::builder()
        .exporter(otlp)
        .final_report(false)
        .sink(std::io::sink())
        .start();
    let guard = match started {
        Ok(guard) => guard,
        Err(e) => {
            println!("start failed: {e}");
            return;
        }
    };
    (1..=100).for_each(|v| latte::record(&CHILD, v * 1_000));
    if interval < Duration::from_secs(3_600) {
        collector::wait_until("an accepted push", || pushes.sent() >= 1);
        (1..=50).for_each(|v| latte::record(&CHILD, v * 5_000));
    }
    guard.stop().unwrap();
    println!("sent {} failed {}", pushes.sent(), pushes.failed());
}

/// Runs the child with `vars` (and no other OTEL variable) and returns its output.
fn run(vars: &[(&str, &str)]) -> Output {
    let me = std::env::current_exe().unwrap();
    let mut command = Command::new(me);
    command.args([
        "--exact",
        "env::the_opentelemetry_variables_configure_the_push",
        "--nocapture",
    ]);
    for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("OTEL_")) {
        command.env_remove(name);
    }
    command
        .env("LATTE_OTLP_ENV_CHILD", "1")
        .envs(vars.iter().copied());
    let output = command.output().unwrap();
    assert!(output.status.success(), "the child failed: {output:?}");
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn ok_collector() -> (String, crossbeam_channel::Receiver<Received>) {
    collector::start(None, Arc::new(|_| Answer::status(200)))
}

#[test]
fn the_opentelemetry_variables_configure_the_push() {
    if std::env::var("LATTE_OTLP_ENV_CHILD").is_ok() {
        child();
        return;
    }
    generic_and_metrics_variables();
    delta_preference();
    bad_values();
}

fn generic_and_metrics_variables() {
    // The generic endpoint is a base: `/v1/metrics` goes under its path. Headers are
    // percent-decoded; gzip on request.
    let (url, received) = ok_collector();
    let base = url.trim_end_matches("/v1/metrics").to_owned() + "/otlp";
    let out = run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &base),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-api-key=s%3Dcr%2Cet , x-team=latte",
        ),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
    ]);
    let push = collector::next(&received);
    eprintln!(
        "generic: {base} -> {}; child: {}",
        push.path,
        stdout(&out).trim()
    );
    assert_eq!(push.path, "/otlp/v1/metrics");
    assert_eq!(push.header("x-api-key"), Some("s=cr,et"));
    assert_eq!(push.header("x-team"), Some("latte"));
    assert_eq!(push.header("content-encoding"), Some("gzip"));
    let (count, ..) = collector::latency(&push.request, CHILD.name()).unwrap();
    assert_eq!(count, 100);

    // The metrics variables override the generic ones and the endpoint is used as is.
    let (url, received) = ok_collector();
    let exact = url.replace("/v1/metrics", "/ingest/metrics");
    run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", &exact),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=generic"),
        ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-api-key=metrics"),
    ]);
    let push = collector::next(&received);
    eprintln!("metrics: {exact} -> {}", push.path);
    assert_eq!(push.path, "/ingest/metrics");
    assert_eq!(push.header("x-api-key"), Some("metrics"));
    assert_eq!(push.header("content-encoding"), None);
}

fn delta_preference() {
    // The delta preference (any case): the pushes' counts add up to the run's 150.
    let (url, received) = ok_collector();
    let out = run(&[
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", &url),
        ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "Delta"),
        ("LATTE_OTLP_ENV_INTERVAL_MS", "100"),
    ]);
    let pushes: Vec<Received> = received.try_iter().collect();
    eprintln!(
        "delta: {} pushes; child: {}",
        pushes.len(),
        stdout(&out).trim()
    );
    assert!(pushes.len() >= 2);
    super::delta::check_deltas(&pushes, CHILD.name(), 150);
}

fn bad_values() {
    // Bad values: the start fails naming the variable, never showing a header's value.
    for (name, value, says) in [
        (
            "OTEL_EXPORTER_OTLP_COMPRESSION",
            "brotli",
            "expected gzip or none",
        ),
        ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "soon", "milliseconds"),
        (
            "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
            "sometimes",
            "expected cumulative, delta or lowmemory",
        ),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-api-key=supersecret,broken",
            "entry 2 is not key=value",
        ),
        (
            "OTEL_EXPORTER_OTLP_CERTIFICATE",
            "/nonexistent/ca.pem",
            "/nonexistent/ca.pem",
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"),
    ] {
        let out = stdout(&run(&[(name, value)]));
        let line = out
            .lines()
            .find(|l| l.starts_with("start failed: "))
            .unwrap_or_default();
        eprintln!("{name}={value:?}: {line}");
        assert!(
            line.starts_with("start failed: the latte exporter otlp failed: "),
            "{out}"
        );
        assert!(line.contains(name) && line.contains(says), "{out}");
        assert!(!out.contains("supersecret"), "{out}");
    }
}
