//! A small order-book simulation instrumented like the C++ original's sample report:
//! a dynamic-programming build step, then a market loop of ticks with order flow,
//! ask/bid matching loops and risk/PnL, plus a market-data thread pulsing per quote.
//!
//! `cargo run --release --example trading_loop`
//!
//! Options, for trying the `latte-telemetry` tool (`docs/cli.md`):
//! `-- --json FILE` writes the final report as JSON to FILE instead of a table on
//! stdout; `--ticks N` runs N market ticks (default 5,000); `--risk-levels N` makes
//! the risk step value N book levels instead of 1, a slower variant to compare;
//! `--ring-capacity N` keeps N samples per ring (a power of two; a small one shows
//! how the report counts samples lost to a ring that laps before latte reads it);
//! `--slower PERCENT` makes one component, `Sim_Tick_Gap`, about PERCENT percent
//! slower at its median and leaves the others as they are (below).
//!
//! **`--slower PERCENT`** gives `latte-telemetry diff` a real slowdown of known size
//! to find (`.ci/diff-error-rates.sh` counts how often it does). The component slowed
//! is `Sim_Tick_Gap`, the time from one tick's end to the next's: one sample per tick,
//! and a median of hundreds of nanoseconds (350 ns on the reference machine, 650-700
//! ns on a 2 vCPU Intel Xeon KVM guest), so that 10% is several steps of a 10 ns
//! clock and stands well clear of the few nanoseconds by which latte's overhead
//! estimate moves from run to run. (`Sim_OrderFlow`'s median, 40 ns on the Xeon, is
//! one 10 ns step on the reference machine.) The slowdown is more work, not a sleep:
//! after each tick, outside every scope, rounds of a checksum of the book's levels
//! (`book_checksum`), so `Sim_Tick_Total`, the scopes in it and the market-data thread
//! are as they were. The number of rounds is calibrated on the machine that runs,
//! before the agent starts (`calibrate_slowdown`, about 0.3 s): a thread of its own
//! runs this market loop, recorded by latte as the real one is, in blocks of 2,048
//! ticks with 0 to 256 rounds (the counts take turns), and reads each block's gaps
//! back with `latte::snapshot`. A line fitted to the median gap at each count gives
//! the median with no round and the time a round adds; the rounds are PERCENT percent
//! of the one over the other. `latte::collect::reset` then drops the calibration from
//! the report (the footprint line still counts its thread). A line on stderr gives the
//! figures: `--slower 10: Sim_Tick_Gap's median here 642.0 ns as recorded, and 1.74 ns
//! more a round of checksum (...), so 37 rounds for 64.3 ns more`. The medians are of
//! the gaps as recorded, the pulse's own cost (about 20 ns) not subtracted.
//!
//! `--slower 0` calibrates and adds nothing. It is the base to compare a slowed run
//! with: what runs before the agent starts can change latte's estimate of its own
//! overhead, made at start, and with it the median of every short component. The
//! book, the orders and the random numbers of the market loop are the same with and
//! without `--slower`.
//!
//! `tests/report/layout.rs` runs this same code (`run`) and reads its report.

use latte::{latte_pulse, latte_scope, latte_start, latte_stop};
use std::hint::black_box;

/// xorshift64*: deterministic order flow without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const LEVELS: usize = 64;

/// Price levels around a mid price; index 0 is the best level.
struct Book {
    asks: [u64; LEVELS],
    bids: [u64; LEVELS],
    position: i64,
    cash: i64,
    mid: i64,
}

impl Book {
    fn new() -> Book {
        Book {
            asks: [100; LEVELS],
            bids: [100; LEVELS],
            position: 0,
            cash: 0,
            mid: 10_000,
        }
    }

    /// Takes liquidity from one side, level by level; returns the filled quantity.
    fn sweep(side: &mut [u64; LEVELS], mut qty: u64) -> (u64, usize) {
        let mut filled = 0;
        let mut levels = 0;
        for level in side.iter_mut() {
            if qty == 0 {
                break;
            }
            let take = (*level).min(qty);
            *level -= take;
            qty -= take;
            filled += take;
            levels += 1;
        }
        (filled, levels)
    }

    fn replenish(side: &mut [u64; LEVELS], rng: &mut Rng) {
        for level in side.iter_mut().filter(|l| **l < 50) {
            *level += 50 + rng.below(100);
        }
    }
}

/// A value-iteration pass over inventory states: the "DP" part of the strategy.
fn dp_state_loop(values: &mut [f64], rng: &mut Rng) {
    let n = values.len();
    let noise = rng.below(100) as f64 * 1e-4;
    for i in 1..n - 1 {
        let hold = values[i] * 0.999;
        let buy = values[i + 1] - 0.01 - noise;
        let sell = values[i - 1] + 0.01;
        values[i] = hold.max(buy).max(sell);
    }
}

