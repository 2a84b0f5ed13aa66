//! Native histograms through a real Prometheus (2.42, started with
//! `--enable-feature=native-histograms`, so it asks for the protobuf format): 4
//! processes serve `/metrics`, each recording a known, different latency
//! distribution at a steady pace, and `histogram_quantile(q, sum(rate(...)))` over
//! their native histograms agrees with the exact quantiles of the 4 distributions
//! together: p99 within 2%.
//!
//! `cargo test -p latte-telemetry-prometheus --test scrape native -- --nocapture`
//! prints the comparison (docs/fleet.md quotes it). The processes are this test binary
//! run again with `LATTE_NATIVE_CHILD` set.
//!
//! Why a steady pace: `rate` extrapolates each series to the edges of its window, which
//! is exact for a series that grows steadily through the window; a series that jumps
//! once inside it gets a factor that depends on when it was scraped, and processes
//! weighted unequally merge into a different distribution. Each process records its
//! 40,000 values over and over, in an order that spreads every stretch of it over the
//! whole range (stride 24,721, about 0.618 of 40,000), 16,000 a second: any 5 s
//! window holds each distribution twice over, evenly.

use latte::Id;
use latte_prometheus::Prometheus;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static WAIT: Id = Id::new("fleet_native_wait");

/// Values per process.
const SAMPLES: usize = 40_000;
/// The order each process records its values in: value `j * STRIDE mod SAMPLES` is
/// the `j`-th (coprime with `SAMPLES`, so every value once per round).
const STRIDE: usize = 24_721;
/// Values each process records per second.
const RATE: f64 = 16_000.0;
/// The `rate` window, in seconds.
const WINDOW: u64 = 5;
/// Each process's values, log-uniform from the first bound to the second (seconds):
/// a fast path, a slower one, a wide one and one with a long tail.
const RANGES: [(f64, f64); 4] = [
    (10e-6, 40e-6),
    (30e-6, 200e-6),
    (100e-6, 2e-3),
    (5e-6, 50e-3),
];
/// The test's name, for the children to run it alone.
const NAME: &str = "native::prometheus_merges_four_processes_native_histograms_within_two_percent";

/// Process `k`'s `i`-th value in seconds, before it becomes counter ticks.
fn value(k: usize, i: usize) -> f64 {
    let (lo, hi) = RANGES[k];
    lo * (hi / lo).powf((i as f64 + 0.5) / SAMPLES as f64)
}

/// A value in seconds as the counter ticks a process of `hz` records for it.
fn ticks(seconds: f64, hz: f64) -> u64 {
    (seconds * hz).round() as u64
}

/// The child: serves `/metrics`, says where (and its counter's frequency) on stdout,
/// and records its values at [`RATE`] until its stdin ends.
fn child(k: usize) {
    let hz = latte::analyze::calibration().ticks_per_ns * 1e9;
    let (guard, addr) = super::serve(Prometheus::bind("127.0.0.1:0").unwrap(), |b| b);
    let done = Arc::new(AtomicBool::new(false));
    let stop = done.clone();
    let recorder = std::thread::spawn(move || {
        let began = Instant::now();
        let mut recorded = 0usize;
        while !stop.load(Ordering::Relaxed) {
            let due = (began.elapsed().as_secs_f64() * RATE) as usize;
            for j in recorded..due {
                latte::record(&WAIT, ticks(value(k, j * STRIDE % SAMPLES), hz));
            }
            recorded = recorded.max(due);
            std::thread::sleep(Duration::from_millis(1)); // the pace, not a wait for anything
        }
    });
    println!("latte-native-child {addr} {hz}");
    std::io::stdin().lock().lines().for_each(drop);
    done.store(true, Ordering::Relaxed);
    recorder.join().unwrap();
    guard.stop().unwrap();
}

/// A child process, and where it serves.
struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    addr: String,
    hz: f64,
}

