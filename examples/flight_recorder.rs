//! An order gateway whose database call stalls now and then: the flight recorder keeps
//! each thread's last 50 ms of scopes, and a stall dumps every thread's timeline
//! around it as trace-event JSON (draw it with `latte-telemetry html DUMP -o
//! timeline.html`, or open it in <https://ui.perfetto.dev> or `chrome://tracing`).
//!
//! `cargo run --release --example flight_recorder [DIR]` (dumps go to DIR, by
//! default `target/latte-dumps`; the example ends with the files it wrote, and
//! fails if it wrote none).

use latte::flight::DumpTrigger;
use latte::{Id, latte_scope};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ON_ORDER: Id = Id::new("on_order");

/// Spins for `d`: work that keeps the core, as an order path would.
fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// One order: parse, then a risk check that asks the database; every 4,000th database
/// call stalls for 2 ms.
fn on_order(n: u64) {
    let _order = latte::scope(&ON_ORDER, latte::Mode::Fast, latte::Mode::Fast);
    {
        let _parse = latte_scope!("parse");
        black_box((0..16).fold(n, |a, b| a.rotate_left(7) ^ b));
    }
    let _risk = latte_scope!("risk");
    spin(Duration::from_micros(2));
    let _db = latte_scope!("db");
    if n % 4_000 == 3_999 {
        std::thread::sleep(Duration::from_millis(2));
    } else {
        spin(Duration::from_micros(5));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| "target/latte-dumps".into(), std::path::PathBuf::from);
    let guard = latte::builder()
        .flight_recorder(Duration::from_millis(50))
        // An order over 1 ms, or any scope above its own p99.9 once it has 5,000 samples.
        .dump_when(DumpTrigger::above(&ON_ORDER, Duration::from_millis(1)))
        .dump_when(DumpTrigger::tail(0.999, 5_000))
        .dump_gap(Duration::from_millis(200))
        .dump_dir(&dir)
        .start()?;

    let running = AtomicBool::new(true);
    std::thread::scope(|s| {
        let running = &running;
        std::thread::Builder::new()
            .name("market-data".into())
            .spawn_scoped(s, move || {
                while running.load(Ordering::Relaxed) {
                    let _tick = latte_scope!("md_tick");
                    spin(Duration::from_micros(20));
                }
            })
            .expect("spawn market-data");
        std::thread::Builder::new()
            .name("gateway".into())
            .spawn_scoped(s, move || {
                let mut n = 0;
                while running.load(Ordering::Relaxed) {
                    on_order(n);
                    n += 1;
                }
            })
            .expect("spawn gateway");
        std::thread::sleep(Duration::from_millis(2_500));
        running.store(false, Ordering::Relaxed);
    });
    guard.stop()?;

    let mut files: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    // Oldest first.
    files.sort_by_key(|p| p.metadata().and_then(|m| m.modified()).ok());
    eprintln!("\ntimeline dumps in {}:", dir.display());
    for f in &files {
        eprintln!("  {}", f.display());
    }
    if files.is_empty() {
        return Err("no dump was written".into());
    }
    eprintln!(
        "draw one as a timeline page: cargo run --release -p latte-telemetry-cli -- html {} -o timeline.html\n\
         or open it in https://ui.perfetto.dev or chrome://tracing",
        files[files.len() - 1].display()
    );
    Ok(())
}