fn tick(book: &mut Book, rng: &mut Rng, risk_levels: usize) {
    let _tick = latte_scope!("Sim_Tick_Total");

    latte_start!("Sim_OrderFlow");
    let orders: Vec<(bool, u64)> = (0..1 + rng.below(8))
        .map(|_| (rng.below(2) == 0, 1 + rng.below(400)))
        .collect();
    latte_stop!("Sim_OrderFlow");

    for (buy, qty) in orders {
        if buy {
            latte_start!("Sim_AskLoop", Mid);
            let (filled, levels) = Book::sweep(&mut book.asks, qty);
            book.position += filled as i64;
            book.cash -= filled as i64 * (book.mid + levels as i64);
            latte_stop!("Sim_AskLoop", Mid);
        } else {
            latte_start!("Sim_BidLoop", Mid);
            let (filled, levels) = Book::sweep(&mut book.bids, qty);
            book.position -= filled as i64;
            book.cash += filled as i64 * (book.mid - levels as i64);
            latte_stop!("Sim_BidLoop", Mid);
        }
    }
    Book::replenish(&mut book.asks, rng);
    Book::replenish(&mut book.bids, rng);

    latte_start!("Sim_RiskPnL");
    let mut pnl = book.cash + book.position * book.mid;
    for level in 1..risk_levels.min(LEVELS) {
        let depth = black_box(book.asks[level] as i64 - book.bids[level] as i64);
        pnl += depth * level as i64 / 1_000;
    }
    black_box(pnl);
    latte_stop!("Sim_RiskPnL");
}

/// `--slower`'s extra work, between one tick and the next: `steps` rounds of an FNV-1a
/// style checksum of the book's levels, each a xor and a multiply that wait for the
/// round before (about 4 cycles; the compiler can neither merge rounds nor hoist them).
fn book_checksum(book: &Book, steps: u32) -> u64 {
    let mut sum = 0xcbf2_9ce4_8422_2325_u64;
    for i in 0..steps as usize {
        sum = (sum ^ book.asks[i % LEVELS] ^ book.bids[i * 7 % LEVELS])
            .wrapping_mul(0x0100_0000_01b3);
    }
    sum
}

/// One tick of the market loop and the pulse that ends its gap, with `extra_steps`
/// rounds of `--slower`'s work between the two.
fn market_tick(book: &mut Book, rng: &mut Rng, risk_levels: usize, extra_steps: u32) {
    tick(book, rng, risk_levels);
    if extra_steps > 0 {
        black_box(book_checksum(book, extra_steps));
    }
    latte_pulse!("Sim_Tick_Gap");
}

/// The rounds of checksum `calibrate_slowdown` times.
const CALIBRATION_STEPS: [u32; 11] = [0, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256];

/// Runs the market loop with a book and random numbers of its own, in blocks of 2,048
/// ticks, each block with one count of `CALIBRATION_STEPS` (the counts take turns, so
/// that a change of the machine's speed falls on all of them alike). After each block
/// it reads the block's gaps back from latte's ring and keeps all but the first 256
/// (so that caches and the branch predictor have settled on the block's count).
/// Returns, for each count, the median gap in counter ticks, as recorded.
fn calibration_gaps(risk_levels: usize) -> Vec<f64> {
    const BLOCK: usize = 2_048;
    const WARM_UP: usize = 256;
    const ROUNDS: usize = 16;
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let mut book = Book::new();
    let mut gaps = vec![Vec::with_capacity(ROUNDS * BLOCK); CALIBRATION_STEPS.len()];
    for _ in 0..ROUNDS {
        for (steps, gaps) in CALIBRATION_STEPS.iter().zip(&mut gaps) {
            for _ in 0..BLOCK {
                market_tick(&mut book, &mut rng, risk_levels, *steps);
            }
            // The newest gaps, this block's (fewer with a ring smaller than a block).
            let ring = latte::snapshot("Sim_Tick_Gap");
            let kept = ring.len().saturating_sub(BLOCK - WARM_UP);
            gaps.extend(ring[kept..].iter().map(|&t| t as f64));
        }
    }
    gaps.into_iter()
        .map(|mut g| {
            g.sort_by(f64::total_cmp);
            g[g.len() / 2]
        })
        .collect()
}

/// The least-squares line through the median gap at each count of `CALIBRATION_STEPS`:
/// (ticks at no round, ticks a round).
fn fit_line(gaps: &[f64]) -> (f64, f64) {
    let ks: Vec<f64> = CALIBRATION_STEPS.iter().map(|&k| f64::from(k)).collect();
    let n = ks.len() as f64;
    let (k_mean, gap_mean) = (ks.iter().sum::<f64>() / n, gaps.iter().sum::<f64>() / n);
    let covariance: f64 = ks
        .iter()
        .zip(gaps)
        .map(|(k, g)| (k - k_mean) * (g - gap_mean))
        .sum();
    let variance: f64 = ks.iter().map(|k| (k - k_mean).powi(2)).sum();
    let slope = covariance / variance;
    (gap_mean - slope * k_mean, slope)
}

