//! The classic text a scraper gets without asking for OpenMetrics passes
//! `promtool check metrics` (Prometheus's own parser and linter): counters with help
//! text under their `_total` names (frame counters too), quantiles as a summary, no
//! `info` type. Needs the
//! `promtool` binary (Debian's `prometheus` package).

use latte::Id;
use latte_prometheus::Prometheus;
use std::io::Write;
use std::process::{Command, Stdio};

static PLAIN: Id = Id::new("fleet_promtool_plain");

#[test]
fn promtool_accepts_the_classic_text() {
    if !super::installed("promtool") {
        return;
    }
    let _turn = super::agent_turn();
    let budget = std::time::Duration::from_millis(10);
    let (guard, addr) = super::serve(Prometheus::bind("127.0.0.1:0").unwrap(), |b| {
        b.frame_budget(budget)
    });
    // Frame counters too, per thread.
    std::thread::Builder::new()
        .name("promtool-frames".into())
        .spawn(|| (0..5).for_each(|_| latte::latte_frame!()))
        .unwrap()
        .join()
        .unwrap();
    // A name whose label value needs every escape.
    let odd = Id::intern("fleet_promtool \"quoted\" back\\slash\nnew line").unwrap();
    for i in 0..2_000u64 {
        latte::record(&PLAIN, 100 + i % 300);
        latte::record(odd, 5_000 + i);
    }
    let mut answer = super::scrape_when_ready(addr);
    let content_type = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = answer.body_mut().read_to_string().unwrap();
    guard.stop().unwrap();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    assert!(
        body.contains(r#"latte_samples_seen_total{component="fleet_promtool_plain"} 2000"#),
        "{body}"
    );
    assert!(body.contains(r#"component="fleet_promtool \"quoted\" back\\slash\nnew line""#));
    // Without the thread label: one counter over every thread that marked frames.
    assert!(body.contains("\nlatte_frames_total "), "{body}");
    assert!(body.contains("\nlatte_frames_over_budget_total "), "{body}");

    let (ok, said) = promtool_check(&body);
    assert!(ok, "promtool rejected the body:\n{said}\n{body}");
    assert!(said.trim().is_empty(), "promtool's lint:\n{said}");
}

/// `promtool check metrics` on `body`: whether it passed, and what it said.
fn promtool_check(body: &str) -> (bool, String) {
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("promtool check metrics: {}, {said:?}", out.status);
    (out.status.success(), said)
}
