//! Cost of the analysis side: `Report::from_capture` on a full-size synthetic capture,
//! then rendering the report as a table and as JSON.
//!
//! `cargo bench --bench analysis`. The capture is 16 threads × 8 ids × 65,536 samples
//! (every ring full at the default capacity, 8.4 M samples), drawn from a deterministic
//! PRNG: log-normal-ish latencies around a per-id median, a slow tail, and rare
//! preemption-sized spikes, with a mix of scope modes, pulses and recorded values. The
//! calibration is fixed, so runs are comparable across machines. Each configuration is
//! timed over several repetitions after one warm-up; the median is reported.

use latte::analyze::Calibration;
use latte::collect::Anomalies;
use latte::collect::{ComponentCapture, Sample, SampleKind, ThreadCapture};
use latte::{Capture, Cleaning, Data, Mode, Report, ReportOptions, Unit};
use std::hint::black_box;
use std::time::{Duration, Instant};

const THREADS: u64 = 16;
const IDS: [&str; 8] = [
    "ingress", "decode", "risk", "book", "match", "encode", "egress", "loop",
];
const SAMPLES: usize = 65_536;
const REPS: usize = 9;
const RENDER_REPS: usize = 51;

/// splitmix64: cheap, deterministic, good enough for synthetic latencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Approximately standard normal (Irwin–Hall with 4 terms, rescaled).
    fn normal(&mut self) -> f64 {
        ((self.unit() + self.unit() + self.unit() + self.unit()) - 2.0) * 3f64.sqrt()
    }
}

/// A sample of id `i`: scopes in each mode, a pulse and a recorded value.
fn sample(i: usize, ticks: u64, rng: &mut Rng) -> Sample {
    let migrated = rng.next().is_multiple_of(5_000);
    let scope = |mode| SampleKind::Scope {
        start: mode,
        stop: mode,
    };
    let (kind, migrated) = match i % 5 {
        0 => (scope(Mode::Fast), false),
        1 => (scope(Mode::Mid), migrated),  // rarely migrated
        2 => (scope(Mode::Hard), migrated), // rarely migrated
        3 => (SampleKind::Pulse, false),
        _ => (SampleKind::Recorded, false),
    };
    Sample::new(ticks, kind, migrated).expect("latency() stays within Sample::MAX_TICKS")
}

/// One latency: log-normal around `median` (sigma 0.25), 1% slow tail, 0.05% spikes of
/// an interrupt's or a context switch's size.
fn latency(median: f64, rng: &mut Rng) -> u64 {
    let mut v = median * (0.25 * rng.normal()).exp();
    let roll = rng.next() % 10_000;
    if roll < 100 {
        v *= 2.0 + 6.0 * rng.unit();
    }
    if roll < 5 {
        v += 6_000.0 + 300_000.0 * rng.unit();
    }
    (v as u64).min(Sample::MAX_TICKS)
}

fn synthetic_capture() -> Capture {
    let mut rng = Rng(0x1a77e);
    let threads = (1..=THREADS)
        .map(|serial| ThreadCapture {
            outside_allocs: None,
            alloc_breach: None,
            serial,
            name: format!("worker-{serial}"),
            exited: false,
            anomalies: Anomalies::default(),
            components: IDS
                .iter()
                .enumerate()
                .map(|(i, &id)| {
                    let median = 60.0 * (1 << (i % 6)) as f64 * (1.0 + 0.1 * (serial % 3) as f64);
                    let samples = (0..SAMPLES)
                        .map(|_| {
                            let ticks = latency(median, &mut rng);
                            sample(i, ticks, &mut rng)
                        })
                        .collect();
                    ComponentCapture {
                        allocs: None,
                        parent: None,
                        self_ticks: None,
                        name: id,
                        seen: SAMPLES as u64 * 3,
                        capacity: SAMPLES,
                        first: SAMPLES as u64 * 2,
                        samples,
                    }
                })
                .collect(),
            unpaired: Vec::new(),
        })
        .collect();
    Capture {
        process_allocs: None,
        threads,
        teardown_drops: 0,
    }
}

