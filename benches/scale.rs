//! Scale and bursts: how many ids and threads the agent keeps up with, and at what
//! memory.
//!
//! Each case runs in a child process of its own (so its RSS is its own): `ids` ids
//! interned at run time, used on each of `threads` threads; each thread records 1,000
//! Fast Start+Stop pairs per id, one pair per id per round, rounds spread evenly over
//! 2 s, periodic reports every 100 ms. Per case: the hot path's ticks per Start+Stop
//! (the median round, against the 1-id 1-thread case), samples lost, records refused
//! by the memory cap, RSS at the run's end (the agent stopped, before the bench's own
//! report) and at its peak (that report included), and the drain's CPU time. More
//! threads than cores are labelled oversubscribed; of those, only the 4-thread case
//! has a target line (1,000 ids on each of 4 threads), the others none.
//!
//! Then the bursts of `examples/bursts.rs` (1,000 and 2,048 scopes every 2 ms into a
//! 4,096-slot ring, 32,768 every 4 ms into a 65,536-slot ring), the drain pinned to the
//! first core and the bursting thread to the last.
//!
//! `cargo bench --bench scale`

use latte::{Id, Mode, Report, ReportOptions, clock};
use std::process::Command;
use std::time::{Duration, Instant};

/// Set in a child: the case it runs, `ids,threads` or `bursts,RING,SIZE,EVERY_US,N`.
const CASE: &str = "LATTE_SCALE_CASE";
const SAMPLES_PER_ID: u32 = 1_000;
const RUN: Duration = Duration::from_secs(2);

/// What one child measured.
#[derive(Clone, Copy, Debug, Default)]
struct Measured {
    ticks_per_pair: f64,
    seen: u64,
    lost: u64,
    refused: u64,
    rss_kib: u64,
    peak_kib: u64,
    drain_cpu_ms: f64,
}

fn main() {
    match std::env::var(CASE) {
        Ok(case) => child(&case),
        Err(_) => parent(),
    }
}

/// `VmRSS` and `VmHWM` of this process, in KiB (0 where `/proc` has none).
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn child(case: &str) {
    let numbers: Vec<u64> = case
        .split(',')
        .skip_while(|p| p.parse::<u64>().is_err())
        .map(|p| p.parse().expect("a number"))
        .collect();
    // Bursts: the drain on the first core, the bursting thread on the last (the drain
    // on a core of its own, as the target asks).
    let cpus = if case.starts_with("bursts") {
        vec![0]
    } else {
        Vec::new()
    };
    let guard = latte::builder()
        .drain_cpus(cpus)
        .ring_capacity(if case.starts_with("bursts") {
            numbers[0] as usize
        } else {
            latte::collect::Limit::RING_CAPACITY.default
        })
        .periodic(Duration::from_millis(100))
        .periodic_sink(std::io::sink())
        .final_report(false)
        .start()
        .expect("start the agent");
    let ticks_per_pair = if case.starts_with("bursts") {
        bursts(numbers[1], Duration::from_micros(numbers[2]), numbers[3]);
        0.0
    } else {
        ids_on_threads(numbers[0] as usize, numbers[1] as usize)
    };
    guard.stop().expect("stop the agent");
    // The run's end: the agent stopped, before this bench's own report of 10,000 ids
    // (which the peak includes).
    let (at_end_kib, _) = rss_kib();
    let report = Report::collect(&ReportOptions::default());
    let (_, peak_kib) = rss_kib();
    let m = Measured {
        ticks_per_pair,
        seen: report.all_threads.iter().map(|r| r.stats.seen).sum(),
        lost: report.all_threads.iter().map(|r| r.stats.lost).sum(),
        refused: report.threads.iter().map(|t| t.anomalies.over_cap).sum(),
        rss_kib: at_end_kib,
        peak_kib,
        drain_cpu_ms: report
            .footprint
            .map_or(0.0, |f| f.drain_cpu_ns as f64 / 1e6),
    };
    println!(
        "RESULT {} {} {} {} {} {} {}",
        m.ticks_per_pair, m.seen, m.lost, m.refused, m.rss_kib, m.peak_kib, m.drain_cpu_ms
    );
}

