//! `/metrics` as its clients see it: a real Prometheus server (`real_prometheus`), one
//! with native histograms over 4 processes (`native`),
//! `promtool check metrics` on the classic text (`promtool`), hostile clients
//! (`hostile`), and threads that share a name (`labels`).
//!
//! `cargo test -p latte-telemetry-prometheus --test scrape`. The Prometheus and
//! promtool tests need Debian's `prometheus` package: without it they say they
//! skipped, unless `LATTE_REQUIRE_PROMETHEUS=1` (CI) makes that a failure.

mod hostile;
mod labels;
mod native;
mod promtool;
mod real_prometheus;

use std::sync::{Mutex, MutexGuard};

/// One agent per process: the tests that start one take turns.
fn agent_turn() -> MutexGuard<'static, ()> {
    static AGENT: Mutex<()> = Mutex::new(());
    AGENT.lock().unwrap_or_else(|e| e.into_inner())
}

/// A quiet agent (no final report, output discarded) with `settings`, exporting to
/// `endpoint`; and the address `endpoint` serves on.
fn serve(
    endpoint: latte_prometheus::Prometheus,
    settings: impl FnOnce(latte::Builder) -> latte::Builder,
) -> (latte::Guard, std::net::SocketAddr) {
    let addr = endpoint.local_addr();
    let quiet = latte::builder().final_report(false).sink(std::io::sink());
    (settings(quiet).exporter(endpoint).start().unwrap(), addr)
}

/// Whether `program` runs; if not, says the test skipped, or fails it when
/// `LATTE_REQUIRE_PROMETHEUS=1`.
fn installed(program: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    if !found {
        let required = std::env::var("LATTE_REQUIRE_PROMETHEUS").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "LATTE_REQUIRE_PROMETHEUS=1 but `{program}` is not on PATH"
        );
        eprintln!(
            "skipped: the `{program}` binary is not on PATH \
             (apt-get install prometheus; CI sets LATTE_REQUIRE_PROMETHEUS=1)"
        );
    }
    found
}

/// The first answer of `/metrics` that is not a 503: the first report waits for the
/// start-up calibration, which runs at the lowest priority, so on a loaded machine a
/// scrape may answer 503 until it is done (two minutes at most here).
fn scrape_when_ready(addr: std::net::SocketAddr) -> ureq::http::Response<ureq::Body> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        match ureq::get(format!("http://{addr}/metrics")).call() {
            Err(ureq::Error::StatusCode(503)) if std::time::Instant::now() < deadline => {}
            answer => return answer.expect("a scrape"),
        }
    }
}
