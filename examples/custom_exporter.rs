//! A user's own exporter: every 200 ms, and once at stop, the p99 of each component on
//! stderr. `cargo run --release --example custom_exporter`

use latte::exporter::{Exporter, Push};
use latte::{Report, latte_scope};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct P99ToStderr;

impl Exporter for P99ToStderr {
    fn name(&self) -> &str {
        "p99-stderr"
    }
    fn interval(&self) -> Option<Duration> {
        Some(Duration::from_millis(200))
    }
    // On the drain thread: a few short lines are fine; network I/O goes to a thread.
    fn push(&mut self, report: Arc<Report>, push: Push) {
        for row in &report.all_threads {
            eprintln!("{push:?} {}: p99 {:.0} ns", row.component, row.stats.p99);
        }
    }
}

fn main() -> Result<(), latte::Error> {
    let latte = latte::builder()
        .exporter(P99ToStderr)
        .final_report(false)
        .start()?;
    let until = Instant::now() + Duration::from_millis(700);
    while Instant::now() < until {
        let _scope = latte_scope!("work");
        std::hint::black_box((0..1_000u64).sum::<u64>());
    }
    latte.stop()
}