fn calibration() -> Calibration {
    Calibration {
        ticks_per_ns: 3.0,
        accuracy: 1e-6,
        resolution: 1,
        scope: [[18, 22, 30], [24, 32, 40], [36, 44, 52]],
        pulse: 20,
        inside: [[0.0; 3]; 3],
        took: Duration::from_millis(50),
    }
}

/// Runs `f` once to warm up, then `reps` times; returns the sorted wall times.
fn time(reps: usize, mut f: impl FnMut()) -> Vec<Duration> {
    f();
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn print_row(name: &str, times: &[Duration], samples: u64) {
    let median = times[times.len() / 2];
    let (min, max) = (times[0], times[times.len() - 1]);
    println!(
        "{name:<40} median {:>9.3} ms  (min {:>9.3}, max {:>9.3})  {:>7.2} ns/sample",
        median.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
        median.as_nanos() as f64 / samples as f64,
    );
}

fn main() {
    let began = Instant::now();
    let capture = synthetic_capture();
    let cal = calibration();
    let samples: u64 = capture
        .threads
        .iter()
        .flat_map(|t| &t.components)
        .map(|c| c.samples.len() as u64)
        .sum();
    println!(
        "analysis bench: {THREADS} threads x {} ids x {SAMPLES} samples = {samples} samples (built in {:.2} s)",
        IDS.len(),
        began.elapsed().as_secs_f64()
    );
    println!("from_capture: {REPS} repetitions after one warm-up; renderers: {RENDER_REPS}\n");

    let report = analyses(&capture, &cal, samples);
    renderers(&report, samples);

    let all = &report.all_threads;
    println!(
        "all threads: {} ids; {} samples after cleaning, {} bypass, {} outliers",
        all.len(),
        all.iter().map(|r| r.stats.samples).sum::<u64>(),
        all.iter().map(|r| r.stats.bypass).sum::<u64>(),
        all.iter().map(|r| r.stats.outliers).sum::<u64>(),
    );
    println!("total bench time {:.1} s", began.elapsed().as_secs_f64());
}

/// `Report::from_capture` under three option sets; returns the time/calibrated report.
fn analyses(capture: &Capture, cal: &Calibration, samples: u64) -> Report {
    let configs = [
        (
            "from_capture cycles/raw/default cleaning",
            ReportOptions::default(),
        ),
        (
            "from_capture time/calibrated/default",
            ReportOptions {
                unit: Unit::Time,
                data: Data::Calibrated,
                cleaning: Cleaning::default(),
                ..ReportOptions::default()
            },
        ),
        (
            "from_capture cycles/raw/no cleaning",
            ReportOptions {
                cleaning: Cleaning::OFF,
                ..ReportOptions::default()
            },
        ),
    ];
    for (name, options) in &configs {
        let times = time(REPS, || {
            black_box(Report::from_capture(black_box(capture), cal, options));
        });
        print_row(name, &times, samples);
    }
    Report::from_capture(capture, cal, &configs[1].1)
}

/// The renderers on `report`: the table, and JSON with the `json` feature.
fn renderers(report: &Report, samples: u64) {
    let mut out = Vec::new();
    let times = time(RENDER_REPS, || {
        out.clear();
        report
            .write(&mut out, latte::Format::default())
            .expect("writing to a Vec cannot fail");
        black_box(&out);
    });
    print_row("write, table (time/calibrated)", &times, samples);
    let table_bytes = out.len();

    #[cfg(feature = "json")]
    {
        let mut json_bytes = 0;
        let times = time(RENDER_REPS, || {
            let json = report.to_json(latte::report::JsonStyle::Pretty);
            json_bytes = json.len();
            black_box(json);
        });
        print_row("to_json (time/calibrated)", &times, samples);
        println!("\ntable: {table_bytes} bytes, json: {json_bytes} bytes");
    }
    #[cfg(not(feature = "json"))]
    println!("\ntable: {table_bytes} bytes (to_json needs the `json` feature)");
}
