//! An absent or stalled OTLP collector: one that refuses, or that accepts and never
//! answers, delays no periodic report, and the reports the push could not take are
//! counted as dropped.

use latte::Id;
use latte_otlp::Otlp;
use std::io::Write;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

static TICK: Id = Id::new("fleet_hostile_tick");

/// The longest gap allowed between two 50 ms periodic reports: half the OTLP push's
/// 2 s timeout, so a push that held up the drain thread would fail the test, while a
/// busy machine that delays a report by a few scheduling slices does not.
const MAX_GAP: Duration = Duration::from_secs(1);

/// A periodic sink that notes when each report was flushed.
#[derive(Clone, Default)]
struct Stamps(Arc<Mutex<Vec<Instant>>>);

impl Write for Stamps {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap().push(Instant::now());
        Ok(())
    }
}

/// Runs an agent with 50 ms periodic reports pushing every 100 ms to `url` for 1.5 s;
/// returns the gaps between periodic reports and the OTLP counts.
fn periodic_while_pushing_to(url: &str) -> (Vec<Duration>, (u64, u64, u64)) {
    let stamps = Stamps::default();
    let otlp = Otlp::new(url, Duration::from_millis(100));
    let counts = otlp.pushes();
    let guard = latte::builder()
        .periodic(Duration::from_millis(50))
        .periodic_sink(stamps.clone())
        .exporter(otlp)
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    let began = Instant::now();
    while began.elapsed() < Duration::from_millis(1_500) {
        latte::record(&TICK, 300);
        std::thread::sleep(Duration::from_millis(1));
    }
    let pushes = (counts.sent(), counts.failed(), counts.dropped());
    let stopping = Instant::now();
    guard.stop().unwrap();
    assert!(
        stopping.elapsed() < Duration::from_secs(4),
        "stop took {:?}",
        stopping.elapsed()
    );
    let stamps = stamps.0.lock().unwrap().clone();
    let gaps = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    (gaps, pushes)
}

#[test]
fn a_stalled_or_absent_otlp_endpoint_delays_no_periodic_report() {
    let _turn = super::agent_turn();
    // Accepts connections, reads nothing, answers nothing.
    let stalled = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/metrics", stalled.local_addr().unwrap());
    let held = Arc::new(Mutex::new(Vec::new()));
    let holder = held.clone();
    std::thread::spawn(move || {
        for stream in stalled.incoming().flatten() {
            holder.lock().unwrap().push(stream);
        }
    });
    let (gaps, (sent, failed, dropped)) = periodic_while_pushing_to(&url);
    eprintln!(
        "stalled: {} periodic reports, longest gap {:?}; sent {sent}, failed {failed}, dropped {dropped}",
        gaps.len() + 1,
        gaps.iter().max()
    );
    assert!(
        gaps.len() >= 10,
        "periodic reports written: {}",
        gaps.len() + 1
    );
    assert!(gaps.iter().all(|g| *g < MAX_GAP), "gaps: {gaps:?}");
    assert_eq!(sent, 0);
    assert!(
        dropped >= 5,
        "the drain dropped what the stalled push could not take: {dropped}"
    );
    assert!(
        !held.lock().unwrap().is_empty(),
        "the push reached the stalled endpoint"
    );

    // Nobody listens: every push fails at once, nothing queues up.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/metrics", closed.local_addr().unwrap());
    drop(closed);
    let (gaps, (sent, failed, dropped)) = periodic_while_pushing_to(&url);
    eprintln!(
        "absent: {} periodic reports, longest gap {:?}; sent {sent}, failed {failed}, dropped {dropped}",
        gaps.len() + 1,
        gaps.iter().max()
    );
    assert!(
        gaps.len() >= 10 && gaps.iter().all(|g| *g < MAX_GAP),
        "gaps: {gaps:?}"
    );
    assert_eq!(sent, 0);
    assert!(
        failed >= 5,
        "refused pushes are counted as failed: {failed}"
    );
}