/// `ids` ids on each of `threads` threads, as the module says; the median round's
/// ticks per Start+Stop over all threads.
fn ids_on_threads(ids: usize, threads: usize) -> f64 {
    let ids: Vec<&'static Id> = (0..ids)
        .map(|i| Id::intern(&format!("symbol_{i:05}")).expect("intern"))
        .collect();
    let begin = Instant::now();
    let per_round = RUN / SAMPLES_PER_ID;
    let mut rounds: Vec<f64> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let ids = &ids;
                s.spawn(move || {
                    let mut ticks = Vec::with_capacity(SAMPLES_PER_ID as usize);
                    for round in 0..SAMPLES_PER_ID {
                        let t0 = clock::read(Mode::Hard).ticks;
                        for id in ids {
                            latte::start(id, Mode::Fast);
                            latte::stop(id, Mode::Fast);
                        }
                        let t1 = clock::read(Mode::Hard).ticks;
                        ticks.push(t1.wrapping_sub(t0) as f64 / ids.len() as f64);
                        let next = begin + per_round * (round + 1);
                        std::thread::sleep(next.saturating_duration_since(Instant::now()));
                    }
                    ticks
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker"))
            .collect()
    });
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

/// `n` bursts of `size` scopes, one every `every`, on a thread of its own.
fn bursts(size: u64, every: Duration, n: u64) {
    static BURST: Id = Id::new("scale_burst");
    std::thread::spawn(move || {
        if let Some(&last) = core_affinity::get_core_ids().unwrap_or_default().last() {
            core_affinity::set_for_current(last);
        }
        let begin = Instant::now();
        for k in 0..n {
            for i in 0..size {
                let _scope = latte::scope(&BURST, Mode::Fast, Mode::Fast);
                std::hint::black_box(i);
            }
            let next = begin + every * (k as u32 + 1);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
    })
    .join()
    .expect("the bursting thread");
}

/// Runs `case` in a child process and reads what it measured.
fn run(case: &str) -> Measured {
    let exe = std::env::current_exe().expect("this bench's path");
    let out = Command::new(exe)
        .env(CASE, case)
        .output()
        .expect("run a case");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| {
            panic!(
                "case {case} printed no result: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let v: Vec<f64> = line
        .split(' ')
        .map(|x| x.parse().expect("a number"))
        .collect();
    Measured {
        ticks_per_pair: v[0],
        seen: v[1] as u64,
        lost: v[2] as u64,
        refused: v[3] as u64,
        rss_kib: v[4] as u64,
        peak_kib: v[5] as u64,
        drain_cpu_ms: v[6],
    }
}

fn target(label: &str, value: f64, limit: f64) {
    println!(
        "target {label:<52} {value:>10.1}  (target <= {limit}) {}",
        if value <= limit { "met" } else { "MISSED" }
    );
}

fn parent() {
    let results = scale_cases();
    let bursts = [
        ("1,000 every 2 ms into 4,096", "bursts,4096,1000,2000,400"),
        ("2,048 every 2 ms into 4,096", "bursts,4096,2048,2000,400"),
        (
            "32,768 every 4 ms into 65,536",
            "bursts,65536,32768,4000,100",
        ),
    ]
    .map(|(label, case)| (label, run(case)));
    for (label, m) in &bursts {
        println!("bursts of {label}: seen {}, lost {}", m.seen, m.lost);
    }
    let case = |ids, threads| {
        results
            .iter()
            .find(|(c, _)| *c == (ids, threads))
            .unwrap()
            .1
    };
    for (label, m, rss_limit) in [
        ("10,000 ids x 1 thread", case(10_000, 1), 256.0),
        ("1,000 ids x 4 threads", case(1_000, 4), 512.0),
    ] {
        let missing = (m.lost + m.refused) as f64;
        target(&format!("{label}: lost + refused"), missing, 0.0);
        let rss = m.rss_kib as f64 / 1024.0;
        target(&format!("{label}: RSS at the end, MiB"), rss, rss_limit);
    }
    for (label, m) in &bursts {
        target(&format!("bursts of {label}: lost"), m.lost as f64, 0.0);
    }
}

/// Runs the ids x threads cases, printing a line each.
fn scale_cases() -> Vec<((usize, usize), Measured)> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{:>6} {:>7} {:>10} {:>7} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "ids",
        "threads",
        "ticks/S+S",
        "vs 1",
        "seen",
        "lost",
        "refused",
        "RSS MiB",
        "peak MiB",
        "drain ms"
    );
    let mut cases: Vec<(usize, usize)> = [1, 100, 10_000]
        .into_iter()
        .flat_map(|ids| [1, 2, 4, 16].map(|threads| (ids, threads)))
        .collect();
    cases.extend([(1_000, 4), (1_000, 16)]);
    let mut one = None;
    let mut results = Vec::new();
    for (ids, threads) in cases {
        let m = run(&format!("{ids},{threads}"));
        let base = *one.get_or_insert(m.ticks_per_pair);
        let label = if threads > cores {
            "  oversubscribed"
        } else {
            ""
        };
        println!(
            "{ids:>6} {threads:>7} {:>10.1} {:>7.3} {:>11} {:>9} {:>9} {:>9.1} {:>9.1} {:>9.1}{label}",
            m.ticks_per_pair,
            m.ticks_per_pair / base,
            m.seen,
            m.lost,
            m.refused,
            m.rss_kib as f64 / 1024.0,
            m.peak_kib as f64 / 1024.0,
            m.drain_cpu_ms,
        );
        results.push(((ids, threads), m));
    }
    results
}