impl Process {
    /// Starts process `k` and reads what it says: its address and counter frequency.
    fn start(k: usize) -> Process {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--nocapture"])
            .env("LATTE_NATIVE_CHILD", k.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Past the test harness's own lines; the rest is read, so the child's harness
        // can still write its own.
        let said = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("latte-native-child ").map(str::to_owned))
            .expect("a child ended before serving");
        std::thread::spawn(move || lines.for_each(drop));
        let (addr, hz) = said.split_once(' ').unwrap();
        Process {
            child,
            stdin,
            addr: addr.to_owned(),
            hz: hz.parse().unwrap(),
        }
    }
}

impl Process {
    /// Ends the child (its stdin closed, it stops) and checks that it succeeded.
    fn finish(mut self) {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success(), "a child failed");
    }
}

impl Drop for Process {
    /// Ends the child: its stdin closed, it stops.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// Waits (with a deadline) until Prometheus has stored `selector` of `n` instances as
/// native histograms (`histogram_count` reads only those).
fn wait_for_native(prometheus: &super::real_prometheus::Server, selector: &str, n: usize) {
    let stored = format!("histogram_count({selector})");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let counts = super::real_prometheus::query_by(prometheus, &stored, "instance");
        if counts.len() == n && counts.iter().all(|(_, c)| *c > 0.0) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus stored native histograms for {counts:?}, not all {n} processes; its targets: {}",
            prometheus.targets()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn prometheus_merges_four_processes_native_histograms_within_two_percent() {
    if let Ok(k) = std::env::var("LATTE_NATIVE_CHILD") {
        child(k.parse().unwrap());
        return;
    }
    if !super::installed("prometheus") {
        return;
    }
    let processes: Vec<Process> = (0..RANGES.len()).map(Process::start).collect();
    let targets: Vec<String> = processes.iter().map(|p| p.addr.clone()).collect();
    let flags = ["--enable-feature=native-histograms"];
    let prometheus = super::real_prometheus::start_prometheus_with(&targets, &flags).unwrap();

    let selector = format!("latte_latency_seconds{{component=\"{}\"}}", WAIT.name());
    wait_for_native(&prometheus, &selector, processes.len());
    std::thread::sleep(Duration::from_secs(WINDOW + 1)); // the window fills with scrapes

    // The exact quantiles of the 4 distributions together, as each process records
    // them (its counter ticks, read back in seconds).
    let mut exact: Vec<f64> = processes
        .iter()
        .enumerate()
        .flat_map(|(k, p)| (0..SAMPLES).map(move |i| ticks(value(k, i), p.hz) as f64 / p.hz))
        .collect();
    exact.sort_by(f64::total_cmp);
    let merged = format!("sum(rate({selector}[{WINDOW}s]))");
    println!(
        "{} processes, histogram_quantile(q, {merged})",
        processes.len()
    );
    println!("quantile  exact        Prometheus   error");
    for q in [0.5, 0.99, 0.999] {
        let truth = exact[latte::report::rank(q, exact.len() as u64) as usize - 1];
        let promql = format!("histogram_quantile({q}, {merged})");
        let answer = super::real_prometheus::query_by(&prometheus, &promql, "");
        let estimate = answer.first().map_or(f64::NAN, |a| a.1);
        let error = estimate / truth - 1.0;
        println!(
            "p{:<7} {:>9.3} us {:>9.3} us {:>+8.3}%",
            q * 100.0,
            truth * 1e6,
            estimate * 1e6,
            error * 100.0
        );
        if q == 0.99 {
            assert!(
                error.abs() < 0.02,
                "histogram_quantile(0.99, ...) = {estimate} against the exact {truth}"
            );
        }
    }
    // The share of calls at or under 1 ms, as a dashboard asks it.
    let promql = format!("histogram_fraction(0, 0.001, {merged})");
    let fraction = super::real_prometheus::query_by(&prometheus, &promql, "");
    let fraction = fraction.first().map_or(f64::NAN, |f| f.1);
    let truth = exact.partition_point(|v| *v <= 1e-3) as f64 / exact.len() as f64;
    println!("at most 1 ms: exact {truth:.5}, histogram_fraction {fraction:.5}");
    assert!(
        (fraction - truth).abs() < 0.01,
        "histogram_fraction(0, 0.001, ...) = {fraction} against the exact {truth}"
    );
    for p in processes {
        p.finish();
    }
}
