//! A live service: worker threads handle requests, the agent prints a report of the
//! last second every second, and a final report at exit.
//!
//! `cargo run --release --example live_service`

use latte::{Data, Unit, latte_pulse, latte_scope, latte_start, latte_stop};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Parses, validates and "persists" one request; every 500th takes a slow path.
fn handle(request: u64, scratch: &mut Vec<u64>) -> u64 {
    let _scope = latte_scope!("Request");
    latte_start!("Parse");
    scratch.clear();
    scratch.extend((0..32).map(|i| request.wrapping_mul(0x9e37_79b9) ^ i));
    latte_stop!("Parse");
    latte_start!("Validate", Mid);
    let ok = scratch.iter().fold(0u64, |a, &b| a.rotate_left(5) ^ b);
    latte_stop!("Validate", Mid);
    if request.is_multiple_of(500) {
        let _slow = latte_scope!("Persist_Slow");
        std::thread::sleep(Duration::from_micros(200));
    }
    ok
}

fn main() -> Result<(), latte::Error> {
    // One line of setup; the guard writes the final report when `main` returns.
    let _latte = latte::builder()
        .unit(Unit::Time)
        .data(Data::Calibrated)
        .periodic(Duration::from_secs(1))
        .start()?;

    let running = AtomicBool::new(true);
    std::thread::scope(|s| {
        for w in 0..3 {
            let running = &running;
            std::thread::Builder::new()
                .name(format!("worker-{w}"))
                .spawn_scoped(s, move || {
                    let mut scratch = Vec::with_capacity(32);
                    let mut request = w;
                    while running.load(Ordering::Relaxed) {
                        black_box(handle(request, &mut scratch));
                        latte_pulse!("Request_Gap");
                        request += 3;
                        // Pace each worker to roughly 20k requests per second.
                        let until = Instant::now() + Duration::from_micros(50);
                        while Instant::now() < until {
                            std::hint::spin_loop();
                        }
                    }
                })
                .expect("spawn worker");
        }
        std::thread::sleep(Duration::from_millis(3_500));
        running.store(false, Ordering::Relaxed);
    });
    Ok(())
}
