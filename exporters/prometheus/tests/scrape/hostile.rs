//! Hostile clients: connections held open, garbage, an endless header, a body
//! announced and never sent, or pipelined requests never read delay neither a real
//! scrape, nor the recorders, nor the agent's `stop`.

use latte::{Id, ReportOptions};
use latte_prometheus::Prometheus;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

static BUSY: Id = Id::new("fleet_hostile_busy");

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

#[test]
fn hostile_clients_delay_no_scrape_and_no_recorder() {
    let _turn = super::agent_turn();
    let (guard, addr) = super::serve(Prometheus::bind("127.0.0.1:0").unwrap(), |b| b);
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
    // Calibrated first (the report it makes has the component): what is timed below is
    // the scrape among hostile clients.
    super::scrape_when_ready(addr);
    let clients = hostile_clients(addr);
    unknown_path_gets_404(addr);
    // A real scrape, with everything above still open.
    for _ in 0..3 {
        scrape_within_a_second(addr);
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

/// An unknown path gets its 404, and the connection does not hold up anyone.
fn unknown_path_gets_404(addr: std::net::SocketAddr) {
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

/// One scrape, answered in full within a second.
fn scrape_within_a_second(addr: std::net::SocketAddr) {
    let began = Instant::now();
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(1)))
        .build();
    // Asking for OpenMetrics, whose closing `# EOF` shows the whole body came.
    let mut response = ureq::Agent::new_with_config(config)
        .get(format!("http://{addr}/metrics"))
        .header("Accept", "application/openmetrics-text; version=1.0.0")
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