/// The count of checksum rounds that makes `Sim_Tick_Gap`'s median `percent` percent
/// slower on this machine (0 for `percent` 0), calibrated on a thread of its own
/// before the agent starts; the calibration is then dropped from the report. Reports
/// the figures on stderr.
fn calibrate_slowdown(percent: f64, risk_levels: usize) -> u32 {
    let (began, began_ticks) = (std::time::Instant::now(), latte::clock::ticks());
    let gaps = std::thread::Builder::new()
        .name("slowdown-calibration".into())
        .spawn(move || calibration_gaps(risk_levels))
        .expect("spawn the calibration thread")
        .join()
        .expect("calibration thread");
    latte::collect::reset();
    let ticks_per_ns =
        latte::clock::ticks().wrapping_sub(began_ticks) as f64 / began.elapsed().as_nanos() as f64;
    // The line through all the counts, not the median at none alone: less noise.
    let (median, per_round) = fit_line(&gaps);
    let target = percent / 100.0 * median;
    let steps = (target / per_round.max(1e-6)).round().max(0.0) as u32;
    let ns = |ticks: f64| ticks / ticks_per_ns;
    eprintln!(
        "--slower {percent}: Sim_Tick_Gap's median here {:.1} ns as recorded, and {:.2} ns \
         more a round of checksum (a line through 0 to {} rounds), so {steps} rounds for \
         {:.1} ns more",
        ns(median),
        ns(per_round),
        CALIBRATION_STEPS[CALIBRATION_STEPS.len() - 1],
        ns(steps as f64 * per_round),
    );
    steps
}

/// The command line: `--json FILE`, `--ticks N`, `--risk-levels N`,
/// `--ring-capacity N`, `--slower PERCENT`.
/// What the demo runs.
pub struct Options {
    /// Write the final report as JSON to this file, not a table to stdout.
    pub json: Option<String>,
    /// Market ticks.
    pub ticks: usize,
    /// Book levels the risk step values.
    pub risk_levels: usize,
    /// Samples per ring (`None`: latte's default).
    pub ring_capacity: Option<usize>,
    /// Make `Sim_Tick_Gap`'s median about this many percent slower (`Some(0.0)`:
    /// calibrate, and add nothing).
    pub slower: Option<f64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            json: None,
            ticks: 5_000,
            risk_levels: 1,
            ring_capacity: None,
            slower: None,
        }
    }
}

fn options() -> Options {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--json" => options.json = Some(value()),
            "--ticks" => options.ticks = value().parse().expect("--ticks N"),
            "--risk-levels" => options.risk_levels = value().parse().expect("--risk-levels N"),
            "--ring-capacity" => {
                options.ring_capacity = Some(value().parse().expect("--ring-capacity N"))
            }
            "--slower" => options.slower = Some(value().parse().expect("--slower PERCENT")),
            _ => panic!("unknown option {arg}: see the example's docs"),
        }
    }
    options
}

fn main() {
    run(&options());
}

/// The demo: the agent, a market-data thread, the DP build, the market loop; the
/// report is written when the agent's guard drops at the end.
pub fn run(options: &Options) {
    // Before the agent starts, on a thread of its own, and then dropped from the report.
    let extra_steps = options.slower.map_or(0, |percent| {
        calibrate_slowdown(percent, options.risk_levels)
    });
    // The agent, with its defaults: folds what the threads record into whole-run
    // histograms every few milliseconds, and writes the report (time units,
    // overhead-corrected, every sample in every figure) when it drops at the end.
    let mut agent = latte::builder();
    if let Some(n) = options.ring_capacity {
        agent = agent.ring_capacity(n);
    }
    if let Some(path) = &options.json {
        let file = std::fs::File::create(path).expect("create the JSON report file");
        agent = agent.format(latte::Format::Json).sink(file);
    }
    let _latte = agent.start().expect("start the latte agent");
    let feed = std::thread::Builder::new()
        .name("market_data".into())
        .spawn(|| {
            let mut rng = Rng(7);
            let mut checksum = 0u64;
            for _ in 0..200_000 {
                // Wait for the next quote (about half a microsecond apart), decode it,
                // then mark the gap since the previous one.
                let arrival = std::time::Instant::now() + std::time::Duration::from_nanos(500);
                while std::time::Instant::now() < arrival {
                    std::hint::spin_loop();
                }
                checksum = checksum.wrapping_add(rng.next() >> 3);
                latte_pulse!("MD_Quote_Gap");
            }
            black_box(checksum);
        })
        .expect("spawn market-data thread");

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    latte_start!("DP_Build_Total");
    let mut values = vec![0.0f64; 4096];
    for _ in 0..2_000 {
        latte_start!("DP_StateLoop");
        dp_state_loop(&mut values, &mut rng);
        latte_stop!("DP_StateLoop");
    }
    latte_stop!("DP_Build_Total");
    black_box(&values);

    let mut book = Book::new();
    for _ in 0..options.ticks {
        market_tick(&mut book, &mut rng, options.risk_levels, extra_steps);
    }
    feed.join().expect("market-data thread");
}
