//! The live endpoint as `latte-telemetry top` and `curl` see it: intervals that add up
//! to what was recorded, quantiles of each interval's own samples, the whole-run
//! report, the recording switch refused unless enabled and working when it is, and
//! idle clients that hold nobody up.
//!
//! `cargo test -p latte-telemetry-prometheus --test live`. One binary of its own: the
//! switch is process-wide, and the tests take turns.

use latte::exporter::Interval as View;
use latte::{Id, Report};
use latte_prometheus::Live;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// (status, body) of a request.
fn ask(method: &str, addr: SocketAddr, path: &str) -> (u16, String) {
    let url = format!("http://{addr}{path}");
    let agent = agent();
    let mut response = match method {
        "GET" => agent.get(&url).call(),
        _ => agent.post(&url).send_empty(),
    }
    .unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

fn view(addr: SocketAddr) -> Option<View> {
    let (status, body) = ask("GET", addr, "/live");
    (status == 200).then(|| serde_json::from_str(&body).unwrap())
}

/// A quiet agent exporting to `live`.
fn start(live: Live) -> (latte::Guard, SocketAddr) {
    let addr = live.local_addr();
    let guard = latte::builder()
        .final_report(false)
        .sink(std::io::sink())
        .exporter(live)
        .start()
        .unwrap();
    (guard, addr)
}

/// Adds up `component`'s calls over the intervals not seen yet until they reach
/// `expected` (within 20 s), and returns each interval's row of it.
fn intervals_until(
    addr: SocketAddr,
    component: &str,
    expected: u64,
    seen: &mut u64,
) -> Vec<latte::report::Row> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let (mut sum, mut rows) = (0, Vec::new());
    while sum < expected {
        assert!(
            Instant::now() < deadline,
            "only {sum} of {expected} calls came"
        );
        let Some(v) = view(addr) else { continue };
        if v.sequence <= *seen {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        assert_eq!(v.sequence, *seen + 1, "an interval was skipped");
        *seen = v.sequence;
        if let Some(row) = (v.report.all_threads.iter()).find(|r| r.component == component) {
            sum += row.stats.seen;
            rows.push(row.clone());
        }
    }
    assert_eq!(sum, expected, "the intervals add up to what was recorded");
    rows
}

#[test]
fn intervals_add_up_and_hold_their_own_samples() {
    let _turn = turn();
    static WAIT: Id = Id::new("live_wait");
    let live = Live::local(0).unwrap().interval(Duration::from_millis(100));
    let (guard, addr) = start(live);
    let mut seen = 0;
    (0..1_000).for_each(|_| latte::record(&WAIT, 1_000));
    let first = intervals_until(addr, "live_wait", 1_000, &mut seen);
    (0..500).for_each(|_| latte::record(&WAIT, 50_000));
    let second = intervals_until(addr, "live_wait", 500, &mut seen);

    // The whole run's report, from the same endpoint.
    let (status, body) = ask("GET", addr, "/report");
    assert_eq!(status, 200);
    let report: Report = serde_json::from_str(&body).unwrap();
    let whole = report
        .all_threads
        .iter()
        .find(|r| r.component == "live_wait")
        .unwrap();
    assert_eq!(whole.stats.seen, 1_500);
    // Each interval's quantiles are its own samples': the slow ones only after the
    // first 1,000 (whose median is the whole run's).
    let (low, high) = (whole.stats.min, whole.stats.max);
    for row in &first {
        assert!(
            (row.stats.median - low).abs() <= low * 0.001,
            "{row:?} against {low}"
        );
    }
    for row in &second {
        assert!(
            (row.stats.median - high).abs() <= high * 0.001,
            "{row:?} against {high}"
        );
        assert!(row.stats.median > 40.0 * whole.stats.median);
    }

    // Read-only: the switch is refused, and recording stays on.
    let (status, body) = ask("POST", addr, "/recording/off");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Live::control"), "{body}");
    assert!(latte::collect::recording().on);
    assert_eq!(
        ask("GET", addr, "/recording").1,
        r#"{"on":true,"control":false}"#
    );
    assert_eq!(ask("GET", addr, "/nothing").0, 404);
    assert_eq!(ask("POST", addr, "/live").0, 405);
    guard.stop().unwrap();
}

#[test]
fn the_switch_works_where_it_is_enabled_and_the_view_says_the_pause() {
    let _turn = turn();
    static WORK: Id = Id::new("live_switch_work");
    let live = Live::local(0)
        .unwrap()
        .interval(Duration::from_millis(100))
        .control(true);
    let (guard, addr) = start(live);
    let (status, body) = ask("POST", addr, "/recording/off");
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"on":false,"control":true}"#)
    );
    assert!(!latte::collect::recording().on);
    (0..100).for_each(|_| latte::record(&WORK, 1_000)); // not recorded
    let deadline = Instant::now() + Duration::from_secs(20);
    let paused = loop {
        assert!(Instant::now() < deadline, "no view said recording is off");
        match view(addr) {
            Some(v) if !v.recording() => break v,
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let off = paused.report.recording_off.expect("the pause is said");
    assert!(off.now && off.pauses >= 1);
    assert!(paused.control);
    let (status, _) = ask("POST", addr, "/recording/on");
    assert_eq!(status, 200);
    assert!(latte::collect::recording().on);
    // The view says the switch as it is now, even before the next interval is cut.
    let now = view(addr).unwrap();
    let said = now.report.recording_off.unwrap();
    assert!(now.recording() && !said.now, "{said:?}");
    (0..7).for_each(|_| latte::record(&WORK, 1_000));
    assert_eq!(latte::snapshot("live_switch_work").len(), 7);
    guard.stop().unwrap();
}

#[test]
fn idle_and_half_sent_connections_hold_up_no_viewer() {
    let _turn = turn();
    static STEP: Id = Id::new("live_idle_step");
    let live = Live::local(0).unwrap().interval(Duration::from_millis(100));
    let (guard, addr) = start(live);
    latte::record(&STEP, 10);
    let mut idle: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"GET /li").unwrap();
    idle.push(half);
    let deadline = Instant::now() + Duration::from_secs(20);
    while view(addr).is_none() {
        assert!(Instant::now() < deadline, "no view came");
        std::thread::sleep(Duration::from_millis(20));
    }
    let asked = Instant::now();
    assert!(view(addr).is_some());
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "a view took {:?}",
        asked.elapsed()
    );
    drop(idle);
    guard.stop().unwrap();
}
