//! Hostile and absent peers: clients that hold connections open, send garbage, an
//! endless header, a body announced and never sent, or pipelined requests they never
//! read, delay neither a real scrape, nor the recorders, nor `stop`; an OTLP endpoint that
//! accepts and never answers (or refuses) delays no periodic report, and the reports
//! the push could not take are counted as dropped.
//!
//! `cargo test --features prometheus,otlp --test fleet_hostile`
#![cfg(all(feature = "prometheus", feature = "otlp"))]

use latte::{Id, ReportOptions};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One agent per process: the tests take turns.
static AGENT: Mutex<()> = Mutex::new(());

static BUSY: Id = Id::new("fleet_hostile_busy");
static TICK: Id = Id::new("fleet_hostile_tick");

/// Connections that misbehave, kept open until dropped.
fn hostile_clients(addr: std::net::SocketAddr) -> Vec<TcpStream> {
    let mut open = Vec::new();
    // Connects and never sends a byte.
    open.push(TcpStream::connect(addr).unwrap());
    // A request whose header never ends: 4 MiB of one header line, and no CRLF. The
    // server stops reading at its head limit and closes, so the writes may fail.
    let mut huge = TcpStream::connect(addr).unwrap();
    huge.set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let junk = vec![b'a'; 1 << 20];
    let _ = huge
        .write_all(b"GET /metrics HTTP/1.1\r\nX-Huge: ")
        .and_then(|()| (0..4).try_for_each(|_| huge.write_all(&junk)));
    open.push(huge);
    // A body announced and never sent: small, and larger than any memory.
    for length in ["100000", "100000000000000"] {
        let mut announced = TcpStream::connect(addr).unwrap();
        write!(
            announced,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n"
        )
        .unwrap();
        open.push(announced);
    }
    // Thousands of pipelined scrapes whose answers are never read.
    let mut greedy = TcpStream::connect(addr).unwrap();
    greedy
        .set_write_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = greedy.write_all(&b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(3_000));
    open.push(greedy);
    // Binary garbage, then the end of a header block.
    let mut garbage = TcpStream::connect(addr).unwrap();
    garbage
        .write_all(&[0, 255, 13, 10, 7, 0, 200, 13, 10, 13, 10])
        .unwrap();
    open.push(garbage);
    // Half a request line, then silence.
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"GET /met").unwrap();
    open.push(half);
    open
}

/// An unknown path gets its 404, and the connection does not hold up anyone.
fn an_unknown_path_gets_its_404(addr: std::net::SocketAddr) {
    let mut unknown = TcpStream::connect(addr).unwrap();
    unknown
        .write_all(b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    unknown
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut answer = [0u8; 12];
    unknown.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"HTTP/1.1 404");
}

#[test]
fn hostile_clients_delay_no_scrape_and_no_recorder() {
    let _turn = AGENT.lock().unwrap_or_else(|e| e.into_inner());
    let guard = latte::builder()
        .serve_metrics("127.0.0.1:0")
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    let addr = guard.metrics_addr().unwrap();
    const N: u64 = 300_000;
    let recorder = std::thread::spawn(|| {
        for i in 0..N {
            latte::record(&BUSY, 100 + i % 500);
            if i % 10_000 == 0 {
                std::thread::yield_now();
            }
        }
    });
    latte::record(&BUSY, 100); // so the component is in every scrape
    let clients = hostile_clients(addr);
    an_unknown_path_gets_its_404(addr);
    // A real scrape, with everything above still open.
    for _ in 0..3 {
        let began = Instant::now();
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(1)))
            .build();
        let mut response = ureq::Agent::new_with_config(config)
            .get(format!("http://{addr}/metrics"))
            .call()
            .expect("a scrape answered within a second");
        let text = response.body_mut().read_to_string().unwrap();
        let took = began.elapsed();
        assert!(took < Duration::from_secs(1), "the scrape took {took:?}");
        assert!(
            text.contains("latte_latency_seconds_count{component=\"fleet_hostile_busy\"}"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }
    recorder.join().unwrap();
    let report = latte::Report::collect(&ReportOptions::default());
    let row = report
        .all_threads
        .iter()
        .find(|r| r.component == BUSY.name())
        .unwrap();
    assert_eq!(row.stats.seen, N + 1, "every recorded sample is counted");
    assert_eq!(row.stats.samples + row.stats.lost, N + 1);
    // Stopping does not wait for the clients still connected.
    let began = Instant::now();
    guard.stop().unwrap();
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        began.elapsed()
    );
    drop(clients);
}

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
    let guard = latte::builder()
        .periodic(Duration::from_millis(50))
        .periodic_sink(stamps.clone())
        .otlp(url, Duration::from_millis(100))
        .final_report(false)
        .sink(std::io::sink())
        .start()
        .unwrap();
    let began = Instant::now();
    while began.elapsed() < Duration::from_millis(1_500) {
        latte::record(&TICK, 300);
        std::thread::sleep(Duration::from_millis(1));
    }
    let pushes = guard.otlp_pushes();
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
    let _turn = AGENT.lock().unwrap_or_else(|e| e.into_inner());
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
