//! What a scraped `/metrics` endpoint costs the recorders: Fast Start+Stop with the
//! agent serving `/metrics` and an in-process scraper asking every 100 ms, against the
//! same agent not scraped ("agent idle").
//!
//! `cargo bench -p latte-telemetry-prometheus --bench scraped`. The agent's threads and
//! the scraper run on the first core, the recording thread on the last. The states
//! alternate trial by trial (160 trials of 1,000,000 calls, ~20 ms each); the scraper
//! wakes every 100 ms and scrapes if the trial running is a scraped one, so scraped
//! trials see a scrape every 100 ms. The target is the ratio of the states' mean
//! cycles per call (a mean, so the trials a scrape lands in count); the ratio of
//! medians is printed beside it. Figures: docs/performance.md.

use latte::{Mode, clock};
use latte_prometheus::Prometheus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const CALLS: u64 = 1_000_000;
const TRIALS: usize = 80;

fn trial() -> f64 {
    let t0 = clock::read(Mode::Hard).ticks;
    for _ in 0..CALLS {
        latte::latte_start!("bench_scraped");
        latte::latte_stop!("bench_scraped");
    }
    clock::read(Mode::Hard).ticks.wrapping_sub(t0) as f64 / CALLS as f64
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() % 2 {
        1 => s[s.len() / 2],
        _ => (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0,
    }
}

fn main() {
    // The agent's threads and the scraper on the first core (threads inherit the
    // spawning thread's affinity), the recording thread on the last.
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if let Some(first) = cores.first() {
        core_affinity::set_for_current(*first);
    }
    let prometheus = Prometheus::bind("127.0.0.1:0").expect("bind /metrics");
    let url = format!("http://{}/metrics", prometheus.local_addr());
    let guard = latte::builder()
        .sink(std::io::sink())
        .final_report(false)
        .exporter(prometheus)
        .start()
        .expect("start the agent with /metrics");
    let scraping = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let scrapes = AtomicU64::new(0);
    let (pinned, idle, busy) = std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if scraping.load(Ordering::Relaxed) {
                    let mut answer = ureq::get(&url).call().expect("scrape");
                    let text = answer.body_mut().read_to_string().expect("body");
                    assert!(text.contains("bench_scraped"));
                    scrapes.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let pinned = cores
            .last()
            .is_some_and(|last| core_affinity::set_for_current(*last));
        let (mut idle, mut busy) = (Vec::new(), Vec::new());
        trial(); // warm-up
        for _ in 0..TRIALS {
            scraping.store(false, Ordering::Relaxed);
            idle.push(trial());
            scraping.store(true, Ordering::Relaxed);
            busy.push(trial());
        }
        stop.store(true, Ordering::Relaxed);
        (pinned, idle, busy)
    });
    guard.stop().expect("stop");
    print_results(pinned, &idle, &busy, scrapes.load(Ordering::Relaxed));
}

/// The means and medians of both states, and the target line.
fn print_results(pinned: bool, idle: &[f64], busy: &[f64], scrapes: u64) {
    let (i, b) = (mean(idle), mean(busy));
    let (mi, mb) = (median(idle), median(busy));
    println!("recorder pinned: {pinned}");
    println!(
        "scraped: {} trials per state x {CALLS} Fast Start+Stop, {} scrapes",
        idle.len(),
        scrapes
    );
    println!("agent idle (/metrics served, not scraped): mean {i:6.1}, median {mi:6.1} cycles");
    println!("/metrics scraped every 100 ms:             mean {b:6.1}, median {mb:6.1} cycles");
    println!(
        "target Fast S+S scraped / agent idle (means)           {:>6.3}  (target <= 1.05) {}",
        b / i,
        if b / i <= 1.05 { "met" } else { "MISSED" }
    );
    println!(
        "info   Fast S+S scraped / agent idle (medians)          {:>6.3}",
        mb / mi
    );
}
