//! Bursts into rings, with periodic reports on. Between bursts the thread sleeps, so a
//! fold often finds nothing new; the drain must still wake before the next bursts lap
//! the ring. Two loads, each on a thread of its own:
//!
//! - 400 bursts of 1,000 scopes, one every 2 ms, into a 4,096-slot ring;
//! - 400 bursts of half that ring (2,048 scopes), one every 2 ms;
//! - 100 bursts of half a default ring (32,768 scopes), one every 4 ms, into a
//!   65,536-slot ring.
//!
//! For each, prints what the whole run recorded, folded and lost.
//!
//! `cargo run --release --example bursts`
//!
//! `-- --trace FILE` also writes when each burst began and ended (nanoseconds since
//! its load began) and its size, one burst per line under a `# ring N` line per load:
//! the drain's pacing test replays such a trace (`tests/data/bursts.txt`).

use latte::{Id, Mode, Report, ReportOptions};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// One bursty load.
struct Load {
    id: &'static Id,
    ring: usize,
    bursts: u32,
    size: u64,
    every: Duration,
}

static SMALL: Id = Id::new("burst_1000_into_4096");
static HALF_SMALL: Id = Id::new("burst_2048_into_4096");
static HALF: Id = Id::new("burst_32768_into_65536");

const LOADS: [Load; 3] = [
    Load {
        id: &SMALL,
        ring: 4_096,
        bursts: 400,
        size: 1_000,
        every: Duration::from_millis(2),
    },
    Load {
        id: &HALF_SMALL,
        ring: 4_096,
        bursts: 400,
        size: 2_048,
        every: Duration::from_millis(2),
    },
    Load {
        id: &HALF,
        ring: 65_536,
        bursts: 100,
        size: 32_768,
        every: Duration::from_millis(4),
    },
];

/// Runs `load` on a thread of its own (so its ring has the load's capacity) under an
/// agent with periodic reports; returns its burst trace.
fn run(load: &'static Load) -> Result<String, Box<dyn std::error::Error>> {
    let latte = latte::builder()
        .ring_capacity(load.ring)
        .periodic(Duration::from_millis(100))
        .periodic_sink(std::io::sink())
        .final_report(false)
        .start()?;
    let trace = std::thread::spawn(move || {
        let begin = Instant::now();
        let mut trace = format!("# ring {}\n", load.ring);
        for k in 0..load.bursts {
            let start = Instant::now();
            for i in 0..load.size {
                let _scope = latte::scope(load.id, Mode::Fast, Mode::Fast);
                std::hint::black_box(i);
            }
            let end = Instant::now();
            let ns = |t: Instant| t.duration_since(begin).as_nanos();
            let _ = writeln!(trace, "{} {} {}", ns(start), ns(end), load.size);
            // The next burst is due `every` after this one was.
            let next = begin + load.every * (k + 1);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        trace
    })
    .join()
    .map_err(|_| "the bursting thread panicked")?;
    latte.stop()?;
    Ok(trace)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trace_to = match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => None,
        [flag, path] if flag == "--trace" => Some(path.clone()),
        _ => return Err("usage: bursts [--trace FILE]".into()),
    };
    let mut traces = String::new();
    for load in &LOADS {
        traces += &run(load)?;
    }
    let report = Report::collect(&ReportOptions::default());
    for load in &LOADS {
        let row = report
            .all_threads
            .iter()
            .find(|r| r.component == load.id.name())
            .ok_or("a load's component is missing from the report")?;
        println!(
            "{} bursts of {} scopes every {:?} into a {}-slot ring: {} recorded, {} folded, {} lost",
            load.bursts,
            load.size,
            load.every,
            load.ring,
            row.stats.seen,
            row.stats.samples,
            row.stats.lost
        );
    }
    if let Some(path) = trace_to {
        std::fs::write(&path, traces)?;
        println!("burst trace written to {path}");
    }
    Ok(())
}
