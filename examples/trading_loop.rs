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
//! how the report counts samples lost to a ring that laps before latte reads it).
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

/// The command line: `--json FILE`, `--ticks N`, `--risk-levels N`.
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
}

impl Default for Options {
    fn default() -> Options {
        Options {
            json: None,
            ticks: 5_000,
            risk_levels: 1,
            ring_capacity: None,
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
        tick(&mut book, &mut rng, options.risk_levels);
        latte_pulse!("Sim_Tick_Gap");
    }
    feed.join().expect("market-data thread");
}
