//! A service scraped by Prometheus: two worker threads handle requests for a while and
//! the agent serves `/metrics` on `LATTE_METRICS_ADDR` (default `127.0.0.1:9464`).
//! docs/fleet.md shows what it serves.
//!
//! `cargo run --release -p latte-telemetry-prometheus --example fleet -- 30` (seconds)

use latte::latte_scope;
use latte_prometheus::Prometheus;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One request: parsing, and every 200th a slow path.
fn handle(request: u64) -> u64 {
    let _scope = latte_scope!("request");
    let parsed = {
        let _parse = latte_scope!("parse");
        (0..64u64).fold(request, |a, b| {
            a.rotate_left(7) ^ b.wrapping_mul(0x9e37_79b9)
        })
    };
    if request.is_multiple_of(200) {
        let _slow = latte_scope!("persist");
        std::thread::sleep(Duration::from_micros(100));
    }
    parsed
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::var("LATTE_METRICS_ADDR").unwrap_or_else(|_| "127.0.0.1:9464".into());
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let endpoint = Prometheus::bind(addr)?;
    eprintln!(
        "scrape http://{}/metrics for {seconds} s",
        endpoint.local_addr()
    );
    let latte = latte::builder()
        .exporter(endpoint)
        .final_report(false)
        .start()?;
    let until = Instant::now() + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..2)
        .map(|w| {
            std::thread::Builder::new()
                .name(format!("worker-{w}"))
                .spawn(move || {
                    let mut request = 0u64;
                    while Instant::now() < until {
                        black_box(handle(request));
                        request += 1;
                        std::thread::sleep(Duration::from_micros(20));
                    }
                })
                .expect("spawn a worker")
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    Ok(latte.stop()?)
}
