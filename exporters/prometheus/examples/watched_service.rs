//! A service to watch with `latte-telemetry top`: an order gateway (parse, risk, a
//! database call that is slow now and then), a market-data thread that pulses, and a
//! render loop that marks 60 frames a second against a 20 ms budget (every 50th
//! frame is over). The agent serves the live endpoint on `LATTE_LIVE_ADDR` (default
//! `127.0.0.1:9465`) with the recording switch, and writes a table report every 2 s
//! to `LATTE_LIVE_REPORTS` (a file) if set, else to stderr.
//!
//! ```text
//! cargo run --release -p latte-telemetry-prometheus --example watched_service -- 600 &
//! cargo run --release -p latte-telemetry-cli -- top 127.0.0.1:9465
//! ```
//!
//! The argument is how many seconds it runs (default 60).

use latte::{latte_frame, latte_pulse, latte_scope};
use latte_prometheus::Live;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Spins for about `us` microseconds of work.
fn work(us: u64) {
    let until = Instant::now() + Duration::from_micros(us);
    let mut x = 1u64;
    while Instant::now() < until {
        x = black_box(x.rotate_left(5) ^ 0x9e37_79b9);
    }
}

/// One order: parse, a risk check, and a database write (every 100th is slow).
fn on_order(n: u64) {
    let _order = latte_scope!("on_order");
    {
        let _parse = latte_scope!("parse");
        work(2);
    }
    {
        let _risk = latte_scope!("risk_check");
        work(5);
    }
    {
        let _db = latte_scope!("db_write");
        work(if n.is_multiple_of(100) { 400 } else { 10 });
    }
}

/// One frame: update and render; every 50th frame's render runs over the budget.
fn frame(n: u64) {
    {
        let _update = latte_scope!("update");
        work(1_500);
    }
    {
        let _render = latte_scope!("render");
        work(if n.is_multiple_of(50) { 20_000 } else { 3_000 });
    }
    latte_frame!();
}

fn spawn(
    name: &str,
    until: Instant,
    body: impl Fn(u64) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut n = 0;
            while Instant::now() < until {
                body(n);
                n += 1;
            }
        })
        .expect("spawn a thread")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::var("LATTE_LIVE_ADDR").unwrap_or_else(|_| "127.0.0.1:9465".into());
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let live = Live::bind(&addr)?.control(true);
    eprintln!(
        "live endpoint on {} for {seconds} s: latte-telemetry top {}",
        live.local_addr(),
        live.local_addr()
    );
    let sink: Box<dyn std::io::Write + Send> = match std::env::var_os("LATTE_LIVE_REPORTS") {
        Some(path) => Box::new(std::fs::File::create(path)?),
        None => Box::new(std::io::stderr()),
    };
    let latte = latte::builder()
        .exporter(live)
        .frame_budget(Duration::from_millis(20))
        .periodic(Duration::from_secs(2))
        .sink(sink)
        .final_report(false)
        .start()?;
    let until = Instant::now() + Duration::from_secs(seconds);
    let threads = [
        spawn("gateway", until, |n| {
            on_order(n);
            std::thread::sleep(Duration::from_micros(200));
        }),
        spawn("market_data", until, |_| {
            latte_pulse!("tick");
            std::thread::sleep(Duration::from_micros(500));
        }),
        spawn("render", until, |n| {
            let start = Instant::now();
            frame(n);
            std::thread::sleep(Duration::from_micros(16_667).saturating_sub(start.elapsed()));
        }),
    ];
    for thread in threads {
        let _ = thread.join();
    }
    latte.stop()?;
    Ok(())
}
